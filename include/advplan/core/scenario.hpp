#pragma once
// A typed scenario (docs/ARCHITECTURE.md "Data model"). Immutable value generated from (template, seed); it carries everything a
// policy or metric needs, so an external policy sees the same facts as a C++ one.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "advplan/core/plan.hpp"
#include "advplan/core/vocabulary.hpp"

namespace advplan {

struct Asset {
  std::string id;
  Side side = Side::Blue;
  std::string type;
  std::string domain;  ///< land, sea, air, cyber, space, ...
  std::string role;
  double capability = 0.5;  ///< 0..1
  double cost = 1.0;        ///< cost per action
  double mobility = 0.5;    ///< 0..1
  std::vector<Category> categories;  ///< categories of action this asset can perform
  bool operator==(const Asset&) const = default;
};

struct Terrain {
  std::string family;  ///< urban, littoral, open, mountain, mixed, ...
  double mobility = 1.0;    ///< multiplies movement effectiveness
  double visibility = 1.0;  ///< multiplies information effectiveness
  double exposure = 1.0;    ///< multiplies the exposure (risk) of every action
  std::array<double, kNumCategories> category_modifier{1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  bool operator==(const Terrain&) const = default;
};

/// Per-side requirements the template sets: category requirement weights (sum 1), the capability-weighted
/// effort that fully meets them, and the resource budget.
struct SideRequirements {
  std::array<double, kNumCategories> weight{};
  double effort_scale = 3.0;
  double budget = 40.0;
  bool operator==(const SideRequirements&) const = default;
};

struct Scenario {
  std::string id;  ///< <template>-<seed>
  std::string template_id;
  std::uint64_t seed = 0;
  std::string domain;
  Terrain terrain;
  Framing framing = Framing::neutral;
  std::string blue_objective;
  std::string red_objective;
  std::vector<std::string> places;  ///< targets named in this scenario
  std::vector<Asset> assets;        ///< BLUE assets then the RED pool
  std::array<SideRequirements, 2> requirements;  ///< indexed by side
  std::array<std::vector<std::string>, kNumCategories> verbs;  ///< vocabulary per category
  std::array<double, kNumCategories> exposure{};  ///< base exposure of an action of each category
  std::vector<Plan> blue_seed_plans;  ///< the first is the fixed one the experiments use
  bool operator==(const Scenario&) const = default;

  const Asset* find_asset(std::string_view id) const;
  std::vector<const Asset*> assets_of(Side s) const;
  bool verb_allowed(Category c, std::string_view verb) const;
  const SideRequirements& req(Side s) const { return requirements[index(s)]; }
};

/// Scenario::find_asset for the actions of one plan: the assets found so far (a plan uses a few assets, each
/// many times) are searched before the scenario's list. Lives on the stack of one pass over a plan.
class AssetLookup {
 public:
  explicit AssetLookup(const Scenario& sc) : sc_(sc) {}
  const Asset* find(std::string_view id) {
    for (std::size_t k = 0; k < n_; ++k)
      if (same_id(seen_[k]->id, id)) return seen_[k];
    const Asset* a = sc_.find_asset(id);
    if (a && n_ < seen_.size()) seen_[n_++] = a;
    return a;
  }

 private:
  const Scenario& sc_;
  std::array<const Asset*, 16> seen_;  // the first n_ are set
  std::size_t n_ = 0;
};

}  // namespace advplan
