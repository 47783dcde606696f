// Extending advplan takes one file: this file defines a new RED policy and a new BLUE policy, registers them by
// name, and nothing else in the tree knows them. A config then names them in `conditions:` (as `advplan run`
// does) and in evaluate's conditions (as `advplan evaluate` does), and the run writes their rows and tables.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>

#include "advplan/pipeline/standard_run.hpp"
#include "advplan/evaluation/evaluation.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/policy/red_candidate.hpp"
#include "support/fixtures.hpp"

namespace advplan {
namespace {

/// RED: samples k candidates like greedy@k, and answers with the last one.
class LastCandidatePolicy final : public RedPolicy {
 public:
  static PolicyInfo static_info() {
    return {"test_last", Side::Red, true, 4, ThreadSafety::constant, {}, "test: the last of k sampled candidates"};
  }
  LastCandidatePolicy(int k, Params p) : RedPolicy(static_info(), k, std::move(p)) {}

 protected:
  RedResponse do_respond(const RedRequest& req, CandidateCache* cache) const override {
    RedResponse r;
    r.candidates = sample_red_candidates(req, k(), cache);
    r.selected = static_cast<int>(r.candidates.size()) - 1;
    return r;
  }
};

/// BLUE: the scenario's last seed plan instead of its first.
class LastSeedPolicy final : public BluePolicy {
 public:
  static PolicyInfo static_info() {
    return {"test_last_seed", Side::Blue, false, 1, ThreadSafety::constant, {}, "test: the last BLUE seed plan"};
  }
  explicit LastSeedPolicy(Params p) : BluePolicy(static_info(), std::move(p)) {}

 protected:
  BluePlanResult do_plan(const Scenario& sc, Rng&) const override {
    BluePlanResult r;
    r.plan = sc.blue_seed_plans.back();
    return r;
  }
};

/// BLUE: the first seed plan, counting its calls (the rubric layer must grade the plans the run made).
std::atomic<int> g_counting_calls{0};
class CountingSeedPolicy final : public BluePolicy {
 public:
  static PolicyInfo static_info() {
    return {"test_counting_seed", Side::Blue, false, 1, ThreadSafety::constant, {}, "test: the seed plan, counted"};
  }
  explicit CountingSeedPolicy(Params p) : BluePolicy(static_info(), std::move(p)) {}

 protected:
  BluePlanResult do_plan(const Scenario& sc, Rng&) const override {
    ++g_counting_calls;
    BluePlanResult r;
    r.plan = sc.blue_seed_plans.front();
    return r;
  }
};

}  // namespace

ADVPLAN_REGISTER_BLUE_POLICY(CountingSeedPolicy::static_info(),
                             [](const PolicySpec&, const Params& p, const PolicyContext&) -> std::unique_ptr<BluePolicy> {
                               return std::make_unique<CountingSeedPolicy>(p);
                             })
ADVPLAN_REGISTER_RED_POLICY(LastCandidatePolicy::static_info(),
                            [](const PolicySpec& s, const Params& p, const PolicyContext&) -> std::unique_ptr<RedPolicy> {
                              return std::make_unique<LastCandidatePolicy>(s.k.value_or(4), p);
                            })
ADVPLAN_REGISTER_BLUE_POLICY(LastSeedPolicy::static_info(),
                             [](const PolicySpec&, const Params& p, const PolicyContext&) -> std::unique_ptr<BluePolicy> {
                               return std::make_unique<LastSeedPolicy>(p);
                             })

namespace {

/// A small config whose conditions name the new policies, read as `advplan run CONFIG` reads it.
ExperimentConfig extension_config() {
  const std::string yaml = R"(name: extension
seed: 11
corpus: {templates: [urban, maritime], seeds: [100, 101]}
conditions:
  - greedy@4
  - test_last@4
  - {label: mine, blue: test_last_seed, red: test_last@4}
  - {label: mine-greedy, blue: test_last_seed, red: greedy@4, group: reference}
simulator: {replications: 20}
bootstrap: {resamples: 50}
studies: {rubric: false, framing: false, components: false}
)";
  return parse_experiment_config(yaml, "extension.yaml", "");
}

io::CsvTable run_into(const ExperimentConfig& cfg, const std::vector<Condition>& conds, const testing::TempDir& dir) {
  const RunPlan plan = prepare_run(cfg, conds);
  RunOptions opts;
  opts.out_dir = dir / "run";
  opts.progress = false;
  opts.studies = false;
  opts.observers = standard_observers(opts.studies);
  const RunSummary s = run_experiment(plan, opts);
  EXPECT_EQ(s.failed_rows, 0u);
  return io::CsvTable::read(dir / "run/per_scenario.csv");
}

TEST(Extension, NewPoliciesRunFromConfigConditions) {
  const ExperimentConfig cfg = extension_config();
  testing::TempDir dir("extension-run");
  const auto per = run_into(cfg, run_conditions(cfg), dir);
  ASSERT_EQ(per.size(), 4u * 4u);
  std::size_t mine = 0;
  for (std::size_t i = 0; i < per.size(); ++i) {
    EXPECT_EQ(per.at(i, "status"), "ok") << per.at(i, "failure_reason");
    if (per.at(i, "condition") != "mine") continue;
    ++mine;
    EXPECT_EQ(per.at(i, "blue_policy"), "test_last_seed");
    EXPECT_EQ(per.at(i, "red_policy"), "test_last@4");
    EXPECT_NE(per.at(i, "blue_plan_id").find("/blue/seed"), std::string::npos);
  }
  EXPECT_EQ(mine, 4u);
  // The tables name the new pairing with its BLUE and RED policy.
  const std::string t3 = testing::read_file(dir / "run/tables/table3_policy_comparison.md");
  EXPECT_NE(t3.find("| mine | test_last_seed | test_last@4 |"), std::string::npos) << t3;
}

TEST(Extension, NewBluePolicyIsEvaluatedAgainstRedBaselines) {
  const ExperimentConfig cfg = extension_config();
  testing::TempDir dir("extension-evaluate");
  EvaluateSpec spec;
  spec.blue = "test_last_seed";
  spec.reds = {"greedy@4", "test_last@4"};
  spec.references = {"seed"};
  spec.budget_ks = {};
  const auto per = run_into(cfg, evaluate_conditions(spec), dir);
  ASSERT_EQ(per.size(), 4u * 4u);
  for (std::size_t i = 0; i < per.size(); ++i) {
    const bool tested = per.at(i, "blue_policy") == "test_last_seed";
    EXPECT_EQ(per.at(i, "condition_group"), tested ? "evaluate" : "reference");
    EXPECT_EQ(per.at(i, "condition"), per.at(i, "blue_policy") + " vs " + per.at(i, "red_policy"));
  }
  const std::string t3 = testing::read_file(dir / "run/tables/table3_policy_comparison.md");
  EXPECT_NE(t3.find("each condition's BLUE policy"), std::string::npos) << t3;
}

TEST(Extension, TheRubricLayerGradesThePlansTheRunMadeWithoutAskingTheBluePolicyAgain) {
  // Four scenarios, one BLUE policy in two conditions: four plan calls in all, the rubric layer included.
  const std::string yaml = R"(name: counting
seed: 11
corpus: {templates: [urban, maritime], seeds: [100, 101]}
default_blue: test_counting_seed
conditions: [single, greedy@4]
simulator: {replications: 20}
bootstrap: {resamples: 50}
studies: {rubric: true, framing: false, components: false}
)";
  const ExperimentConfig cfg = parse_experiment_config(yaml, "counting.yaml", "");
  testing::TempDir dir("extension-rubric-memo");
  const RunPlan plan = prepare_run(cfg, run_conditions(cfg));
  RunOptions opts;
  opts.out_dir = dir / "run";
  opts.progress = false;
  g_counting_calls = 0;
  opts.observers = standard_observers(opts.studies);
  const RunSummary s = run_experiment(plan, opts);
  EXPECT_EQ(s.failed_rows, 0u);
  ASSERT_TRUE(std::filesystem::exists(dir / "run/rubric/verdicts.jsonl")) << "the rubric layer ran";
  EXPECT_NE(testing::read_file(dir / "run/rubric/verdicts.jsonl").find("test_counting_seed"), std::string::npos);
  EXPECT_EQ(g_counting_calls.load(), 4);
}

TEST(Extension, ABluePolicyNamedAsARedSpecIsExplained) {
  ExperimentConfig cfg = extension_config();
  try {
    (void)prepare_run(cfg, {{"oops", "seed", "test_last_seed", "main"}});
    FAIL() << "a BLUE policy as a RED spec was accepted";
  } catch (const PolicyError& e) {
    EXPECT_NE(std::string(e.what()).find("'test_last_seed' is a BLUE policy"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace advplan
