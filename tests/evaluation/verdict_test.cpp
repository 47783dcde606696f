// Paired verdicts of `advplan evaluate`: the sign-flip test and Holm's correction against scipy and statsmodels
// (values made by tests/data/oracles/make_verdict_fixtures.py), and the verdicts on constructed policies: the seed
// plan in disguise differs by exactly 0 everywhere, and a policy that protects every exposed step is better.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <set>

#include "advplan/pipeline/standard_run.hpp"
#include "advplan/core/random.hpp"
#include "advplan/evaluation/evaluation.hpp"
#include "advplan/stats/power.hpp"
#include "advplan/evaluation/leaderboard.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/scenario/plan_ops.hpp"
#include "support/fixtures.hpp"

namespace advplan {
namespace {

// ---- statistics against their oracles ---------------------------------------------------------------------------

struct SignFlipCase {
  const char* name;
  std::vector<double> d;
  double scipy_p;  // scipy.stats.permutation_test, exact, statistic |mean|
};

TEST(SignFlip, ExactMatchesScipyPermutationTest) {
  const std::vector<SignFlipCase> cases{
      {"mixed8", {0.12, -0.03, 0.07, 0.2, -0.01, 0.05, 0.09, 0.0}, 0.0625},
      {"small5", {1.0, 2.0, -0.5, 3.0, 0.25}, 0.1875},
      {"allpos12", {0.3, 0.1, 0.4, 0.15, 0.9, 0.2, 0.6, 0.5, 0.35, 0.05, 0.8, 0.25}, 0.00048828125},
      {"balanced6", {1.0, -1.0, 2.0, -2.0, 0.5, -0.5}, 1.0},
  };
  for (const auto& c : cases) EXPECT_NEAR(sign_flip_p_value(c.d, 999, 7, c.name), c.scipy_p, 1e-12) << c.name;
}

TEST(SignFlip, MonteCarloAgreesWithFullEnumeration) {
  // n = 18 is above the exact limit: the Monte Carlo p must be within 4 standard errors of the enumerated one.
  Rng rng = Rng::keyed(3, "signflip-test", "data");
  std::vector<double> d(18);
  for (auto& x : d) x = rng.normal() + 0.3;
  ASSERT_GT(d.size(), kSignFlipExactMax);
  double observed = 0;
  for (double x : d) observed += x;
  std::uint64_t extreme = 0;
  for (std::uint64_t mask = 0; mask < (std::uint64_t{1} << d.size()); ++mask) {
    double s = 0;
    for (std::size_t i = 0; i < d.size(); ++i) s += (mask >> i) & 1U ? -d[i] : d[i];
    extreme += std::abs(s) >= std::abs(observed) - 1e-12 ? 1 : 0;
  }
  const double exact = static_cast<double>(extreme) / static_cast<double>(std::uint64_t{1} << d.size());
  const int b = 20000;
  const double mc = sign_flip_p_value(d, b, 7, "mc");
  EXPECT_NEAR(mc, exact, 4 * std::sqrt(exact * (1 - exact) / b) + 1.0 / b) << exact;
  EXPECT_EQ(sign_flip_p_value(d, b, 7, "mc"), mc);  // keyed: the same seed and key give the same p
}

TEST(SignFlip, NoDifferenceIsPOne) {
  EXPECT_EQ(sign_flip_p_value(std::vector<double>(40, 0.0), 999, 7, "zeros"), 1.0);
  EXPECT_EQ(sign_flip_p_value(std::vector<double>{}, 999, 7, "empty"), 1.0);
}

TEST(Holm, MatchesStatsmodels) {
  const std::vector<double> p{0.01, 0.04, 0.03, 0.005, 0.2, 0.04};
  const std::vector<double> want{0.05, 0.12, 0.12, 0.03, 0.2, 0.12};
  const auto got = holm_adjust(p);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << i;
  const std::vector<double> p2{0.5, 0.001, 0.02, 0.02, 1.0};
  const std::vector<double> want2{1.0, 0.005, 0.08, 0.08, 1.0};
  const auto got2 = holm_adjust(p2);
  for (std::size_t i = 0; i < p2.size(); ++i) EXPECT_NEAR(got2[i], want2[i], 1e-12) << i;
}

// ---- verdicts on constructed policies -----------------------------------------------------------------------------

/// The seed plan under another id: every paired difference against the seed plan must be exactly 0.
class DisguisedSeed final : public BluePolicy {
 public:
  static PolicyInfo static_info() {
    return {"test_disguised_seed", Side::Blue, false, 1, ThreadSafety::constant, {}, "test: the seed plan, renamed"};
  }
  explicit DisguisedSeed(Params p) : BluePolicy(static_info(), std::move(p)) {}

 protected:
  BluePlanResult do_plan(const Scenario& sc, Rng&) const override {
    BluePlanResult r;
    r.plan = sc.blue_seed_plans.front();
    r.plan->plan_id += "/disguised";
    return r;
  }
};

/// The seed plan with a protection action inserted before each of its first `limit` exposed chain steps.
class ProtectExposed final : public BluePolicy {
 public:
  static PolicyInfo static_info(const char* name = "test_protect_exposed") {
    return {name, Side::Blue, false, 1, ThreadSafety::constant, {}, "test: the seed plan, protecting exposed steps"};
  }
  ProtectExposed(Params p, std::size_t limit, const char* name)
      : BluePolicy(static_info(name), std::move(p)), limit_(limit) {}

 protected:
  BluePlanResult do_plan(const Scenario& sc, Rng& rng) const override {
    BluePlanResult r;
    Plan plan = sc.blue_seed_plans.front();
    plan.plan_id += "/protected";
    std::size_t added = 0;
    for (std::size_t pos = 0; pos < plan.chain.size() && added < limit_; ++pos) {
      const int idx = plan.find_action(plan.chain[pos]);
      if (idx < 0) continue;
      const Action& step = plan.actions[static_cast<std::size_t>(idx)];
      if (!is_exposed(step.category, sc)) continue;
      auto guard = draw_action(sc, Side::Blue, Category::protection, rng);
      if (!guard) break;
      guard->target = step.target;
      insert_action(plan, sc, std::move(*guard), pos);
      ++pos;  // skip past the step just protected
      ++added;
    }
    r.plan = std::move(plan);
    return r;
  }

 private:
  std::size_t limit_;
};

}  // namespace

ADVPLAN_REGISTER_BLUE_POLICY(DisguisedSeed::static_info(),
                             [](const PolicySpec&, const Params& p, const PolicyContext&) -> std::unique_ptr<BluePolicy> {
                               return std::make_unique<DisguisedSeed>(p);
                             })
ADVPLAN_REGISTER_BLUE_POLICY(ProtectExposed::static_info(),
                             [](const PolicySpec&, const Params& p, const PolicyContext&) -> std::unique_ptr<BluePolicy> {
                               return std::make_unique<ProtectExposed>(p, SIZE_MAX, "test_protect_exposed");
                             })
ADVPLAN_REGISTER_BLUE_POLICY(ProtectExposed::static_info("test_protect_first"),
                             [](const PolicySpec&, const Params& p, const PolicyContext&) -> std::unique_ptr<BluePolicy> {
                               return std::make_unique<ProtectExposed>(p, 1, "test_protect_first");
                             })

namespace {

struct Evaluated {
  io::CsvTable per, candidates;
};

/// An evaluate run of `blue` on 5 templates x `seeds` seeds against greedy@8 and single, with a k in {1, 8} sweep,
/// written to dir/<sub>.
Evaluated evaluate(const std::string& blue, int seeds, const testing::TempDir& dir, const std::string& sub = "run") {
  ExperimentConfig cfg = default_experiment_config();
  cfg.seed_to = cfg.seed_from + static_cast<std::uint64_t>(seeds) - 1;
  cfg.sim.replications = 100;
  cfg.bootstrap.resamples = 400;
  EvaluateSpec spec;
  spec.blue = blue;
  spec.reds = {"greedy@8", "single"};
  spec.references = {"seed"};
  spec.budget_ks = {1, 8};
  const RunPlan plan = prepare_run(cfg, evaluate_conditions(spec));
  RunOptions opts;
  opts.out_dir = dir / sub;
  opts.progress = false;
  opts.studies = false;
  opts.observers = standard_observers(opts.studies);
  run_experiment(plan, opts);
  return {io::CsvTable::read(dir / (sub + "/per_scenario.csv")), io::CsvTable::read(dir / (sub + "/candidates.csv"))};
}

TEST(Verdicts, TheSeedPlanInDisguiseDiffersByExactlyZero) {
  testing::TempDir dir("verdict-disguise");
  const auto run = evaluate("test_disguised_seed", 4, dir);
  const auto v = paired_verdicts(run.per, "test_disguised_seed", {"seed"}, {400, 7});
  ASSERT_EQ(v.size(), 3u * verdict_metrics().size());  // greedy@8, single and greedy@1
  for (const auto& x : v) {
    EXPECT_EQ(x.n, 20u);
    EXPECT_EQ(x.difference.mean, 0.0) << x.sentence();
    EXPECT_EQ(x.difference.lo, 0.0) << x.sentence();
    EXPECT_EQ(x.difference.hi, 0.0) << x.sentence();
    EXPECT_EQ(x.p_holm, 1.0) << x.sentence();
    EXPECT_EQ(x.verdict, "no detectable difference") << x.sentence();
    EXPECT_EQ(x.mde, 0.0) << x.sentence();  // no spread: the smallest effect is detectable
  }
}

TEST(Verdicts, ProtectingEveryExposedStepIsBetterOnWinRate) {
  testing::TempDir dir("verdict-protect");
  const auto run = evaluate("test_protect_exposed", 20, dir);
  const auto v = paired_verdicts(run.per, "test_protect_exposed", {"seed"}, {400, 7});
  bool found = false;
  for (const auto& x : v)
    if (x.red == "greedy@8" && x.metric == "blue_win_rate") {
      found = true;
      EXPECT_EQ(x.verdict, "better") << x.sentence();
      EXPECT_GT(x.difference.lo, 0.0) << x.sentence();
    }
  EXPECT_TRUE(found);
}

// Every verdict carries its minimum detectable effect at Holm's strictest level alpha / m
// (docs/METRICS.md "Minimum detectable effect"): here recomputed from the rows' paired differences.
TEST(Verdicts, EachCarriesItsMinimumDetectableEffectAtHolmsStrictestLevel) {
  testing::TempDir dir("verdict-mde");
  const auto run = evaluate("test_protect_exposed", 12, dir);
  const auto v = paired_verdicts(run.per, "test_protect_exposed", {"seed"}, {400, 7}, 0.05, 0.9);
  ASSERT_FALSE(v.empty());
  const double m = static_cast<double>(v.size());
  std::size_t positive = 0;
  for (const auto& x : v) {
    EXPECT_DOUBLE_EQ(x.alpha_holm, 0.05 / m);
    EXPECT_EQ(x.power, 0.9);
    std::vector<double> d;
    for (std::size_t i = 0; i < run.per.size(); ++i) {
      if (run.per.at(i, "red_policy") != x.red || run.per.at(i, "status") != "ok") continue;
      if (run.per.at(i, "blue_policy") != "test_protect_exposed") continue;
      for (std::size_t j = 0; j < run.per.size(); ++j)
        if (run.per.at(j, "scenario_id") == run.per.at(i, "scenario_id") && run.per.at(j, "red_policy") == x.red &&
            run.per.at(j, "blue_policy") == "seed" && run.per.at(j, "status") == "ok")
          if (const double y = run.per.real(i, x.metric) - run.per.real(j, x.metric); !std::isnan(y)) d.push_back(y);
    }
    ASSERT_EQ(d.size(), x.n) << x.sentence();
    EXPECT_DOUBLE_EQ(x.mde, minimum_detectable_effect(d, 0.05 / m, 0.9)) << x.sentence();
    EXPECT_FALSE(x.clustered.has_value());
    positive += x.mde > 0;
  }
  EXPECT_GT(positive, 0u);
  // --cluster template: every verdict carries the clustered inference of the same differences.
  const auto c = paired_verdicts(run.per, "test_protect_exposed", {"seed"}, {400, 7}, 0.05, 0.9, true);
  ASSERT_EQ(c.size(), v.size());
  for (std::size_t i = 0; i < c.size(); ++i) {
    ASSERT_TRUE(c[i].clustered.has_value()) << c[i].sentence();
    EXPECT_EQ(c[i].clustered->n, c[i].n);
    EXPECT_NEAR(c[i].clustered->mean, c[i].difference.mean, 1e-12);
    EXPECT_GE(c[i].clustered->clusters, 2u);
  }
}

TEST(Scorecard, HasEverySixAxesAndRobustnessFromTheSweep) {
  testing::TempDir dir("verdict-scorecard");
  const auto run = evaluate("test_disguised_seed", 2, dir);
  const io::CsvTable repro({"scenario_id", "rows", "identical"});
  const auto card = scorecard(run.per, run.candidates, &repro, "test_disguised_seed", {"seed"}, {200, 7});
  std::set<std::string> axes;
  for (const auto& l : card) axes.insert(l.axis);
  EXPECT_EQ(axes, (std::set<std::string>{"representation validity", "plan structure", "adversarial robustness",
                                         "frontier quality", "constraint-sensitive selection",
                                         "trace reproducibility"}));
  // The disguised seed plan scores exactly as the seed plan on every axis both have.
  std::map<std::string, double> mine, seed;
  for (const auto& l : card)
    if (l.axis != "trace reproducibility") (l.policy == "seed" ? seed : mine)[l.quantity] = l.value;
  for (const auto& [q, v] : seed) EXPECT_EQ(mine.at(q), v) << q;
  // Robustness: k = 1 and 8 give a drop equal to the difference of the two curve points.
  const auto curve = robustness_curves(run.per, {200, 7});
  double adv1 = 0, adv8 = 0;
  for (const auto& p : curve)
    if (p.blue == "seed") (p.k == 1 ? adv1 : adv8) = p.advantage.mean;
  EXPECT_NEAR(seed.at("advantage drop (smallest k - largest k)"), adv1 - adv8, 1e-12);
}

TEST(Leaderboard, ThreePoliciesRankAsTheirConstructionImplies) {
  // Protecting every exposed step > protecting the first > the seed plan (protecting none), by win rate.
  testing::TempDir dir("leaderboard");
  std::vector<RunTraces> runs;
  for (const char* blue : {"test_protect_first", "test_protect_exposed"}) {
    evaluate(blue, 20, dir, blue);
    runs.push_back(read_run_traces(dir / blue));
  }
  const Leaderboard lb = build_leaderboard(runs, "blue_win_rate", {400, 7});
  ASSERT_EQ(lb.entries.size(), 3u);
  EXPECT_EQ(lb.entries[0].blue, "test_protect_exposed");
  EXPECT_EQ(lb.entries[1].blue, "test_protect_first");
  EXPECT_EQ(lb.entries[2].blue, "seed");
  EXPECT_EQ(lb.reds, (std::vector<std::string>{"greedy@8", "single"}));  // the sweep is not a baseline
  for (const auto& e : lb.entries) {
    EXPECT_LE(e.rank_lo, static_cast<double>(e.rank));
    EXPECT_GE(e.rank_hi, static_cast<double>(e.rank));
    EXPECT_LE(e.mean.lo, e.mean.mean);
    EXPECT_GE(e.mean.hi, e.mean.mean);
    EXPECT_LE(e.worst.mean, e.mean.mean);
    EXPECT_EQ(e.validity, 1.0);
  }
  // The strongest is separated from the weakest policy's side of the table.
  EXPECT_EQ(lb.entries[1].separated_from_next, "yes") << lb.entries[1].gap_to_next.lo;
  EXPECT_EQ(lb.entries[2].separated_from_next, "");
  // The seed plan came from the first run that has it; every file is written.
  EXPECT_EQ(lb.entries[2].run, dir / "test_protect_first");
  const auto files = leaderboard_files(lb);
  ASSERT_EQ(files.size(), 4u);
  EXPECT_NE(files[1].second.find("test_protect_exposed"), std::string::npos);
  // Every policy met the same baselines on the same scenarios, so Bradley-Terry's score equations order the
  // policies as their total score does: as the mean (docs/METRICS.md "Ratings", leaderboard).
  EXPECT_GT(lb.entries[0].bt_theta, lb.entries[1].bt_theta);
  EXPECT_GT(lb.entries[1].bt_theta, lb.entries[2].bt_theta);
  EXPECT_NE(files[0].second.find(",separated_from_next,bt_theta,elo\n"), std::string::npos);
}

TEST(Leaderboard, ExactlyTiedPoliciesShareTheirRankAndItsInterval) {
  // The disguised seed plan is the seed plan under another name: every score is equal, so neither outranks the
  // other on any resample, and the table must not claim an order ([3, 3] and [4, 4] once).
  testing::TempDir dir("leaderboard-tie");
  evaluate("test_disguised_seed", 10, dir, "tie");
  const Leaderboard lb = build_leaderboard({read_run_traces(dir / "tie")}, "advantage", {200, 7});
  ASSERT_EQ(lb.entries.size(), 2u);
  EXPECT_EQ(lb.entries[0].mean.mean, lb.entries[1].mean.mean);
  EXPECT_EQ(lb.entries[0].rank, 1u);
  EXPECT_EQ(lb.entries[1].rank, 1u);
  EXPECT_EQ(lb.entries[0].rank_lo, 1.0);
  EXPECT_EQ(lb.entries[0].rank_hi, 2.0);
  EXPECT_EQ(lb.entries[1].rank_lo, lb.entries[0].rank_lo);
  EXPECT_EQ(lb.entries[1].rank_hi, lb.entries[0].rank_hi);
  EXPECT_EQ(lb.entries[0].separated_from_next, "no");
  // Equal outcomes, equal Bradley-Terry strengths (bit for bit: the MM sweep treats them alike); Elo depends on
  // the order of the games, so it need not tie.
  EXPECT_TRUE(lb.entries[0].bt_theta == lb.entries[1].bt_theta ||
              (std::isnan(lb.entries[0].bt_theta) && std::isnan(lb.entries[1].bt_theta)));
}

TEST(Leaderboard, RunsOfDifferentCorporaAreRefused) {
  testing::TempDir dir("leaderboard-corpus");
  evaluate("test_protect_first", 2, dir, "a");
  evaluate("test_protect_first", 3, dir, "b");
  try {
    (void)build_leaderboard({read_run_traces(dir / "a"), read_run_traces(dir / "b")}, "advantage", {100, 7});
    FAIL() << "runs of different corpora were ranked together";
  } catch (const CsvError& e) {
    EXPECT_NE(std::string(e.what()).find("is not the corpus of"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace advplan
