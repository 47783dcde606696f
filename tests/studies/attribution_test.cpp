// The attribution study (docs/METRICS.md "Attribution") on tests/data/small.yaml with `attribution: true`: the
// switches do what METRICS.md says (all parts off is the seed plan against one sample, without noise; the council
// with its proposal and revision against greedy@8 with noise is the run's council condition, bit for bit), the
// Shapley values of studies/attribution*.csv match the brute force over all 5! orders of the parts computed here
// from per_scenario.csv, and they sum to the total effect exactly, digit for digit in the CSV.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "advplan/io/csv.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using testing::advplan;
using testing::quote;
using testing::TempDir;

const std::vector<std::string> kParts{"response_search", "selector", "council_proposal", "council_revision",
                                      "simulator_noise"};

std::string label(std::size_t mask) {
  const char* names[] = {"search", "selector", "proposal", "revision", "noise"};
  std::string s;
  for (std::size_t i = 0; i < 5; ++i) s += fmt::format("{}{}={}", i ? ", " : "", names[i], mask >> i & 1);
  return "attribution [" + s + "]";
}

/// The value on the 1e-9 grid of a CSV cell written with nine decimals, as an integer (no rounding: the digits).
std::int64_t grid(const std::string& cell) {
  const auto dot = cell.find('.');
  EXPECT_NE(dot, std::string::npos) << cell;
  EXPECT_EQ(cell.size() - dot - 1, 9u) << cell;
  std::string digits = cell.substr(0, dot) + cell.substr(dot + 1);
  return std::stoll(digits);
}

class Attribution : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("attribution");
    const std::string cfg = testing::small_config(
        *dir_, {{"studies: {rubric: true, framing: true, components: true}",
                 "studies: {rubric: true, framing: true, components: true, attribution: true}"}});
    const auto r = advplan("run " + quote(cfg) + " --out " + quote(*dir_ / "run") + " --progress none", *dir_);
    ASSERT_EQ(r.status, 0) << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string run() { return *dir_ / "run"; }
  static TempDir* dir_;
};
TempDir* Attribution::dir_ = nullptr;

/// Rows of per_scenario.csv by (condition, scenario).
std::map<std::pair<std::string, std::string>, std::vector<std::string>> rows_by(const io::CsvTable& per) {
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> out;
  for (const auto& r : per.rows()) out[{r[per.col("condition")], r[per.col("scenario_id")]}] = r;
  return out;
}

TEST_F(Attribution, TheSwitchesReplayTheListedConditionsBitForBit) {
  const io::CsvTable per = io::CsvTable::read(run() + "/per_scenario.csv");
  const auto rows = rows_by(per);
  std::size_t compared = 0;
  for (const auto& [key, r] : rows) {
    if (key.first != "council") continue;
    const std::string& sc = key.second;
    // All parts off: the seed plan (the council returns it unchanged) against one sample.
    const auto& off = rows.at({label(0), sc});
    const auto& single = rows.at({"single", sc});
    for (const char* c : {"blue_plan_id", "red_plan_id", "blue_quality", "red_quality", "advantage"})
      EXPECT_EQ(off[per.col(c)], single[per.col(c)]) << sc << " " << c;
    // Search and noise on, the council's two parts on, quality-greedy: the run's council condition.
    const auto& council = rows.at({label(0b11101), sc});
    for (const char* c : {"blue_plan_id", "red_plan_id", "blue_quality", "red_quality", "advantage", "blue_win_rate"})
      EXPECT_EQ(council[per.col(c)], r[per.col(c)]) << sc << " " << c;
    // Search, selector and noise on without the council's parts: the seed plan against constraint@8.
    const auto& constraint = rows.at({label(0b10011), sc});
    const auto& c8 = rows.at({"constraint@8", sc});
    for (const char* c : {"blue_plan_id", "red_plan_id", "advantage", "blue_win_rate"})
      EXPECT_EQ(constraint[per.col(c)], c8[per.col(c)]) << sc << " " << c;
    ++compared;
  }
  EXPECT_EQ(compared, 6u);
}

TEST_F(Attribution, TheShapleyValuesAreTheBruteForceAndSumToTheTotalExactly) {
  const io::CsvTable per = io::CsvTable::read(run() + "/per_scenario.csv");
  const io::CsvTable a = io::CsvTable::read(run() + "/studies/attribution.csv");
  const io::CsvTable by = io::CsvTable::read(run() + "/studies/attribution_scenarios.csv");
  const auto rows = rows_by(per);
  std::vector<std::string> scenarios;
  for (const auto& r : per.rows())
    if (r[per.col("condition")] == label(0)) scenarios.push_back(r[per.col("scenario_id")]);
  ASSERT_EQ(scenarios.size(), 6u);
  for (const std::string metric : {"advantage", "blue_win_rate"}) {
    std::vector<double> mean(5, 0.0);
    double total = 0;
    for (const auto& sc : scenarios) {
      std::vector<double> v(32);
      for (std::size_t s = 0; s < 32; ++s) v[s] = std::stod(rows.at({label(s), sc})[per.col(metric)]);
      // The brute force over the 120 orders of the parts.
      std::vector<std::size_t> order(5);
      std::iota(order.begin(), order.end(), std::size_t{0});
      std::vector<double> phi(5, 0.0);
      do {
        std::size_t s = 0;
        for (std::size_t i : order) {
          phi[i] += (v[s | (std::size_t{1} << i)] - v[s]) / 120.0;
          s |= std::size_t{1} << i;
        }
      } while (std::next_permutation(order.begin(), order.end()));
      std::int64_t sum = 0, written_total = 0;
      for (std::size_t i = 0; i < by.size(); ++i) {
        if (by.at(i, "scenario_id") != sc || by.at(i, "metric") != metric) continue;
        const std::string part = by.at(i, "part");
        if (part == "total") {
          written_total = grid(by.at(i, "value"));
          EXPECT_NEAR(std::stod(by.at(i, "value")), v[31] - v[0], 0.5e-9 + 1e-15);
          continue;
        }
        const auto p = static_cast<std::size_t>(std::find(kParts.begin(), kParts.end(), part) - kParts.begin());
        ASSERT_LT(p, 5u) << part;
        EXPECT_NEAR(std::stod(by.at(i, "value")), phi[p], 1e-9 + 1e-13) << sc << " " << part;
        sum += grid(by.at(i, "value"));
      }
      EXPECT_EQ(sum, written_total) << sc << " " << metric;
      for (std::size_t i = 0; i < 5; ++i) mean[i] += phi[i] / 6.0;
      total += (v[31] - v[0]) / 6.0;
    }
    std::int64_t sum = 0, written_total = 0;
    std::size_t shapley_rows = 0, interaction_rows = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a.at(i, "metric") != metric) continue;
      EXPECT_EQ(a.at(i, "n"), "6");
      const std::string kind = a.at(i, "kind");
      if (kind == "shapley") {
        const auto p = static_cast<std::size_t>(std::find(kParts.begin(), kParts.end(), a.at(i, "part")) - kParts.begin());
        ASSERT_LT(p, 5u);
        EXPECT_NEAR(std::stod(a.at(i, "value")), mean[p], 1e-9 + 1e-13) << metric << " " << a.at(i, "part");
        EXPECT_LE(std::stod(a.at(i, "ci_lo")), std::stod(a.at(i, "value")) + 1e-6);
        EXPECT_GE(std::stod(a.at(i, "ci_hi")), std::stod(a.at(i, "value")) - 1e-6);
        sum += grid(a.at(i, "value"));
        ++shapley_rows;
      } else if (kind == "total") {
        written_total = grid(a.at(i, "value"));
        EXPECT_NEAR(std::stod(a.at(i, "value")), total, 0.5e-9 + 1e-13);
      } else if (kind == "interaction") {
        ++interaction_rows;
      }
    }
    EXPECT_EQ(shapley_rows, 5u);
    EXPECT_EQ(interaction_rows, 10u);
    EXPECT_EQ(sum, written_total) << metric;  // efficiency, to the last digit of the CSV
  }
  // The noise switch cannot move the advantage (q alone): its Shapley value is 0 exactly.
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a.at(i, "metric") == "advantage" && a.at(i, "part") == "simulator_noise")
      EXPECT_EQ(a.at(i, "value"), "0.000000000");
}

TEST_F(Attribution, TheStudyIsATableAndTheReplaysStayOutOfThePapersTables) {
  const std::string md = testing::read_file(run() + "/tables/study_attribution.md");
  EXPECT_THAT(md, ::testing::HasSubstr("| advantage | shapley | response_search | 6 |"));
  EXPECT_THAT(testing::read_file(run() + "/tables/table3_policy_comparison.md"),
              ::testing::Not(::testing::HasSubstr("attribution [")));
  const auto t = advplan("tables " + quote(run()) + " --out " + quote(*dir_ / "rebuilt"), *dir_);
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_EQ(testing::read_file(*dir_ / "rebuilt/study_attribution.md"), md);
}

}  // namespace
}  // namespace advplan
