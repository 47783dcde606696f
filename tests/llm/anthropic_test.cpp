// The Anthropic Messages provider (docs/LLM.md "Anthropic") against a stand-in written from the published API
// reference (tests/support/messages_server.hpp): the body it sends, the reply it reads, retries and errors, prompt
// caching, and a whole run with llm.provider: anthropic.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "advplan/core/stop_error.hpp"
#include "advplan/llm/providers.hpp"
#include "advplan/pipeline/standard_run.hpp"
#include "advplan/policy/llm_contract.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/run/scenario_lookup.hpp"
#include "support/cli.hpp"
#include "support/fixtures.hpp"
#include "support/messages_server.hpp"

namespace advplan {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr const char* kKeyEnv = "ADVPLAN_TEST_ANTHROPIC_KEY";

class AnthropicTest : public ::testing::Test {
 protected:
  AnthropicTest() {
    endpoint_env_.unset();
    model_env_.unset();
    key_env_.set("sk-ant-SENTINEL");
    cfg_.llm.provider = LlmProvider::anthropic;
    cfg_.llm.endpoint = server_.url();
    cfg_.llm.model = "claude-test";
    cfg_.llm.api_key_env = kKeyEnv;
    cfg_.llm.timeout_s = 5;
    cfg_.llm.backoff_s = 0.01;
  }
  LlmSettings settings(const std::string& model) const {
    LlmSettings s = resolve_llm_settings(cfg_.llm, model, "test");
    return s;
  }
  CompletionRequest red_prompt() const { return build_red_prompt(sc_, sc_.blue_seed_plans.front()); }

  testing::EnvGuard endpoint_env_{"ADVPLAN_LLM_ENDPOINT"}, model_env_{"ADVPLAN_LLM_MODEL"}, key_env_{kKeyEnv};
  testing::MessagesServer server_{"sk-ant-SENTINEL"};
  ExperimentConfig cfg_ = default_experiment_config();
  Scenario sc_ = find_scenario(cfg_, "urban-100");
};

TEST(AnthropicBody, HasATopLevelSystemAMaxTokensNoSeedAndCacheMarksOnTheSharedPrefix) {
  const ExperimentConfig cfg = default_experiment_config();
  const Scenario sc = find_scenario(cfg, "urban-100");
  CompletionRequest req = build_red_prompt(sc, sc.blue_seed_plans.front());
  req.seed = 7;
  req.stop = {"END"};
  const json b = json::parse(messages_request_body(req, "claude-x"));
  EXPECT_EQ(b["model"], "claude-x");
  EXPECT_EQ(b["max_tokens"], 4096);
  EXPECT_FALSE(b.contains("seed"));
  EXPECT_EQ(b["stop_sequences"], json::array({"END"}));
  ASSERT_TRUE(b["system"].is_array());
  EXPECT_EQ(b["system"][0]["text"], req.messages[0].content);
  EXPECT_EQ(b["system"][0]["cache_control"], (json{{"type", "ephemeral"}}));
  ASSERT_EQ(b["messages"].size(), 1u);
  const json& content = b["messages"][0]["content"];
  ASSERT_EQ(content.size(), 2u);  // the scenario (shared, marked), then the BLUE plan being answered
  EXPECT_THAT(content[0]["text"].get<std::string>(), HasSubstr("SCENARIO:"));
  EXPECT_THAT(content[0]["text"].get<std::string>(), ::testing::Not(HasSubstr("BLUE PLAN")));
  EXPECT_TRUE(content[0].contains("cache_control"));
  EXPECT_FALSE(content[1].contains("cache_control"));
  EXPECT_EQ(content[0]["text"].get<std::string>() + content[1]["text"].get<std::string>(), req.messages[1].content);
}

TEST(AnthropicBody, StructuredOutputIsAForcedToolWhoseInputSchemaIsTheSchema) {
  const ExperimentConfig cfg = default_experiment_config();
  const Scenario sc = find_scenario(cfg, "urban-100");
  CompletionRequest req = build_blue_prompt(sc);
  GenerationSettings g;
  g.structured_output = StructuredOutput::json_schema;
  apply_generation(req, g);
  attach_plan_schema(req, sc, Side::Blue);
  const json b = json::parse(messages_request_body(req, "claude-x"));
  ASSERT_EQ(b["tools"].size(), 1u);
  EXPECT_EQ(b["tools"][0]["input_schema"], json::parse(req.output_schema));
  EXPECT_EQ(b["tool_choice"], (json{{"type", "tool"}, {"name", req.schema_name}}));
  EXPECT_FALSE(b.contains("response_format"));
}

TEST(AnthropicReply, ReadsTextToolInputStopReasonAndBothCacheCounts) {
  const Completion t = parse_messages_body(
      R"({"type":"message","model":"claude-x","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],
          "stop_reason":"max_tokens","usage":{"input_tokens":10,"output_tokens":3,"cache_creation_input_tokens":100,
          "cache_read_input_tokens":1000}})", "");
  ASSERT_TRUE(t.ok) << t.error;
  EXPECT_EQ(t.text, "ab");
  EXPECT_EQ(t.finish_reason, "max_tokens");
  EXPECT_EQ(t.prompt_tokens, 1110);
  EXPECT_EQ(t.cached_tokens, 1000);
  EXPECT_EQ(t.cache_write_tokens, 100);
  EXPECT_EQ(t.completion_tokens, 3);
  EXPECT_EQ(t.served_by, "claude-x");
  const Completion u = parse_messages_body(
      R"({"content":[{"type":"tool_use","id":"t","name":"advplan_plan","input":{"plan_id":"p"}}],"stop_reason":"tool_use"})", "");
  ASSERT_TRUE(u.ok);
  EXPECT_EQ(json::parse(u.text), (json{{"plan_id", "p"}}));
  EXPECT_FALSE(parse_messages_body(R"({"type":"message"})", "").ok);
  EXPECT_FALSE(parse_messages_body("[1]", "").ok);
}

TEST_F(AnthropicTest, AValidReplyCarriesTheHeadersAndTheVersion) {
  const Completion c = AnthropicClient(settings("claude-test")).complete(red_prompt());
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_EQ(c.text, OfflineCompletionClient().complete(red_prompt()).text);
  EXPECT_EQ(server_.versions().back(), "2023-06-01");
  EXPECT_GT(c.cache_write_tokens, 0);  // the first sight of the prefix writes it
  const Completion again = AnthropicClient(settings("claude-test")).complete(red_prompt());
  EXPECT_GT(again.cached_tokens, 0);
  EXPECT_EQ(again.cache_write_tokens, 0);
}

TEST_F(AnthropicTest, OverloadAndRateLimitsAreRetriedAndCounted) {
  const Completion o = AnthropicClient(settings("overloaded-once")).complete(red_prompt());
  ASSERT_TRUE(o.ok) << o.error;
  EXPECT_EQ(o.http_retries, 1);
  const Completion r = AnthropicClient(settings("rate-limited")).complete(red_prompt());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.http_retries, 1);
}

TEST_F(AnthropicTest, TypedErrorsAreNamedAndAPromptTooLongIsAContextOverflowNotRetried) {
  const Completion bad = AnthropicClient(settings("bad-request")).complete(red_prompt());
  EXPECT_FALSE(bad.ok);
  EXPECT_THAT(bad.error, HasSubstr("HTTP 400: invalid_request_error: max_tokens"));
  EXPECT_EQ(bad.http_retries, 0);
  const Completion longp = AnthropicClient(settings("too-long")).complete(red_prompt());
  EXPECT_EQ(longp.error_kind, ErrorKind::context_overflow);
  EXPECT_EQ(longp.http_retries, 0);
  EXPECT_THAT(longp.error, HasSubstr("prompt is too long"));
}

TEST_F(AnthropicTest, ARefusedKeyStopsWithoutTheKey) {
  key_env_.set("sk-ant-WRONG");
  try {
    (void)AnthropicClient(settings("claude-test")).complete(red_prompt());
    ADD_FAILURE() << "no stop";
  } catch (const StopRunError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr(kKeyEnv));
    EXPECT_THAT(std::string(e.what()), HasSubstr("authentication_error"));
    EXPECT_THAT(std::string(e.what()), ::testing::Not(HasSubstr("sk-ant-WRONG")));
  }
}

// Issue 48, "done when": a run with llm.provider anthropic completes against the Messages stand-in, with cache
// tokens in run_metadata.json and in the transcripts, and its cost prices cached reads and writes apart.
TEST_F(AnthropicTest, ARunCompletesWithCacheTokensInTheMetadataAndTheTranscripts) {
  cfg_.seed_to = cfg_.seed_from;  // 5 scenarios
  cfg_.studies = {false, false, false};
  cfg_.llm.prices["claude-test"] = TokenPrice{3.0, 15.0, 0.3, 3.75};
  const RunPlan plan =
      prepare_run(cfg_, {{"red_llm", "seed", "llm_live", "main"}, {"red_llm2", "seed", "greedy@4", "main"}});
  testing::TempDir dir("anthropic-run");
  RunOptions opts;
  opts.out_dir = dir / "run";
  opts.threads = 2;
  opts.progress = false;
  opts.studies = false;
  opts.observers = standard_observers(false);
  const RunSummary s = run_experiment(plan, opts);
  EXPECT_EQ(s.failed_rows, 0u);
  const json meta = json::parse(testing::read_file(dir / "run/run_metadata.json"));
  ASSERT_EQ(meta["llm_usage"].size(), 1u);
  const json& u = meta["llm_usage"][0];
  EXPECT_EQ(u["cached_tokens"].get<long long>(), server_.cache_read_sent());
  EXPECT_EQ(u["cache_write_tokens"].get<long long>(), server_.cache_write_sent());
  EXPECT_GT(server_.cache_read_sent(), 0);  // the system prompt is shared by every call
  EXPECT_EQ(u["prompt_tokens"].get<long long>(),
            server_.input_sent() + server_.cache_read_sent() + server_.cache_write_sent());
  const double expected = (static_cast<double>(server_.input_sent()) * 3.0 + server_.cache_read_sent() * 0.3 +
                           server_.cache_write_sent() * 3.75 + server_.output_sent() * 15.0) / 1e6;
  EXPECT_NEAR(meta["llm_cost_usd"].get<double>(), expected, 1e-12);
  long long cached = 0;
  std::istringstream lines(testing::read_file(dir / "run/transcripts.jsonl"));
  for (std::string line; std::getline(lines, line);) cached += json::parse(line)["cached_tokens"].get<long long>();
  EXPECT_EQ(cached, server_.cache_read_sent());
  const std::string md = testing::read_file(dir / "run/run_metadata.json");
  EXPECT_EQ(md.find("sk-ant-SENTINEL"), std::string::npos);
}

}  // namespace
}  // namespace advplan
