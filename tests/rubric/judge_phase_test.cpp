// The live judges' phase (issue 48, items 4 and 7): after a run's scenarios, a live judge's grading shows its
// progress and ends with one line of its failures and what its calls took; `rubric regrade` without --config asks
// with the run's recorded llm settings (not the defaults) and its messages say which settings and endpoint it used.
// Against a chat-completions server in the test process.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "advplan/io/csv.hpp"
#include "support/chat_server.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::quote;
using testing::TempDir;

/// A judge endpoint: prose (a malformed reply, so the judge fails on every plan) or a valid empty verdict, with
/// usage counts; it keeps every request body.
class JudgeServer {
 public:
  JudgeServer()
      : server_([this](const httplib::Request& q, httplib::Response& r) {
          {
            std::lock_guard lock(mu_);
            bodies_.push_back(nlohmann::json::parse(q.body, nullptr, false));
          }
          nlohmann::json out =
              testing::chat_reply(valid_.load() ? R"({"failed_items": []})" : "I would rather not grade this plan.");
          out["usage"] = {{"prompt_tokens", 100}, {"completion_tokens", 7}};
          r.set_content(out.dump(), "application/json");
        }) {}
  std::string url() const { return server_.url(); }
  void answer_validly() { valid_ = true; }
  std::vector<nlohmann::json> bodies() const {
    std::lock_guard lock(mu_);
    return bodies_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<nlohmann::json> bodies_;
  std::atomic<bool> valid_{false};
  testing::LoopbackServer server_;  // last: it stops before the state its handler uses goes
};

/// tests/data/small.yaml over two scenarios with the live judge llm_judge:m, a timeout of 7 s and max_tokens 123.
std::string judged_config(const TempDir& dir) {
  return testing::small_config(
      dir, {testing::seeds("[100, 100]"),
            {"budget_sweep: [1, 2, 4, 8, 16]", "budget_sweep: []\nrubric: {judges: [\"llm_judge:m\"], judge_retries: 0}"},
            {"studies: {rubric: true, framing: true, components: true}",
             "studies: {rubric: true, framing: false, components: false}"},
            {"timeout_s: 30", "timeout_s: 7"},
            {"max_repairs: 1}", "max_repairs: 1, generation: {max_tokens: 123}}"}});
}

TEST(JudgePhase, ShowsItsProgressAndEndsWithItsFailuresAndCost) {
  JudgeServer server;
  TempDir dir("judge-phase");
  const auto x = testing::run_command("ADVPLAN_LLM_ENDPOINT=" + server.url() + " " + quote(testing::kBinary) + " run " +
                                          quote(judged_config(dir)) + " --out " + quote(dir / "run") +
                                          " --progress plain",
                                      dir);
  ASSERT_EQ(x.status, 0) << x.err;
  const std::size_t calls = server.bodies().size();
  ASSERT_GT(calls, 0u);
  EXPECT_THAT(x.err, HasSubstr("advplan judges: 2/2 scenarios"));
  EXPECT_THAT(x.err, HasSubstr(", llm_judge:m): "));  // the first failure of its cause, as it happens
  // Every plan and canary given to the judge failed (a malformed reply, no retry), and the line says what the calls
  // took, the canaries' calls included.
  const auto canary_rows = io::CsvTable::read(dir / "run/rubric/canaries.csv");
  std::size_t canaries = 0;
  for (std::size_t i = 0; i < canary_rows.size(); ++i) canaries += canary_rows.at(i, "judge") == "llm_judge:m" ? 1 : 0;
  ASSERT_GT(canaries, 0u);
  ASSERT_GT(calls, canaries);
  const std::string n = std::to_string(calls), p = std::to_string(calls - canaries), c = std::to_string(canaries);
  EXPECT_THAT(x.err, HasSubstr("advplan: rubric judges: llm_judge:m failed on " + p + " of " + p + " plans and " + c +
                               " of " + c + " canaries; model calls: " + n + " (judge llm_judge:m " + n + "); " +
                               std::to_string(100 * calls) + " prompt + " +
                               std::to_string(7 * calls) + " completion tokens; cost unknown"));
}

TEST(JudgePhase, RegradeAsksWithTheRunsRecordedSettingsAndSaysWhichItUsed) {
  JudgeServer server;
  server.answer_validly();
  TempDir dir("judge-regrade");
  const std::string endpoint = "ADVPLAN_LLM_ENDPOINT=" + server.url() + " ";
  ASSERT_EQ(testing::run_command(endpoint + quote(testing::kBinary) + " run " + quote(judged_config(dir)) + " --out " +
                                     quote(dir / "run") + " --progress none",
                                 dir)
                .status,
            0);
  const std::size_t run_calls = server.bodies().size();
  ASSERT_GT(run_calls, 0u);
  // Without --config: the run's generation settings reach the server, and the closing line names them, the run's
  // metadata they came from, and the endpoint from the environment.
  const auto x = testing::run_command(endpoint + quote(testing::kBinary) + " rubric regrade " + quote(dir / "run") +
                                          " --judges llm_judge:m --out " + quote(dir / "out"),
                                      dir);
  ASSERT_EQ(x.status, 0) << x.err;
  const auto bodies = server.bodies();
  ASSERT_GT(bodies.size(), run_calls);
  for (std::size_t i = run_calls; i < bodies.size(); ++i) EXPECT_EQ(bodies[i].value("max_tokens", 0), 123) << i;
  EXPECT_THAT(x.err, HasSubstr("the live judges used the llm settings of " + (dir / "run/run_metadata.json")));
  EXPECT_THAT(x.err, HasSubstr("timeout_s 7"));
  EXPECT_THAT(x.err, HasSubstr("max_tokens 123"));
  EXPECT_THAT(x.err, HasSubstr(server.url() + " (ADVPLAN_LLM_ENDPOINT)"));
  // Without an endpoint: the warning says what regrade reads, not a config key it ignores.
  const auto y = testing::run_command("env -u ADVPLAN_LLM_ENDPOINT " + quote(testing::kBinary) + " rubric regrade " +
                                          quote(dir / "run") + " --judges llm_judge:m --out " + quote(dir / "out2"),
                                      dir);
  ASSERT_EQ(y.status, 0) << y.err;
  EXPECT_THAT(y.err, HasSubstr("no endpoint: set ADVPLAN_LLM_ENDPOINT, or pass --config with the run's config"));
  EXPECT_THAT(y.err, Not(HasSubstr("llm.endpoint in the config")));
}

}  // namespace
}  // namespace advplan
