#pragma once
// JSON Schemas of what models write (docs/LLM.md "Schemas"): a plan (BLUE or RED), a judge's verdict and a quiz
// agent's reply. One source: the prompts quote these texts, `advplan schema NAME` prints them, and structured
// output sends them (or the per-scenario plan schema derived here) to the provider.
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "advplan/core/plan.hpp"
#include "advplan/core/scenario.hpp"

namespace advplan::llm {

/// The names `advplan schema` knows, in the order it lists them: plan, blue_plan, red_plan, judge_verdict,
/// quiz_reply.
const std::vector<std::string>& schema_names();

/// The named schema (JSON Schema draft 2020-12), or nullopt for a name schema_names() does not hold.
std::optional<nlohmann::json> named_schema(std::string_view name);

/// The generic plan schema's text, byte for byte what the plan prompts quote (changing it changes every prompt,
/// and with it the completion cache's keys).
const std::string& plan_schema_text();

/// The plan schema of one scenario and side, for constrained decoding (docs/LLM.md "Structured output"): the
/// side fixed; asset ids (the side's own) and targets (the scenario's places and the other side's assets) as
/// enums; each category with its own verbs; action ids from a pattern; every string, array and object bounded, and
/// no property beyond the listed ones. What it cannot say (ids that refer to actions that exist, a chain without
/// cycles, each action placed once) the validator still checks.
nlohmann::json scenario_plan_schema(const Scenario& sc, Side side);

/// The limits scenario_plan_schema puts on a plan (docs/LLM.md lists them).
struct PlanSchemaLimits {
  static constexpr int max_actions = 12;
  static constexpr int max_branches = 3;
  static constexpr int max_options = 3;
  static constexpr int max_text = 160;  ///< objective, condition and metadata values, in characters
  static constexpr int max_id = 24;     ///< action ids, in characters
  static constexpr int max_plan_id = 80;
};

/// `schema` rewritten to OpenAI's strict subset: every object lists all its properties as required (an optional
/// one becomes nullable), additionalProperties false, and the keywords the strict mode refuses (minLength,
/// maxLength, pattern, minItems, maxItems, minimum, maximum, format) removed; the validator checks them instead.
nlohmann::json strict_subset(const nlohmann::json& schema);

}  // namespace advplan::llm
