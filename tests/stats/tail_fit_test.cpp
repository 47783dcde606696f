// The extreme-value tail fits (src/stats/tail_fit.cpp, docs/METRICS.md "Budget extrapolation") against scipy:
// genpareto.fit with the location fixed at the threshold, and the tail model's E[max of k] and its quantiles
// evaluated from scipy's fit with scipy.integrate.quad, computed once by
// tests/data/oracles/make_tail_fit_fixtures.py and stored with their inputs in
// tests/data/oracles/tail_fit_fixtures.json. Tolerances: the shape 2e-5 absolute, the scale 2e-5 relative, the
// log-likelihood 1e-7 (and never below scipy's by more than 1e-9: the C++ search is the finer one), E[max] and the
// quantiles 1e-5 (the parameters' tolerance carried through; the integration alone agrees to about 1e-9).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "advplan/stats/tail_fit.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

const nlohmann::json& fixtures() {
  static const nlohmann::json j = nlohmann::json::parse(
      testing::read_file(std::string(ADVPLAN_SOURCE_DIR) + "/tests/data/oracles/tail_fit_fixtures.json"));
  return j;
}

std::vector<double> doubles(const nlohmann::json& a) {
  std::vector<double> v;
  for (const auto& x : a) v.push_back(x.get<double>());
  return v;
}

TEST(TailFit, GpdMaximumLikelihoodMatchesScipy) {
  ASSERT_GE(fixtures()["gpd"].size(), 4u);
  for (const auto& c : fixtures()["gpd"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto y = doubles(c["y"]);
    const GpdFit f = fit_gpd(y);
    ASSERT_TRUE(f.ok);
    EXPECT_NEAR(f.xi, c["xi"].get<double>(), 2e-5);
    EXPECT_NEAR(f.sigma, c["sigma"].get<double>(), 2e-5 * c["sigma"].get<double>());
    EXPECT_NEAR(f.loglik, c["loglik"].get<double>(), 1e-7);
    EXPECT_GE(f.loglik, c["loglik"].get<double>() - 1e-9);
    EXPECT_DOUBLE_EQ(f.loglik, gpd_loglik(y, f.xi, f.sigma));
  }
}

TEST(TailFit, TailModelExpectedMaxAndQuantilesMatchScipy) {
  ASSERT_GE(fixtures()["model"].size(), 4u);
  for (const auto& c : fixtures()["model"]) {
    SCOPED_TRACE(c["name"].get<std::string>());
    const auto draws = doubles(c["draws"]);
    const TailModel t = fit_tail(draws, c["drawn"].get<std::size_t>());
    ASSERT_EQ(t.method, TailMethod::gpd);
    EXPECT_EQ(t.exceedances, c["exceedances"].get<std::size_t>());
    EXPECT_DOUBLE_EQ(t.threshold, c["threshold"].get<double>());
    EXPECT_NEAR(t.gpd.xi, c["xi"].get<double>(), 2e-5);
    EXPECT_NEAR(t.gpd.sigma, c["sigma"].get<double>(), 2e-5 * c["sigma"].get<double>());
    EXPECT_NEAR(t.endpoint(), c["endpoint"].get<double>(), 1e-4);
    for (const auto& e : c["expected_max"]) {
      const double k = e["k"].get<double>();
      SCOPED_TRACE(k);
      EXPECT_NEAR(t.expected_max(k), e["value"].get<double>(), 1e-5);
    }
    for (const auto& e : c["max_quantile"]) {
      SCOPED_TRACE(e.dump());
      EXPECT_NEAR(t.max_quantile(e["k"].get<double>(), e["p"].get<double>()), e["value"].get<double>(), 1e-5);
    }
  }
}

TEST(TailFit, ExpectedMaxRisesWithKToTheBoundedEndpoint) {
  const auto& c = fixtures()["model"][0];
  const TailModel t = fit_tail(doubles(c["draws"]), c["drawn"].get<std::size_t>());
  double prev = -1;
  for (double k : {1.0, 2.0, 3.0, 8.0, 16.0, 64.0, 1024.0, 1e6}) {
    const double e = t.expected_max(k);
    EXPECT_GT(e, prev) << k;
    EXPECT_LE(e, t.endpoint() + 1e-12);
    const double lo = t.max_quantile(k, 0.05), hi = t.max_quantile(k, 0.95);
    EXPECT_LE(lo, hi);
    EXPECT_LE(hi, t.endpoint() + 1e-12);
    prev = e;
  }
  EXPECT_NEAR(t.expected_max(1e12), t.endpoint(), 1e-3);
}

TEST(TailFit, EmpiricalFallbackIsExactByHand) {
  // Two valid draws of two: max of 2 is 0.5 unless both are 0.1 (probability 1/4): 0.1 / 4 + 0.5 * 3 / 4 = 0.4.
  const std::vector<double> d{0.5, 0.1};
  TailModel t = fit_tail(d, 2);
  EXPECT_EQ(t.method, TailMethod::empirical);
  EXPECT_NEAR(t.expected_max(2), 0.4, 1e-15);
  EXPECT_NEAR(t.expected_max(1), 0.3, 1e-15);
  EXPECT_DOUBLE_EQ(t.endpoint(), 0.5);
  EXPECT_DOUBLE_EQ(t.max_quantile(2, 0.2), 0.1);
  EXPECT_DOUBLE_EQ(t.max_quantile(2, 0.3), 0.5);
  // Two invalid draws of four: a draw is invalid (1/2), 0.1 (1/4) or 0.5 (1/4). Given one valid of 2 (prob 3/4),
  // the max is 0.1 when the draws are {0.1, 0.1}, {0.1, bad}, {bad, 0.1}: (1/16 + 2/8) / (3/4) = 5/12.
  t = fit_tail(d, 4);
  EXPECT_NEAR(t.expected_max(2), 0.1 * 5.0 / 12 + 0.5 * 7.0 / 12, 1e-15);
}

TEST(TailFit, ThresholdRuleAndDeterminism) {
  EXPECT_EQ(tail_exceedances(9), 0u);
  EXPECT_EQ(tail_exceedances(10), 8u);
  EXPECT_EQ(tail_exceedances(16), 8u);
  EXPECT_EQ(tail_exceedances(64), 16u);
  EXPECT_EQ(tail_exceedances(1024), 64u);
  const auto& c = fixtures()["model"][1];
  const auto draws = doubles(c["draws"]);
  const TailModel a = fit_tail(draws, 16), b = fit_tail(draws, 16);
  EXPECT_EQ(a.gpd.xi, b.gpd.xi);
  EXPECT_EQ(a.expected_max(64), b.expected_max(64));
}

TEST(TailFit, RefusesWhatIsNotADraw) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(fit_tail(std::vector<double>{0.2, nan}, 2), std::invalid_argument);
  EXPECT_THROW(fit_tail(std::vector<double>{0.2, 1.5}, 2), std::invalid_argument);
  EXPECT_THROW(fit_tail(std::vector<double>{}, 2), std::invalid_argument);
  EXPECT_THROW(fit_tail(std::vector<double>{0.2, 0.3}, 1), std::invalid_argument);
  EXPECT_FALSE(fit_gpd(std::vector<double>{0, 0, 0}).ok);
  EXPECT_FALSE(fit_gpd(std::vector<double>{0.1}).ok);
  EXPECT_FALSE(fit_gpd(std::vector<double>{0.1, nan}).ok);
  EXPECT_FALSE(fit_gpd(std::vector<double>{0.1, -0.2}).ok);
  // Ties everywhere: the GPD fit of all-zero exceedances fails and the model falls back to the empirical one.
  const std::vector<double> ties(16, 0.25);
  const TailModel t = fit_tail(ties, 16);
  EXPECT_EQ(t.method, TailMethod::empirical);
  EXPECT_DOUBLE_EQ(t.expected_max(64), 0.25);
}

}  // namespace
}  // namespace advplan
