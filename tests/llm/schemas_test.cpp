// The JSON Schemas of what models write (include/advplan/llm/schemas.hpp, docs/LLM.md "Schemas"), and structured
// output in a chat request. A third-party validator (python3-jsonschema) checks the seed plans and a run's plans.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "advplan/core/vocabulary.hpp"
#include "advplan/llm/schemas.hpp"
#include "advplan/policy/completion_cache.hpp"
#include "advplan/policy/llm_contract.hpp"
#include "advplan/llm/providers.hpp"
#include "advplan/run/config.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {
using json = nlohmann::json;
using namespace advplan::testing;

Scenario first_scenario() { return corpus_scenario(default_experiment_config(), 0); }

TEST(Schemas, ThePromptQuotesTheSchemaAdvplanSchemaPrints) {
  EXPECT_EQ(plan_json_schema(), llm::plan_schema_text());
  EXPECT_EQ(*llm::named_schema("plan"), json::parse(plan_json_schema()));
  for (const auto& name : llm::schema_names()) EXPECT_TRUE(llm::named_schema(name).has_value()) << name;
  EXPECT_FALSE(llm::named_schema("plans").has_value());
  EXPECT_EQ((*llm::named_schema("red_plan"))["properties"]["side"], json({{"const", "RED"}}));
}

TEST(Schemas, ThePerScenarioSchemaFixesTheSideAndListsTheSidesAssets) {
  const Scenario sc = first_scenario();
  const json s = llm::scenario_plan_schema(sc, Side::Red);
  EXPECT_EQ(s["properties"]["side"], json({{"const", "RED"}}));
  EXPECT_FALSE(s["additionalProperties"].get<bool>());
  const json& any = s["properties"]["actions"]["items"]["anyOf"];
  ASSERT_FALSE(any.empty());
  json red_assets = json::array();
  for (const Asset& a : sc.assets)
    if (a.side == Side::Red) red_assets.push_back(a.id);
  for (const json& branch : any) {
    EXPECT_EQ(branch["properties"]["asset"]["enum"], red_assets);
    const auto c = parse_category(branch["properties"]["category"]["const"].get<std::string>());
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(branch["properties"]["verb"]["enum"], json(sc.verbs[static_cast<std::size_t>(*c)]));
  }
}

TEST(Schemas, TheStrictSubsetRequiresEveryPropertyAndDropsBounds) {
  const json s = llm::strict_subset(llm::scenario_plan_schema(first_scenario(), Side::Blue));
  const std::string text = s.dump();
  for (const char* k : {"maxLength", "minItems", "pattern", "\"$schema\""}) EXPECT_EQ(text.find(k), std::string::npos) << k;
  EXPECT_EQ(s["required"].size(), s["properties"].size());
  // branches was optional: now required and nullable
  EXPECT_EQ(s["properties"]["branches"]["anyOf"][1], json({{"type", "null"}}));
}

CompletionRequest structured_request(StructuredOutput mode) {
  CompletionRequest req = build_blue_prompt(first_scenario());
  GenerationSettings g;
  g.structured_output = mode;
  apply_generation(req, g);
  attach_plan_schema(req, first_scenario(), Side::Blue);
  return req;
}

TEST(Schemas, AStructuredRequestCarriesItsResponseFormat) {
  const json off = json::parse(chat_request_body(structured_request(StructuredOutput::off), "m"));
  EXPECT_FALSE(off.contains("response_format"));
  const json obj = json::parse(chat_request_body(structured_request(StructuredOutput::json_object), "m"));
  EXPECT_EQ(obj["response_format"], json({{"type", "json_object"}}));
  const json sch = json::parse(chat_request_body(structured_request(StructuredOutput::json_schema), "m"));
  EXPECT_EQ(sch["response_format"]["type"], "json_schema");
  EXPECT_EQ(sch["response_format"]["json_schema"]["name"], "advplan_plan");
  EXPECT_EQ(sch["response_format"]["json_schema"]["schema"], llm::scenario_plan_schema(first_scenario(), Side::Blue));
  // The completion cache tells the three apart.
  const auto key = [](StructuredOutput m) { return CompletionCache::key_of("http://x", "m", structured_request(m)); };
  EXPECT_NE(key(StructuredOutput::off), key(StructuredOutput::json_schema));
  EXPECT_NE(key(StructuredOutput::json_object), key(StructuredOutput::json_schema));
}

TEST(Schemas, ANullMemberCountsAsAbsent) {
  json j = {{"a", nullptr}, {"b", {{"c", nullptr}, {"d", 1}}}, {"e", json::array({json({{"f", nullptr}})})}};
  drop_null_members(j);
  EXPECT_EQ(j, json({{"b", {{"d", 1}}}, {"e", json::array({json::object()})}}));
}

TEST(SchemasCli, AThirdPartyValidatorAcceptsTheSeedPlansAndARunsPlans) {
  TempDir dir("schemas");
  const std::string schemas = dir / "schemas";
  std::filesystem::create_directories(schemas);
  for (const auto& name : llm::schema_names()) {
    const auto x = advplan("schema " + name, dir);
    ASSERT_EQ(x.status, 0) << x.err;
    write_file(schemas + "/" + name + ".json", x.out);
  }
  const std::string cfg = small_config(dir, {{"framing_mode: metadata", "framing_mode: metadata\ntraces: {plans: true}"}});
  const auto scen = advplan("scenarios " + quote(cfg) + " --out " + quote(dir / "scenarios.jsonl"), dir);
  ASSERT_EQ(scen.status, 0) << scen.err;
  std::ifstream in(dir / "scenarios.jsonl");
  for (std::string line; std::getline(in, line);) {
    const std::string id = json::parse(line)["id"].get<std::string>();
    const auto x = advplan("schema plan --side blue --scenario " + id + " --config " + quote(cfg), dir);
    ASSERT_EQ(x.status, 0) << x.err;
    write_file(schemas + "/" + id + ".json", x.out);
  }
  const std::string check = python() + " " + quote(kSource + "/tests/llm/validate_plans.py");
  const auto seeds = run_command(check + " scenario " + quote(schemas) + " " + quote(dir / "scenarios.jsonl"), dir);
  EXPECT_EQ(seeds.status, 0) << seeds.out << seeds.err;
  ASSERT_EQ(advplan("run " + quote(cfg) + " --out " + quote(dir / "run") + " --progress none", dir).status, 0);
  const auto plans = run_command(check + " run " + quote(schemas) + " " + quote(dir / "run/plans.jsonl"), dir);
  EXPECT_EQ(plans.status, 0) << plans.out << plans.err;
  // The schemas can fail: a seed plan that names an asset of the other side is refused.
  write_file(dir / "edited.jsonl", edited_text(dir / "scenarios.jsonl", {{"\"asset\":\"", "\"asset\":\"X"}}));
  const auto bad = run_command(check + " scenario " + quote(schemas) + " " + quote(dir / "edited.jsonl"), dir);
  EXPECT_EQ(bad.status, 1) << bad.out << bad.err;
}

TEST(SchemasCli, AnUnknownSchemaIsRefusedInOneSentence) {
  TempDir dir("schemas");
  expect_one_line_error(advplan("schema plans", dir));
  expect_one_line_error(advplan("schema judge_verdict --scenario urban-100", dir));
}

}  // namespace
}  // namespace advplan
