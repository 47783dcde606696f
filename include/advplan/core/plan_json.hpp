#pragma once
// JSON read and write for plans and scenarios (nlohmann/json). The JSON form is in docs/POLICIES.md "1.5 The plan".
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "advplan/core/plan.hpp"
#include "advplan/core/scenario.hpp"
#include "advplan/core/validation.hpp"

namespace advplan {

nlohmann::json to_json(const Plan& plan);
nlohmann::json to_json(const Scenario& scenario);
/// to_json(scenario), or the same with an empty blue_seed_plans array (what an LLM prompt shows), without
/// encoding the seed plans first.
enum class ScenarioJson { with_seed_plans, without_seed_plans };
nlohmann::json to_json(const Scenario& scenario, ScenarioJson what);
/// to_json(plan).dump(indent), byte for byte, written directly (no DOM): compact one-line text by default.
std::string plan_to_string(const Plan& plan);
std::string plan_to_string(const Plan& plan, int indent);
/// to_json(scenario, what).dump(), byte for byte, written directly (no DOM); the one-argument form has the seed
/// plans.
std::string scenario_to_string(const Scenario& scenario);
std::string scenario_to_string(const Scenario& scenario, ScenarioJson what);

/// Structural decode of a plan: missing fields and wrong types become violations with their JSON path;
/// the returned plan holds whatever could be decoded. Never throws. When `unknown_category` is given, the
/// indices of actions whose category was not in the vocabulary are appended to it (their decoded category is
/// a placeholder, so their verb cannot be checked).
std::optional<Plan> plan_from_json(const nlohmann::json& j, std::vector<Violation>& violations,
                                   std::vector<std::size_t>* unknown_category = nullptr);

/// Decode a scenario written by to_json. Throws PlanError naming the field on bad input.
Scenario scenario_from_json(const nlohmann::json& j);
/// scenario_from_json(nlohmann::json::parse(text)): the same scenario, or the same exception. Read with simdjson
/// when the text is a scenario without seed plans whose fields have the types scenario_from_json reads (strings,
/// numbers, an unsigned seed); any other text goes through the DOM path, which decides.
Scenario scenario_from_text(std::string_view text);

}  // namespace advplan
