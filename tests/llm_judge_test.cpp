// LLM rubric judges and the completion cache (docs/RUBRIC.md "LLM judges", docs/LLM.md "Completion cache"): the
// reply schema and its bounded validator, the bounded re-ask loop, the offline stand-in judge, a live judge against
// a chat-completions server on 127.0.0.1 (malformed replies, unknown ids, timeouts, a reply that keeps failing),
// the content-addressed cache (keys, corrupt and oversized entries, no key on disk), a whole run reproduced from the
// cache with zero requests, bootstrap intervals for every agreement statistic, and rubric.mean_over.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <httplib.h>

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
#include "advplan/policy/openai_client.hpp"
#include "test_fixtures.hpp"

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
  JudgeServer() {
    svr_.set_keep_alive_timeout(1);
    svr_.Post(R"(.*/chat/completions)", [this](const httplib::Request& q, httplib::Response& r) { handle(q, r); });
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    while (!svr_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~JudgeServer() {
    stopping_ = true;
    svr_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_; }
  std::string last_authorization() const {
    std::lock_guard lock(mu_);
    return authorization_;
  }

 private:
  void handle(const httplib::Request& q, httplib::Response& r) {
    ++requests_;
    {
      std::lock_guard lock(mu_);
      authorization_ = q.get_header_value("Authorization");
    }
    const json body = json::parse(q.body, nullptr, false);
    const std::string model = body.is_object() ? body.value("model", "") : "";
    CompletionRequest req;
    for (const auto& m : body.is_object() ? body.value("messages", json::array()) : json::array())
      req.messages.push_back({m.value("role", ""), m.value("content", "")});
    const bool first = req.messages.size() <= 2;
    if (model == "judge-500") {
      r.status = 500;
      return r.set_content(R"({"error":{"message":"internal"}})", "application/json");
    }
    if (model == "hang")
      for (int i = 0; i < 200 && !stopping_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
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
    const json out = {{"id", "c1"},
                      {"object", "chat.completion"},
                      {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}}}}},
                      {"usage", {{"prompt_tokens", 10}, {"completion_tokens", 5}}}};
    r.set_content(out.dump(), "application/json");
  }

  httplib::Server svr_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> requests_{0};
  mutable std::mutex mu_;
  std::string authorization_;
};

class EnvGuard {
 public:
  explicit EnvGuard(const char* name) : name_(name) {
    if (const char* v = std::getenv(name)) old_ = v;
  }
  ~EnvGuard() {
    if (old_) setenv(name_, old_->c_str(), 1);
    else unsetenv(name_);
  }
  void set(const std::string& v) const { setenv(name_, v.c_str(), 1); }
  void unset() const { unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

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

// ---------------------------------------------------------------------------------------------------------
// The completion cache.

CompletionRequest request(const std::string& text, std::uint64_t seed = 1, double temperature = 0) {
  CompletionRequest r;
  r.messages = {{"system", "s"}, {"user", text}};
  r.seed = seed;
  r.temperature = temperature;
  return r;
}

TEST(CompletionCache, KeyCoversEndpointModelParametersAndMessages) {
  const auto base = CompletionCache::key_of("http://a/v1/chat/completions", "m", request("x"));
  EXPECT_EQ(base.size(), 64u);
  EXPECT_EQ(base, CompletionCache::key_of("http://a/v1/chat/completions", "m", request("x")));
  EXPECT_NE(base, CompletionCache::key_of("http://b/v1/chat/completions", "m", request("x")));
  EXPECT_NE(base, CompletionCache::key_of("http://a/v1/chat/completions", "n", request("x")));
  EXPECT_NE(base, CompletionCache::key_of("http://a/v1/chat/completions", "m", request("y")));
  EXPECT_NE(base, CompletionCache::key_of("http://a/v1/chat/completions", "m", request("x", 2)));
  EXPECT_NE(base, CompletionCache::key_of("http://a/v1/chat/completions", "m", request("x", 1, 0.5)));
  auto roles = request("x");
  roles.messages[0].role = "user";
  EXPECT_NE(base, CompletionCache::key_of("http://a/v1/chat/completions", "m", roles));
}

TEST(CompletionCache, StoresLooksUpAndTreatsBadEntriesAsMisses) {
  testing::TempDir dir("llm-cache");
  CompletionCache cache(dir / "c");
  const std::string key = CompletionCache::key_of("e", "m", request("x"));
  EXPECT_FALSE(cache.lookup(key));
  Completion failed;
  failed.error = "HTTP 500";
  cache.store(key, "m", failed);  // failures are never stored
  EXPECT_FALSE(fs::exists(cache.entry_path(key)));
  Completion ok;
  ok.ok = true;
  ok.text = "hello";
  ok.prompt_tokens = 3;
  ok.completion_tokens = 4;
  cache.store(key, "m", ok);
  const auto hit = cache.lookup(key);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->text, "hello");
  EXPECT_EQ(hit->prompt_tokens, 3);
  EXPECT_EQ(hit->completion_tokens, 4);
  // No temporary file is left beside the entry.
  std::size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir / "c")) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);

  const std::string path = cache.entry_path(key);
  testing::write_file(path, "{\"format\": \"advplan-llm-cache/1\", \"key\": \"");  // truncated
  EXPECT_FALSE(cache.lookup(key));
  testing::write_file(path, json{{"format", "advplan-llm-cache/1"}, {"key", "other"}, {"text", "x"}}.dump());
  EXPECT_FALSE(cache.lookup(key));
  testing::write_file(path, std::string(CompletionCache::kMaxEntryBytes + 10, ' '));
  EXPECT_FALSE(cache.lookup(key));
  testing::write_file(path, std::string(100000, '['));
  EXPECT_FALSE(cache.lookup(key));
  const auto st = cache.stats();
  EXPECT_EQ(st.hits, 1u);
  EXPECT_EQ(st.misses, 5u);
  EXPECT_EQ(st.corrupt, 4u);
  EXPECT_EQ(st.writes, 1u);
}

// An entry edited with its key kept (blue_quality 0.550951 -> 0.435149 once went unnoticed), and an entry or folder
// that is a symbolic link to elsewhere, are misses with a warning: the digest covers every field, and no link is
// followed.
TEST(CompletionCache, AnEditedOrLinkedEntryIsAMissAndAWarning) {
  testing::TempDir dir("llm-cache-digest");
  CompletionCache cache(dir / "c");
  const std::string key = CompletionCache::key_of("e", "m", request("edit"));
  Completion ok;
  ok.ok = true;
  ok.text = "the plan";
  ok.prompt_tokens = 10;
  ok.completion_tokens = 20;
  cache.store(key, "m", ok);
  const std::string path = cache.entry_path(key);
  const json stored = json::parse(testing::read_file(path));
  ASSERT_TRUE(cache.lookup(key));
  for (const auto& [field, value] : std::vector<std::pair<std::string, json>>{
           {"text", "another plan"}, {"prompt_tokens", 11}, {"completion_tokens", 2}, {"model", "n"}}) {
    json edited = stored;
    edited[field] = value;
    testing::write_file(path, edited.dump());
    EXPECT_FALSE(cache.lookup(key)) << field;
  }
  json undigested = stored;
  undigested.erase("digest");
  testing::write_file(path, undigested.dump());
  EXPECT_FALSE(cache.lookup(key));
  // a link at the entry, and at its folder, to a genuine entry elsewhere
  testing::write_file(dir / "elsewhere.json", stored.dump());
  fs::remove(path);
  fs::create_symlink(dir / "elsewhere.json", path);
  EXPECT_FALSE(cache.lookup(key));
  const fs::path folder = fs::path(path).parent_path();
  fs::remove_all(folder);
  fs::create_directories(dir / "other" / folder.filename());
  testing::write_file((dir / "other" / folder.filename() / fs::path(path).filename()).string(), stored.dump());
  fs::create_directory_symlink(dir / "other" / folder.filename(), folder);
  EXPECT_FALSE(cache.lookup(key));
  cache.store(key, "m", ok);  // refused too: never written through the link
  EXPECT_EQ(cache.stats().write_errors, 1u);
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().corrupt, 7u);
}

TEST(CompletionCache, AFifoOrDirectoryAtAnEntryPathIsAMissNotAHang) {
  testing::TempDir dir("llm-cache-fifo");
  CompletionCache cache(dir / "c");
  const std::string key = CompletionCache::key_of("e", "m", request("fifo"));
  Completion ok;
  ok.ok = true;
  ok.text = "x";
  cache.store(key, "m", ok);  // creates the directories
  const std::string path = cache.entry_path(key);
  fs::remove(path);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_FALSE(cache.lookup(key));  // a blocking open would hang here
  fs::remove(path);
  fs::create_directory(path);
  EXPECT_FALSE(cache.lookup(key));
}

TEST(CompletionCache, AnswersARepeatedRequestWithoutAskingAndNeverStoresTheKey) {
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
// mean_over, and the intervals of every agreement statistic.

RubricItem item(const std::string& c, const std::string& id) {
  RubricItem it;
  it.case_id = c;
  it.item_id = id;
  it.severity = Severity::I;
  return it;
}

TEST(RubricMeanOver, TemplatesAndScenariosDifferWhenGroupsDifferInSize) {
  RubricSet set;
  std::vector<Verdict> vs;
  // Template A: one scenario, scored 1. Template B: three scenarios, scored 0.
  for (const auto& [c, g, pass] : std::vector<std::tuple<std::string, std::string, bool>>{
           {"a1", "A", true}, {"b1", "B", false}, {"b2", "B", false}, {"b3", "B", false}}) {
    set[c] = {item(c, "x")};
    Verdict v;
    v.brief_id = c + "/p";
    v.judge = "j";
    v.case_id = c;
    v.model = "p";
    v.group = g;
    if (!pass) v.failed_items = {"x"};
    vs.push_back(v);
  }
  auto score = [&](MeanOver m) {
    for (const auto& [name, text] : score_verdicts(set, vs, m, 50, 1).files)
      if (name == "scores_per_policy.csv") return io::CsvTable::parse(text, name).at(0, "weighted_score");
    return std::string();
  };
  EXPECT_EQ(std::stod(score(MeanOver::group)), 0.5);
  EXPECT_EQ(std::stod(score(MeanOver::brief)), 0.25);
}

/// Three judges on 12 cases of 4 items and four policies: j2 flips one verdict every third case, j3 every fourth.
/// With `scores_in_one_case`, every case but c0 has only negative items, so its briefs have no weighted score (no
/// positive weight): a resample that does not draw c0 has no score rows, and no ICC or Kendall's W.
std::pair<RubricSet, std::vector<Verdict>> three_judge_panel(bool scores_in_one_case = false) {
  RubricSet set;
  std::vector<Verdict> vs;
  for (int c = 0; c < 12; ++c) {
    const std::string cid = "c" + std::to_string(c);
    for (int i = 0; i < 4; ++i) {
      set[cid].push_back(item(cid, "i" + std::to_string(i)));
      if (scores_in_one_case && c != 0) set[cid].back().severity = Severity::D;
    }
    for (const std::string j : {"j1", "j2", "j3"}) {
      for (int mi = 0; mi < 4; ++mi) {
        const std::string m = "p" + std::to_string(mi);
        Verdict v;
        v.brief_id = cid + "/" + m;
        v.judge = j;
        v.case_id = cid;
        v.model = m;
        v.group = "g";
        for (int i = 0; i < 4; ++i) {
          // Policies of different quality whose verdicts also vary from case to case (a fixed hash), so which
          // cases a resample draws can reorder the policies' means.
          const unsigned h = (static_cast<unsigned>(c) * 2654435761U) ^ (static_cast<unsigned>(i) * 40503U) ^
                             (static_cast<unsigned>(mi) * 9973U);
          bool fail = (h >> 7) % static_cast<unsigned>(3 + mi) == 0;
          if (j == "j2" && c % 3 == 0 && i == 0) fail = !fail;
          if (j == "j3" && c % 4 == 0 && i == 1) fail = !fail;
          if (fail) v.failed_items.push_back("i" + std::to_string(i));
        }
        vs.push_back(v);
      }
    }
  }
  return {set, vs};
}

TEST(RubricAgreement, EveryStatisticHasABootstrapIntervalAroundItAndTheSameSeedGivesTheSameBytes) {
  const auto [set, vs] = three_judge_panel();
  const auto rep = judge_agreement(set, vs, 200, 11);
  std::map<std::string, std::string> files(rep.files.begin(), rep.files.end());
  const auto panel = io::CsvTable::parse(files.at("agreement_panel.csv"), "panel");
  std::set<std::string> seen;
  for (std::size_t r = 0; r < panel.size(); ++r) {
    const std::string name = panel.at(r, "statistic");
    seen.insert(name);
    const double v = std::stod(panel.at(r, "value")), lo = std::stod(panel.at(r, "lo")),
                 hi = std::stod(panel.at(r, "hi"));
    EXPECT_LE(lo, v) << name;
    EXPECT_LE(v, hi) << name;
    EXPECT_LT(lo, hi) << name;  // a real interval, not the point
  }
  for (const char* s : {"fleiss_kappa", "krippendorff_alpha_nominal_items", "krippendorff_alpha_interval_scores",
                        "icc2_1_scores", "icc3_1_scores", "kendall_w_scores"})
    EXPECT_TRUE(seen.count(s)) << s;
  const auto pairs = io::CsvTable::parse(files.at("agreement_pairs.csv"), "pairs");
  ASSERT_EQ(pairs.size(), 3u);
  for (std::size_t r = 0; r < pairs.size(); ++r) {
    EXPECT_LE(std::stod(pairs.at(r, "spearman_lo")), std::stod(pairs.at(r, "spearman_model_means")));
    EXPECT_LE(std::stod(pairs.at(r, "spearman_model_means")), std::stod(pairs.at(r, "spearman_hi")));
  }
  const auto again = judge_agreement(set, vs, 200, 11);
  EXPECT_EQ(again.files, rep.files);
  EXPECT_NE(judge_agreement(set, vs, 200, 12).files, rep.files);
}

/// The pairwise intervals against a brute force on the same resamples: each replicate draws the cases from the
/// stream every agreement interval shares (rubric-agreement, panel: the same multisets for every pair) and expands
/// them (every brief of a case as often as the case was drawn) into item lists and per-policy brief scores. The
/// implementation adds per-case sums instead, in another order, so the values agree to rounding; the four policies
/// make Spearman's interval more than a constant. With `j3_skips_first_case`, judge j3 grades no brief of the first
/// case: its pairs lack a case that the panel's draws count, so their counts are taken from the draws by case.
void expect_pair_intervals_of_expanded_resamples(bool j3_skips_first_case) {
  auto [set, vs] = three_judge_panel();
  if (j3_skips_first_case) {
    std::string first = vs.front().case_id;
    for (const auto& v : vs) first = std::min(first, v.case_id);
    std::erase_if(vs, [&](const Verdict& v) { return v.judge == "j3" && v.case_id == first; });
  }
  const int resamples = 300;
  const std::uint64_t seed = 5;
  const auto rep = judge_agreement(set, vs, resamples, seed);
  std::map<std::string, std::string> files(rep.files.begin(), rep.files.end());
  const auto pairs = io::CsvTable::parse(files.at("agreement_pairs.csv"), "pairs");
  // (case, policy) -> judge -> (item verdicts, weighted brief score)
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::pair<std::vector<bool>, double>>> graded;
  std::set<std::string> case_set;
  for (const auto& v : vs) {
    const auto& its = set.at(v.case_id);
    const auto passed = passed_from_failed(its, v.failed_items);
    graded[{v.case_id, v.model}][v.judge] = {passed, score_brief(its, passed).weighted};
    case_set.insert(v.case_id);
  }
  const std::vector<std::string> cases(case_set.begin(), case_set.end());
  ASSERT_EQ(pairs.size(), 3u);
  std::vector<std::vector<std::uint32_t>> draws(resamples, std::vector<std::uint32_t>(cases.size()));
  {
    Rng rng = Rng::keyed(seed, "rubric-agreement", "panel");
    for (auto& d : draws) resample_counts(rng, d);
  }
  bool spearman_varies = false;
  for (std::size_t r = 0; r < pairs.size(); ++r) {
    const std::string a = pairs.at(r, "judge_a"), b = pairs.at(r, "judge_b");
    SCOPED_TRACE(a + " vs " + b);
    std::vector<double> pct_b, kap_b, rho_b;
    for (int rep_i = 0; rep_i < resamples; ++rep_i) {
      const std::vector<std::uint32_t>& counts = draws[static_cast<std::size_t>(rep_i)];
      std::vector<int> va, vb;
      std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by_model;
      for (std::size_t c = 0; c < cases.size(); ++c)
        for (std::uint32_t t = 0; t < counts[c]; ++t)
          for (const auto& [key, by_judge] : graded) {
            if (key.first != cases[c] || !by_judge.count(a) || !by_judge.count(b)) continue;
            const auto& [pa, sa] = by_judge.at(a);
            const auto& [pb, sb] = by_judge.at(b);
            for (std::size_t i = 0; i < pa.size(); ++i) {
              va.push_back(pa[i] ? 1 : 0);
              vb.push_back(pb[i] ? 1 : 0);
            }
            by_model[key.second].first.push_back(sa);
            by_model[key.second].second.push_back(sb);
          }
      double same = 0;
      for (std::size_t i = 0; i < va.size(); ++i) same += va[i] == vb[i] ? 1 : 0;
      pct_b.push_back(same / static_cast<double>(va.size()));
      if (const double k = agreement::cohen_kappa(va, vb, 2).kappa; !std::isnan(k)) kap_b.push_back(k);
      std::vector<double> ma, mb;
      for (const auto& [m, sc] : by_model) {
        ma.push_back(mean(sc.first));
        mb.push_back(mean(sc.second));
      }
      if (const double rho = agreement::spearman(ma, mb); !std::isnan(rho)) rho_b.push_back(rho);
    }
    const auto [p_lo, p_hi] = percentile_bounds(pct_b);
    const auto [k_lo, k_hi] = percentile_bounds(kap_b);
    const auto [s_lo, s_hi] = percentile_bounds(rho_b);
    spearman_varies = spearman_varies || s_lo < s_hi;
    // Printed to six decimals: the brute force's rounding differs from the sums' by far less than that.
    for (const auto& [col, want] : {std::pair{"percent_lo", p_lo}, std::pair{"percent_hi", p_hi},
                                    std::pair{"kappa_lo", k_lo}, std::pair{"kappa_hi", k_hi},
                                    std::pair{"spearman_lo", s_lo}, std::pair{"spearman_hi", s_hi}})
      EXPECT_NEAR(std::stod(pairs.at(r, col)), want, 1e-6 + 1e-12) << col;
  }
  EXPECT_TRUE(spearman_varies) << "the data should give Spearman an interval wider than a point";
}

TEST(RubricAgreement, PairIntervalsAreThoseOfTheExpandedResamples) { expect_pair_intervals_of_expanded_resamples(false); }

TEST(RubricAgreement, PairIntervalsOfAPairLackingACaseAreThoseOfTheExpandedResamples) {
  expect_pair_intervals_of_expanded_resamples(true);
}

// The panel's intervals against a brute force on the same resamples: each replicate expands the drawn cases (each
// as often as drawn, in case order) into the matrices the agreement functions take. The implementation adds per-case
// sums instead, so the values agree to rounding.
/// The panel file's intervals against a brute force that expands each replicate's drawn cases into the matrices
/// the agreement functions take (same stream), statistic by statistic.
void expect_panel_intervals_of_expanded_resamples(bool scores_in_one_case) {
  const auto [set, vs] = three_judge_panel(scores_in_one_case);
  const int resamples = 300;
  const std::uint64_t seed = 9;
  const auto rep = judge_agreement(set, vs, resamples, seed);
  std::map<std::string, std::string> files(rep.files.begin(), rep.files.end());
  const auto panel = io::CsvTable::parse(files.at("agreement_panel.csv"), "panel");
  // Per case (in id order), its briefs' rows: Fleiss counts per item, each judge's item values, the score rows.
  const std::vector<std::string> judges{"j1", "j2", "j3"};
  struct CaseRows {
    agreement::Matrix fleiss, scores;
    std::vector<agreement::Matrix> fleiss_without;  // [judge left out][item]
    std::vector<std::vector<double>> items, brief_scores;  // [judge][item], [judge][brief]
  };
  std::map<std::string, std::map<std::string, std::map<std::string, std::vector<bool>>>> by_case;  // case, brief, judge
  std::map<std::string, std::map<std::string, std::map<std::string, double>>> score_of;
  for (const auto& v : vs) {
    const auto& its = set.at(v.case_id);
    const auto passed = passed_from_failed(its, v.failed_items);
    by_case[v.case_id][v.brief_id][v.judge] = passed;
    score_of[v.case_id][v.brief_id][v.judge] = score_brief(its, passed).weighted;
  }
  std::vector<CaseRows> rows;
  for (const auto& [c, briefs] : by_case) {
    CaseRows cr;
    cr.items.resize(judges.size());
    cr.brief_scores.resize(judges.size());
    cr.fleiss_without.resize(judges.size());
    for (const auto& [b, by_judge] : briefs) {
      const std::size_t n = by_judge.at("j1").size();
      for (std::size_t i = 0; i < n; ++i) {
        double pass = 0;
        for (std::size_t j = 0; j < judges.size(); ++j) {
          const bool p = by_judge.at(judges[j])[i];
          pass += p ? 1 : 0;
          cr.items[j].push_back(p ? 1.0 : 0.0);
        }
        cr.fleiss.push_back({static_cast<double>(judges.size()) - pass, pass});
        for (std::size_t d = 0; d < judges.size(); ++d) {
          const double p = pass - (by_judge.at(judges[d])[i] ? 1 : 0);
          cr.fleiss_without[d].push_back({static_cast<double>(judges.size() - 1) - p, p});
        }
      }
      std::vector<double> row;
      for (std::size_t j = 0; j < judges.size(); ++j) {
        row.push_back(score_of[c][b].at(judges[j]));
        cr.brief_scores[j].push_back(row.back());
      }
      // A score row enters the ICC and Kendall's W only when every judge's score is defined.
      if (std::none_of(row.begin(), row.end(), [](double x) { return std::isnan(x); })) cr.scores.push_back(row);
    }
    rows.push_back(std::move(cr));
  }
  Rng rng = Rng::keyed(seed, "rubric-agreement", "panel");
  std::vector<std::uint32_t> counts(rows.size());
  std::map<std::string, std::vector<double>> reps;
  for (int r = 0; r < resamples; ++r) {
    resample_counts(rng, counts);
    agreement::Matrix fleiss, scores, items(judges.size()), brief_scores(judges.size());
    std::vector<agreement::Matrix> without(judges.size());
    for (std::size_t c = 0; c < rows.size(); ++c)
      for (std::uint32_t t = 0; t < counts[c]; ++t) {
        fleiss.insert(fleiss.end(), rows[c].fleiss.begin(), rows[c].fleiss.end());
        scores.insert(scores.end(), rows[c].scores.begin(), rows[c].scores.end());
        for (std::size_t j = 0; j < judges.size(); ++j) {
          items[j].insert(items[j].end(), rows[c].items[j].begin(), rows[c].items[j].end());
          brief_scores[j].insert(brief_scores[j].end(), rows[c].brief_scores[j].begin(), rows[c].brief_scores[j].end());
          without[j].insert(without[j].end(), rows[c].fleiss_without[j].begin(), rows[c].fleiss_without[j].end());
        }
      }
    std::vector<std::pair<std::string, double>> stats{
        {"fleiss_kappa", agreement::fleiss_kappa(fleiss)},
        {"krippendorff_alpha_nominal_items", agreement::krippendorff_alpha(items, agreement::AlphaLevel::nominal)},
        {"krippendorff_alpha_interval_scores",
         agreement::krippendorff_alpha(brief_scores, agreement::AlphaLevel::interval)}};
    if (scores.size() >= 2) {  // fewer than two score rows: no ICC and no W in this replicate
      const auto icc = agreement::icc(scores);
      stats.emplace_back("icc2_1_scores", icc.icc2_1);
      stats.emplace_back("icc3_1_scores", icc.icc3_1);
      stats.emplace_back("kendall_w_scores", agreement::kendall_w(scores));
    }
    for (std::size_t d = 0; d < judges.size(); ++d)
      stats.emplace_back("fleiss_kappa_without:" + judges[d], agreement::fleiss_kappa(without[d]));
    for (const auto& [name, value] : stats)
      if (std::isfinite(value)) reps[name].push_back(value);
  }
  std::size_t checked = 0;
  for (std::size_t r = 0; r < panel.size(); ++r) {
    const auto it = reps.find(panel.at(r, "statistic"));
    if (it == reps.end()) continue;
    SCOPED_TRACE(it->first);
    const auto [lo, hi] = percentile_bounds(it->second);
    EXPECT_NEAR(std::stod(panel.at(r, "lo")), lo, 1e-6 + 1e-12);
    EXPECT_NEAR(std::stod(panel.at(r, "hi")), hi, 1e-6 + 1e-12);
    // With one scoring case, a score statistic's replicates repeat c0's rows alone and can all be one value.
    if (!scores_in_one_case) {
      EXPECT_LT(lo, hi);
    }
    ++checked;
  }
  EXPECT_EQ(checked, reps.size());
  EXPECT_EQ(reps.size(), 9u);
  EXPECT_EQ(checked, panel.size()) << "every statistic of the panel file is compared";
  if (scores_in_one_case) {  // the replicates without score rows have no ICC: fewer values than resamples
    EXPECT_LT(reps.at("icc2_1_scores").size(), static_cast<std::size_t>(resamples) * 9 / 10);
  }
}

TEST(RubricAgreement, PanelIntervalsAreThoseOfTheExpandedResamples) { expect_panel_intervals_of_expanded_resamples(false); }

TEST(RubricAgreement, PanelIntervalsAreThoseOfTheExpandedResamplesWhenSomeReplicatesHaveNoScores) {
  expect_panel_intervals_of_expanded_resamples(true);
}

TEST(AgreementSums, AgreeWithTheMatrixFunctionsAndAddOverSubjects) {
  using namespace agreement;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Krippendorff's 3-coder x 15-unit reliability data with missing values (published: 0.691358, 0.810845).
  const Matrix k15{{nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3},
                   {1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan},
                   {nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4}};
  EXPECT_NEAR(alpha_sums(k15, AlphaLevel::nominal).alpha(), 0.691358, 5e-7);
  EXPECT_NEAR(alpha_sums(k15, AlphaLevel::interval).alpha(), 0.810845, 5e-7);
  EXPECT_THROW((void)alpha_sums(k15, AlphaLevel::ordinal), Error);
  // Units split in two halves and added back; the second half counted twice equals the matrix with it repeated.
  auto cols = [&](std::size_t from, std::size_t to, int times) {
    Matrix m(k15.size());
    for (int t = 0; t < times; ++t)
      for (std::size_t c = 0; c < k15.size(); ++c) m[c].insert(m[c].end(), k15[c].begin() + from, k15[c].begin() + to);
    return m;
  };
  for (AlphaLevel level : {AlphaLevel::nominal, AlphaLevel::interval}) {
    AlphaSums sum = alpha_sums(cols(0, 7, 1), level);
    sum.add(alpha_sums(cols(7, 15, 1), level), 2);
    Matrix both = cols(0, 7, 1);
    const Matrix twice = cols(7, 15, 2);
    for (std::size_t c = 0; c < both.size(); ++c) both[c].insert(both[c].end(), twice[c].begin(), twice[c].end());
    EXPECT_NEAR(sum.alpha(), krippendorff_alpha(both, level), 1e-12);
  }
  // Fleiss and ICC on a 6 x 3 table, whole and as 2 + 4 rows with the second part weighted 3.
  const Matrix counts{{3, 0, 0}, {1, 2, 0}, {0, 2, 1}, {1, 1, 1}, {0, 0, 3}, {2, 0, 1}};
  EXPECT_NEAR(fleiss_sums(counts).kappa(), fleiss_kappa(counts), 1e-12);
  const Matrix scores{{0.1, 0.3, 0.2}, {0.8, 0.6, 0.9}, {0.5, 0.5, 0.4}, {-0.2, 0.1, 0.0}, {1.0, 0.7, 0.9}, {0.3, 0.2, 0.6}};
  const IccResult whole = icc(scores), by_sums = icc_sums(scores).icc();
  EXPECT_NEAR(by_sums.icc2_1, whole.icc2_1, 1e-12);
  EXPECT_NEAR(by_sums.icc3_1, whole.icc3_1, 1e-12);
  auto rows = [](const Matrix& m, std::size_t from, std::size_t to, int times) {
    Matrix out;
    for (int t = 0; t < times; ++t) out.insert(out.end(), m.begin() + from, m.begin() + to);
    return out;
  };
  FleissSums f = fleiss_sums(rows(counts, 0, 2, 1));
  f.add(fleiss_sums(rows(counts, 2, 6, 1)), 3);
  IccSums is = icc_sums(rows(scores, 0, 2, 1));
  is.add(icc_sums(rows(scores, 2, 6, 1)), 3);
  Matrix cw = rows(counts, 0, 2, 1), sw = rows(scores, 0, 2, 1);
  for (const auto& r : rows(counts, 2, 6, 3)) cw.push_back(r);
  for (const auto& r : rows(scores, 2, 6, 3)) sw.push_back(r);
  EXPECT_NEAR(f.kappa(), fleiss_kappa(cw), 1e-12);
  EXPECT_NEAR(is.icc().icc2_1, icc(sw).icc2_1, 1e-12);
  EXPECT_NEAR(is.icc().icc3_1, icc(sw).icc3_1, 1e-12);
  EXPECT_TRUE(std::isnan(FleissSums{}.kappa()));
  EXPECT_TRUE(std::isnan(AlphaSums{}.alpha()));
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
