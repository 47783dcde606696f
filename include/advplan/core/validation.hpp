#pragma once
// Plan parsing and validation (docs/ARCHITECTURE.md "Data model"). Every violation is reported with its JSON path, e.g.
// `actions[3].asset: unknown asset "b-tank-9"`. Nothing here throws on bad input; whatever the input,
// the result is a list of violations.
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "advplan/core/plan.hpp"
#include "advplan/core/scenario.hpp"

namespace advplan {

struct Violation {
  std::string path;     ///< JSON path, "" for the whole document
  std::string message;  ///< what is wrong
  std::string str() const { return path.empty() ? message : path + ": " + message; }
};

struct PlanParse {
  std::optional<Plan> plan;           ///< set when the JSON had the plan's shape
  std::vector<Violation> violations;  ///< empty when the plan is valid
  bool ok() const { return plan.has_value() && violations.empty(); }
  /// All violations joined by "; ".
  std::string summary() const;
};

/// Semantic checks of a typed plan against a scenario: unique and defined ids, assets of the plan's side,
/// acyclic graph, every action reachable from the first chain step, priorities 1..5, verbs in the vocabulary.
/// `expected_side` (when given) must match plan.side.
std::vector<Violation> validate_plan(const Plan& plan, const Scenario& scenario,
                                     std::optional<Side> expected_side = std::nullopt);


/// Decode a JSON value and validate; never throws.
PlanParse parse_plan_json(const nlohmann::json& j, const Scenario& scenario,
                          std::optional<Side> expected_side = std::nullopt);

/// Parse JSON text and validate; never throws.
PlanParse parse_plan_text(std::string_view text, const Scenario& scenario,
                          std::optional<Side> expected_side = std::nullopt);

}  // namespace advplan
