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

}  // namespace advplan
