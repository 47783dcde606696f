// The runner honours a policy's declared thread safety: a ThreadSafety::none policy is never entered by two
// scenario tasks at once, and its results equal the concurrent ones.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "advplan/pipeline/standard_run.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/io/csv.hpp"
#include "support/fixtures.hpp"

namespace advplan {
namespace {

std::atomic<int> g_inside{0};
std::atomic<int> g_max_inside{0};

/// The seed plan, slowly, recording how many threads are inside at once.
class SerialSeedPolicy final : public BluePolicy {
 public:
  static PolicyInfo static_info() {
    return {"test_serial_seed", Side::Blue, false, 1, ThreadSafety::none, {}, "test: seed plan, not thread-safe"};
  }
  explicit SerialSeedPolicy(Params p) : BluePolicy(static_info(), std::move(p)) {}

 protected:
  BluePlanResult do_plan(const Scenario& sc, Rng&) const override {
    const int now = ++g_inside;
    int seen = g_max_inside.load();
    while (now > seen && !g_max_inside.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    --g_inside;
    BluePlanResult r;
    r.plan = sc.blue_seed_plans.front();
    return r;
  }
};

}  // namespace

ADVPLAN_REGISTER_BLUE_POLICY(SerialSeedPolicy::static_info(),
                             [](const PolicySpec&, const Params& p, const PolicyContext&) -> std::unique_ptr<BluePolicy> {
                               return std::make_unique<SerialSeedPolicy>(p);
                             })

namespace {

TEST(Runner, SerialisesAPolicyThatIsNotThreadSafe) {
  ExperimentConfig cfg = default_experiment_config();
  cfg.seed_to = cfg.seed_from + 3;  // 20 scenarios
  cfg.studies = {false, false, false};
  const RunPlan plan = prepare_run(cfg, {{"serial", "test_serial_seed", "greedy@8", "evaluate"},
                                         {"seed", "seed", "greedy@8", "reference"}});
  ASSERT_NE(plan.lock_for("blue:test_serial_seed"), nullptr);
  EXPECT_EQ(plan.lock_for("blue:seed"), nullptr);
  testing::TempDir dir("runner-serial");
  RunOptions opts;
  opts.out_dir = dir / "run";
  opts.threads = 2;
  opts.progress = false;
  opts.studies = false;
  g_max_inside = 0;
  opts.observers = standard_observers(opts.studies);
  const RunSummary s = run_experiment(plan, opts);
  EXPECT_EQ(s.failed_rows, 0u);
  EXPECT_EQ(g_max_inside.load(), 1);
  // The serialised policy returns the seed plan, so its rows equal the seed rows in every metric.
  const auto per = io::CsvTable::read(dir / "run/per_scenario.csv");
  for (std::size_t i = 0; i + 1 < per.size(); i += 2) {
    EXPECT_EQ(per.at(i, "advantage"), per.at(i + 1, "advantage"));
    EXPECT_EQ(per.at(i, "blue_win_rate"), per.at(i + 1, "blue_win_rate"));
  }
}

TEST(Runner, APoliciesSectionMustNameARegisteredPolicy) {
  ExperimentConfig cfg = default_experiment_config();
  cfg.source = "paper.yaml";
  const std::vector<Condition> conditions{{"seed", "seed", "greedy@8", "reference"}};
  cfg.policy_params["constraint"] = {{"lambda", 0.5}};
  EXPECT_NO_THROW((void)prepare_run(cfg, conditions));  // named, though this run does not use it
  cfg.policy_params["constrant"] = {{"lambda", 0.5}};
  try {
    (void)prepare_run(cfg, conditions);
    ADD_FAILURE() << "a misspelt policies section was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("paper.yaml: key 'policies.constrant': no policy is named 'constrant' "
                                          "(registered: ",
                                          0),
              0u)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("constraint, council, "), std::string::npos) << e.what();
  }
  cfg.policy_params.erase("constrant");
  // A registered policy the run does not play: its keys and ranges are still checked.
  cfg.policy_params["constraint"] = {{"lamda", 0.5}};
  try {
    (void)prepare_run(cfg, conditions);
    ADD_FAILURE() << "a misspelt key of an unused policy was accepted";
  } catch (const PolicyError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("paper.yaml: policies.constraint", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("unknown parameter 'lamda' of policy 'constraint' (valid: lambda)"),
              std::string::npos)
        << e.what();
  }
  cfg.policy_params["constraint"] = {{"lambda", 1.5}};
  EXPECT_THROW((void)prepare_run(cfg, conditions), PolicyError);
  cfg.policy_params["council"] = {{"replans", 1}};  // the council does not replan
  cfg.policy_params["constraint"] = {{"lambda", 0.5}};
  EXPECT_THROW((void)prepare_run(cfg, conditions), PolicyError);
  cfg.policy_params["exec"] = {{"replans", 1}};  // exec is BLUE and RED: accepted when either side declares it
  cfg.policy_params.erase("council");
  EXPECT_NO_THROW((void)prepare_run(cfg, conditions));
  cfg.llm.policy_generation["llm_judge"] = {};  // the judges' and the quiz's settings are not a policy's
  cfg.llm.policy_generation["quiz"] = {};
  EXPECT_NO_THROW((void)prepare_run(cfg, conditions));
  cfg.llm.policy_generation["lm"] = {};  // policies.lm.generation
  EXPECT_THROW((void)prepare_run(cfg, conditions), ConfigError);
}

}  // namespace
}  // namespace advplan

namespace advplan {
namespace {

// The one line `run` and `evaluate` print about the external calls: totals, per policy, and the cost under
// llm.prices, unknown (naming the model) when a model has no price; an exec: program has no model and costs nothing.
TEST(UsageSummary, TotalsTheCallsAndPricesThem) {
  LlmConfig llm;
  llm.prices["m"] = TokenPrice{2.0, 10.0};
  std::vector<ModelUsage> usage{{"blue", "llm:m", "m", 3, 1000000, 100000}, {"red", "exec:x", "", 2, 0, 0}};
  EXPECT_EQ(usage_summary(usage, llm),
            "model calls: 5 (blue llm:m 3, red exec:x 2); 1000000 prompt + 100000 completion tokens; $3.0000 under "
            "llm.prices");
  usage.push_back({"red", "llm_live", "other", 1, 10, 10});
  EXPECT_EQ(usage_summary(usage, llm),
            "model calls: 6 (blue llm:m 3, red exec:x 2, red llm_live 1); 1000010 prompt + 100010 completion tokens; "
            "cost unknown (no llm.prices entry for 'other')");
  EXPECT_EQ(usage_summary({}, llm), "");
}

}  // namespace
}  // namespace advplan
