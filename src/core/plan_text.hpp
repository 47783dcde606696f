#pragma once
// A plan's JSON text read with simdjson (library internal; docs/DECISIONS.md "Speed"). The offline LLM client reads
// the BLUE plan of every prompt, and the contract reads every completion; through nlohmann's DOM these were a few
// percent of a paper run. Exact by construction, as the scenario reader (src/core/scenario_text.hpp): it takes only
// a plan that plan_from_json decodes without a single violation, within the size limits, and gives that plan;
// anything else is nullopt, and the caller takes the DOM path, which decides.
#include <optional>
#include <string_view>

#include "advplan/core/plan.hpp"
#include "advplan/core/scenario.hpp"
#include "advplan/core/validation.hpp"

namespace advplan::detail {

/// plan_from_json(nlohmann::json::parse(text), v) when that gives a plan and no violation (and the text is within
/// plan_json_limit_error's limits); nullopt otherwise.
std::optional<Plan> plan_from_text_fast(std::string_view text);

/// parse_plan_json's result for a plan that decoded without a violation (as plan_from_text_fast's plans do): the
/// plan, and validate_plan's violations.
PlanParse validated_plan_parse(Plan plan, const Scenario& sc, std::optional<Side> expected_side);

}  // namespace advplan::detail
