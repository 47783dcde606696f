// Generation settings (docs/LLM.md "Generation settings"): llm.generation and a policy's own
// policies.<name>.generation reach the request body and the completion cache's key; bad settings are one error
// naming the field.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "advplan/core/error.hpp"
#include "advplan/policy/completion_cache.hpp"
#include "advplan/policy/llm_contract.hpp"
#include "advplan/llm/providers.hpp"
#include "advplan/run/config.hpp"
#include "support/chat_server.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using nlohmann::json;

ExperimentConfig parse(const std::string& extra) {
  return parse_experiment_config("name: g\nseed: 1\ncorpus: {templates: [urban], seeds: [1, 2]}\n"
                                 "conditions: [single]\n" +
                                     extra,
                                 "g.yaml", ADVPLAN_SOURCE_DIR "/configs/experiments");
}

TEST(Generation, SettingsReachTheBodyAndAPolicysOwnReplaceTheFieldsItWrites) {
  const ExperimentConfig cfg = parse(
      "llm:\n  generation: {temperature: 0.7, top_p: 0.9, max_tokens: 512, stop: [END], seed_mode: none,\n"
      "               extra: {reasoning_effort: low, n_probs: 3, flag: true, quoted: \"5\", nested: {a: [1, x]}}}\n"
      "policies:\n  llm_live: {generation: {temperature: 1.2}}\n");
  const GenerationSettings& global = cfg.llm.generation_for("llm");
  EXPECT_EQ(global.temperature, 0.7);
  const GenerationSettings& red = cfg.llm.generation_for("llm_live");
  EXPECT_EQ(red.temperature, 1.2);
  ASSERT_TRUE(red.top_p.has_value());
  EXPECT_EQ(*red.top_p, 0.9);  // inherited from llm.generation
  EXPECT_TRUE(cfg.policy_params.find("llm_live") == cfg.policy_params.end() ||
              !cfg.policy_params.at("llm_live").contains("generation"));

  CompletionRequest req;
  req.messages = {{"user", "hi"}};
  req.seed = 42;
  apply_generation(req, red);
  const json body = json::parse(chat_request_body(req, "m"));
  EXPECT_EQ(body.at("temperature"), 1.2);
  EXPECT_EQ(body.at("top_p"), 0.9);
  EXPECT_EQ(body.at("max_tokens"), 512);
  EXPECT_EQ(body.at("stop"), json::array({"END"}));
  EXPECT_FALSE(body.contains("seed")) << "seed_mode: none sends no seed";
  EXPECT_EQ(body.at("reasoning_effort"), "low");
  EXPECT_EQ(body.at("n_probs"), 3);
  EXPECT_EQ(body.at("flag"), true);
  EXPECT_EQ(body.at("quoted"), "5");
  EXPECT_EQ(body.at("nested"), json::parse(R"({"a": [1, "x"]})"));
  EXPECT_EQ(body.at("model"), "m");
}

TEST(Generation, TheDefaultBodyIsTheOneBeforeSettingsExisted) {
  CompletionRequest req;
  req.messages = {{"user", "hi"}};
  req.seed = 7;
  apply_generation(req, GenerationSettings{});
  EXPECT_EQ(chat_request_body(req, "m"),
            R"({"messages":[{"content":"hi","role":"user"}],"model":"m","seed":7,"temperature":0.0})");
}

TEST(Generation, TheCacheKeyChangesWithEverySetting) {
  CompletionRequest base;
  base.messages = {{"user", "hi"}};
  const std::string k0 = CompletionCache::key_of("e", "m", base);
  auto key_with = [&](auto set) {
    CompletionRequest r = base;
    set(r);
    return CompletionCache::key_of("e", "m", r);
  };
  std::set<std::string> keys{k0};
  keys.insert(key_with([](CompletionRequest& r) { r.temperature = 0.5; }));
  keys.insert(key_with([](CompletionRequest& r) { r.top_p = 0.5; }));
  keys.insert(key_with([](CompletionRequest& r) { r.max_tokens = 10; }));
  keys.insert(key_with([](CompletionRequest& r) { r.stop = {"x"}; }));
  keys.insert(key_with([](CompletionRequest& r) { r.send_seed = false; }));
  keys.insert(key_with([](CompletionRequest& r) { r.extra_json = R"({"a":1})"; }));
  keys.insert(key_with([](CompletionRequest& r) { r.extra_json = R"({"a":2})"; }));
  EXPECT_EQ(keys.size(), 8u);
}

TEST(Generation, BadSettingsAreOneErrorNamingTheField) {
  auto error_of = [](const std::string& extra) {
    try {
      parse(extra);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("llm: {generation: {extra: {model: x}}}\n").find("'model' is set by advplan"), std::string::npos);
  EXPECT_NE(error_of("llm: {generation: {seed_mode: random}}\n").find("seed_mode"), std::string::npos);
  EXPECT_NE(error_of("llm: {generation: {top_p: 3}}\n").find("top_p"), std::string::npos);
  EXPECT_NE(error_of("llm: {generation: {temprature: 1}}\n").find("temprature"), std::string::npos);
  EXPECT_NE(error_of("policies: {llm: {generation: {max_tokens: 0}}}\n").find("max_tokens"), std::string::npos);
}

// Issue 48, item 2: structured output takes a JSON Schema under response_format.json_schema.schema, three levels
// before the schema's own. The plan schema and the judge's reply schema (docs/RUBRIC.md) are accepted and reach the
// server unchanged; extra stays bounded (32 levels).
TEST(Generation, AJsonSchemaForStructuredOutputIsAcceptedAndSent) {
  const std::string judge_schema =
      R"({"type": "object", "required": ["failed_items"], "additionalProperties": false,
          "properties": {"failed_items": {"type": "array", "items": {"type": "object", "additionalProperties": false,
            "required": ["item_id", "evidence", "rationale"],
            "properties": {"item_id": {"type": "string"}, "evidence": {"type": "string"},
                           "rationale": {"type": "string"}}}}}})";
  std::mutex mu;
  std::vector<json> bodies;
  testing::LoopbackServer server([&](const httplib::Request& q, httplib::Response& r) {
    {
      std::lock_guard lock(mu);
      bodies.push_back(json::parse(q.body, nullptr, false));
    }
    r.set_content(testing::chat_reply("{}").dump(), "application/json");
  });
  for (const std::string& schema : {plan_json_schema(), judge_schema}) {
    // JSON is YAML: the schema goes in as it is, on one line (a flow collection's lines would need indenting).
    std::string flat = schema;
    std::replace(flat.begin(), flat.end(), '\n', ' ');
    const ExperimentConfig cfg = parse("llm:\n  generation:\n    extra: {response_format: {type: json_schema, "
                                       "json_schema: {name: reply, strict: true, schema: " + flat + "}}}\n");
    CompletionRequest req;
    req.messages = {{"user", "hi"}};
    apply_generation(req, cfg.llm.generation_for("llm"));
    const Completion c = OpenAiCompatibleClient(server.url(), "m", "", 5, 0, 0).complete(req);
    ASSERT_TRUE(c.ok) << c.error;
    std::lock_guard lock(mu);
    const json& sent = bodies.back();
    ASSERT_TRUE(sent.is_object());
    EXPECT_EQ(sent.at("response_format").at("type"), "json_schema");
    EXPECT_EQ(sent.at("response_format").at("json_schema").at("schema"), json::parse(schema));
  }
  // Still bounded: 33 levels are refused, naming the field and the bound.
  std::string deep = "1";
  for (int i = 0; i < 33; ++i) deep = "{a: " + deep + "}";
  try {
    parse("llm: {generation: {extra: " + deep + "}}\n");
    ADD_FAILURE() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("nested deeper than 32 levels"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("extra"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace advplan
