// The minimum detectable effect (src/stats/power.cpp, docs/METRICS.md "Minimum detectable effect") against
// statsmodels' TTestPower, computed once by tests/data/oracles/make_power_fixtures.py into
// tests/data/oracles/power_fixtures.json (R's pwr agrees on the power function to 1e-9; the script asserts it).
// Tolerances: power 1e-9 absolute (boost's and scipy's noncentral t, both boost underneath, in different builds);
// effect sizes and MDEs 1e-7 relative (the oracle's root to 1e-14, ours to the last bit of the power function).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "advplan/stats/power.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

const nlohmann::json& fixtures() {
  static const nlohmann::json j = nlohmann::json::parse(
      testing::read_file(std::string(ADVPLAN_SOURCE_DIR) + "/tests/data/oracles/power_fixtures.json"));
  return j;
}

TEST(Power, ThePairedTPowerMatchesStatsmodels) {
  ASSERT_GE(fixtures()["power"].size(), 8U);
  for (const auto& c : fixtures()["power"])
    EXPECT_NEAR(paired_t_power(c["d"], c["n"], c["alpha"]), c["power"].get<double>(), 1e-9) << c.dump();
}

TEST(Power, TheDetectableEffectSizeMatchesStatsmodels) {
  ASSERT_GE(fixtures()["effect_size"].size(), 9U);
  for (const auto& c : fixtures()["effect_size"]) {
    const double want = c["d"];
    EXPECT_NEAR(detectable_effect_size(c["n"], c["alpha"], c["power"]), want, 1e-7 * want) << c.dump();
  }
}

TEST(Power, TheMinimumDetectableEffectIsTheEffectSizeInTheDifferencesUnits) {
  ASSERT_GE(fixtures()["mde"].size(), 2U);
  for (const auto& c : fixtures()["mde"]) {
    const auto d = c["diffs"].get<std::vector<double>>();
    const double want = c["mde"];
    EXPECT_NEAR(minimum_detectable_effect(d, c["alpha"], c["power"]), want, 1e-7 * want) << d.size();
  }
}

TEST(Power, TooFewDifferencesOrAConstantOneAreNamedNotGuessed) {
  EXPECT_TRUE(std::isnan(minimum_detectable_effect(std::vector<double>{0.3}, 0.05, 0.8)));
  EXPECT_TRUE(std::isnan(detectable_effect_size(20, 0.05, 0.04)));  // power below alpha: no effect size gives it
  EXPECT_EQ(minimum_detectable_effect(std::vector<double>{0.1, 0.1, 0.1}, 0.05, 0.8), 0.0);
}

// A root beyond Boost's noncentral t (n = 2 at a Holm level of 5e-6: delta* near 121,000) is infinite, not a throw.
TEST(Power, ARootBeyondTheNoncentralTsRangeIsInfiniteNotACrash) {
  EXPECT_TRUE(std::isinf(detectable_effect_size(2, 5e-6, 0.8)));
}

TEST(Power, MoreScenariosDetectSmallerEffects) {
  double last = detectable_effect_size(10, 0.05, 0.8);
  for (std::size_t n : {20, 40, 80, 160, 320}) {
    const double d = detectable_effect_size(n, 0.05, 0.8);
    EXPECT_LT(d, last) << n;
    last = d;
  }
}

}  // namespace
}  // namespace advplan
