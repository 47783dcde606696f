// `evaluate --stop-when-decided` (docs/METRICS.md "Anytime-valid stopping"): the looks of the monitored family
// on constructed per_scenario rows (a clear effect is decided and stops, a null never is, a futility margin
// stops a null), the looks taken as scenarios come equal the looks replayed from the written table, and, on real
// runs, council against the seed plan stops early with the full run's verdicts while the seed plan in disguise
// plays the whole corpus, at any thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "advplan/core/random.hpp"
#include "advplan/evaluation/evaluation.hpp"
#include "advplan/evaluation/stopping.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/pipeline/standard_run.hpp"
#include "advplan/run/runner.hpp"
#include "support/fixtures.hpp"

namespace advplan {
namespace {

const std::vector<std::string> kHeader{"scenario_id",   "blue_policy",  "red_policy",    "status",
                                       "advantage",     "blue_win_rate", "blue_quality", "blue_coherence"};

EvaluateSpec one_red_spec() {
  EvaluateSpec spec;
  spec.blue = "p";
  spec.reds = {"greedy@8"};
  spec.references = {"seed"};
  spec.budget_ks = {};
  return spec;
}

/// n scenarios of rows of "p" and "seed" against greedy@8; p's metrics exceed seed's by `effect` plus uniform
/// noise of half-width `noise` (keyed, so the table is the same every time).
io::CsvTable rows(std::size_t n, double effect, double noise) {
  io::CsvTable t(kHeader);
  for (std::size_t s = 0; s < n; ++s) {
    Rng rng = Rng::keyed(49, "stopping-test", std::to_string(s));
    std::vector<std::string> seed{"s" + std::to_string(s), "seed", "greedy@8", "ok"}, p{seed[0], "p", "greedy@8", "ok"};
    for (int m = 0; m < 4; ++m) {
      const double base = 0.3 + 0.2 * rng.uniform();
      seed.push_back(io::fmt_real(base));
      p.push_back(io::fmt_real(base + effect + noise * (2 * rng.uniform() - 1)));
    }
    t.add(seed);
    t.add(p);
  }
  return t;
}

TEST(StopWhenDecided, TheFamilyIsEveryRedReferenceAndMetricOtherThanThePolicyItself) {
  EvaluateSpec spec = one_red_spec();
  spec.references = {"seed", "p", "council"};
  spec.budget_ks = {1, 8};
  const auto f = sequential_family(spec);
  ASSERT_EQ(f.size(), 2u * 2u * 4u);  // greedy@8 then greedy@1; seed and council; four metrics
  EXPECT_EQ(f.front().red, "greedy@8");
  EXPECT_EQ(f.back().red, "greedy@1");
  EXPECT_EQ(f.back().reference, "council");
  EXPECT_EQ(f.back().metric, "blue_coherence");
}

TEST(StopWhenDecided, AClearEffectIsDecidedAndStopsBeforeTheCorpusEnds) {
  const auto f = sequential_family(one_red_spec());
  const auto looks = replay_looks(rows(200, 0.4, 0.1), "p", f, {10, 0, 0.05});
  ASSERT_FALSE(looks.empty());
  std::size_t first_stop = 0;
  for (const auto& l : looks)
    if (!l.stop.empty() && first_stop == 0) first_stop = l.scenarios;
  ASSERT_GT(first_stop, 0u);
  EXPECT_LT(first_stop, 200u);
  EXPECT_EQ(looks[first_stop / 10 - 1].stop, "decided");
  for (const auto& c : looks[first_stop / 10 - 1].comparisons) {
    EXPECT_TRUE(c.decided);
    EXPECT_GT(c.lo, 0.0);  // the sequence at alpha/m excludes 0 from above
    EXPECT_NEAR(c.mean, 0.4, 0.05);
  }
}

TEST(StopWhenDecided, ANullIsNeverDecidedAndAFutilityMarginStopsIt) {
  const auto f = sequential_family(one_red_spec());
  const io::CsvTable null = rows(200, 0.0, 0.0);  // differences exactly 0
  const auto looks = replay_looks(null, "p", f, {10, 0, 0.05});
  ASSERT_EQ(looks.size(), 20u);
  for (const auto& l : looks) {
    EXPECT_EQ(l.stop, "");
    EXPECT_EQ(l.decided(), 0u);
  }
  // With a margin: the sequences of exact zeros narrow as about 20/t in the difference's units (bets capped at
  // 1/2, log(2m/alpha) = 5.08), so ±0.25 holds them from about 80 scenarios on.
  const auto futile = replay_looks(null, "p", f, {10, 0.25, 0.05});
  std::size_t at = 0;
  for (const auto& l : futile)
    if (l.stop == "futility" && at == 0) at = l.scenarios;
  ASSERT_GE(at, 60u);
  EXPECT_LE(at, 120u);
  for (const auto& c : futile[at / 10 - 1].comparisons) {
    EXPECT_GE(c.lo, -0.25);
    EXPECT_LE(c.hi, 0.25);
    EXPECT_FALSE(c.decided);
  }
}

TEST(StopWhenDecided, LooksAsScenariosComeEqualTheLooksReplayedFromTheTable) {
  const auto f = sequential_family(one_red_spec());
  const io::CsvTable t = rows(95, 0.05, 0.3);
  SequentialMonitor mon("p", f, {10, 0.3, 0.05});
  for (std::size_t s = 0; s < 95; ++s) mon.add_scenario(kHeader, {t.rows()[2 * s], t.rows()[2 * s + 1]});
  mon.look_now();  // the final look, off a block boundary
  const auto replayed = replay_looks(t, "p", f, {10, 0.3, 0.05});
  ASSERT_EQ(mon.looks().size(), replayed.size());
  ASSERT_EQ(replayed.back().scenarios, 95u);
  EXPECT_EQ(stopping_table("p", f, mon.looks()).to_string(), stopping_table("p", f, replayed).to_string());
}

TEST(StopWhenDecided, AStoppedRunsVerdictsAreTheAnytimeOnes) {
  const auto f = sequential_family(one_red_spec());
  const auto looks = replay_looks(rows(60, 0.4, 0.1), "p", f, {10, 0, 0.05});
  std::vector<Verdict> v;
  for (const auto& c : f) {
    Verdict x{"p", c.reference, c.red, c.metric};
    x.verdict = "no detectable difference";
    v.push_back(x);
  }
  v.push_back(Verdict{"p", "seed", "single", "advantage"});  // not monitored: left alone
  v.back().verdict = "worse";
  apply_anytime_verdicts(v, f, looks.back());
  for (std::size_t j = 0; j < f.size(); ++j) {
    EXPECT_EQ(v[j].verdict, looks.back().comparisons[j].decided ? "better" : "no detectable difference");
    EXPECT_EQ(v[j].p, looks.back().comparisons[j].p);
    EXPECT_GE(v[j].p_holm, v[j].p);
  }
  EXPECT_EQ(v.back().verdict, "worse");
}

// ---- runs ----------------------------------------------------------------------------------------------------

/// An in-process evaluate run of `blue` against `seed`, both against greedy@8, on the paper's five templates x
/// `seeds` seeds (20 simulator replications), with the stopping rule, written to dir/<sub> as `advplan evaluate`
/// writes it; its summary.json.
nlohmann::json evaluate_stopping(const std::string& blue, int seeds, const StoppingRule& rule,
                                 const testing::TempDir& dir, const std::string& sub, int threads = 2) {
  ExperimentConfig cfg = default_experiment_config();
  cfg.seed_to = cfg.seed_from + static_cast<std::uint64_t>(seeds) - 1;
  cfg.sim.replications = 20;
  cfg.bootstrap.resamples = 200;
  EvaluateSpec spec = one_red_spec();
  spec.blue = blue;
  spec.stopping = rule;
  spec.corpus = corpus_size(cfg);
  const RunPlan plan = prepare_run(cfg, evaluate_conditions(spec));
  RunOptions opts;
  opts.out_dir = dir / sub;
  opts.threads = threads;
  opts.progress = false;
  opts.studies = false;
  opts.observers = standard_observers(opts.studies);
  const BootstrapSettings bs{cfg.bootstrap.resamples, cfg.bootstrap.seed};
  opts.before_manifest = [&](const std::string& d) { io::write_files(d, evaluation_report_of_run(plan, d, 0, spec, bs)); };
  stop_when_decided(spec, opts);
  run_experiment(plan, opts);
  return nlohmann::json::parse(testing::read_file(dir / (sub + "/summary.json")));
}

// The seed plan in disguise (test_disguised_seed, tests/evaluation/verdict_test.cpp) differs from the seed plan by
// exactly 0 on every scenario: no look decides anything, and without a futility margin the run plays the whole
// corpus, at any thread count to the same bytes.
TEST(StopWhenDecided, TheSeedPlanInDisguiseDecidesNothingAndPlaysTheWholeCorpus) {
  testing::TempDir dir("stop-null");
  const auto j = evaluate_stopping("test_disguised_seed", 10, {10, 0, 0.05}, dir, "two");  // 50 scenarios
  const auto& st = j.at("stopping");
  EXPECT_EQ(st.at("scenarios"), 50);
  EXPECT_EQ(st.at("corpus"), 50);
  EXPECT_EQ(st.at("looks"), 5);
  EXPECT_EQ(st.at("reason"), "corpus");
  EXPECT_EQ(st.at("decided"), 0);
  EXPECT_EQ(st.at("stopped_early"), false);
  for (const auto& v : j.at("verdicts")) EXPECT_EQ(v.at("verdict"), "no detectable difference") << v.dump();
  const auto stopping = io::CsvTable::read(dir / "two/evaluation/stopping.csv");
  ASSERT_EQ(stopping.size(), 5u * 4u);
  for (std::size_t i = 0; i < stopping.size(); ++i) {
    EXPECT_EQ(stopping.at(i, "decided"), "0");
    EXPECT_EQ(stopping.real(i, "mean_difference"), 0.0);
  }
  evaluate_stopping("test_disguised_seed", 10, {10, 0, 0.05}, dir, "one", 1);
  for (const char* f : {"per_scenario.csv", "summary.json", "evaluation/stopping.csv"})
    EXPECT_EQ(testing::read_file(dir / (std::string("one/") + f)), testing::read_file(dir / (std::string("two/") + f)))
        << f;
}

}  // namespace
}  // namespace advplan
