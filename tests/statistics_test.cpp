// Percentile-bootstrap intervals (docs/METRICS.md "Statistics"), against exact cases and an independent
// reference: for a mean of n roughly normal values the 95% percentile interval has half-width close to
// 1.96 * sd / sqrt(n) (the normal-theory interval the bootstrap approximates).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "advplan/core/random.hpp"
#include "advplan/metrics/statistics.hpp"

namespace advplan {
namespace {

std::vector<double> normal_data(std::size_t n, std::uint64_t seed, double mu, double sigma) {
  Rng rng = Rng::keyed(seed, "statistics_test", "data");
  std::vector<double> v(n);
  for (auto& x : v) x = mu + sigma * rng.normal();
  return v;
}

double sample_sd(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m += x;
  m /= static_cast<double>(v.size());
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

TEST(Mean, Exact) {
  EXPECT_EQ(mean(std::vector<double>{1, 2, 3, 4}), 2.5);
  EXPECT_EQ(mean(std::vector<double>{}), 0.0);
}

TEST(BootstrapMean, ConstantDataGivesAZeroWidthInterval) {
  const std::vector<double> v(50, 0.375);
  const Interval iv = bootstrap_mean(v, 1000, 7, "constant");
  EXPECT_EQ(iv.mean, 0.375);
  EXPECT_EQ(iv.lo, 0.375);
  EXPECT_EQ(iv.hi, 0.375);
  EXPECT_EQ(iv.n, 50u);
}

TEST(BootstrapMean, MeanIsTheExactSampleMean) {
  const std::vector<double> v{0.5, 0.25, 1.0, 0.0, 0.75};  // sum 2.5, exact in binary
  const Interval iv = bootstrap_mean(v, 500, 7, "mean");
  EXPECT_EQ(iv.mean, 0.5);
  EXPECT_EQ(iv.n, 5u);
  EXPECT_LE(iv.lo, iv.hi);
}

TEST(BootstrapMean, DegenerateInputsCollapseToTheMean) {
  const std::vector<double> one{0.8};
  const Interval a = bootstrap_mean(one, 1000, 7, "one");
  EXPECT_EQ(a.lo, 0.8);
  EXPECT_EQ(a.hi, 0.8);
  const Interval e = bootstrap_mean(std::vector<double>{}, 1000, 7, "empty");
  EXPECT_EQ(e.n, 0u);
  EXPECT_EQ(e.mean, 0.0);
  EXPECT_EQ(e.lo, 0.0);
  EXPECT_EQ(e.hi, 0.0);
}

TEST(BootstrapMean, IntervalContainsTheMeanForSymmetricData) {
  const std::vector<double> v{-3, -2, -1, 0, 1, 2, 3, -2.5, 2.5, -0.5, 0.5};
  const Interval iv = bootstrap_mean(v, 2000, 7, "symmetric");
  EXPECT_DOUBLE_EQ(iv.mean, 0.0);
  EXPECT_LT(iv.lo, 0.0);
  EXPECT_GT(iv.hi, 0.0);
  // Symmetric data: the interval is roughly symmetric about the mean.
  EXPECT_NEAR(-iv.lo, iv.hi, 0.25 * (iv.hi - iv.lo));
}

TEST(BootstrapMean, TwoPointDataHasAnalyticPercentiles) {
  // v = {0, 1}: a resample mean is 0, .5 or 1 with probabilities 1/4, 1/2, 1/4, so with B = 2000 the 2.5th
  // percentile is 0 and the 97.5th is 1 (each tail holds ~500 resamples, far more than the 50 cut off).
  const Interval iv = bootstrap_mean(std::vector<double>{0.0, 1.0}, 2000, 7, "two-point");
  EXPECT_EQ(iv.mean, 0.5);
  EXPECT_EQ(iv.lo, 0.0);
  EXPECT_EQ(iv.hi, 1.0);
}

TEST(BootstrapMean, SameSeedAndKeyReplayDifferentKeyOrSeedDoNot) {
  const auto v = normal_data(60, 3, 0.5, 0.2);
  const Interval a = bootstrap_mean(v, 400, 7, "per_scenario/greedy@8/red_quality");
  const Interval b = bootstrap_mean(v, 400, 7, "per_scenario/greedy@8/red_quality");
  EXPECT_EQ(a.lo, b.lo);
  EXPECT_EQ(a.hi, b.hi);
  EXPECT_EQ(a.mean, b.mean);
  const Interval c = bootstrap_mean(v, 400, 7, "per_scenario/single/red_quality");
  EXPECT_TRUE(c.lo != a.lo || c.hi != a.hi) << "a different key must draw different resamples";
  EXPECT_EQ(c.mean, a.mean);  // the point estimate does not depend on the resamples
  const Interval d = bootstrap_mean(v, 400, 8, "per_scenario/greedy@8/red_quality");
  EXPECT_TRUE(d.lo != a.lo || d.hi != a.hi) << "a different seed must draw different resamples";
}

TEST(BootstrapMean, HalfWidthMatchesNormalTheoryForN200) {
  // Independent reference: 1.96 * sd / sqrt(n). The percentile interval of the bootstrap mean agrees up to the
  // Monte-Carlo error of B = 2000 resamples and the plug-in sd; 20% is a loose bound for both. Several data
  // sets so a single lucky draw cannot pass the test.
  for (std::uint64_t seed : {1, 2, 3, 4, 5}) {
    const auto v = normal_data(200, seed, 0.6, 0.15);
    const Interval iv = bootstrap_mean(v, 2000, 7, "normal-theory");
    const double reference = 1.96 * sample_sd(v) / std::sqrt(200.0);
    const double half = 0.5 * (iv.hi - iv.lo);
    EXPECT_NEAR(half, reference, 0.2 * reference) << "seed " << seed;
    // Each side on its own, so a wrong percentile at one end cannot hide behind the other (the Monte-Carlo
    // error of a 2.5% quantile from 2000 resamples is about 3% of the reference).
    EXPECT_NEAR(iv.mean - iv.lo, reference, 0.2 * reference) << "seed " << seed;
    EXPECT_NEAR(iv.hi - iv.mean, reference, 0.2 * reference) << "seed " << seed;
  }
}

TEST(BootstrapPairedDifference, VectorWithItselfIsExactlyZero) {
  const auto v = normal_data(40, 9, 0.4, 0.3);
  const Interval iv = bootstrap_paired_difference(v, v, 2000, 7, "self");
  EXPECT_EQ(iv.mean, 0.0);
  EXPECT_EQ(iv.lo, 0.0);
  EXPECT_EQ(iv.hi, 0.0);
  EXPECT_EQ(iv.n, 40u);
}

TEST(BootstrapPairedDifference, ShiftIsRecoveredExactlyWithAZeroWidthInterval) {
  // a_i - b_i = .25 for every pair: pairing removes all the between-scenario variation.
  const auto b = normal_data(30, 10, 0.4, 0.3);
  std::vector<double> a = b;
  for (auto& x : a) x += 0.25;
  const Interval iv = bootstrap_paired_difference(a, b, 1000, 7, "shift");
  EXPECT_NEAR(iv.mean, 0.25, 1e-12);
  EXPECT_NEAR(iv.lo, 0.25, 1e-12);
  EXPECT_NEAR(iv.hi, 0.25, 1e-12);
}

}  // namespace
}  // namespace advplan
