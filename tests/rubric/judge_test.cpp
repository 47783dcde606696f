// LLM rubric judges (docs/RUBRIC.md "LLM judges"): the reply schema and its bounded validator, the bounded
// re-ask loop, the offline stand-in judge, a live judge against a chat-completions server on 127.0.0.1 (malformed
// replies, unknown ids, timeouts, a reply that keeps failing), a judge answered from the completion cache without the
// key on disk, a whole run reproduced from the cache with zero requests, and the rubric config keys.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>
#include <string>
#include <thread>
#include <vector>

#include "advplan/pipeline/standard_run.hpp"
#include "advplan/core/error.hpp"
#include "advplan/run/config.hpp"
#include "advplan/rubric/judge.hpp"
#include "advplan/rubric/plans.hpp"
#include "advplan/rubric/score.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/run/scenario_lookup.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/stats/agreement.hpp"
#include "advplan/stats/statistics.hpp"
#include "advplan/core/random.hpp"
#include "advplan/io/sha256.hpp"
#include "advplan/policy/completion_cache.hpp"
#include "advplan/llm/providers.hpp"
#include "support/chat_server.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using namespace rubric;

constexpr const char* kKeyEnv = "ADVPLAN_TEST_JUDGE_KEY";
constexpr const char* kSentinel = "sk-JUDGE-SENTINEL-42";

bool is_judge_request(const CompletionRequest& req) {
  return req.messages.size() >= 2 && req.messages[1].content.rfind("ITEMS:\n", 0) == 0;
}

/// The exact judge's reply, whatever the attempt (the offline judge answers correctly once re-asked).
std::string correct_judge_reply(const CompletionRequest& req) {
  CompletionRequest again = req;
  again.messages.push_back({"user", "again"});
  return OfflineJudgeClient().complete(again).text;
}

/// A chat-completions server on 127.0.0.1 that counts requests. Behaviour by model: "valid" (plans from the
/// offline plan client; judge replies from the offline judge, first-attempt quirks included), "judge-perfect",
/// "judge-prose" (never JSON), "judge-unknown" (always an unknown id), "judge-unknown-once", "judge-malformed-once",
/// "judge-500" (HTTP 500), "hang" (answers after 2 s).
class JudgeServer {
 public:
  JudgeServer() : server_([this](const httplib::Request& q, httplib::Response& r) { handle(q, r); }) {}
  std::string url() const { return server_.url(); }
  int requests() const { return requests_; }
  std::string last_authorization() const {
    std::lock_guard lock(mu_);
    return authorization_;
  }
  /// The temperatures the judge requests carried (their "temperature" field as text).
  std::set<std::string> judge_temperatures() const {
    std::lock_guard lock(mu_);
    return judge_temperatures_;
  }

 private:
  void handle(const httplib::Request& q, httplib::Response& r) {
    ++requests_;
    {
      std::lock_guard lock(mu_);
      authorization_ = q.get_header_value("Authorization");
    }
    const json body = json::parse(q.body, nullptr, false);
    const std::string model = testing::requested_model(body);
    const CompletionRequest req = testing::chat_request(body);
    const bool first = req.messages.size() <= 2;
    if (is_judge_request(req) && body.is_object() && body.contains("temperature")) {
      std::lock_guard lock(mu_);
      judge_temperatures_.insert(body["temperature"].dump());
    }
    if (model == "judge-500") {
      r.status = 500;
      return r.set_content(R"({"error":{"message":"internal"}})", "application/json");
    }
    if (model == "hang")
      for (int i = 0; i < 200 && !server_.stopping(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::string text;
    if (!is_judge_request(req)) {
      text = OfflineCompletionClient().complete(req).text;
    } else if (model == "valid") {
      text = OfflineJudgeClient().complete(req).text;
    } else if (model == "judge-prose") {
      text = "All items look fine to me.";
    } else if (model == "judge-unknown" || (model == "judge-unknown-once" && first)) {
      json j = json::parse(correct_judge_reply(req));
      j["failed_items"].push_back({{"item_id", "made_up_item"}, {"evidence", "e"}, {"rationale", "r"}});
      text = j.dump();
    } else if (model == "judge-malformed-once" && first) {
      text = "{\"failed_items\": [";
    } else {
      text = correct_judge_reply(req);
    }
    json out = testing::chat_reply(text);
    out["usage"] = {{"prompt_tokens", 10}, {"completion_tokens", 5}};
    r.set_content(out.dump(), "application/json");
  }

  std::atomic<int> requests_{0};
  mutable std::mutex mu_;
  std::string authorization_;
  std::set<std::string> judge_temperatures_;
  testing::LoopbackServer server_;  // last: it stops before the state its handler uses goes
};

using testing::EnvGuard;

struct Fixture {
  ExperimentConfig cfg = default_experiment_config();
  Scenario sc = find_scenario(cfg, "urban-100");
  std::vector<RubricItem> items;
  Plan plan = sc.blue_seed_plans.front();
  Fixture() {
    for (const auto& t : cfg.templates)
      if (t.id == sc.template_id) items = plan_rubric_items(sc, t.rubric_items);
  }
  std::vector<std::string> exact_failed() const {
    std::vector<std::string> out;
    const auto passed = judge_plan("exact", items, plan, sc);
    for (std::size_t i = 0; i < items.size(); ++i)
      if (!passed[i]) out.push_back(items[i].item_id);
    return out;
  }
};

std::vector<std::string> ids_of(const std::vector<JudgeFailure>& f) {
  std::vector<std::string> out;
  for (const auto& x : f) out.push_back(x.item_id);
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// The reply schema.

TEST(JudgeReply, AcceptsTheSchemaAndSortsOutUnknownIds) {
  Fixture f;
  ASSERT_GE(f.items.size(), 2u);
  const std::string id = f.items[0].item_id;
  const auto r = parse_judge_reply(
      json{{"failed_items", {{{"item_id", id}, {"evidence", "step 3"}, {"rationale", "nothing covers it"}},
                             {{"item_id", id}, {"evidence", "again"}, {"rationale", "twice"}},
                             {{"item_id", "zzz"}, {"evidence", ""}, {"rationale", ""}}}}}
          .dump(),
      f.items);
  EXPECT_EQ(r.error, "");
  ASSERT_EQ(r.failures.size(), 1u);  // listed twice: once
  EXPECT_EQ(r.failures[0].item_id, id);
  EXPECT_EQ(r.failures[0].evidence, "step 3");
  EXPECT_EQ(r.unknown_ids, std::vector<std::string>{"zzz"});
  EXPECT_EQ(parse_judge_reply(R"({"failed_items": []})", f.items).error, "");
  EXPECT_EQ(parse_judge_reply("```json\n{\"failed_items\": []}\n```", f.items).error, "");
}

TEST(JudgeReply, MalformedRepliesAreOneSentenceNeverACrash) {
  Fixture f;
  const std::string id = f.items[0].item_id;
  for (const std::string& bad :
       {std::string(""), std::string("fine"), std::string("[]"), std::string(R"({"failed": []})"),
        std::string(R"({"failed_items": {}})"), std::string(R"({"failed_items": [], "note": "x"})"),
        std::string(R"({"failed_items": [1]})"), R"({"failed_items": [{"item_id": ")" + id + R"("}]})",
        R"({"failed_items": [{"item_id": ")" + id + R"(", "evidence": 3, "rationale": "r"}]})",
        R"({"failed_items": [{"item_id": ")" + id + R"(", "evidence": "e", "rationale": "r", "x": 1}]})",
        std::string("Here it is: {\"failed_items\": []}"), std::string("{\"failed_items\": ["),
        std::string(100000, '[')}) {
    const auto r = parse_judge_reply(bad, f.items);
    EXPECT_FALSE(r.error.empty()) << bad.substr(0, 80);
    EXPECT_EQ(r.error.find('\n'), std::string::npos);
  }
  json many = {{"failed_items", json::array()}};
  for (int i = 0; i < 100; ++i) many["failed_items"].push_back({{"item_id", id}, {"evidence", "e"}, {"rationale", "r"}});
  EXPECT_THAT(parse_judge_reply(many.dump(), f.items).error, HasSubstr("entries"));
}

TEST(JudgePrompt, IsFrozenAndHashed) {
  const std::string text = testing::read_file(std::string(ADVPLAN_SOURCE_DIR) + "/configs/prompts/rubric_judge.txt");
  EXPECT_EQ(judge_prompt(), text);
  EXPECT_EQ(judge_prompt_sha256(), io::sha256_hex(text));
  Fixture f;
  const auto req = build_judge_prompt(f.items, f.plan, f.sc);
  ASSERT_EQ(req.messages.size(), 2u);
  EXPECT_EQ(req.messages[0].content, text);
  EXPECT_THAT(req.messages[1].content, HasSubstr(f.items[0].item_id));
  EXPECT_THAT(req.messages[1].content, HasSubstr("END PLAN"));
}

// ---------------------------------------------------------------------------------------------------------
// The offline stand-in judge.

TEST(OfflineJudge, AgreesWithTheExactJudgeAfterItsRetriesAndExercisesThem) {
  const ExperimentConfig cfg = default_experiment_config();
  int retried = 0, malformed = 0, unknown = 0, failed_without_retries = 0, plans = 0;
  for (const auto& sc : generate_corpus(cfg)) {
    std::vector<RubricItem> items;
    for (const auto& t : cfg.templates)
      if (t.id == sc.template_id) items = plan_rubric_items(sc, t.rubric_items);
    if (items.empty()) continue;
    const Plan& plan = sc.blue_seed_plans.front();
    ++plans;
    const auto o = run_judge(OfflineJudgeClient(), items, plan, sc, 2);
    ASSERT_TRUE(o.ok) << sc.id << ": " << o.reason;
    std::vector<std::string> expected;
    const auto passed = judge_plan("exact", items, plan, sc);
    for (std::size_t i = 0; i < items.size(); ++i)
      if (!passed[i]) expected.push_back(items[i].item_id);
    EXPECT_EQ(ids_of(o.failures), expected) << sc.id;
    retried += o.attempts > 1;
    malformed += o.malformed;
    unknown += !o.unknown_ids.empty();
    const auto once = run_judge(OfflineJudgeClient(), items, plan, sc, 0);
    if (!once.ok) {
      ++failed_without_retries;
      EXPECT_EQ(once.attempts, 1);
      EXPECT_FALSE(once.reason.empty());
    }
  }
  EXPECT_GT(plans, 50);
  EXPECT_GT(retried, 0);
  EXPECT_GT(malformed, 0);
  EXPECT_GT(unknown, 0);
  EXPECT_EQ(failed_without_retries, retried);  // without retries each quirk is a recorded failure
}

// ---------------------------------------------------------------------------------------------------------
// A live judge against the loopback server.

class LiveJudgeTest : public ::testing::Test {
 protected:
  LiveJudgeTest() {
    endpoint_env_.unset();
    model_env_.unset();
    cfg_.llm.endpoint = server_.url();
    cfg_.llm.api_key_env = kKeyEnv;
    cfg_.llm.timeout_s = 5;
    cfg_.llm.max_retries = 0;
    cfg_.llm.backoff_s = 0.01;
  }
  JudgeOutcome judge(const std::string& model, int retries = 2) {
    const auto client = make_judge_client("llm_judge:" + model, cfg_.llm, policy_context(cfg_));
    return run_judge(*client, f_.items, f_.plan, f_.sc, retries);
  }
  EnvGuard endpoint_env_{"ADVPLAN_LLM_ENDPOINT"}, model_env_{"ADVPLAN_LLM_MODEL"}, key_env_{kKeyEnv};
  JudgeServer server_;
  Fixture f_;
  ExperimentConfig cfg_ = default_experiment_config();
};

TEST_F(LiveJudgeTest, AValidReplyIsTheVerdictInOneRequest) {
  const auto o = judge("judge-perfect");
  ASSERT_TRUE(o.ok) << o.reason;
  EXPECT_EQ(o.attempts, 1);
  EXPECT_EQ(ids_of(o.failures), f_.exact_failed());
  EXPECT_EQ(server_.requests(), 1);
}

TEST_F(LiveJudgeTest, UnknownIdsAreRecordedAndReasked) {
  const auto o = judge("judge-unknown-once");
  ASSERT_TRUE(o.ok) << o.reason;
  EXPECT_EQ(o.attempts, 2);
  EXPECT_EQ(o.unknown_ids, std::vector<std::string>{"made_up_item"});
  EXPECT_EQ(ids_of(o.failures), f_.exact_failed());
  EXPECT_EQ(server_.requests(), 2);
}

TEST_F(LiveJudgeTest, AMalformedReplyIsReasked) {
  const auto o = judge("judge-malformed-once");
  ASSERT_TRUE(o.ok) << o.reason;
  EXPECT_EQ(o.attempts, 2);
  EXPECT_EQ(o.malformed, 1);
}

TEST_F(LiveJudgeTest, AReplyThatKeepsFailingIsARecordedFailureAfterTheBound) {
  const auto o = judge("judge-prose", 2);
  EXPECT_FALSE(o.ok);
  EXPECT_EQ(o.attempts, 3);
  EXPECT_EQ(o.malformed, 3);
  EXPECT_THAT(o.reason, HasSubstr("malformed reply"));
  EXPECT_THAT(o.reason, HasSubstr("after 3 attempts"));
  EXPECT_EQ(server_.requests(), 3);
  const auto u = judge("judge-unknown", 1);
  EXPECT_FALSE(u.ok);
  EXPECT_THAT(u.reason, HasSubstr("unknown item ids"));
  EXPECT_EQ(server_.requests(), 5);
}

TEST_F(LiveJudgeTest, TimeoutsAndServerErrorsAreRecordedFailures) {
  cfg_.llm.timeout_s = 0.3;
  const auto t = judge("hang", 1);
  EXPECT_FALSE(t.ok);
  EXPECT_EQ(t.attempts, 2);
  EXPECT_THAT(t.reason, HasSubstr("timeout"));
  const auto e = judge("judge-500", 0);
  EXPECT_FALSE(e.ok);
  EXPECT_THAT(e.reason, HasSubstr("HTTP 500"));
}

TEST_F(LiveJudgeTest, ALiveJudgeWithoutEndpointIsAPolicyError) {
  cfg_.llm.endpoint = "";
  EXPECT_THROW((void)make_judge_client("llm_judge:m", cfg_.llm, policy_context(cfg_)), PolicyError);
  EXPECT_NO_THROW((void)make_judge_client("llm_judge_offline", cfg_.llm, policy_context(cfg_)));
}

TEST(JudgeCache, AnswersARepeatedRequestWithoutAskingAndNeverStoresTheKey) {
  JudgeServer server;
  EnvGuard key_env(kKeyEnv), endpoint_env("ADVPLAN_LLM_ENDPOINT"), model_env("ADVPLAN_LLM_MODEL");
  endpoint_env.unset();
  model_env.unset();
  key_env.set(kSentinel);
  testing::TempDir dir("llm-cache-client");
  ExperimentConfig cfg = default_experiment_config();
  cfg.llm.endpoint = server.url();
  cfg.llm.api_key_env = kKeyEnv;
  cfg.llm.cache_dir = dir / "cache";
  const PolicyContext ctx = policy_context(cfg);
  ASSERT_TRUE(completion_cache_of(ctx));
  const auto client = make_live_client(resolve_llm_settings(cfg.llm, "valid", "t"), ctx);
  Fixture f;
  const auto req = build_judge_prompt(f.items, f.plan, f.sc);
  const Completion a = client->complete(req);
  ASSERT_TRUE(a.ok) << a.error;
  EXPECT_EQ(server.requests(), 1);
  EXPECT_EQ(server.last_authorization(), std::string("Bearer ") + kSentinel);  // the key was sent...
  const Completion b = client->complete(req);
  EXPECT_EQ(server.requests(), 1);  // ...once: the second answer came from the cache
  EXPECT_EQ(b.text, a.text);
  EXPECT_EQ(b.prompt_tokens, a.prompt_tokens);
  const auto st = completion_cache_of(ctx)->stats();
  EXPECT_EQ(st.hits, 1u);
  EXPECT_EQ(st.misses, 1u);
  // ...and is nowhere on disk, and the key does not depend on it.
  for (const auto& e : fs::recursive_directory_iterator(dir / "cache"))
    if (e.is_regular_file()) {
      EXPECT_EQ(testing::read_file(e.path().string()).find(kSentinel), std::string::npos);
    }
  key_env.set("another-key");
  const auto other = make_live_client(resolve_llm_settings(cfg.llm, "valid", "t"), policy_context(cfg));
  (void)other->complete(req);
  EXPECT_EQ(server.requests(), 1);
}

// ---------------------------------------------------------------------------------------------------------
// Whole runs.

std::string run_config(const std::string& url, const std::string& judges) {
  return "name: judge-run\nseed: 20240601\n"
         "corpus: {templates: [urban, air-defense], seeds: [100, 101], template_dir: " +
         std::string(ADVPLAN_SOURCE_DIR) +
         "/configs/templates}\n"
         "conditions:\n"
         "  - {label: seed-single, blue: seed, red: single}\n"
         "  - {label: council, blue: council, red: greedy@4}\n"
         "  - {label: llm-blue, blue: \"llm:valid\", red: llm_live}\n"
         "budget_sweep: {blue: seed, ks: []}\n"
         "simulator: {replications: 10, break_point: 0.3, time_limit: 60, dt: 0.05, noise: 0.15, step_noise: 0.1}\n"
         "bootstrap: {resamples: 100, seed: 7}\n"
         "council: {red: greedy@4}\n"
         "studies: {rubric: {records: []}, framing: false, components: false}\n"
         "llm: {endpoint: \"" + url + "\", model: valid, api_key_env: " + kKeyEnv +
         ", timeout_s: 5, max_retries: 0, backoff_s: 0.01}\n"
         "rubric: {judges: [" + judges + "]}\n";
}

RunSummary run_once(const ExperimentConfig& cfg, const std::string& out, bool resume = false) {
  const RunPlan plan = prepare_run(cfg, run_conditions(cfg));
  RunOptions opts;
  opts.out_dir = out;
  opts.threads = 2;
  opts.progress = false;
  opts.resume = resume;
  opts.observers = standard_observers(opts.studies);
  return run_experiment(plan, opts);
}

/// Every file of a run directory but run_metadata.json and MANIFEST: relative path -> content.
std::map<std::string, std::string> run_files(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    const std::string rel = fs::relative(e.path(), dir).string();
    if (rel == "run_metadata.json" || rel == "MANIFEST") continue;
    out[rel] = testing::read_file(e.path().string());
  }
  return out;
}

json metadata(const std::string& dir) { return json::parse(testing::read_file(dir + "/run_metadata.json")); }

TEST(JudgeRun, ALiveRunIsReproducedFromTheCacheWithZeroRequests) {
  JudgeServer server;
  EnvGuard endpoint_env("ADVPLAN_LLM_ENDPOINT"), model_env("ADVPLAN_LLM_MODEL"), key_env(kKeyEnv);
  endpoint_env.unset();
  model_env.unset();
  key_env.set(kSentinel);
  testing::TempDir dir("judge-run");
  ExperimentConfig cfg = parse_experiment_config(run_config(server.url(), "\"llm_judge:valid\", llm_judge_offline"),
                                                 "judge-run.yaml", "");
  cfg.llm.cache_dir = dir / "cache";
  run_once(cfg, dir / "a");
  const int first = server.requests();
  EXPECT_GT(first, 0);
  run_once(cfg, dir / "b");
  EXPECT_EQ(server.requests(), first) << "the rerun asked the model again";
  const auto a = run_files(dir / "a"), b = run_files(dir / "b");
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, text] : a) EXPECT_EQ(text, b.at(name)) << name;

  const json ma = metadata(dir / "a"), mb = metadata(dir / "b");
  EXPECT_EQ(ma["llm_cache"]["misses"].get<int>(), first);
  EXPECT_EQ(mb["llm_cache"]["misses"].get<int>(), 0);
  EXPECT_EQ(mb["llm_cache"]["hits"].get<int>(), first);
  EXPECT_EQ(ma["rubric"]["judge_prompt_sha256"], judge_prompt_sha256());
  EXPECT_THAT(ma["rubric"]["judges"].get<std::string>(), HasSubstr("llm_judge:valid"));
  for (const auto& [name, text] : a) EXPECT_EQ(text.find(kSentinel), std::string::npos) << name;
  EXPECT_EQ(testing::read_file(dir / "a/run_metadata.json").find(kSentinel), std::string::npos);

  // The LLM judges are in the verdicts, the call log and the agreement tables like the rule judges.
  const auto calls = io::CsvTable::read(dir / "a/rubric/judge_calls.csv");
  ASSERT_GT(calls.size(), 0u);
  for (std::size_t i = 0; i < calls.size(); ++i) EXPECT_EQ(calls.at(i, "status"), "ok") << calls.at(i, "reason");
  const auto pairs = io::CsvTable::read(dir / "a/rubric/agreement_pairs.csv");
  bool live_vs_exact = false;
  for (std::size_t i = 0; i < pairs.size(); ++i)
    if (pairs.at(i, "judge_a") == "exact" && pairs.at(i, "judge_b") == "llm_judge:valid") {
      live_vs_exact = true;
      EXPECT_EQ(std::stod(pairs.at(i, "percent_agreement")), 1.0);  // the server answers with the exact judge's verdicts
    }
  EXPECT_TRUE(live_vs_exact);
  EXPECT_THAT(a.at("rubric/verdicts.jsonl"), HasSubstr("\"evidence\""));
}

// Every call of a live judge is a line of rubric/transcripts.jsonl (the offline stand-in's are not), with the plan it
// graded, the messages sent and the reply; and policies.llm_judge.generation reaches the judge's requests.
TEST(JudgeRun, LiveJudgeCallsAreTranscribedWithTheirOwnGenerationSettings) {
  JudgeServer server;
  EnvGuard endpoint_env("ADVPLAN_LLM_ENDPOINT"), model_env("ADVPLAN_LLM_MODEL"), key_env(kKeyEnv);
  endpoint_env.unset();
  model_env.unset();
  key_env.set(kSentinel);
  testing::TempDir dir("judge-transcripts");
  ExperimentConfig cfg = parse_experiment_config(
      run_config(server.url(), "\"llm_judge:judge-unknown-once\", llm_judge_offline") +
          "policies: {llm_judge: {generation: {temperature: 0.25}}}\n",
      "judge-transcripts.yaml", "");
  run_once(cfg, dir / "a");
  EXPECT_EQ(server.judge_temperatures(), (std::set<std::string>{"0.25"}));
  const std::string text = testing::read_file(dir / "a/rubric/transcripts.jsonl");
  const auto calls = io::CsvTable::read(dir / "a/rubric/judge_calls.csv");
  std::size_t lines = 0, reasked = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    const json j = json::parse(text.substr(pos, end - pos));
    pos = end + 1;
    ++lines;
    EXPECT_EQ(j["role"], "judge");
    EXPECT_EQ(j["policy"], "llm_judge:judge-unknown-once");
    EXPECT_FALSE(j["graded"].get<std::string>().empty());
    EXPECT_THAT(j["messages"][1]["content"].get<std::string>(), HasSubstr("ITEMS:"));
    EXPECT_EQ(j["accepted"].get<bool>(), j["attempt"].get<int>() == 1) << "the first reply names an unknown id";
    reasked += j["attempt"].get<int>() == 1;
  }
  std::size_t live_attempts = 0;
  for (std::size_t i = 0; i < calls.size(); ++i)
    if (calls.at(i, "judge") == "llm_judge:judge-unknown-once") live_attempts += std::stoul(calls.at(i, "attempts"));
  const auto canaries = io::CsvTable::read(dir / "a/rubric/canaries.csv");  // their calls are transcribed too
  for (std::size_t i = 0; i < canaries.size(); ++i)
    if (canaries.at(i, "judge") == "llm_judge:judge-unknown-once") live_attempts += std::stoul(canaries.at(i, "attempts"));
  EXPECT_EQ(lines, live_attempts) << "one line per call of the live judge, none of the offline one";
  EXPECT_GT(reasked, 0u);
  EXPECT_EQ(text.find(kSentinel), std::string::npos);
}

TEST(JudgeRun, AJudgeThatKeepsFailingIsRecordedNeverAPass) {
  JudgeServer server;
  EnvGuard endpoint_env("ADVPLAN_LLM_ENDPOINT"), model_env("ADVPLAN_LLM_MODEL");
  endpoint_env.unset();
  model_env.unset();
  testing::TempDir dir("judge-run-fail");
  const std::string text = run_config(server.url(), "\"llm_judge:judge-prose\"") + "";
  ExperimentConfig cfg = parse_experiment_config(text, "judge-run.yaml", "");
  cfg.rubric.judge_retries = 1;
  run_once(cfg, dir / "a");
  const auto calls = io::CsvTable::read(dir / "a/rubric/judge_calls.csv");
  ASSERT_GT(calls.size(), 0u);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    EXPECT_EQ(calls.at(i, "status"), "failed");
    EXPECT_EQ(calls.at(i, "attempts"), "2");
    EXPECT_THAT(calls.at(i, "reason"), HasSubstr("malformed reply"));
  }
  const auto briefs = io::CsvTable::read(dir / "a/rubric/scores_per_brief.csv");
  std::size_t judged = 0;
  for (std::size_t i = 0; i < briefs.size(); ++i)
    if (briefs.at(i, "judge") == "llm_judge:judge-prose") {
      ++judged;
      EXPECT_EQ(briefs.at(i, "judge_error"), "1");
      EXPECT_NE(briefs.at(i, "weighted_score"), "1");  // nothing verified: never a pass
    }
  EXPECT_EQ(judged, calls.size());
  EXPECT_THAT(testing::read_file(dir / "a/rubric/verdicts.jsonl"), HasSubstr("\"reason\":\"malformed reply"));
}

TEST(JudgeRun, AnOfflineJudgeRunIsDeterministicAndMeanOverIsHonoured) {
  testing::TempDir dir("judge-run-offline");
  std::string text = run_config("http://127.0.0.1:1", "llm_judge_offline");
  // No live policy here: the offline judge needs no server.
  text.replace(text.find("  - {label: llm-blue"), text.find("budget_sweep") - text.find("  - {label: llm-blue"), "");
  ExperimentConfig cfg = parse_experiment_config(text, "judge-run.yaml", "");
  run_once(cfg, dir / "a");
  run_once(cfg, dir / "b");
  const auto a = run_files(dir / "a"), b = run_files(dir / "b");
  for (const auto& [name, t] : a) EXPECT_EQ(t, b.at(name)) << name;
  EXPECT_THAT(a.at("rubric/scores_per_policy.csv"), HasSubstr("llm_judge_offline"));
  EXPECT_THAT(a.at("rubric/scores_per_policy.csv"), HasSubstr(",group,"));
  cfg.rubric.mean_over = "scenarios";
  run_once(cfg, dir / "c");
  const auto c = run_files(dir / "c");
  EXPECT_THAT(c.at("rubric/scores_per_policy.csv"), HasSubstr(",brief,"));
  EXPECT_EQ(metadata(dir / "c")["rubric"]["mean_over"], "scenarios");
}

TEST(JudgeRun, EvaluateWithLlmCacheIsReproducedWithZeroRequests) {
  JudgeServer server;
  EnvGuard endpoint_env("ADVPLAN_LLM_ENDPOINT"), model_env("ADVPLAN_LLM_MODEL");
  endpoint_env.unset();
  model_env.unset();
  testing::TempDir dir("judge-cli");
  testing::write_file(dir / "c.yaml", run_config(server.url(), ""));
  auto evaluate = [&](const std::string& out) {
    return testing::run_command(testing::shell_quote(ADVPLAN_BINARY) + " evaluate --blue llm:valid --red llm_live,single "
                                    "--no-reference --budget '' --rerun 2 --progress none --config " +
                                    testing::shell_quote(dir / "c.yaml") + " --out " + testing::shell_quote(dir / out) +
                                    " --llm-cache " + testing::shell_quote(dir / "cache"),
                                dir);
  };
  const auto a = evaluate("a");
  ASSERT_EQ(a.status, 0) << a.err;
  const int first = server.requests();
  EXPECT_GT(first, 0);
  const auto b = evaluate("b");
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(server.requests(), first);
  const auto fa = run_files(dir / "a"), fb = run_files(dir / "b");
  ASSERT_EQ(fa.size(), fb.size());
  for (const auto& [name, text] : fa) EXPECT_EQ(text, fb.at(name)) << name;
  EXPECT_EQ(metadata(dir / "b")["llm_cache"]["misses"].get<int>(), 0);
  EXPECT_GT(metadata(dir / "b")["llm_cache"]["hits"].get<int>(), 0);
}

TEST(JudgeRun, ACacheFilledByKilledRunsIsWholeAndAResumedRunMatchesAFreshOneWithoutRequests) {
  JudgeServer server;
  EnvGuard endpoint_env("ADVPLAN_LLM_ENDPOINT"), model_env("ADVPLAN_LLM_MODEL");
  endpoint_env.unset();
  model_env.unset();
  testing::TempDir dir("judge-kill");
  testing::write_file(dir / "c.yaml", run_config(server.url(), "\"llm_judge:valid\""));
  const std::string cache = dir / "cache";
  auto run = [&](const std::string& out, const std::string& prefix, const std::string& extra) {
    return testing::run_command(prefix + testing::shell_quote(ADVPLAN_BINARY) + " run " +
                                    testing::shell_quote(dir / "c.yaml") + " --out " + testing::shell_quote(dir / out) +
                                    " --threads 2 --progress none --checkpoint-every 1 --llm-cache " +
                                    testing::shell_quote(cache) + extra,
                                dir);
  };
  // Killed (SIGKILL) at several moments while it fills the cache, then resumed to the end.
  auto resume_flag = [&] { return fs::exists(dir / "b") && !fs::is_empty(dir / "b") ? " --resume" : ""; };
  for (const char* t : {"0.05", "0.15", "0.3"}) run("b", std::string("timeout -s KILL ") + t + " ", resume_flag());
  const auto resumed = run("b", "", resume_flag());
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  // Every entry is whole: each file is either an entry "<key>.json" (read back as a hit below) or the temporary
  // file of a write that a kill interrupted (".<key>.json.tmp-XXXXXX"), which is never read as an entry.
  for (const auto& e : fs::recursive_directory_iterator(cache)) {
    if (!e.is_regular_file()) continue;
    const std::string n = e.path().filename().string();
    if (n.front() == '.') {
      EXPECT_NE(n.find(".json.tmp-"), std::string::npos) << e.path();
      continue;
    }
    EXPECT_EQ(e.path().extension(), ".json") << e.path();
    EXPECT_EQ(n.size(), 64u + 5u) << e.path();
  }
  // A kill in mid-write leaves such a temporary file; plant one beside an entry, holding half an entry.
  for (const auto& e : fs::recursive_directory_iterator(cache))
    if (e.is_regular_file() && e.path().extension() == ".json") {
      testing::write_file(e.path().parent_path() / ("." + e.path().filename().string() + ".tmp-AbC123"), "{\"form");
      break;
    }
  const int asked = server.requests();
  const auto fresh = run("a", "", "");
  ASSERT_EQ(fresh.status, 0) << fresh.err;
  EXPECT_EQ(server.requests(), asked) << "a run after the resumed one asked the model again";
  const auto fa = run_files(dir / "a"), fb = run_files(dir / "b");
  ASSERT_EQ(fa.size(), fb.size());
  for (const auto& [name, text] : fa) EXPECT_EQ(text, fb.at(name)) << name;
  EXPECT_EQ(metadata(dir / "a")["llm_cache"]["corrupt"].get<int>(), 0);
}

// ---------------------------------------------------------------------------------------------------------
// Config.

TEST(RubricConfigKeys, AreReadStrictly) {
  const std::string base = "name: t\ncorpus: {templates: [urban], seeds: [100, 100], template_dir: " +
                           std::string(ADVPLAN_SOURCE_DIR) + "/configs/templates}\n";
  const auto cfg = parse_experiment_config(
      base + "rubric: {judges: [llm_judge_offline, \"llm_judge:m\"], mean_over: scenarios, judge_retries: 4}\n"
             "llm: {cache_dir: /tmp/x}\n",
      "c.yaml", "");
  EXPECT_EQ(cfg.rubric.judges, (std::vector<std::string>{"llm_judge_offline", "llm_judge:m"}));
  EXPECT_EQ(cfg.rubric.mean_over, "scenarios");
  EXPECT_EQ(cfg.rubric.judge_retries, 4);
  EXPECT_EQ(cfg.llm.cache_dir, "/tmp/x");
  EXPECT_EQ(default_experiment_config().rubric.mean_over, "templates");
  EXPECT_EQ(default_experiment_config().rubric.judge_retries, 2);
  auto error_of = [&](const std::string& extra) {
    try {
      (void)parse_experiment_config(base + extra, "c.yaml", "");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_THAT(error_of("rubric: {judges: [exact]}\n"), HasSubstr("c.yaml"));
  EXPECT_THAT(error_of("rubric: {judges: [exact]}\n"), HasSubstr("not a judge spec"));
  EXPECT_THAT(error_of("rubric: {mean_over: cases}\n"), HasSubstr("mean_over"));
  EXPECT_THAT(error_of("rubric: {judge_retries: 99}\n"), HasSubstr("judge_retries"));
  EXPECT_THAT(error_of("rubric: {judges: [llm_judge_offline, llm_judge_offline]}\n"), HasSubstr("twice"));
  EXPECT_THAT(error_of("rubric: {foo: 1}\n"), HasSubstr("foo"));
}

}  // namespace
}  // namespace advplan