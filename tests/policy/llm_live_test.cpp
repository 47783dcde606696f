// The live-model client and policies (docs/LLM.md) against a real HTTP server inside the test process that
// speaks the chat-completions protocol. The model name in each request picks the server's behaviour; valid
// completions are written by OfflineCompletionClient from the same messages, so they are real valid plans.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "advplan/core/error.hpp"
#include "advplan/core/stop_error.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/run/config.hpp"
#include "advplan/policy/blue_policy.hpp"
#include "advplan/llm/providers.hpp"
#include "advplan/policy/red_policy.hpp"
#include "advplan/policy/replan.hpp"
#include "advplan/run/scenario_lookup.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/pipeline/standard_run.hpp"
#include "advplan/io/csv.hpp"
#include "support/chat_server.hpp"
#include "support/fixtures.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kKeyEnv = "ADVPLAN_TEST_LLM_KEY";
constexpr const char* kSentinel = "sk-SENTINEL-123";

/// A chat-completions server on 127.0.0.1. Behaviour by request model: "prose-once", "prose-always",
/// "429-once", "429-retry-after", "500-twice", "503-always", "401" (echoes the bearer token back, as some
/// servers do), "hang", "no-choices"; any other model answers with a valid plan.
class FakeChatServer {
 public:
  FakeChatServer() : server_([this](const httplib::Request& q, httplib::Response& r) { handle(q, r); }) {}
  std::string url() const { return server_.url(); }

  struct Seen {
    std::string path, model, authorization;
  };
  std::vector<Seen> seen() const {
    std::lock_guard lock(mu_);
    return seen_;
  }
  int prompt_tokens_sent() const { return prompt_tokens_sent_; }
  int completion_tokens_sent() const { return completion_tokens_sent_; }

 private:
  void handle(const httplib::Request& q, httplib::Response& r) {
    const json body = json::parse(q.body, nullptr, false);
    const std::string model = testing::requested_model(body);
    int n = 0;  // requests of this model before this one
    {
      std::lock_guard lock(mu_);
      n = count_[model]++;
      seen_.push_back({q.path, model, q.get_header_value("Authorization")});
    }
    const CompletionRequest req = testing::chat_request(body);
    const bool reprompt = req.messages.size() > 2;

    if (model == "429-once" && n == 0) return error(r, 429, "rate limited");
    if (model == "429-retry-after" && n == 0) {
      r.set_header("Retry-After", "1");
      return error(r, 429, "rate limited");
    }
    if (model == "500-twice" && n < 2) return error(r, 500, "internal error");
    if (model == "503-always") return error(r, 503, "overloaded");
    if (model == "context-full") {  // llama.cpp's answer when a slot's context is full (issue 48, finding 3)
      r.status = 500;
      return r.set_content(R"({"error":{"code":500,"message":"Context size has been exceeded.","type":"exceed_context_size_error"}})",
                           "application/json");
    }
    if (model == "fingerprint") {
      json out = testing::chat_reply(OfflineCompletionClient().complete(req).text);
      out["model"] = "tiny-q4";
      out["system_fingerprint"] = "b6000-1a2b3c4d";
      return r.set_content(out.dump(), "application/json");
    }
    if (model == "401")
      return error(r, 401, "Incorrect API key provided: " + q.get_header_value("Authorization"));
    if (model == "no-choices")
      return r.set_content(R"({"id":"c1","object":"chat.completion","choices":[]})", "application/json");
    if (model == "hang")
      for (int i = 0; i < 200 && !server_.stopping(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (hostile(model, q, r)) return;

    std::string text = OfflineCompletionClient().complete(req).text;
    if (model == "prose-always" || (model == "prose-once" && !reprompt))
      text = "Sorry, I cannot write JSON today.";
    int prompt_tokens = 0;
    for (const auto& m : req.messages) prompt_tokens += static_cast<int>(m.content.size() / 4);
    const int completion_tokens = static_cast<int>(text.size() / 4) + 1;
    prompt_tokens_sent_ += prompt_tokens;
    completion_tokens_sent_ += completion_tokens;
    json out = testing::chat_reply(text);
    out["usage"] = {{"prompt_tokens", prompt_tokens}, {"completion_tokens", completion_tokens}};
    r.set_content(out.dump(), "application/json");
  }
  /// Hostile behaviours (the hardening issue): "slowloris" trickles one byte every 50 ms for up to 10 s;
  /// "huge" sends a 6 MiB body; "gzip" a gzip-encoded body; "echo-key" a valid plan with the bearer token in its
  /// objective; "deep" a body nested 40,000 levels; "bad-tokens" a valid plan with usage counts -5 and 3e9;
  /// "latin1" a 400 error whose body is Latin-1 text.
  bool hostile(const std::string& model, const httplib::Request& q, httplib::Response& r) {
    if (model == "slowloris") {
      r.set_chunked_content_provider("application/json", [this](std::size_t offset, httplib::DataSink& sink) {
        if (server_.stopping() || offset >= 200) {
          sink.done();
          return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        sink.write(offset == 0 ? "{" : " ", 1);
        return true;
      });
      return true;
    }
    if (model == "huge") {
      r.set_content("{\"pad\": \"" + std::string(6u << 20, 'x') + "\"}", "application/json");
      return true;
    }
    if (model == "gzip") {
      // A tiny gzip stream of "{}": the client must refuse any encoding it did not ask for.
      static const unsigned char gz[] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xab, 0xae,
                                         0x05, 0x00, 0x43, 0xbf, 0xa6, 0xa3, 0x02, 0x00, 0x00, 0x00};
      r.set_header("Content-Encoding", "gzip");
      r.set_content(std::string(reinterpret_cast<const char*>(gz), sizeof gz), "application/json");
      return true;
    }
    if (model == "deep") {
      r.set_content(std::string(40000, '[') + std::string(40000, ']'), "application/json");
      return true;
    }
    if (model == "latin1") {
      r.status = 400;
      r.set_content("{\"error\": \"caf\xe9 cr\xe8me\"}", "application/json");
      return true;
    }
    if (model == "echo-key" || model == "bad-tokens") {
      const CompletionRequest req = testing::chat_request(json::parse(q.body, nullptr, false));
      json plan = json::parse(OfflineCompletionClient().complete(req).text, nullptr, false);
      if (plan.is_discarded()) plan = json::object();
      if (model == "echo-key") {
        plan["objective"] = "Secure the objective. " + q.get_header_value("Authorization");
        plan["actions"][0]["asset"] = q.get_header_value("Authorization");  // quoted by the validator
      }
      json out = {{"choices", {{{"message", {{"role", "assistant"}, {"content", plan.dump()}}}}}}};
      if (model == "bad-tokens") out["usage"] = {{"prompt_tokens", -5}, {"completion_tokens", 3000000000LL}};
      r.set_content(out.dump(), "application/json");
      return true;
    }
    return false;
  }

  static void error(httplib::Response& r, int status, const std::string& message) {
    r.status = status;
    r.set_content(json{{"error", {{"message", message}}}}.dump(), "application/json");
  }

  mutable std::mutex mu_;
  std::vector<Seen> seen_;
  std::map<std::string, int> count_;
  std::atomic<int> prompt_tokens_sent_{0}, completion_tokens_sent_{0};
  testing::LoopbackServer server_;  // last: it stops before the state its handler uses goes
};

using testing::EnvGuard;

class LlmLiveTest : public ::testing::Test {
 protected:
  LlmLiveTest() {
    endpoint_env_.unset();
    model_env_.unset();
    key_env_.unset();
    cfg_.llm.endpoint = server_.url();
    cfg_.llm.model = "valid";
    cfg_.llm.api_key_env = kKeyEnv;
    cfg_.llm.timeout_s = 5;
    cfg_.llm.max_retries = 3;
    cfg_.llm.backoff_s = 0.01;
  }
  OpenAiCompatibleClient client(const std::string& model, double timeout_s = 5, int max_retries = 3) const {
    return OpenAiCompatibleClient(server_.url(), model, "", timeout_s, max_retries, 0.01);
  }
  CompletionRequest red_prompt() const { return build_red_prompt(sc_, sc_.blue_seed_plans.front()); }

  EnvGuard endpoint_env_{"ADVPLAN_LLM_ENDPOINT"}, model_env_{"ADVPLAN_LLM_MODEL"}, key_env_{kKeyEnv};
  FakeChatServer server_;
  ExperimentConfig cfg_ = default_experiment_config();
  Scenario sc_ = find_scenario(cfg_, "urban-100");
};

TEST(OpenAiClientUrl, AcceptsABaseWithOrWithoutV1) {
  EXPECT_EQ(OpenAiCompatibleClient("http://127.0.0.1:8080", "m", "", 1, 0, 0).path(), "/v1/chat/completions");
  EXPECT_EQ(OpenAiCompatibleClient("http://127.0.0.1:8080/", "m", "", 1, 0, 0).path(),
            "/v1/chat/completions");
  // A base ending in /v1 gets /chat/completions appended, so the path is the same.
  EXPECT_EQ(OpenAiCompatibleClient("https://api.example.com/v1", "m", "", 1, 0, 0).path(),
            "/v1/chat/completions");
  EXPECT_EQ(OpenAiCompatibleClient("https://api.example.com/v1/", "m", "", 1, 0, 0).origin(),
            "https://api.example.com");
  EXPECT_EQ(OpenAiCompatibleClient("http://h:1/proxy", "m", "", 1, 0, 0).path(),
            "/proxy/v1/chat/completions");
  EXPECT_EQ(OpenAiCompatibleClient("http://h:1/proxy/v1", "m", "", 1, 0, 0).path(),
            "/proxy/v1/chat/completions");
  EXPECT_THROW(OpenAiCompatibleClient("ftp://h", "m", "", 1, 0, 0), PolicyError);
  EXPECT_THROW(OpenAiCompatibleClient("127.0.0.1:8080", "m", "", 1, 0, 0), PolicyError);
  EXPECT_THROW(OpenAiCompatibleClient("http://h:1", "m", "", 0, 0, 0), PolicyError);
}

TEST_F(LlmLiveTest, ValidCompletionCarriesTextAndTokens) {
  const Completion c = client("valid").complete(red_prompt());
  ASSERT_TRUE(c.ok) << c.error;
  // The server answers with the offline client's reply to the messages it received: equal text means the
  // messages arrived intact and the content came back unaltered.
  EXPECT_EQ(c.text, OfflineCompletionClient().complete(red_prompt()).text);
  EXPECT_EQ(c.prompt_tokens, server_.prompt_tokens_sent());
  EXPECT_EQ(c.completion_tokens, server_.completion_tokens_sent());
  EXPECT_EQ(c.http_retries, 0);
  const auto seen = server_.seen();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].path, "/v1/chat/completions");
  EXPECT_EQ(seen[0].authorization, "");  // no key, no header
}

TEST_F(LlmLiveTest, BaseEndingInV1PostsToChatCompletions) {
  const Completion c =
      OpenAiCompatibleClient(server_.url() + "/v1/", "valid", "", 5, 0, 0).complete(red_prompt());
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_EQ(server_.seen().at(0).path, "/v1/chat/completions");
}

TEST_F(LlmLiveTest, ContractSumsReportedTokens) {
  const auto res = run_contract(client("valid"), red_prompt(), sc_, Side::Red, 2, "x");
  ASSERT_TRUE(res.plan) << res.failure;
  EXPECT_TRUE(res.stats.tokens_reported);
  EXPECT_GT(res.stats.prompt_tokens, 0);
  EXPECT_EQ(res.stats.prompt_tokens, server_.prompt_tokens_sent());
  EXPECT_EQ(res.stats.completion_tokens, server_.completion_tokens_sent());
}

TEST_F(LlmLiveTest, MalformedCompletionIsRepromptedThenParsed) {
  const auto res = run_contract(client("prose-once"), red_prompt(), sc_, Side::Red, 1, "x");
  ASSERT_TRUE(res.plan) << res.failure;
  EXPECT_EQ(res.stats.retries, 1);
  EXPECT_EQ(res.stats.failed, 0);
  EXPECT_EQ(server_.seen().size(), 2u);
  EXPECT_EQ(res.stats.prompt_tokens, server_.prompt_tokens_sent());
}

TEST_F(LlmLiveTest, AlwaysMalformedIsAContractFailure) {
  const auto res = run_contract(client("prose-always"), red_prompt(), sc_, Side::Red, 2, "x");
  EXPECT_FALSE(res.plan);
  EXPECT_EQ(res.stats.failed, 1);
  EXPECT_EQ(res.stats.retries, 2);
  EXPECT_THAT(res.failure, HasSubstr("invalid plan"));
  EXPECT_EQ(server_.seen().size(), 3u);
}

TEST_F(LlmLiveTest, RateLimitIsRetriedOnce) {
  const Completion c = client("429-once").complete(red_prompt());
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_EQ(c.http_retries, 1);
  EXPECT_EQ(server_.seen().size(), 2u);
  const auto res = run_contract(client("429-once"), red_prompt(), sc_, Side::Red, 1, "x");
  EXPECT_EQ(res.stats.http_retries, 0);  // the server's one 429 was spent above
}

TEST_F(LlmLiveTest, RetryAfterIsHonoured) {
  const auto t0 = std::chrono::steady_clock::now();
  const Completion c = client("429-retry-after").complete(red_prompt());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_EQ(c.http_retries, 1);
  EXPECT_GE(s, 0.95);  // Retry-After: 1, against a backoff of 0.01 s
}

TEST_F(LlmLiveTest, ServerErrorsAreRetriedAndCounted) {
  const auto res = run_contract(client("500-twice"), red_prompt(), sc_, Side::Red, 1, "x");
  ASSERT_TRUE(res.plan) << res.failure;
  EXPECT_EQ(res.stats.http_retries, 2);
}

// Issue 48, finding 3: a full context fails again on every retry, so it is named and not retried.
TEST_F(LlmLiveTest, AContextOverflowIsNamedAndNotRetried) {
  const Completion c = client("context-full", 5, 3).complete(red_prompt());
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.error_kind, ErrorKind::context_overflow);
  EXPECT_EQ(c.http_retries, 0);
  EXPECT_THAT(c.error, HasSubstr("-c at least slots x (prompt + max_tokens)"));
  int asked = 0;
  for (const auto& s : server_.seen()) asked += s.model == "context-full";
  EXPECT_EQ(asked, 1);
}

// Issue 48, finding 11: what the server says served a call is kept with it.
TEST_F(LlmLiveTest, TheServerThatAnsweredIsRecorded) {
  const Completion c = client("fingerprint", 5, 0).complete(red_prompt());
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_EQ(c.served_by, "tiny-q4 b6000-1a2b3c4d");
  EXPECT_EQ(client("valid", 5, 0).complete(red_prompt()).served_by, "");
}

TEST_F(LlmLiveTest, RetriesStopAtMaxRetries) {
  const Completion c = client("503-always", 5, 2).complete(red_prompt());
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.http_retries, 2);
  EXPECT_THAT(c.error, HasSubstr("HTTP 503: "));
  EXPECT_THAT(c.error, HasSubstr("overloaded"));
  EXPECT_EQ(server_.seen().size(), 3u);
}

// A missing or refused key (HTTP 401, 403) is not one call's failure: every further request would fail the same way,
// so the client throws StopRunError, one sentence naming the endpoint and the key's variable, never the key
// (docs/LLM.md "Retries, backoff and timeouts"). Not retried.
TEST_F(LlmLiveTest, UnauthorizedStopsWithOneSentenceNamingTheEndpointAndTheVariable) {
  cfg_.llm.model = "401";
  for (const bool with_key : {false, true}) {
    if (with_key) key_env_.set(kSentinel);
    const std::size_t before = server_.seen().size();
    try {
      (void)OpenAiCompatibleClient(resolve_llm_settings(cfg_.llm, "", "llm_live")).complete(red_prompt());
      ADD_FAILURE() << "no StopRunError";
    } catch (const StopRunError& e) {
      const std::string what = e.what();
      EXPECT_THAT(what, HasSubstr(server_.url() + "/v1/chat/completions"));
      EXPECT_THAT(what, HasSubstr("HTTP 401"));
      EXPECT_THAT(what, HasSubstr(kKeyEnv));
      EXPECT_THAT(what, HasSubstr(with_key ? "was refused" : "is not set"));
      EXPECT_THAT(what, Not(HasSubstr(kSentinel)));
      EXPECT_EQ(what.find('\n'), std::string::npos);
    }
    EXPECT_EQ(server_.seen().size(), before + 1) << "a 401 is not retried";
  }
}

TEST_F(LlmLiveTest, KeyNeverAppearsInErrors) {
  key_env_.set(kSentinel);
  cfg_.llm.model = "401";
  const LlmSettings s = resolve_llm_settings(cfg_.llm, "", "llm_live");
  auto stop_message = [](const auto& call) {
    try {
      call();
    } catch (const StopRunError& e) {
      return std::string(e.what());
    }
    return std::string("no StopRunError");
  };
  RedRequest req;
  req.scenario = &sc_;
  req.blue = &sc_.blue_seed_plans.front();
  req.weights = cfg_.quality;
  for (const std::string& what :
       {stop_message([&] { (void)OpenAiCompatibleClient(s).complete(red_prompt()); }),
        stop_message([&] { (void)make_red_policy("llm_live", policy_context(cfg_))->respond(req); }),
        stop_message([&] { (void)run_contract(OpenAiCompatibleClient(s), red_prompt(), sc_, Side::Red, 1, "x"); })}) {
    EXPECT_THAT(what, HasSubstr("HTTP 401"));
    EXPECT_THAT(what, HasSubstr("Incorrect API key"));
    EXPECT_THAT(what, Not(HasSubstr(kSentinel)));
  }
  const auto seen = server_.seen();
  ASSERT_EQ(seen.size(), 3u);  // one request each: no retry, no re-prompt
  for (const auto& x : seen) EXPECT_EQ(x.authorization, std::string("Bearer ") + kSentinel);
}

// A call that brought no completion is not re-prompted: a dead server gets 1 + max_retries requests, not
// (1 + max_retries) x (1 + max_repairs), and contract_retries counts re-prompts after unusable completions only.
TEST_F(LlmLiveTest, ATransportFailureIsNotReprompted) {
  const auto res = run_contract(client("503-always", 5, 1), red_prompt(), sc_, Side::Red, 2, "x");
  EXPECT_FALSE(res.plan);
  EXPECT_THAT(res.failure, HasSubstr("HTTP 503"));
  EXPECT_EQ(res.stats.failed, 1);
  EXPECT_EQ(res.stats.retries, 0);
  EXPECT_EQ(res.stats.http_retries, 1);
  EXPECT_EQ(res.transcript.calls.size(), 1u);
  EXPECT_EQ(server_.seen().size(), 2u);
}

TEST_F(LlmLiveTest, HangingServerTimesOut) {
  const auto t0 = std::chrono::steady_clock::now();
  const Completion c = client("hang", 0.5, 0).complete(red_prompt());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.error, HasSubstr("timeout"));
  EXPECT_GE(s, 0.45);
  EXPECT_LT(s, 1.5);
}

TEST_F(LlmLiveTest, MissingChoicesIsAnError) {
  const Completion c = client("no-choices").complete(red_prompt());
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.error, HasSubstr("choices[0].message.content"));
  const auto res = run_contract(client("no-choices"), red_prompt(), sc_, Side::Red, 0, "x");
  EXPECT_FALSE(res.plan);
  EXPECT_THAT(res.failure, HasSubstr("choices[0].message.content"));
}

TEST_F(LlmLiveTest, RefusedConnectionIsRetriedThenReported) {
  std::string url;
  {
    FakeChatServer gone;
    url = gone.url();
  }
  const Completion c = OpenAiCompatibleClient(url, "valid", "", 2, 1, 0.01).complete(red_prompt());
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.http_retries, 1);
  EXPECT_THAT(c.error, HasSubstr(url));
}

TEST_F(LlmLiveTest, ConcurrentCallsAllSucceed) {
  const OpenAiCompatibleClient cli = client("valid");
  std::vector<Completion> out(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < out.size(); ++i)
    threads.emplace_back([&, i] { out[i] = cli.complete(red_prompt()); });
  for (auto& t : threads) t.join();
  for (const auto& c : out) EXPECT_TRUE(c.ok) << c.error;
  EXPECT_EQ(server_.seen().size(), out.size());
}

TEST_F(LlmLiveTest, RedPolicyRespondsEndToEnd) {
  const auto red = make_red_policy("llm_live", policy_context(cfg_));
  EXPECT_EQ(red->label(), "llm_live");
  EXPECT_EQ(red->info().thread_safety, ThreadSafety::constant);
  EXPECT_EQ(red->params().at("max_repairs"), 1.0);
  RedRequest req;
  req.scenario = &sc_;
  req.blue = &sc_.blue_seed_plans.front();
  req.run_seed = cfg_.seed;
  req.weights = cfg_.quality;
  const RedResponse r = red->respond(req);
  ASSERT_NE(r.chosen(), nullptr) << r.failure;
  EXPECT_TRUE(validate_plan(r.chosen()->plan, sc_, Side::Red).empty());
  EXPECT_EQ(r.chosen()->plan.plan_id, "urban-100/red/llm_live");
  EXPECT_TRUE(r.contract.tokens_reported);
  EXPECT_EQ(r.contract.prompt_tokens, server_.prompt_tokens_sent());
  EXPECT_EQ(r.contract.completion_tokens, server_.completion_tokens_sent());
  EXPECT_EQ(server_.seen().at(0).model, "valid");
}

TEST_F(LlmLiveTest, BluePolicyPlansEndToEnd) {
  cfg_.llm.model = "configured-model";
  const auto blue = make_blue_policy("llm:test-model", policy_context(cfg_));
  EXPECT_EQ(blue->label(), "llm:test-model");
  Rng rng(1);
  const BluePlanResult r = blue->plan(sc_, rng);
  ASSERT_TRUE(r.plan) << r.failure;
  EXPECT_TRUE(validate_plan(*r.plan, sc_, Side::Blue).empty());
  EXPECT_EQ(r.plan->plan_id, "urban-100/blue/llm");
  EXPECT_TRUE(r.contract.tokens_reported);
  EXPECT_EQ(r.contract.prompt_tokens, server_.prompt_tokens_sent());
  for (const auto& s : server_.seen()) EXPECT_EQ(s.model, "test-model");  // the spec's model wins
}

TEST_F(LlmLiveTest, BluePolicyReplansThroughTheSameContract) {
  // docs/POLICIES.md "6. Replanning": with replans: true the model gets the scenario, the plan and the observed state
  // in marked sections, and its answer goes through the plan parser and validator.
  const Plan* seed = nullptr;
  Scenario sc;
  for (const auto& id : {"urban-100", "urban-101", "urban-102", "urban-103"}) {
    sc = find_scenario(cfg_, id);
    if (!sc.blue_seed_plans.front().branches.empty()) break;
  }
  seed = &sc.blue_seed_plans.front();
  ASSERT_FALSE(seed->branches.empty());
  DecisionPoint d;
  d.plan = seed;
  d.step = 12;
  d.own = 0.61234567;
  d.other = 0.8;
  for (const auto& id : seed->chain) {
    (d.done.empty() || d.done.back() != seed->branches[0].at ? d.done : d.remaining).push_back(id);
  }
  const nlohmann::json request = replan_request(sc, d);
  EXPECT_EQ(request.at("observed").at("own_strength").get<double>(), 0.61234567);  // as the engine has it

  const auto off = make_blue_policy("llm:test-model", policy_context(cfg_));
  EXPECT_FALSE(off->replans());  // not asked for
  cfg_.policy_params["llm"]["replans"] = 1;
  const auto blue = make_blue_policy("llm:test-model", policy_context(cfg_));
  EXPECT_TRUE(blue->replans());
  const ReplanResult r = blue->replan(sc, request);
  ASSERT_TRUE(r.plan) << r.failure;
  EXPECT_TRUE(validate_plan(*r.plan, sc, Side::Blue).empty());
  EXPECT_EQ(r.plan->plan_id, sc.id + "/blue/llm/replan");
  ASSERT_FALSE(r.transcript.calls.empty());
  const std::string& prompt = r.transcript.messages.at(1).content;
  for (const char* part : {"SCENARIO:", "PLAN:", "STATE:", "\"own_strength\":0.61234567", "\"remaining\""})
    EXPECT_NE(prompt.find(part), std::string::npos) << part;
  EXPECT_EQ(server_.seen().back().model, "test-model");
  // A model that never answers with JSON: the call's failure, no crash.
  const auto prose = make_blue_policy("llm:prose-always", policy_context(cfg_));
  const ReplanResult bad = prose->replan(sc, request);
  EXPECT_FALSE(bad.plan);
  EXPECT_FALSE(bad.failure.empty());
}

TEST_F(LlmLiveTest, EnvironmentOverridesEndpointAndModel) {
  cfg_.llm.endpoint = "http://127.0.0.1:1";  // nothing listens there; the environment must win
  endpoint_env_.set(server_.url());
  model_env_.set("env-model");
  Rng rng(1);
  const BluePlanResult r = make_blue_policy("llm", policy_context(cfg_))->plan(sc_, rng);
  ASSERT_TRUE(r.plan) << r.failure;
  EXPECT_EQ(server_.seen().at(0).model, "env-model");
}

TEST_F(LlmLiveTest, NoEndpointFailsBeforeAnyWork) {
  cfg_.llm.endpoint = "";
  try {
    (void)make_red_policy("llm_live", policy_context(cfg_));
    ADD_FAILURE() << "no PolicyError";
  } catch (const PolicyError& e) {
    EXPECT_STREQ(e.what(), "llm_live: no endpoint: set llm.endpoint in the config or ADVPLAN_LLM_ENDPOINT");
  }
  try {
    (void)make_blue_policy("llm:m", policy_context(cfg_));
    ADD_FAILURE() << "no PolicyError";
  } catch (const PolicyError& e) {
    EXPECT_STREQ(e.what(), "llm:m: no endpoint: set llm.endpoint in the config or ADVPLAN_LLM_ENDPOINT");
  }
  EXPECT_TRUE(server_.seen().empty());
}

// ---- Hostile servers (the hardening issue) ----------------------------------------------------------

TEST_F(LlmLiveTest, ASlowlorisServerIsCutAtTheDeadline) {
  const auto t0 = std::chrono::steady_clock::now();
  const Completion c = client("slowloris", 1.0, 0).complete(red_prompt());
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.error, HasSubstr("timeout: no complete response"));
  EXPECT_LT(took, 3.0) << "each read is fast, but the request as a whole must end at its deadline";
}

TEST_F(LlmLiveTest, AnOversizedBodyIsRefused) {
  const Completion c = client("huge", 10, 0).complete(red_prompt());
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.error, HasSubstr("response body exceeds 4194304 bytes"));
  auto small = client("valid", 10, 0);
  small.set_max_response_bytes(64);
  EXPECT_THAT(small.complete(red_prompt()).error, HasSubstr("response body exceeds 64 bytes"));
}

TEST_F(LlmLiveTest, ACompressedBodyIsRefusedAndNotAskedFor) {
  const Completion c = client("gzip", 5, 0).complete(red_prompt());
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.error, "the server sent a compressed body (Content-Encoding: gzip) that was not asked for");
}

TEST_F(LlmLiveTest, ADeepBodyIsAFailureNotACrash) {
  const Completion c = client("deep", 5, 0).complete(red_prompt());
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.error, "response JSON nests deeper than 64 levels");
}

TEST_F(LlmLiveTest, NonUtf8ErrorBodiesAreQuotedAsValidUtf8) {
  const Completion c = client("latin1", 5, 0).complete(red_prompt());
  EXPECT_FALSE(c.ok);
  EXPECT_THAT(c.error, HasSubstr("HTTP 400: "));
  EXPECT_THAT(c.error, HasSubstr("caf\xEF\xBF\xBD cr"));
}

TEST_F(LlmLiveTest, AnEchoedKeyIsRedactedFromTextAndFailures) {
  const OpenAiCompatibleClient keyed(server_.url(), "echo-key", kSentinel, 5, 0, 0.01);
  const Completion c = keyed.complete(red_prompt());
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_THAT(c.text, Not(HasSubstr(kSentinel)));
  EXPECT_THAT(c.text, HasSubstr("[redacted]"));
  const auto res = run_contract(keyed, red_prompt(), sc_, Side::Red, 1, "x");
  EXPECT_FALSE(res.plan);
  EXPECT_THAT(res.failure, HasSubstr("[redacted]"));
  EXPECT_THAT(res.failure, Not(HasSubstr(kSentinel)));
}

TEST_F(LlmLiveTest, BadTokenCountsAreNotReportedOrSaturate) {
  const Completion c = client("bad-tokens", 5, 0).complete(red_prompt());
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_EQ(c.prompt_tokens, -1);
  EXPECT_EQ(c.completion_tokens, std::numeric_limits<int>::max());
  ContractStats a;
  a.prompt_tokens = std::numeric_limits<int>::max() - 1;
  ContractStats b;
  b.prompt_tokens = 10;
  b.completion_tokens = -7;
  a += b;
  EXPECT_EQ(a.prompt_tokens, std::numeric_limits<int>::max());
  EXPECT_EQ(a.completion_tokens, 0);
  const auto res = run_contract(client("bad-tokens", 5, 0), red_prompt(), sc_, Side::Red, 1, "x");
  EXPECT_GE(res.stats.prompt_tokens, 0);
  EXPECT_EQ(res.stats.completion_tokens, std::numeric_limits<int>::max());
}

/// A run into `out` at two threads with a checkpoint after every scenario, so a limit can stop it between any two.
RunOptions checkpointed_options(const std::string& out, RunObservers observers) {
  RunOptions opts;
  opts.out_dir = out;
  opts.threads = 2;
  opts.progress = false;
  opts.studies = false;
  opts.checkpoint_every = 1;
  opts.observers = std::move(observers);
  return opts;
}

// --max-tokens stops a run after the scenario whose calls pass the limit, resumably; the resumed run ends in the
// bytes of a run without a limit, and run_metadata.json prices the calls (docs/LLM.md "Costs and limits").
TEST_F(LlmLiveTest, AMaxTokensStopResumesToTheBytesOfAnUnlimitedRun) {
  cfg_.seed_to = cfg_.seed_from + 1;  // 10 scenarios
  cfg_.studies = {false, false, false};
  cfg_.llm.prices["valid"] = {2.0, 8.0};
  const RunPlan plan = prepare_run(cfg_, {{"llm_live", "seed", "llm_live", "main"}});
  advplan::testing::TempDir dir("llm-limits");
  auto options = [&](const std::string& out) { return checkpointed_options(dir / out, standard_observers(false)); };
  const RunSummary full = run_experiment(plan, options("full"));
  ASSERT_EQ(full.failed_rows, 0u);
  ASSERT_EQ(full.usage.size(), 1u);
  const ModelUsage& u = full.usage.front();
  EXPECT_EQ(u.role, "red");
  EXPECT_EQ(u.model, "valid");
  EXPECT_GE(u.calls, 10u);
  const std::uint64_t tokens = u.prompt_tokens + u.completion_tokens;
  const json meta = json::parse(advplan::testing::read_file(dir / "full/run_metadata.json"));
  EXPECT_NEAR(meta.at("llm_cost_usd").get<double>(),
              (static_cast<double>(u.prompt_tokens) * 2.0 + static_cast<double>(u.completion_tokens) * 8.0) / 1e6, 1e-12);

  RunOptions limited = options("cut");
  limited.max_tokens = tokens / 3;  // about a third of the way
  try {
    run_experiment(plan, limited);
    FAIL() << "the run did not stop at --max-tokens";
  } catch (const RunLimitReached& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("--max-tokens"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("--resume"));
  }
  const auto kept = io::CsvTable::read(dir / "cut/.advplan-work/scenarios.csv");
  EXPECT_GT(kept.size(), 0u);
  EXPECT_LT(kept.size(), 10u);
  RunOptions resume = options("cut");
  resume.resume = true;
  const RunSummary rest = run_experiment(plan, resume);
  EXPECT_EQ(rest.resumed_from, kept.size());
  EXPECT_EQ(advplan::testing::compare_runs(dir / "full", dir / "cut"), "");
}

// A resumed run saw only the later scenarios; it grades the earlier ones' external BLUE plans from plans.jsonl, so
// its rubric/ is the bytes of an uninterrupted run's, the llm: policy's briefs included.
TEST_F(LlmLiveTest, AResumedRunGradesTheEarlierExternalPlansFromPlansJsonl) {
  cfg_.seed_to = cfg_.seed_from + 1;  // 10 scenarios
  cfg_.studies = {true, false, false};
  const RunPlan plan = prepare_run(cfg_, {{"llm_blue", "llm:valid", "single", "main"}});
  advplan::testing::TempDir dir("llm-resume-rubric");
  auto options = [&](const std::string& out) {
    return checkpointed_options(dir / out, standard_observers(false, true));
  };
  const RunSummary full = run_experiment(plan, options("full"));
  ASSERT_EQ(full.failed_rows, 0u);
  ASSERT_EQ(full.usage.size(), 1u);
  const std::uint64_t tokens = full.usage.front().prompt_tokens + full.usage.front().completion_tokens;
  const auto briefs = io::CsvTable::read(dir / "full/rubric/scores_per_brief.csv");
  std::size_t llm_briefs = 0;
  for (const auto& row : briefs.rows()) llm_briefs += row[briefs.col("model")] == "llm:valid";
  EXPECT_GT(llm_briefs, 0u) << "the llm: policy's plans were left out of an uninterrupted run's rubric/";

  RunOptions limited = options("cut");
  limited.max_tokens = tokens / 3;
  EXPECT_THROW(run_experiment(plan, limited), RunLimitReached);
  const auto kept = io::CsvTable::read(dir / "cut/.advplan-work/scenarios.csv");
  ASSERT_GT(kept.size(), 0u);
  ASSERT_LT(kept.size(), 10u);
  RunOptions resume = options("cut");
  resume.resume = true;
  EXPECT_EQ(run_experiment(plan, resume).resumed_from, kept.size());
  EXPECT_EQ(advplan::testing::compare_runs(dir / "full", dir / "cut"), "");
}

// Issue 48, item 1: a failed row keeps the contract statistics and the tokens of every call behind it, RED's as well
// as BLUE's (docs/TRACES.md "per_scenario.csv"), so the rows' tokens add up to what the server counted.
TEST_F(LlmLiveTest, FailedRowsKeepTheirContractStatisticsAndTokens) {
  cfg_.seed_to = cfg_.seed_from;  // 5 scenarios
  cfg_.studies = {false, false, false};
  cfg_.llm.model = "prose-always";
  cfg_.llm.max_repairs = 1;
  const RunPlan plan =
      prepare_run(cfg_, {{"red_llm", "seed", "llm_live", "main"}, {"blue_llm", "llm:prose-always", "single", "main"}});
  advplan::testing::TempDir dir("llm-failed-rows");
  const RunSummary s = run_experiment(plan, checkpointed_options(dir / "run", standard_observers(false)));
  const auto t = io::CsvTable::read(dir / "run/per_scenario.csv");
  ASSERT_EQ(t.size(), 10u);
  EXPECT_EQ(s.failed_rows, 10u);
  long long prompt = 0, completion = 0;
  for (const auto& row : t.rows()) {
    const std::string& cond = row[t.col("condition")];
    EXPECT_EQ(row[t.col("status")], "failed") << cond;
    EXPECT_EQ(row[t.col("contract_failed")], "1") << cond;
    EXPECT_EQ(row[t.col("contract_retries")], "1") << cond;
    ASSERT_FALSE(row[t.col("prompt_tokens")].empty()) << cond;
    ASSERT_FALSE(row[t.col("completion_tokens")].empty()) << cond;
    prompt += std::stoll(row[t.col("prompt_tokens")]);
    completion += std::stoll(row[t.col("completion_tokens")]);
  }
  EXPECT_EQ(prompt, server_.prompt_tokens_sent());
  EXPECT_EQ(completion, server_.completion_tokens_sent());
}

// Issue 48, item 5: a run whose endpoint refuses the key stops at once with the client's sentence, instead of
// writing a failed row for every scenario.
TEST_F(LlmLiveTest, ARefusedKeyStopsTheRun) {
  cfg_.seed_to = cfg_.seed_from;
  cfg_.studies = {false, false, false};
  cfg_.llm.model = "401";
  const RunPlan plan = prepare_run(cfg_, {{"llm_live", "seed", "llm_live", "main"}});
  advplan::testing::TempDir dir("llm-refused-key");
  try {
    run_experiment(plan, checkpointed_options(dir / "run", standard_observers(false)));
    ADD_FAILURE() << "the run did not stop";
  } catch (const StopRunError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr(kKeyEnv));
  }
}

// Issue 48, item 8: the evaluate summary of a policy with no valid plan says n/a for its plan structure (not 0.000),
// says the greedy@k sweep ran but gave no value, and puts a sentence where the paired verdicts would be.
TEST_F(LlmLiveTest, TheEvaluateSummaryOfAPolicyWithoutPlansSaysNotApplicable) {
  advplan::testing::TempDir dir("llm-no-plans");
  const std::string cfg = dir / "e.yaml";
  advplan::testing::write_file(cfg, "name: e\ncorpus: {templates: [urban], seeds: [1, 2]}\nconditions: [single]\n"
                                    "llm: {max_retries: 0, max_repairs: 0}\n");
  const auto r = advplan::testing::run_command(
      "ADVPLAN_LLM_ENDPOINT=" + server_.url() + " " + advplan::testing::shell_quote(advplan::testing::kBinary) +
          " evaluate --config " + advplan::testing::shell_quote(cfg) +
          " --blue llm:prose-always --red single --reference seed --budget 1,2 --rerun 0 --threads 1 --progress none"
          " --out " + advplan::testing::shell_quote(dir / "run"),
      dir);
  ASSERT_EQ(r.status, 1) << r.err;  // no plan on any scenario
  EXPECT_THAT(r.err, HasSubstr("llm:prose-always produced no plan on any scenario"));
  const std::string md = advplan::testing::read_file(dir / "run/summary.md");
  auto cell = [&](const std::string& row_start) {  // the policy's cell of the scorecard row
    const auto at = md.find(row_start);
    if (at == std::string::npos) return std::string("no row " + row_start);
    const std::string line = md.substr(at, md.find('\n', at) - at);
    const auto a = line.find('|', row_start.size() - 1), b = line.find('|', a + 1);
    return line.substr(a + 1, b - a - 1);
  };
  for (const char* q : {"| plan structure | O |", "| plan structure | P_V |", "| plan structure | W |"})
    EXPECT_THAT(cell(q), HasSubstr("n/a")) << q << "\n" << md;
  EXPECT_THAT(cell("| adversarial robustness | advantage drop (smallest k - largest k) |"),
              HasSubstr("no scenario with a valid plan at every k of the greedy@k sweep"));
  EXPECT_THAT(md, Not(HasSubstr("no greedy@k sweep in the run")));
  EXPECT_THAT(md, HasSubstr("**Paired verdicts**: none, no scenario has a valid row of both `llm:prose-always`"));
  EXPECT_THAT(md, Not(HasSubstr("over all 0 comparisons")));
}

}  // namespace
}  // namespace advplan
