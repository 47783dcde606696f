// JSON Schemas of what models write (include/advplan/llm/schemas.hpp, docs/LLM.md "Schemas").
#include "advplan/llm/schemas.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "advplan/core/vocabulary.hpp"

namespace advplan::llm {
using json = nlohmann::json;

namespace {

// The generic plan schema. The prompts quote this text byte for byte: an edit changes every plan prompt and so the
// completion cache's keys (docs/LLM.md "Completion cache").
constexpr const char* kPlanSchema =
    R"({"$schema":"https://json-schema.org/draft/2020-12/schema","title":"advplan plan",
"type":"object","required":["plan_id","side","objective","actions","chain"],
"properties":{"plan_id":{"type":"string"},"side":{"enum":["BLUE","RED"]},"objective":{"type":"string","minLength":1},
"domain":{"type":"string"},"roles":{"type":"object","additionalProperties":{"type":"string"}},
"actions":{"type":"array","items":{"type":"object","required":["id","asset","verb","category","priority"],
"properties":{"id":{"type":"string"},"asset":{"type":"string","description":"an asset id of the plan's side"},
"verb":{"type":"string","description":"a verb listed for the category in the scenario's verbs"},
"category":{"enum":["movement","fires","information","cyber","sustainment","protection","command","public_information","deception","civil"]},
"target":{"type":"string"},"priority":{"type":"integer","minimum":1,"maximum":5},
"metadata":{"type":"object","additionalProperties":{"type":"string"}}}}},
"chain":{"type":"array","items":{"type":"string"},"minItems":1,"description":"action ids in temporal order"},
"branches":{"type":"array","items":{"type":"object","required":["at","options"],"properties":{"at":{"type":"string","description":"a chain step"},
"condition":{"type":"string"},"options":{"type":"array","minItems":2,"items":{"type":"array","minItems":1,"items":{"type":"string"}}}}}},
"tool_calls":{"type":"array","items":{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"arguments":{"type":"object"}}}}}})";

constexpr const char* kDraft = "https://json-schema.org/draft/2020-12/schema";
/// Action ids: a letter, then up to 23 letters, digits, '_' or '-'. The bound is in the pattern itself, not only in
/// maxLength: llama.cpp's grammar from a schema follows a string's pattern and then ignores its maxLength, and a
/// random-weights model wrote ids of thousands of characters under `*` (tests/real_server).
constexpr const char* kIdPattern = "^[A-Za-z][A-Za-z0-9_-]{0,23}$";

json side_plan_schema(const char* side) {
  json s = json::parse(kPlanSchema);
  s["title"] = std::string("advplan ") + side + " plan";
  s["properties"]["side"] = {{"const", side}};
  return s;
}

/// A judge's reply (docs/RUBRIC.md "LLM judges"): the items the plan fails, each with its evidence.
json judge_verdict_schema() {
  const json item = {{"type", "object"},
                     {"required", {"item_id", "evidence", "rationale"}},
                     {"additionalProperties", false},
                     {"properties",
                      {{"item_id", {{"type", "string"}, {"description", "the id of a rubric item the plan fails"}}},
                       {"evidence", {{"type", "string"}, {"description", "the part of the plan that fails it"}}},
                       {"rationale", {{"type", "string"}}}}}};
  return {{"$schema", kDraft},
          {"title", "advplan judge verdict"},
          {"type", "object"},
          {"required", {"failed_items"}},
          {"additionalProperties", false},
          {"properties", {{"failed_items", {{"type", "array"}, {"items", item}}}}}};
}

/// A quiz agent's reply (docs/GEO.md "The agent protocol"): one tool call, or the answer with a boxed part. An
/// object at the root (OpenAI's strict mode takes no other), holding exactly one of the two.
json quiz_reply_schema() {
  const json call = {{"type", "object"},
                     {"required", {"id", "name", "arguments"}},
                     {"properties",
                      {{"id", {{"type", "string"}}}, {"name", {{"type", "string"}}}, {"arguments", {{"type", "object"}}}}}};
  const json answer = {{"type", "string"}, {"description", "the final message, with \\boxed{...}"}};
  return {{"$schema", kDraft},
          {"title", "advplan quiz reply"},
          {"type", "object"},
          {"minProperties", 1},
          {"maxProperties", 1},
          {"additionalProperties", false},
          {"properties", {{"tool_call", call}, {"answer", answer}}}};
}

json bounded_text(int max_length) { return {{"type", "string"}, {"minLength", 1}, {"maxLength", max_length}}; }

json action_id() {
  return {{"type", "string"}, {"pattern", kIdPattern}, {"minLength", 1}, {"maxLength", PlanSchemaLimits::max_id}};
}

/// One action of `side` in `sc`: an anyOf over the categories, each with its own verbs.
json action_schema(const Scenario& sc, Side side) {
  json assets = json::array(), targets = json::array();
  std::set<std::string> target_set(sc.places.begin(), sc.places.end());
  for (const Asset& a : sc.assets) {
    if (a.side == side) assets.push_back(a.id);
    else target_set.insert(a.id);
  }
  for (const auto& t : target_set) targets.push_back(t);
  json any = json::array();
  for (std::size_t c = 0; c < kNumCategories; ++c) {
    if (sc.verbs[c].empty()) continue;
    json props = {{"id", action_id()},
                  {"asset", {{"enum", assets}}},
                  {"category", {{"const", to_string(static_cast<Category>(c))}}},
                  {"verb", {{"enum", sc.verbs[c]}}},
                  {"priority", {{"type", "integer"}, {"minimum", 1}, {"maximum", 5}}}};
    if (!targets.empty()) props["target"] = {{"enum", targets}};
    any.push_back({{"type", "object"},
                   {"required", {"id", "asset", "category", "verb", "priority"}},
                   {"additionalProperties", false},
                   {"properties", std::move(props)}});
  }
  return {{"anyOf", std::move(any)}};
}

json roles_schema(const Scenario& sc, Side side) {
  json props = json::object();
  for (const Asset& a : sc.assets)
    if (a.side == side) props[a.id] = bounded_text(PlanSchemaLimits::max_id * 2);
  return {{"type", "object"}, {"additionalProperties", false}, {"properties", std::move(props)}};
}

json branches_schema() {
  using L = PlanSchemaLimits;
  const json option = {{"type", "array"}, {"minItems", 1}, {"maxItems", L::max_actions}, {"items", action_id()}};
  const json branch = {
      {"type", "object"},
      {"required", {"at", "condition", "options"}},
      {"additionalProperties", false},
      {"properties",
       {{"at", action_id()},
        {"condition", bounded_text(L::max_text)},
        {"options", {{"type", "array"}, {"minItems", 2}, {"maxItems", L::max_options}, {"items", option}}}}}};
  return {{"type", "array"}, {"maxItems", L::max_branches}, {"items", branch}};
}

/// Drops the keywords OpenAI's strict mode refuses, in place.
void drop_unsupported(json& s) {
  for (const char* k : {"minLength", "maxLength", "pattern", "minItems", "maxItems", "minimum", "maximum", "format",
                        "minProperties", "maxProperties", "$schema", "title"})
    s.erase(k);
}

}  // namespace

const std::vector<std::string>& schema_names() {
  static const std::vector<std::string> names{"plan", "blue_plan", "red_plan", "judge_verdict", "quiz_reply"};
  return names;
}

const std::string& plan_schema_text() {
  static const std::string text(kPlanSchema);
  return text;
}

std::optional<json> named_schema(std::string_view name) {
  if (name == "plan") return json::parse(kPlanSchema);
  if (name == "blue_plan") return side_plan_schema("BLUE");
  if (name == "red_plan") return side_plan_schema("RED");
  if (name == "judge_verdict") return judge_verdict_schema();
  if (name == "quiz_reply") return quiz_reply_schema();
  return std::nullopt;
}

json scenario_plan_schema(const Scenario& sc, Side side) {
  using L = PlanSchemaLimits;
  const json props = {
      {"plan_id", bounded_text(L::max_plan_id)},  // the contract overwrites it; any short text will do
      {"side", {{"const", to_string(side)}}},
      {"objective", bounded_text(L::max_text)},
      {"roles", roles_schema(sc, side)},
      {"actions", {{"type", "array"}, {"minItems", 1}, {"maxItems", L::max_actions}, {"items", action_schema(sc, side)}}},
      {"chain", {{"type", "array"}, {"minItems", 1}, {"maxItems", L::max_actions}, {"items", action_id()}}},
      {"branches", branches_schema()}};
  return {{"$schema", kDraft},
          {"title", "advplan " + std::string(to_string(side)) + " plan for " + sc.id},
          {"type", "object"},
          {"required", {"plan_id", "side", "objective", "actions", "chain"}},
          {"additionalProperties", false},
          {"properties", props}};
}

json strict_subset(const json& schema) {
  if (schema.is_array()) {
    json out = json::array();
    for (const auto& v : schema) out.push_back(strict_subset(v));
    return out;
  }
  if (!schema.is_object()) return schema;
  json out = json::object();
  for (const auto& [k, v] : schema.items()) {
    if (k == "properties") {
      out[k] = json::object();
      for (const auto& [name, sub] : v.items()) out[k][name] = strict_subset(sub);
    } else {
      // oneOf becomes anyOf (strict mode takes anyOf only; the validator still checks the reply).
      const bool sub = k == "items" || k == "anyOf" || k == "oneOf";
      out[k == "oneOf" ? "anyOf" : k] = sub ? strict_subset(v) : v;
    }
  }
  if (out.contains("properties")) {
    json& props = out["properties"];
    const json req = out.value("required", json::array());
    json all = json::array();
    for (const auto& [k, v] : props.items()) {
      all.push_back(k);
      // An optional property becomes required and nullable; the contract drops null members before parsing.
      if (std::find(req.begin(), req.end(), k) == req.end()) v = {{"anyOf", {v, {{"type", "null"}}}}};
    }
    out["required"] = std::move(all);
    out["additionalProperties"] = false;
  }
  drop_unsupported(out);
  return out;
}

}  // namespace advplan::llm
