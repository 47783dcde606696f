// Replanning in the engagement wargame (docs/POLICIES.md "6. Replanning"), end to end with the exec: example
// examples/policies/replanning_blue.py: every decision point is a row of replans.csv within the call budget, every
// call is in transcripts.jsonl, the bytes do not depend on threads, every win rate is its plans and replans played
// again, a policy whose replans are invalid leaves the default rule to decide (the same win rates as the seed plan
// without replanning), and a policy that cannot replan refuses the key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "advplan/core/validation.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/io/played_plans.hpp"
#include "advplan/run/config.hpp"
#include "advplan/sim/engagement.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

constexpr int kCalls = 8;

/// Plans the seed plan, and answers every replan request with a line that is not JSON: a broken stream.
constexpr const char* kGarbage = R"(import json, sys
for line in sys.stdin:
    r = json.loads(line)
    if r.get("type") == "replan":
        sys.stdout.write("not json\n")
    else:
        sys.stdout.write(json.dumps({"request_id": r["request_id"], "plan": r["scenario"]["blue_seed_plans"][0]}) + "\n")
    sys.stdout.flush()
)";

std::string replan_config(const TempDir& dir, const std::string& name, const std::string& args,
                          const std::string& program = testing::kSource + "/examples/policies/replanning_blue.py") {
  const std::string blue = "exec:python3 " + program + args;
  return testing::small_config(
      dir,
      {{"conditions: [single, greedy@8, constraint@8, llm_offline, {label: council, blue: council, red: greedy@8}]",
        "conditions: [{label: replan, blue: \"" + blue + "\", red: greedy@8}, {label: fixed, blue: seed, red: greedy@8}]"},
       {"budget_sweep: [1, 2, 4, 8, 16]", ""},
       {"  constraint: {lambda: 0.7}", "  exec: {replans: true}"},
       {"simulator: {replications: 50,",
        "simulator: {model: engagement, engagement: {replan_calls: " + std::to_string(kCalls) + "}, replications: 50,"},
       {"studies: {rubric: true, framing: true, components: true}", "studies: {rubric: false, framing: false, components: false}"}},
      name);
}

class ReplanRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("replan-run");
    good_ = replan_config(*dir_, "good.yaml", "");
    const std::string bad = replan_config(*dir_, "bad.yaml", " --bad");
    testing::write_file(*dir_ / "garbage.py", kGarbage);
    const std::string garbage = replan_config(*dir_, "garbage.yaml", "", *dir_ / "garbage.py");
    for (const auto& [cfg, out, threads] :
         {std::tuple{good_, "good1", "1"}, std::tuple{good_, "good2", "2"}, std::tuple{bad, "bad", "2"},
          std::tuple{garbage, "garbage1", "1"}, std::tuple{garbage, "garbage2", "2"}}) {
      const auto r = testing::advplan("run " + testing::quote(cfg) + " --progress none --threads " + threads + " --out " +
                                          testing::quote(*dir_ / out),
                                      *dir_);
      ASSERT_EQ(r.status, 0) << r.err;
    }
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string out(const char* name) { return *dir_ / name; }
  static TempDir* dir_;
  static std::string good_;
};
TempDir* ReplanRun::dir_ = nullptr;
std::string ReplanRun::good_;

TEST_F(ReplanRun, EveryDecisionPointIsARowWithinTheBudgetAndEveryCallIsTranscribed) {
  EXPECT_EQ(testing::compare_runs(out("good1"), out("good2")), "");
  const io::CsvTable rows = io::CsvTable::read(out("good1") + "/replans.csv");
  ASSERT_GT(rows.size(), 0u);
  std::map<std::string, int> calls, status;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string s = rows.at(i, "status"), cell = rows.at(i, "scenario_id") + "/" + rows.at(i, "condition");
    ++status[s];
    EXPECT_EQ(rows.at(i, "condition"), "replan");
    EXPECT_EQ(rows.at(i, "side"), "BLUE");
    if (s == "ok" || s == "failed") ++calls[cell];
    if (s == "budget") {
      EXPECT_EQ(calls[cell], kCalls) << "a budget row before the budget was spent";
    }
    EXPECT_EQ(rows.at(i, "plan").empty(), s != "ok");
    if (s == "ok" || s == "reused") {
      EXPECT_FALSE(rows.at(i, "chain").empty());
    }
  }
  for (const auto& [cell, n] : calls) EXPECT_LE(n, kCalls) << cell;
  EXPECT_GT(status["ok"], 0);
  EXPECT_GT(status["budget"], 0);  // 50 replications, 8 calls
  // Each call's exchange is in transcripts.jsonl, as a blue-replan line with the request.
  std::istringstream lines(testing::read_file(out("good1") + "/transcripts.jsonl"));
  int transcribed = 0;
  for (std::string line; std::getline(lines, line);)
    if (nlohmann::json::parse(line).at("role") == "blue-replan") ++transcribed;
  EXPECT_EQ(transcribed, status["ok"] + status["failed"]);
}

/// Answers each decision point with the next row of replans.csv for its cell: the row's plan (ok), the plan an
/// earlier row gave the same chain (reused), or nothing (failed, budget); checks the point is the row's.
struct ReplayReplanner final : Replanner {
  std::vector<std::size_t> rows;  // this cell's rows of replans.csv, in file order
  const io::CsvTable* table = nullptr;
  const Scenario* sc = nullptr;
  std::size_t next = 0;
  std::map<std::string, Plan> by_chain;
  const Plan* replan(const DecisionPoint& d) override {
    if (next >= rows.size()) {
      ADD_FAILURE() << "a decision point without a row";
      return nullptr;
    }
    const std::size_t i = rows[next++];
    EXPECT_EQ(table->at(i, "replication"), std::to_string(d.replication));
    EXPECT_EQ(table->at(i, "step"), std::to_string(d.step));
    const std::string s = table->at(i, "status");
    if (s == "ok") {
      PlanParse p = parse_plan_text(table->at(i, "plan"), *sc, Side::Blue);
      EXPECT_TRUE(p.ok());
      return &(by_chain[table->at(i, "chain")] = *p.plan);
    }
    if (s == "reused" && !table->at(i, "chain").empty()) return &by_chain.at(table->at(i, "chain"));
    return nullptr;
  }
};

TEST_F(ReplanRun, EveryWinRateIsItsPlansAndReplansPlayedAgain) {
  const ExperimentConfig cfg = load_experiment_config(good_);
  const std::vector<Scenario> corpus = generate_corpus(cfg);
  const io::CsvTable per = io::CsvTable::read(out("good1") + "/per_scenario.csv");
  const io::CsvTable rows = io::CsvTable::read(out("good1") + "/replans.csv");
  const io::CsvTable reps = io::CsvTable::read(out("good1") + "/replications.csv");
  std::map<std::string, std::size_t> rep_row;  // scenario -> its replan cell's row of replications.csv
  for (std::size_t k = 0; k < reps.size(); ++k)
    if (reps.at(k, "condition") == "replan") rep_row[reps.at(k, "scenario_id")] = k;
  std::map<std::string, Plan> blue, red;
  for (const PlayedPlan& p : read_played_plans(out("good1") + "/plans.jsonl"))
    if (p.plan) (p.side == Side::Blue ? blue : red)[p.scenario_id + "/" + (p.side == Side::Blue ? p.policy : p.condition)] = *p.plan;
  int replayed = 0;
  for (std::size_t i = 0; i < per.size(); ++i) {
    if (per.at(i, "status") != "ok" || per.at(i, "condition") != "replan") continue;
    const std::string id = per.at(i, "scenario_id");
    const Scenario& sc = *std::find_if(corpus.begin(), corpus.end(), [&](const Scenario& x) { return x.id == id; });
    ReplayReplanner rp;
    rp.table = &rows;
    rp.sc = &sc;
    for (std::size_t k = 0; k < rows.size(); ++k)
      if (rows.at(k, "scenario_id") == id) rp.rows.push_back(k);
    const Force fb{per.real(i, "blue_raw_capability"), per.real(i, "blue_quality"), per.real(i, "blue_coherence"), 1.0};
    const Force fr{per.real(i, "red_raw_capability"), per.real(i, "red_quality"), per.real(i, "red_coherence"), 1.0};
    EngagementTrace tr;
    const SimResult res = simulate_engagement(sc, blue.at(id + "/" + per.at(i, "blue_policy")), fb, red.at(id + "/replan"),
                                              fr, draw_noise(cfg.seed, id, cfg.sim), cfg.sim, &tr, 0,
                                              {nullptr, nullptr, &rp, nullptr});
    EXPECT_EQ(rp.next, rp.rows.size()) << id << ": rows the replay did not reach";
    EXPECT_EQ(per.at(i, "blue_win_rate"), io::fmt_real(res.win_rate)) << id;
    // The losses and lengths too: a revised plan changes them even where the win rate stays.
    double loss = 0, steps = 0;
    for (const auto& o : tr.outcomes) {
      loss += o.blue_loss;
      steps += o.steps;
    }
    const double n = static_cast<double>(tr.outcomes.size());
    // (per_scenario.csv's forces have 6 decimals, so the replayed losses agree to about 1e-6.)
    EXPECT_NEAR(reps.real(rep_row.at(id), "mean_blue_loss"), loss / n, 1e-5) << id;
    EXPECT_EQ(reps.at(rep_row.at(id), "mean_steps"), io::fmt_real(steps / n)) << id;
    ++replayed;
  }
  EXPECT_GT(replayed, 0);
}

TEST_F(ReplanRun, InvalidReplansAreRowsAndTheDefaultRuleDecides) {
  const io::CsvTable rows = io::CsvTable::read(out("bad") + "/replans.csv");
  ASSERT_GT(rows.size(), 0u);
  std::map<std::string, int> failed;  // per scenario: three failed calls in a row stop the cell's replanning
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string s = rows.at(i, "status"), id = rows.at(i, "scenario_id");
    EXPECT_TRUE(s == "failed" || s == "reused" || s == "stopped") << s;
    if (s == "failed") {
      EXPECT_THAT(rows.at(i, "reason"), HasSubstr("no-such-asset"));
      EXPECT_LT(failed[id]++, 3) << id;
    }
    if (s == "stopped") {
      EXPECT_EQ(failed[id], 3) << id;
      EXPECT_THAT(rows.at(i, "reason"), HasSubstr("3 calls of this cell in a row failed"));
    }
  }
  // The program plans the seed plan, so with every replan refused each cell is the seed plan's without replanning.
  const io::CsvTable per = io::CsvTable::read(out("bad") + "/per_scenario.csv");
  std::map<std::string, std::map<std::string, std::string>> win;
  for (std::size_t i = 0; i < per.size(); ++i) win[per.at(i, "scenario_id")][per.at(i, "condition")] = per.at(i, "blue_win_rate");
  for (const auto& [id, w] : win) EXPECT_EQ(w.at("replan"), w.at("fixed")) << id;
}

TEST_F(ReplanRun, ABrokenStreamStopsTheCellsReplanningAndSparesThePlanning) {
  // Every replan answer is garbage: each cell makes one call, the rest of its points are `stopped` rows; the
  // program's planning, on its own processes, never meets the restart limit; and the bytes do not depend on threads.
  EXPECT_EQ(testing::compare_runs(out("garbage1"), out("garbage2")), "");
  const io::CsvTable rows = io::CsvTable::read(out("garbage1") + "/replans.csv");
  std::map<std::string, int> calls;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string s = rows.at(i, "status");
    EXPECT_TRUE(s == "failed" || s == "stopped") << s;
    if (s == "failed") ++calls[rows.at(i, "scenario_id")];
  }
  ASSERT_FALSE(calls.empty());
  for (const auto& [id, n] : calls) EXPECT_EQ(n, 1) << id;
  const io::CsvTable per = io::CsvTable::read(out("garbage1") + "/per_scenario.csv");
  for (std::size_t i = 0; i < per.size(); ++i) EXPECT_EQ(per.at(i, "status"), "ok") << per.at(i, "failure_reason");
}

TEST_F(ReplanRun, APolicyThatCannotReplanRefusesTheKey) {
  const std::string cfg = testing::small_config(*dir_, {{"  constraint: {lambda: 0.7}", "  greedy: {replans: true}"}}, "norep.yaml");
  const auto r = testing::advplan("run " + testing::quote(cfg) + " --out " + testing::quote(*dir_ / "norep"), *dir_);
  testing::expect_one_line_error(r);
  EXPECT_THAT(r.err, HasSubstr("replans"));
}

}  // namespace
}  // namespace advplan
