// The anytime-valid confidence sequence (src/stats/confidence_sequence.cpp, docs/METRICS.md "Anytime-valid
// stopping") against a vectorised numpy implementation of Waudby-Smith and Ramdas's Theorem 2, and Holm's
// step-down against statsmodels' multipletests, both computed once by
// tests/data/oracles/make_confidence_sequence_fixtures.py. Tolerance 1e-9 (running sums in a different order).
// And its promise, checked on fixed streams: under the null the sequence rejects no more often than alpha.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "advplan/core/random.hpp"
#include "advplan/stats/confidence_sequence.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

const nlohmann::json& fixtures() {
  static const nlohmann::json j = nlohmann::json::parse(testing::read_file(
      std::string(ADVPLAN_SOURCE_DIR) + "/tests/data/oracles/confidence_sequence_fixtures.json"));
  return j;
}

TEST(ConfidenceSequence, PValuesAndIntervalsAtEveryLookMatchTheNumpyOracle) {
  ASSERT_GE(fixtures()["cases"].size(), 4U);
  for (const auto& c : fixtures()["cases"]) {
    ConfidenceSequence cs(0, 1, 0.5, c["alpha_tune"].get<double>());
    const auto x = c["x"].get<std::vector<double>>();
    for (std::size_t t = 0; t < x.size(); ++t) {
      cs.add(x[t]);
      EXPECT_NEAR(cs.p_value(), c["p"][t].get<double>(), 1e-9) << t;
      for (const double a : {0.05, 0.05 / 8}) {
        const std::string k = nlohmann::json(a).dump();
        const auto [lo, hi] = cs.interval(a);
        EXPECT_NEAR(lo, c["lo_" + k][t].get<double>(), 1e-9) << t << " " << a;
        EXPECT_NEAR(hi, c["hi_" + k][t].get<double>(), 1e-9) << t << " " << a;
      }
    }
  }
}

TEST(ConfidenceSequence, HolmStepDownMatchesStatsmodels) {
  for (const auto& h : fixtures()["holm"])
    EXPECT_EQ(holm_rejections(h["p"].get<std::vector<double>>(), h["alpha"]), h["reject"].get<std::vector<bool>>());
}

TEST(ConfidenceSequence, ThePValueIsWhereTheIntervalStopsCoveringTheNull) {
  ConfidenceSequence cs(-1, 1, 0, 0.01);
  Rng rng = Rng::keyed(5, "cs", "shifted");
  for (int i = 0; i < 200; ++i) cs.add(rng.uniform() - 0.35);
  const double p = cs.p_value();
  ASSERT_LT(p, 0.05);
  const auto below = cs.interval(p * 0.999), above = cs.interval(p * 1.001);
  EXPECT_TRUE(below.first <= 0 && 0 <= below.second);
  EXPECT_FALSE(above.first <= 0 && 0 <= above.second);
}

// 400 null streams of 300 looks each (fixed keyed streams, so the count is a fixed number): the share with any
// look rejecting at alpha = 0.05 stays at most alpha. Anytime-valid bounds are conservative: it is far below.
TEST(ConfidenceSequence, UnderTheNullItRejectsAtAnyLookNoMoreOftenThanAlpha) {
  int rejected = 0;
  for (int s = 0; s < 400; ++s) {
    ConfidenceSequence cs(-1, 1, 0, 0.05);
    Rng rng = Rng::keyed(7, "cs-null", std::to_string(s));
    for (int i = 0; i < 300; ++i) cs.add(rng.uniform() - rng.uniform());
    rejected += cs.p_value() <= 0.05;
  }
  EXPECT_LE(rejected, 20);
}

}  // namespace
}  // namespace advplan
