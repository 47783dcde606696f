// The extreme-value tail fits (src/stats/tail_fit.cpp, docs/METRICS.md "Budget extrapolation") against scipy:
// genpareto.fit with the location fixed at the threshold, and the tail model's E[max of k] and its quantiles
// evaluated from scipy's fit with scipy.integrate.quad, computed once by
// tests/data/oracles/make_tail_fit_fixtures.py and stored with their inputs in
// tests/data/oracles/tail_fit_fixtures.json. Tolerances: the shape 2e-5 absolute, the scale 2e-5 relative, the
// log-likelihood 1e-7 (and never below scipy's by more than 1e-9: the C++ search is the finer one), E[max] and the
// quantiles 1e-5 (the parameters' tolerance carried through; the integration alone agrees to about 1e-9).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "advplan/stats/tail_fit.hpp"
#include "stats/tail_fit_reference.hpp"
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

// ---- the fast algorithms against the plain ones (src/stats/tail_fit_reference.hpp) -------------------------------
// The fits solve the same maximisation with Newton's scale and Brent's refinement instead of 64 halvings and 120
// golden-section steps, so they agree to the precision at which a flat maximum fixes its argument (about 1e-8 in
// xi); E[M_k] is the same sum with its k-free parts computed once, so it agrees bit for bit.

/// n draws on [0, 1]: 0.9 (1 - (1 - U)^c) + 0.05 V with U, V uniform from a fixed mt19937_64 (whose outputs the
/// standard specifies), a bounded upper tail.
std::vector<double> synthetic_draws(std::uint64_t seed, std::size_t n, double c) {
  std::mt19937_64 g(seed);
  auto uniform = [&] { return static_cast<double>(g() >> 11) * 0x1p-53; };
  std::vector<double> d(n);
  for (auto& v : d) v = 0.9 * (1 - std::pow(1 - uniform(), c)) + 0.05 * uniform();
  return d;
}

/// The exceedances of draws over their tail rule's threshold (fit_tail's y).
std::vector<double> exceedances(std::vector<double> d) {
  std::sort(d.begin(), d.end());
  const std::size_t m = tail_exceedances(d.size());
  std::vector<double> y;
  for (std::size_t i = d.size() - m; i < d.size(); ++i) y.push_back(d[i] - d[d.size() - m - 1]);
  return y;
}

/// The maximised objective: the log-likelihood, minus the penalty lambda (1 / (1 + xi) - 1) when xi < 0.
double objective(const GpdFit& f, double lambda) { return lambda > 0 && f.xi < 0 ? f.loglik - lambda * (1 / (1 + f.xi) - 1) : f.loglik; }

// Tolerances of the fast fits against the plain ones, on 480 fits (n = 16 to 1024 draws, so m = 8 to 64): xi 1e-6,
// sigma 1e-6 relative, and the maximised objective 1e-9 apart (both sit at the same maximum, where it is flat; the
// unpenalised log-likelihood of a penalised fit is not at its own maximum, so it moves by about the slope times the
// shift in xi and is not compared). The largest differences seen are printed (docs/DECISIONS.md quotes them).
// ctest: slow
TEST(TailFit, FastFitsAgreeWithThePlainReference) {
  int cases = 0;
  double d_xi = 0, d_sigma = 0, d_obj = 0, gain = -1;
  for (std::size_t n : {16u, 64u, 256u, 1024u})
    for (double c : {0.3, 0.6, 1.0, 1.7, 3.0, 6.0})
      for (std::uint64_t seed = 1; seed <= 10; ++seed) {
        const auto y = exceedances(synthetic_draws(seed * 7919 + n, n, c));
        SCOPED_TRACE(::testing::Message() << "n " << n << " c " << c << " seed " << seed);
        for (double lambda : {0.0, 1.0}) {
          const GpdFit a = lambda == 0 ? fit_gpd(y) : fit_gpd_penalised(y, lambda);
          const GpdFit b = lambda == 0 ? reference::fit_gpd(y) : reference::fit_gpd_penalised(y, lambda);
          ASSERT_EQ(a.ok, b.ok);
          if (!a.ok) continue;
          EXPECT_NEAR(a.xi, b.xi, 1e-6);
          EXPECT_NEAR(a.sigma, b.sigma, 1e-6 * b.sigma);
          EXPECT_NEAR(objective(a, lambda), objective(b, lambda), 1e-9);
          d_xi = std::max(d_xi, std::fabs(a.xi - b.xi));
          d_sigma = std::max(d_sigma, std::fabs(a.sigma - b.sigma) / b.sigma);
          d_obj = std::max(d_obj, std::fabs(objective(a, lambda) - objective(b, lambda)));
          gain = std::max(gain, objective(a, lambda) - objective(b, lambda));
          ++cases;
        }
      }
  EXPECT_EQ(cases, 480);
  std::printf("fast against plain fits: max |d xi| %.3g, max |d sigma|/sigma %.3g, max |d objective| %.3g (largest "
              "gain of the fast fit %.3g)\n",
              d_xi, d_sigma, d_obj, gain);
}

TEST(TailFit, ExpectedMaxCurveIsThePlainSimpsonBitForBit) {
  std::vector<TailModel> models;
  for (const auto& c : fixtures()["model"]) models.push_back(fit_tail(doubles(c["draws"]), c["drawn"].get<std::size_t>()));
  models.push_back(fit_tail(std::vector<double>{0.5, 0.1}, 4));  // empirical, with invalid draws
  models.push_back(fit_tail(synthetic_draws(3, 16, 1.0), 20));    // GPD with invalid draws
  models.push_back(fit_tail(synthetic_draws(4, 64, 0.5), 64));
  for (const auto& m : models) {
    const ExpectedMaxCurve curve(m);
    for (double k : {1.0, 1.5, 2.0, 3.0, 7.0, 16.0, 64.0, 100.5, 1024.0, 4096.0, 65536.0, 1e6, 1e12}) {
      EXPECT_EQ(curve(k), reference::expected_max(m, k)) << k;
      EXPECT_EQ(m.expected_max(k), reference::expected_max(m, k)) << k;
    }
  }
}

}  // namespace
}  // namespace advplan
