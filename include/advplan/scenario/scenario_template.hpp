#pragma once
// A scenario template as data (configs/templates/*.yaml, schema in docs/TEMPLATES.md). Nothing about a
// template is hard-coded in C++ beyond reading it.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "advplan/core/scenario.hpp"

namespace advplan {

struct AssetSpec {
  std::string type, prefix, domain, role;
  double capability = 0.5, cost = 1.0, mobility = 0.5;
  std::vector<Category> categories;
  int count_min = 1, count_max = 1;
};

struct TerrainSpec {
  Terrain terrain;
  double weight = 1.0;
};

struct BranchKind {
  std::string kind;  ///< route, proceed-or-withdraw, support-package
  std::vector<std::string> conditions;
  std::vector<Category> categories;
};

struct FramingEffect {
  std::string objective_suffix;
  std::optional<Category> added_category;  ///< the one action category `applied` framing may add
};

struct PlanShape {
  int count_min = 2, count_max = 3;
  int chain_min = 4, chain_max = 7;
  double branch_probability = 0.4;
  int option_min = 1, option_max = 2;
};

/// The rubric item kinds a template may declare in its optional `rubric:` section (docs/RUBRIC.md). The
/// experiment layer derives each scenario's items from them.
const std::vector<std::string>& rubric_item_kinds();

struct ScenarioTemplate {
  std::string id, name, domain;
  std::string source;  ///< file the template was read from
  std::vector<TerrainSpec> terrains;
  std::array<SideRequirements, 2> requirements;
  std::array<double, kNumCategories> exposure{};
  std::array<std::vector<std::string>, kNumCategories> verbs;
  std::array<std::vector<AssetSpec>, 2> assets;
  std::vector<std::string> places;
  std::array<std::vector<std::string>, 2> objectives;
  std::vector<BranchKind> branch_kinds;
  PlanShape seed_plans;
  std::array<double, kNumFramings> framing_weights{1, 0, 0};
  std::array<FramingEffect, kNumFramings> framing_effects;
  /// `rubric: {items: [...]}`: the rubric item kinds that apply to this template's scenarios (empty: none).
  std::vector<std::string> rubric_items;
};

/// Parse a template from YAML text; `file` names it in errors. Enforces every rule of docs/TEMPLATES.md
/// ("Loader rules"): throws ConfigError (one sentence naming the file and the key path) on a syntax error,
/// missing or unknown key, wrong type, out-of-range value, unknown vocabulary word, missing mandatory verb,
/// wrong list size, duplicate, or inconsistent reference (e.g. a branch category no BLUE asset can perform).
ScenarioTemplate parse_template(const std::string& yaml_text, const std::string& file);

/// Read a template file; throws IoError when unreadable and ConfigError when malformed.
ScenarioTemplate load_template_file(const std::string& path);

}  // namespace advplan
