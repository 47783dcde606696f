// Reducers over samples (src/evaluation/samples.cpp, docs/METRICS.md "Reducers over samples"): Chen et al.'s
// unbiased pass@k and pass^k against a brute-force enumeration of every k-subset of the trials (the oracle:
// the estimators are the share of k-subsets with at least one, or only, successes; tolerance 1e-12), and the
// per-(scenario, condition) reducers and the flaky list against hand-counted samples.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "advplan/evaluation/samples.hpp"
#include "advplan/io/csv.hpp"

namespace advplan {
namespace {

using io::CsvTable;

/// Over every k-subset of n trials whose first c are successes: the share with some success and with all.
std::pair<double, double> enumerate(std::size_t n, std::size_t c, std::size_t k) {
  std::size_t subsets = 0, some = 0, all = 0;
  for (unsigned mask = 0; mask < (1U << n); ++mask) {
    if (static_cast<std::size_t>(__builtin_popcount(mask)) != k) continue;
    ++subsets;
    const auto hits = static_cast<std::size_t>(__builtin_popcount(mask & ((1U << c) - 1)));
    some += hits > 0;
    all += hits == k;
  }
  return {static_cast<double>(some) / static_cast<double>(subsets), static_cast<double>(all) / static_cast<double>(subsets)};
}

TEST(SampleReducers, PassAtKAndPassHatKEqualTheShareOfKSubsets) {
  for (std::size_t n = 1; n <= 10; ++n)
    for (std::size_t c = 0; c <= n; ++c)
      for (std::size_t k = 1; k <= n; ++k) {
        const auto [some, all] = enumerate(n, c, k);
        EXPECT_NEAR(pass_at_k(n, c, k), some, 1e-12) << n << " " << c << " " << k;
        EXPECT_NEAR(pass_hat_k(n, c, k), all, 1e-12) << n << " " << c << " " << k;
      }
  EXPECT_TRUE(std::isnan(pass_at_k(3, 1, 4)));
  EXPECT_TRUE(std::isnan(pass_hat_k(0, 0, 1)));
}

/// Two scenarios x one condition x four samples; scenario b's BLUE plan failed once.
CsvTable sampled_rows() {
  CsvTable t({"scenario_id", "template", "condition", "sample", "blue_policy", "red_policy", "status",
              "failure_reason", "advantage", "blue_win_rate"});
  t.add({"a", "t1", "seed vs single", "0", "seed", "single", "ok", "", "0.2", "0.8"});
  t.add({"a", "t1", "seed vs single", "1", "seed", "single", "ok", "", "-0.1", "0.4"});
  t.add({"a", "t1", "seed vs single", "2", "seed", "single", "ok", "", "0.3", "0.9"});
  t.add({"a", "t1", "seed vs single", "3", "seed", "single", "ok", "", "0.0", "0.5"});
  t.add({"b", "t2", "seed vs single", "0", "seed", "single", "ok", "", "0.5", "0.7"});
  t.add({"b", "t2", "seed vs single", "1", "seed", "single", "failed", "blue: no chain", "", ""});
  t.add({"b", "t2", "seed vs single", "2", "seed", "single", "ok", "", "0.4", "0.6"});
  t.add({"b", "t2", "seed vs single", "3", "seed", "single", "failed", "red: timeout", "", ""});
  return t;
}

const std::string& file(const std::vector<std::pair<std::string, std::string>>& files, const std::string& name) {
  for (const auto& [n, text] : files)
    if (n == name) return text;
  static const std::string none;
  ADD_FAILURE() << name << " not written";
  return none;
}

TEST(SampleReducers, WorstOfNMajorityAndTheFlakyScenariosMatchHandCounts) {
  const auto files = sample_reducer_files(sampled_rows(), {200, 3});
  const CsvTable r = CsvTable::parse(file(files, "samples/reducers.csv"), "reducers.csv");
  ASSERT_EQ(r.size(), 2U);
  EXPECT_EQ(r.at(0, "advantage_mean"), "0.100000");
  EXPECT_EQ(r.at(0, "advantage_worst"), "-0.100000");
  EXPECT_EQ(r.at(0, "blue_wins"), "2");  // 0.8 and 0.9; 0.5 is not a majority of replications
  EXPECT_EQ(r.at(0, "blue_win_majority"), "0");  // 2 of 4 is not a strict majority
  EXPECT_EQ(r.at(1, "ok_samples"), "2");
  EXPECT_EQ(r.at(1, "advantage_mean"), "0.450000");
  EXPECT_EQ(r.at(1, "advantage_worst"), "0.400000");
  EXPECT_EQ(r.at(1, "blue_win_trials"), "4");  // a failed sample is a sample without a BLUE win
  EXPECT_EQ(r.at(1, "blue_wins"), "2");
  EXPECT_EQ(r.at(1, "blue_win_majority"), "0");
  EXPECT_EQ(r.at(1, "valid_plans"), "3");  // the RED failure's BLUE plan was valid
  const CsvTable f = CsvTable::parse(file(files, "samples/flaky.csv"), "flaky.csv");
  ASSERT_EQ(f.size(), 3U);  // a and b disagree on blue_win, b on valid_plan
  EXPECT_EQ(f.at(0, "scenario_id"), "a");
  EXPECT_EQ(f.at(0, "event"), "blue_win");
  EXPECT_EQ(f.at(1, "scenario_id"), "b");
  EXPECT_EQ(f.at(1, "event"), "blue_win");
  EXPECT_EQ(f.at(2, "event"), "valid_plan");
  EXPECT_EQ(f.at(2, "share"), "0.750000");
  const CsvTable p = CsvTable::parse(file(files, "samples/pass_at_k.csv"), "pass_at_k.csv");
  // blue_win at k = 2: a and b each have 2 of 4 (pass@2 = 5/6, pass^2 = 1/6).
  bool seen = false;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (p.at(i, "event") == "blue_win" && p.at(i, "k") == "2") {
      seen = true;
      EXPECT_NEAR(p.real(i, "pass_at_k"), 5.0 / 6.0, 1e-6);
      EXPECT_NEAR(p.real(i, "pass_hat_k"), 1.0 / 6.0, 1e-6);
    }
  EXPECT_TRUE(seen);
}

// A k no scenario reaches (here: a cell of two samples beside one of four) writes n = 0 and empty values.
TEST(SampleReducers, AKBeyondEveryScenarioOfAConditionHasNoValueNotZero) {
  CsvTable t = sampled_rows();
  t.add({"c", "t1", "seed vs greedy@8", "0", "seed", "greedy@8", "ok", "", "0.1", "0.9"});
  t.add({"c", "t1", "seed vs greedy@8", "1", "seed", "greedy@8", "ok", "", "0.2", "0.9"});
  const CsvTable p = CsvTable::parse(file(sample_reducer_files(t, {200, 3}), "samples/pass_at_k.csv"), "p");
  bool seen = false;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (p.at(i, "condition") == "seed vs greedy@8" && p.at(i, "k") == "4") {
      seen = true;
      EXPECT_EQ(p.at(i, "n"), "0");
      EXPECT_EQ(p.at(i, "pass_at_k"), "");
    }
  EXPECT_TRUE(seen);
}

TEST(SampleReducers, ARunOfOneSampleWritesNone) {
  CsvTable t = sampled_rows();
  CsvTable one(t.header());
  one.add(t.rows()[0]);
  one.add(t.rows()[4]);
  EXPECT_TRUE(sample_reducer_files(one, {200, 3}).empty());
}

}  // namespace
}  // namespace advplan
