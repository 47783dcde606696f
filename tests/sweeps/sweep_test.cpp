// Parameter sweeps (docs/CONFIG.md "sweep", docs/METRICS.md "Parameter sweeps"): the `sweep:` block read strictly
// (ranges expanded, grid order, the swept condition and the reference point, one-sentence errors); each point on
// its base condition's streams (a point at the config's own value plays the base condition's rows bit for bit);
// the same bytes at any thread count, from shards merged and from `advplan tables`; the budget sweep's files
// untouched by a sweep over k; and tables/sweep*.csv checked against a brute-force joint bootstrap written here
// from the definition (keyed resample streams, multiplicities, order statistics).
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "advplan/core/error.hpp"
#include "advplan/core/random.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/run/sweep_points.hpp"
#include "advplan/stats/statistics.hpp"
#include "advplan/sweeps/sweep.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::advplan;
using testing::quote;
using testing::TempDir;

ExperimentConfig parse_small(const std::string& sweep) {
  std::string text = testing::small_config_text();
  text += "sweep: " + sweep + "\n";
  return parse_experiment_config(text, "small.yaml", "");
}

TEST(SweepConfig, ARangeExpandsToRoundedStepsAndTheReferenceIsTheConfigsValue) {
  const ExperimentConfig cfg = parse_small("{policies.constraint.lambda: [0, 0.1, ..., 1]}");
  ASSERT_EQ(cfg.sweep.params, std::vector<std::string>{"policies.constraint.lambda"});
  ASSERT_EQ(cfg.sweep.points.size(), 11u);
  const std::vector<double> want{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1};
  for (std::size_t i = 0; i < 11; ++i) EXPECT_EQ(cfg.sweep.points[i][0], want[i]) << i;
  EXPECT_EQ(cfg.sweep.points[3][0], 0.3);  // not 0.30000000000000004
  EXPECT_EQ(cfg.sweep.condition, "constraint@8");  // the first condition with a policy named constraint
  EXPECT_EQ(cfg.sweep.reference, 7u);               // policies.constraint.lambda: 0.7 in the config
  const auto conds = run_conditions(cfg);
  const auto it = std::find_if(conds.begin(), conds.end(), [](const Condition& c) { return c.group == "grid"; });
  ASSERT_NE(it, conds.end());
  EXPECT_EQ(it->label, "constraint@8 [lambda=0]");
  EXPECT_EQ(it->red, "constraint@8");
  EXPECT_EQ(std::count_if(conds.begin(), conds.end(), [](const Condition& c) { return c.group == "grid"; }), 11);
  EXPECT_EQ((it + 3)->settings, (std::vector<Setting>{{"policies.constraint.lambda", 0.3}}));
}

TEST(SweepConfig, TheGridVariesTheFirstSettingSlowestAndKGoesIntoTheRedSpec) {
  const ExperimentConfig cfg = parse_small("{condition: greedy@8, k: [4, 16], simulator.noise: [0, 0.1, 0.2]}");
  ASSERT_EQ(cfg.sweep.points.size(), 6u);
  EXPECT_EQ(cfg.sweep.points[0], (std::vector<double>{4, 0}));
  EXPECT_EQ(cfg.sweep.points[2], (std::vector<double>{4, 0.2}));
  EXPECT_EQ(cfg.sweep.points[3], (std::vector<double>{16, 0}));
  const auto points = sweep_point_conditions(cfg);
  EXPECT_EQ(points[4].red, "greedy@16");
  EXPECT_EQ(points[4].label, "greedy@8 [k=16, noise=0.1]");
  EXPECT_EQ(cfg.sweep.reference, 0u);  // k = 8 is not a point: the first
}

TEST(SweepConfig, TheSweptConditionDefaultsToTheFirstThatEverySettingReaches) {
  EXPECT_EQ(parse_small("{k: [1, 2]}").sweep.condition, "greedy@8");
  EXPECT_EQ(parse_small("{council.weights.pressure: [0, 0.5]}").sweep.condition, "council");
  EXPECT_EQ(parse_small("{simulator.noise: [0, 0.5]}").sweep.condition, "single");
  EXPECT_EQ(parse_small("{condition: council, simulator.noise: [0, 0.5]}").sweep.condition, "council");
  const ExperimentConfig pts = parse_small(
      "{points: [{policies.constraint.lambda: 0.2}, {policies.constraint.lambda: 0.9}], reference: "
      "{policies.constraint.lambda: 0.9}}");
  EXPECT_EQ(pts.sweep.points.size(), 2u);
  EXPECT_EQ(pts.sweep.reference, 1u);
}

TEST(SweepConfig, BadSweepsAreOneSentenceNamingTheKey) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"{foo.bar: [1]}", "'foo.bar' is not a sweepable setting"},
      {"{quality_weights.cost: [0.1]}", "is not a sweepable setting"},
      {"{simulator.noise: [3]}", "key 'sweep.simulator.noise[0]': simulator.noise must be in [0, 2]"},
      {"{k: [1.5]}", "k takes integers"},
      {"{k: [0]}", "k must be in [1, 1024]"},
      {"{policies.constraint.lambda: [0, 0.5, ..., 0.9]}", "not the first plus a whole number of steps"},
      {"{policies.constraint.lambda: [0, ..., 0.5, 1]}", "'...' stands third of four values"},
      {"{policies.constraint.lambda: [1, 0.5, ..., 2]}", "is not a range"},
      {"{policies.constraint.lambda: [0.1, 0.1]}", "the point [lambda=0.1] is given twice"},
      {"{policies.constraint.lambda: []}", "no values to sweep"},
      {"{condition: single, policies.constraint.lambda: [0, 1]}", "reaches neither the RED policy single"},
      {"{condition: nobody, k: [1]}", "no listed condition is labelled 'nobody'"},
      {"{policies.constraint.lambda: [0, 0.0001, ..., 1]}", "more than 1024 values"},
      // A step so small that (last - first) / step overflows: the step is what is wrong, not the order.
      {"{policies.constraint.lambda: [0, 5e-324, ..., 1]}", "the step 5e-324 is too small: the range would have more "
                                                             "than 1024 values"},
      {"{policies.constraint.lambda: [0, 5e-324, ..., 0]}", "the last value must lie beyond the second"},
      {"{policies.constraint.lambda: [0.5, 0.5, ..., 1]}", "the second value must differ from the first"},
      {"{k: [1, 2, ..., 64], simulator.noise: [0, 0.01, ..., 1]}", "the grid has more than 1024 points"},
      {"{grid: {k: [1]}, points: [{k: 2}]}", "give grid or points, not both"},
      {"{points: [{k: 2}, {simulator.noise: 0.1}]}", "every point sets the same settings as the first"},
      {"{k: [1, 2], reference: {k: 3}}", "the reference is not one of the sweep's points"},
      {"{}", "no setting to sweep"},
      {"{policies.constraint.lambda: [0.5, 2]}", "lambda"},  // the policy's own range, when its point is made
  };
  for (const auto& [sweep, want] : cases) {
    std::string got;
    try {
      const ExperimentConfig cfg = parse_small(sweep);
      (void)prepare_run(cfg, run_conditions(cfg));
      got = "no error";
    } catch (const Error& e) {
      got = e.what();
    }
    EXPECT_THAT(got, HasSubstr(want)) << sweep;
    EXPECT_THAT(got, HasSubstr("small.yaml")) << sweep;
    EXPECT_EQ(got.find('\n'), std::string::npos) << got;
  }
}

TEST(SweepConfig, SettingsFromARunsMetadataAreCheckedAgain) {
  const ExperimentConfig cfg = parse_small("{k: [1, 2]}");
  EXPECT_THROW((void)with_settings(cfg, {{"simulator.replications", 1e12}}), ConfigError);
  EXPECT_THROW((void)with_settings(cfg, {{"simulator.noise", std::nan("")}}), ConfigError);
  EXPECT_THROW((void)with_settings(cfg, {{"no.such", 1}}), ConfigError);
  EXPECT_THROW((void)with_settings(cfg, {{"simulator.replications", 100000}, {"simulator.time_limit", 1000}}),
               ConfigError);  // the joint bound of replications x time_limit
  EXPECT_EQ(with_settings(cfg, {{"simulator.noise", 0.5}}).sim.noise, 0.5);
}

/// The brute-force joint bootstrap of the definition (docs/METRICS.md "Joint bootstrap"): resample b's
/// multiplicities from resample_counts on Rng::keyed_at(key_prefix(seed, "bootstrap-joint", key), b), and each
/// column's replicate the count-weighted mean of its present cells.
std::vector<std::vector<double>> brute_replicates(const std::vector<std::vector<double>>& cols, int B,
                                                  std::uint64_t seed, const std::string& key) {
  const std::size_t units = cols.empty() ? 0 : cols[0].size();
  std::vector<std::vector<double>> out(cols.size(), std::vector<double>(static_cast<std::size_t>(B)));
  const std::uint64_t prefix = Rng::key_prefix(seed, "bootstrap-joint", key);
  std::vector<std::uint32_t> counts(units);
  for (int b = 0; b < B; ++b) {
    Rng rng = Rng::keyed_at(prefix, static_cast<std::uint64_t>(b));
    resample_counts(rng, counts);
    for (std::size_t j = 0; j < cols.size(); ++j) {
      double s = 0, n = 0;
      for (std::size_t u = 0; u < units; ++u)
        if (!std::isnan(cols[j][u])) {
          s += counts[u] * cols[j][u];
          n += counts[u];
        }
      out[j][static_cast<std::size_t>(b)] = n > 0 ? s / n : std::nan("");
    }
  }
  return out;
}

/// The percentile bounds by their definition: order statistics floor(.025 B) and ceil(.975 B) - 1 of the replicates
/// that are not NaN.
std::pair<double, double> brute_bounds(std::vector<double> r) {
  r.erase(std::remove_if(r.begin(), r.end(), [](double x) { return std::isnan(x); }), r.end());
  std::sort(r.begin(), r.end());
  const auto B = static_cast<double>(r.size());
  return {r[static_cast<std::size_t>(std::floor(0.025 * B))], r[static_cast<std::size_t>(std::ceil(0.975 * B)) - 1]};
}

TEST(SweepStats, ANeighbourDiffersInItsSettingAloneAndIsTheNextLargerValue) {
  SweepLayout l;
  l.params = {"a", "b"};
  // (a, b): 0 (1,1), 1 (3,1), 2 (2,1), 3 (2,2), 4 (2,1) repeated
  for (const auto& v : std::vector<std::vector<double>>{{1, 1}, {3, 1}, {2, 1}, {2, 2}, {2, 1}})
    l.points.push_back({fmt::format("p{}", l.points.size()), v});
  EXPECT_EQ(next_sweep_neighbour(l, 0, 0), std::optional<std::size_t>(2));  // the nearest larger, the first of equals
  EXPECT_EQ(next_sweep_neighbour(l, 2, 0), std::optional<std::size_t>(1));
  EXPECT_EQ(next_sweep_neighbour(l, 1, 0), std::nullopt);                   // the largest a
  EXPECT_EQ(next_sweep_neighbour(l, 2, 1), std::optional<std::size_t>(3));
  EXPECT_EQ(next_sweep_neighbour(l, 0, 1), std::nullopt);                   // (1, 2) is not a point
}

TEST(SweepStats, TheReplicatesAreTheDefinitionsBitForBit) {
  std::vector<std::vector<double>> cols(3, std::vector<double>(9));
  for (std::size_t u = 0; u < 9; ++u) {
    cols[0][u] = 0.1 * static_cast<double>(u * u % 7);
    cols[1][u] = u % 3 == 0 ? std::nan("") : 1.0 / static_cast<double>(u + 1);
    cols[2][u] = cols[0][u];
  }
  std::vector<double> values;
  for (std::size_t u = 0; u < 9; ++u)
    for (std::size_t j = 0; j < 3; ++j) values.push_back(cols[j][u]);
  for (const int B : {1, 7, 64, 203}) {
    const auto got = joint_bootstrap_replicates(values, 3, B, 11, "k");
    const auto want = brute_replicates(cols, B, 11, "k");
    const auto iv = joint_bootstrap_means(values, 3, B, 11, "k");
    for (std::size_t j = 0; j < 3; ++j) {
      for (int b = 0; b < B; ++b) {
        const double g = got[j * static_cast<std::size_t>(B) + static_cast<std::size_t>(b)];
        const double w = want[j][static_cast<std::size_t>(b)];
        EXPECT_TRUE(g == w || (std::isnan(g) && std::isnan(w))) << j << " " << b << ": " << g << " vs " << w;
      }
      const auto [lo, hi] = brute_bounds(want[j]);
      EXPECT_EQ(iv[j].lo, lo);
      EXPECT_EQ(iv[j].hi, hi);
    }
  }
}

/// One λ sweep over tests/data/small.yaml, run once for the suite.
class SweepRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("sweep-run");
    config_ = testing::small_config(*dir_, {{"budget_sweep: [1, 2, 4, 8, 16]",
                                             "budget_sweep: [1, 2, 4, 8, 16]\nsweep: {policies.constraint.lambda: "
                                             "[0, 0.35, ..., 0.7], simulator.noise: [0.05, 0.15]}"}});
    const auto r = advplan("run " + quote(config_) + " --out " + quote(*dir_ / "run") + " --threads 2 --progress none",
                           *dir_);
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string run() { return *dir_ / "run"; }
  static TempDir* dir_;
  static std::string config_;
};
TempDir* SweepRun::dir_ = nullptr;
std::string SweepRun::config_;

TEST_F(SweepRun, APointAtTheConfigsOwnValuesPlaysTheBaseConditionsRowsBitForBit) {
  const io::CsvTable per = io::CsvTable::read(run() + "/per_scenario.csv");
  std::map<std::string, std::vector<std::string>> base, point;
  const auto cc = per.col("condition"), cs = per.col("scenario_id"), cg = per.col("condition_group");
  for (const auto& r : per.rows()) {
    auto row = r;
    row[cc] = row[cg] = "";
    if (r[cc] == "constraint@8") base[r[cs]] = row;
    if (r[cc] == "constraint@8 [lambda=0.7, noise=0.15]") point[r[cs]] = row;
  }
  ASSERT_EQ(base.size(), 6u);
  EXPECT_EQ(base, point);
  // Another noise moves the win rate but not the plans: the same RED choice, the same q.
  std::map<std::string, std::string> quiet;
  for (const auto& r : per.rows())
    if (r[cc] == "constraint@8 [lambda=0.7, noise=0.05]") quiet[r[cs]] = r[per.col("red_plan_id")];
  for (const auto& [s, row] : base) EXPECT_EQ(quiet[s], row[per.col("red_plan_id")]);
}

TEST_F(SweepRun, TheSameBytesAtOneThreadFromShardsAndFromTables) {
  const auto one = advplan("run " + quote(config_) + " --out " + quote(*dir_ / "one") + " --threads 1 --progress none",
                           *dir_);
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(testing::compare_runs(run(), *dir_ / "one"), "");
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(advplan(fmt::format("run {} --out {} --shard {}/2 --threads 2 --progress none", quote(config_),
                                  quote(*dir_ / fmt::format("s{}", i)), i),
                      *dir_)
                  .status,
              0);
  const auto m = advplan("merge " + quote(*dir_ / "s0") + " " + quote(*dir_ / "s1") + " --out " + quote(*dir_ / "merged"),
                         *dir_);
  ASSERT_EQ(m.status, 0) << m.err;
  EXPECT_EQ(testing::compare_runs(run(), *dir_ / "merged"), "");
  const auto t = advplan("tables " + quote(run()) + " --out " + quote(*dir_ / "rebuilt"), *dir_);
  ASSERT_EQ(t.status, 0) << t.err;
  for (const char* f : {"sweep.csv", "sweep_differences.csv", "sweep_argmax.csv", "sweep.md", "sweep.tex"})
    EXPECT_EQ(testing::read_file(*dir_ / (std::string("rebuilt/") + f)), testing::read_file(run() + "/tables/" + f)) << f;
}

TEST_F(SweepRun, TheTablesAreTheBruteForceJointBootstrapsOverScenarios) {
  const io::CsvTable per = io::CsvTable::read(run() + "/per_scenario.csv");
  const io::CsvTable pts = io::CsvTable::read(run() + "/tables/sweep.csv");
  const io::CsvTable diffs = io::CsvTable::read(run() + "/tables/sweep_differences.csv");
  const io::CsvTable arg = io::CsvTable::read(run() + "/tables/sweep_argmax.csv");
  const std::vector<std::string> metrics{"advantage", "blue_win_rate", "blue_quality",
                                         "red_quality", "red_coherence", "red_pressure"};
  // The points in grid order, and the scenarios in order of appearance.
  std::vector<std::string> labels, scenarios;
  for (const double l : {0.0, 0.35, 0.7})
    for (const double n : {0.05, 0.15}) labels.push_back(fmt::format("constraint@8 [lambda={}, noise={}]", l, n));
  for (const auto& r : per.rows())
    if (r[per.col("condition")] == labels[0]) scenarios.push_back(r[per.col("scenario_id")]);
  std::vector<std::vector<double>> cols;  // point-major, metric-minor
  for (const auto& l : labels)
    for (const auto& m : metrics) {
      std::vector<double> c;
      for (const auto& s : scenarios)
        for (std::size_t i = 0; i < per.size(); ++i)
          if (per.at(i, "condition") == l && per.at(i, "scenario_id") == s) c.push_back(per.real(i, m));
      cols.push_back(c);
    }
  const int B = 200;  // bootstrap.resamples of small.yaml
  const auto reps = brute_replicates(cols, B, 7, "sweep|constraint@8");
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s / static_cast<double>(v.size());
  };
  // Six decimals in the CSV: within half a unit of the sixth, and a hair for the double at a rounding midpoint.
  auto near = [](const std::string& cell, double want) { return std::abs(std::stod(cell) - want) <= 5e-7 + 1e-12; };
  ASSERT_EQ(pts.size(), labels.size() * metrics.size());
  for (std::size_t p = 0; p < labels.size(); ++p)
    for (std::size_t m = 0; m < metrics.size(); ++m) {
      const std::size_t row = p * metrics.size() + m, c = row;
      EXPECT_EQ(pts.at(row, "point"), labels[p]);
      EXPECT_EQ(pts.at(row, "metric"), metrics[m]);
      const auto [lo, hi] = brute_bounds(reps[c]);
      EXPECT_TRUE(near(pts.at(row, "mean"), mean(cols[c]))) << labels[p] << " " << metrics[m];
      EXPECT_TRUE(near(pts.at(row, "ci_lo"), lo)) << labels[p] << " " << metrics[m];
      EXPECT_TRUE(near(pts.at(row, "ci_hi"), hi)) << labels[p] << " " << metrics[m];
      EXPECT_EQ(pts.at(row, "reference"), labels[p] == "constraint@8 [lambda=0.7, noise=0.15]" ? "1" : "0");
    }
  // Differences: each against the reference and along each setting to the next point, from the same resamples.
  const std::size_t ref = 5;
  std::size_t checked = 0;
  for (std::size_t i = 0; i < diffs.size(); ++i) {
    const auto find = [&](const std::string& l) { return std::find(labels.begin(), labels.end(), l) - labels.begin(); };
    const auto b = static_cast<std::size_t>(find(diffs.at(i, "point"))), a = static_cast<std::size_t>(find(diffs.at(i, "minus")));
    ASSERT_LT(b, labels.size());
    ASSERT_LT(a, labels.size());
    if (diffs.at(i, "kind") == "reference") {
      EXPECT_EQ(a, ref);
    }
    if (diffs.at(i, "kind") == "neighbour") {
      EXPECT_TRUE((b == a + 1 && diffs.at(i, "setting") == "simulator.noise") ||
                  (b == a + 2 && diffs.at(i, "setting") == "policies.constraint.lambda"))
          << diffs.at(i, "point") << " - " << diffs.at(i, "minus");
    }
    const std::size_t m = static_cast<std::size_t>(
        std::find(metrics.begin(), metrics.end(), diffs.at(i, "metric")) - metrics.begin());
    const std::size_t cb = b * metrics.size() + m, ca = a * metrics.size() + m;
    std::vector<double> r(B);
    for (int k = 0; k < B; ++k) r[static_cast<std::size_t>(k)] = reps[cb][static_cast<std::size_t>(k)] - reps[ca][static_cast<std::size_t>(k)];
    const auto [lo, hi] = brute_bounds(r);
    EXPECT_TRUE(near(diffs.at(i, "difference"), mean(cols[cb]) - mean(cols[ca])));
    EXPECT_TRUE(near(diffs.at(i, "ci_lo"), lo)) << i << ": " << diffs.at(i, "ci_lo") << " vs " << lo;
    EXPECT_TRUE(near(diffs.at(i, "ci_hi"), hi)) << i << ": " << diffs.at(i, "ci_hi") << " vs " << hi << " "
                                               << diffs.at(i, "point") << " - " << diffs.at(i, "minus") << " "
                                               << diffs.at(i, "metric");
    ++checked;
  }
  // 5 against the reference and 3 + 4 neighbours (three noise pairs, two lambda steps at two noises), 6 metrics each.
  EXPECT_EQ(checked, (5u + 3u + 4u) * metrics.size());
  // The argmax: the largest mean (the first in grid order on a tie), and its share of the resamples' argmax.
  ASSERT_EQ(arg.size(), metrics.size());
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    std::size_t best = 0;
    for (std::size_t p = 1; p < labels.size(); ++p)
      if (mean(cols[p * metrics.size() + m]) > mean(cols[best * metrics.size() + m])) best = p;
    int hits = 0;
    for (int k = 0; k < B; ++k) {
      std::size_t top = 0;
      for (std::size_t p = 1; p < labels.size(); ++p)
        if (reps[p * metrics.size() + m][static_cast<std::size_t>(k)] > reps[top * metrics.size() + m][static_cast<std::size_t>(k)]) top = p;
      hits += top == best;
    }
    EXPECT_EQ(arg.at(m, "metric"), metrics[m]);
    EXPECT_EQ(arg.at(m, "point"), labels[best]) << metrics[m];
    EXPECT_TRUE(near(arg.at(m, "share"), hits / static_cast<double>(B))) << metrics[m] << " " << arg.at(m, "share");
  }
  // A two-setting sweep's table is a heat map of the win rate (a simulator setting is swept).
  EXPECT_THAT(testing::read_file(run() + "/tables/sweep.md"), HasSubstr("mean BLUE win rate (rows lambda, columns noise"));
}

TEST_F(SweepRun, ASweepOverKLeavesTheBudgetSweepsFilesAsTheyWere) {
  const std::string with_k = testing::small_config(
      *dir_, {{"budget_sweep: [1, 2, 4, 8, 16]", "budget_sweep: [1, 2, 4, 8, 16]\nsweep: {k: [2, 32]}"}}, "k.yaml");
  const std::string plain = testing::small_config(*dir_, {}, "plain.yaml");
  for (const auto& [cfg, out] : {std::pair{with_k, std::string("k")}, std::pair{plain, std::string("plain")}})
    ASSERT_EQ(advplan("run " + quote(cfg) + " --out " + quote(*dir_ / out) + " --progress none", *dir_).status, 0);
  for (const char* f : {"budget_curve.csv", "tables/table4_response_budget.md", "tables/table3_policy_comparison.md"})
    EXPECT_EQ(testing::read_file(*dir_ / (std::string("k/") + f)), testing::read_file(*dir_ / (std::string("plain/") + f))) << f;
  EXPECT_THAT(testing::read_file(*dir_ / "k/tables/sweep.csv"), HasSubstr("greedy@8 [k=32],32,advantage"));
}

TEST_F(SweepRun, APointThatDoesNotReachAnExternalRedPolicyDoesNotAskItAgain) {
  const std::string red = "exec:/usr/bin/python3 " + testing::kSource + "/examples/policies/greedy_red.py";
  const std::string cfg = testing::small_config(
      *dir_,
      {{"conditions: [single, greedy@8, constraint@8, llm_offline, {label: council, blue: council, red: greedy@8}]",
        "conditions: [{label: exr, blue: seed, red: \"" + red + "\"}]"},
       {"budget_sweep: [1, 2, 4, 8, 16]", "sweep: {simulator.noise: [0.05, 0.15], simulator.replications: [5, 50]}"},
       {"studies: {rubric: true, framing: true, components: true}", "studies: {rubric: false, framing: false, components: false}"}},
      "exec.yaml");
  const auto r = advplan("run " + quote(cfg) + " --out " + quote(*dir_ / "exec") + " --progress none", *dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  // One call per scenario (the base condition's); the four points reuse its answer.
  const std::string t = testing::read_file(*dir_ / "exec/transcripts.jsonl");
  EXPECT_EQ(std::count(t.begin(), t.end(), '\n'), 6) << t.substr(0, 400);
  const io::CsvTable per = io::CsvTable::read(*dir_ / "exec/per_scenario.csv");
  std::map<std::string, std::string> chosen;
  for (const auto& row : per.rows()) {
    const std::string& sc = row[per.col("scenario_id")];
    if (!chosen.contains(sc)) chosen[sc] = row[per.col("red_plan_id")];
    EXPECT_EQ(row[per.col("red_plan_id")], chosen[sc]) << row[per.col("condition")];
  }
  EXPECT_EQ(per.size(), 30u);
}

TEST_F(SweepRun, EvaluateRefusesASweepAndMergeRefusesChangedSettings) {
  const auto ev = advplan("evaluate --blue seed --config " + quote(config_) + " --out " + quote(*dir_ / "ev"), *dir_);
  testing::expect_one_line_error(ev);
  EXPECT_THAT(ev.err, HasSubstr("evaluate does not run a config's sweep points"));
  // A shard whose recorded settings were edited: its run key no longer matches the others'.
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(advplan(fmt::format("run {} --out {} --shard {}/2 --progress none", quote(config_),
                                  quote(*dir_ / fmt::format("t{}", i)), i),
                      *dir_)
                  .status,
              0);
  const std::string meta = *dir_ / "t0/run_metadata.json";
  std::string text = testing::read_file(meta);
  const std::string from = "\"simulator.noise\": 0.05";
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(), "\"simulator.noise\": 0.99");
  testing::write_file(meta, text);
  const auto m = advplan("merge " + quote(*dir_ / "t0") + " " + quote(*dir_ / "t1") + " --out " + quote(*dir_ / "tm"),
                         *dir_);
  testing::expect_one_line_error(m);
  EXPECT_THAT(m.err, HasSubstr("conditions"));
}

TEST_F(SweepRun, ASweepOverKAloneIsExtrapolatedLikeTheBudgetSweep) {
  const std::string only_k = testing::small_config(
      *dir_, {{"budget_sweep: [1, 2, 4, 8, 16]", "sweep: {k: [1, 2, 4, 8, 16]}"}}, "only-k.yaml");
  ASSERT_EQ(advplan("run " + quote(only_k) + " --out " + quote(*dir_ / "only-k") + " --progress none", *dir_).status, 0);
  const std::string x = testing::read_file(*dir_ / "only-k/extrapolation.csv");
  EXPECT_THAT(x, HasSubstr("red_quality,64,"));
  // Points on the budget sweep's streams: the same candidates, so the same extrapolation as the budget sweep's.
  const std::string plain = testing::small_config(*dir_, {}, "plain2.yaml");
  ASSERT_EQ(advplan("run " + quote(plain) + " --out " + quote(*dir_ / "plain2") + " --progress none", *dir_).status, 0);
  EXPECT_EQ(x, testing::read_file(*dir_ / "plain2/extrapolation.csv"));
}

}  // namespace
}  // namespace advplan
