// Percentile-bootstrap intervals (docs/METRICS.md "Statistics"), against exact cases and an independent
// reference: for a mean of n roughly normal values the 95% percentile interval has half-width close to
// 1.96 * sd / sqrt(n) (the normal-theory interval the bootstrap approximates).
#include <gtest/gtest.h>

#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "advplan/core/random.hpp"
#include "advplan/stats/statistics.hpp"
#include "stats/weighted_rows.hpp"

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

TEST(JointBootstrap, FourStreamsDrawnTogetherAreFourStreamsDrawnAlone) {
  // The joint bootstrap draws four resamples' multisets at once (detail::resample_counts_x4): each lane's counts,
  // and where its stream is left, must be those of resample_counts on that stream alone.
  for (const std::size_t n : {1u, 2u, 3u, 30u, 150u, 1000u}) {
    Rng lanes[4] = {Rng::keyed(7, "x4", "k", 0), Rng::keyed(7, "x4", "k", 1), Rng::keyed(7, "x4", "k", 2),
                    Rng::keyed(7, "x4", "k", 3)};
    std::vector<std::uint32_t> got(4 * n, 99);
    std::uint32_t* const out[4] = {got.data(), got.data() + n, got.data() + 2 * n, got.data() + 3 * n};
    detail::resample_counts_x4(lanes, out, n);
    for (std::size_t l = 0; l < 4; ++l) {
      Rng alone = Rng::keyed(7, "x4", "k", l);
      std::vector<std::uint32_t> want(n);
      resample_counts(alone, want);
      EXPECT_TRUE(std::equal(want.begin(), want.end(), got.begin() + static_cast<std::ptrdiff_t>(l * n))) << n << " " << l;
      EXPECT_EQ(lanes[l].next_u64(), alone.next_u64()) << n << " " << l;
    }
  }
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

// detail::add_weighted_rows over dense rows with +0.0 where a row leaves a column alone gives the bits of the sparse
// walk that skips those cells (the rubric layer's replicates rely on it), for every clone the CPU runs: special
// values (signed zeros, infinities, NaN, subnormals) in present cells, undrawn rows, counts above 1.
TEST(WeightedRows, DenseRowsWithZerosAreTheSparseWalkBitForBit) {
  Rng rng(2024);
  const std::vector<double> specials{0.0, -0.0, HUGE_VAL, -HUGE_VAL, std::nan(""), 5e-324, -1e-310, 1e308};
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = 1 + rng.pick_index(40), cols = 1 + rng.pick_index(40), stride = (cols + 3) / 4 * 4;
    std::vector<std::uint32_t> counts(n);
    for (auto& c : counts) c = static_cast<std::uint32_t>(rng.uniform_int(0, 3));
    std::vector<double> dense(n * stride, 0.0);
    std::vector<std::vector<std::pair<std::size_t, double>>> sparse(n);
    for (std::size_t r = 0; r < n; ++r)
      for (std::size_t k = 0; k < cols; ++k) {
        if (rng.uniform() < 0.4) continue;  // the row leaves column k alone
        const double x = rng.uniform() < 0.1 ? rng.pick(specials) : rng.normal() * 1e3;
        dense[r * stride + k] = x;
        sparse[r].emplace_back(k, x);
      }
    std::vector<double> want(stride, 0.0), got(stride, 0.0);
    for (std::size_t r = 0; r < n; ++r) {
      if (counts[r] == 0) continue;
      const double w = counts[r];
      for (const auto& [k, x] : sparse[r]) want[k] += w * x;
    }
    detail::add_weighted_rows(counts.data(), dense.data(), n, stride, got.data());
    for (std::size_t k = 0; k < cols; ++k) {
      SCOPED_TRACE("trial " + std::to_string(trial) + ", column " + std::to_string(k));
      if (std::isnan(want[k])) EXPECT_TRUE(std::isnan(got[k]));
      else EXPECT_EQ(std::memcmp(&want[k], &got[k], sizeof(double)), 0) << want[k] << " vs " << got[k];
    }
  }
}

// bootstrap_mean answers a constant sample without drawing (every replicate is the same sum); the bounds must be
// those of the drawn replicates, bit for bit, for values whose repeated sum rounds (0.1, 1/3), signed zeros,
// infinities and NaN.
TEST(BootstrapMean, ConstantDataBoundsAreThoseOfTheDrawnReplicates) {
  auto drawn = [](const std::vector<double>& v, int resamples, std::string_view key) {
    Rng rng = Rng::keyed(7, "bootstrap", key);
    std::vector<double> means;
    for (int r = 0; r < resamples; ++r) {
      double s = 0;
      for (std::size_t i = 0; i < v.size(); ++i) s += rng.pick(v);
      means.push_back(s / static_cast<double>(v.size()));
    }
    return percentile_bounds(means);
  };
  auto same_bits = [](double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0 || (std::isnan(a) && std::isnan(b)); };
  for (const double c : std::vector<double>{0.0, -0.0, 0.1, 1.0 / 3.0, -2.7, 1e300, HUGE_VAL, -HUGE_VAL, std::nan("")})
    for (const std::size_t n : std::vector<std::size_t>{2, 3, 7, 150}) {
      SCOPED_TRACE(std::to_string(c) + " x " + std::to_string(n));
      const std::vector<double> v(n, c);
      const Interval iv = bootstrap_mean(v, 300, 7, "constant");
      const auto [lo, hi] = drawn(v, 300, "constant");
      EXPECT_TRUE(same_bits(iv.lo, lo)) << iv.lo << " vs " << lo;
      EXPECT_TRUE(same_bits(iv.hi, hi)) << iv.hi << " vs " << hi;
    }
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

// ---- joint bootstrap (docs/METRICS.md "Joint bootstrap") -------------------------------------------------------

/// A units x columns matrix (row-major) of normal values, with some cells absent (NaN) in the last column.
std::vector<double> joint_data(std::size_t units, std::size_t columns, std::uint64_t seed) {
  Rng rng = Rng::keyed(seed, "statistics_test", "joint");
  std::vector<double> v(units * columns);
  for (std::size_t s = 0; s < units; ++s)
    for (std::size_t j = 0; j < columns; ++j)
      v[s * columns + j] = (j == columns - 1 && s % 7 == 3) ? std::nan("") : 0.5 + 0.1 * static_cast<double>(j) + 0.2 * rng.normal();
  return v;
}

/// Brute-force oracle: the same keyed resamples, drawn one index at a time into a plain loop per column.
std::vector<Interval> joint_brute_force(const std::vector<double>& v, std::size_t columns, int resamples,
                                        std::uint64_t seed, const std::string& key) {
  const std::size_t units = v.size() / columns;
  std::vector<Interval> out(columns);
  std::vector<std::vector<double>> reps(columns);
  for (int b = 0; b < resamples; ++b) {
    Rng rng = Rng::keyed(seed, "bootstrap-joint", key, static_cast<std::uint64_t>(b));
    std::vector<std::uint32_t> counts(units);
    resample_counts(rng, counts);
    for (std::size_t j = 0; j < columns; ++j) {
      double sum = 0, n = 0;
      for (std::size_t s = 0; s < units; ++s) {
        const double x = v[s * columns + j];
        if (std::isnan(x)) continue;
        sum += counts[s] * x;
        n += counts[s];
      }
      if (n > 0) reps[j].push_back(sum / n);
    }
  }
  for (std::size_t j = 0; j < columns; ++j) {
    std::vector<double> present;
    for (std::size_t s = 0; s < units; ++s)
      if (!std::isnan(v[s * columns + j])) present.push_back(v[s * columns + j]);
    out[j].n = present.size();
    out[j].mean = mean(present);
    std::sort(reps[j].begin(), reps[j].end());
    const double b = static_cast<double>(reps[j].size());
    out[j].lo = reps[j][static_cast<std::size_t>(std::floor(0.025 * b))];
    out[j].hi = reps[j][static_cast<std::size_t>(std::ceil(0.975 * b)) - 1];
  }
  return out;
}

TEST(JointBootstrap, MatchesABruteForceOracleIncludingAbsentCells) {
  const std::size_t columns = 4;
  const auto v = joint_data(40, columns, 11);
  const auto got = joint_bootstrap_means(v, columns, 500, 7, "all");
  const auto want = joint_brute_force(v, columns, 500, 7, "all");
  ASSERT_EQ(got.size(), columns);
  for (std::size_t j = 0; j < columns; ++j) {
    EXPECT_EQ(got[j].n, want[j].n) << j;
    EXPECT_EQ(got[j].mean, want[j].mean) << j;  // the point estimate is the plain mean, bit for bit
    EXPECT_NEAR(got[j].lo, want[j].lo, 1e-12) << j;
    EXPECT_NEAR(got[j].hi, want[j].hi, 1e-12) << j;
  }
  EXPECT_EQ(got[columns - 1].n, 40u - 6u);  // units 3, 10, 17, 24, 31, 38 have no value there
}

TEST(JointBootstrap, ColumnsShareTheirResamplesSoAShiftedColumnHasAShiftedInterval) {
  // Column 1 = column 0 + 0.25 on every unit: under one joint resample its replicate is column 0's + 0.25, so the
  // intervals differ by exactly the shift (up to rounding). Independent resamples would not do that.
  std::vector<double> v;
  const auto base = normal_data(60, 3, 0.4, 0.2);
  for (double x : base) {
    v.push_back(x);
    v.push_back(x + 0.25);
  }
  const auto iv = joint_bootstrap_means(v, 2, 1000, 7, "shift");
  EXPECT_NEAR(iv[1].lo - iv[0].lo, 0.25, 1e-12);
  EXPECT_NEAR(iv[1].hi - iv[0].hi, 0.25, 1e-12);
  EXPECT_GT(iv[0].hi - iv[0].lo, 0.05);
}

TEST(JointBootstrap, TheSameAtOneAndTwoThreadsAndKeyedByScope) {
  const auto v = joint_data(120, 5, 5);
  std::vector<Interval> one, two;
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 1);
    one = joint_bootstrap_means(v, 5, 2000, 7, "all");
  }
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 2);
    two = joint_bootstrap_means(v, 5, 2000, 7, "all");
  }
  for (std::size_t j = 0; j < 5; ++j) {
    EXPECT_EQ(one[j].lo, two[j].lo);
    EXPECT_EQ(one[j].hi, two[j].hi);
  }
  const auto other = joint_bootstrap_means(v, 5, 2000, 7, "template=urban");
  EXPECT_NE(other[0].lo, one[0].lo);
}

TEST(JointBootstrap, DegenerateColumnsCollapseToTheirMean) {
  // One unit with a value, and a column with none: lo = hi = mean (n <= 1), and n = 0 gives 0.
  const double nan = std::nan("");
  const std::vector<double> v{1.0, nan, 0.5, nan, nan, 0.7, nan, nan, 0.9};
  const auto iv = joint_bootstrap_means(v, 3, 200, 7, "d");
  EXPECT_EQ(iv[0].n, 1u);
  EXPECT_EQ(iv[0].lo, 1.0);
  EXPECT_EQ(iv[0].hi, 1.0);
  EXPECT_EQ(iv[1].n, 0u);
  EXPECT_EQ(iv[1].mean, 0.0);
  EXPECT_EQ(iv[2].n, 3u);
  EXPECT_LT(iv[2].lo, iv[2].hi);
  EXPECT_TRUE(joint_bootstrap_means({}, 3, 200, 7, "empty").size() == 3);
}

TEST(JointBootstrap, HalfWidthMatchesNormalTheoryForN200) {
  // The same independent reference as bootstrap_mean's: 1.96 sd / sqrt(n), within 20%.
  for (std::uint64_t seed : {1, 2, 3}) {
    const auto v = normal_data(200, seed, 0.6, 0.15);
    const auto iv = joint_bootstrap_means(v, 1, 2000, 7, "normal-theory");
    const double reference = 1.96 * sample_sd(v) / std::sqrt(200.0);
    EXPECT_NEAR(iv[0].mean - iv[0].lo, reference, 0.2 * reference) << seed;
    EXPECT_NEAR(iv[0].hi - iv[0].mean, reference, 0.2 * reference) << seed;
  }
}

TEST(PercentileBounds, EqualTheOrderStatisticsOfAFullSortAtEverySize) {
  // Oracle: sort, drop NaN, take floor(.025 B) and ceil(.975 B) - 1. Sizes cover the two-heap path (short
  // tails) and the selection path (B > 5,000 has tails longer than the heaps), with ties and NaN.
  Rng rng = Rng::keyed(5, "statistics_test", "percentiles");
  for (std::size_t size : {1u, 2u, 3u, 39u, 40u, 41u, 200u, 2000u, 5119u, 5120u, 5200u, 9000u}) {
    std::vector<double> v(size);
    for (auto& x : v) x = rng.uniform() < 0.02 ? std::nan("") : std::round(rng.normal() * 50.0) / 10.0;
    std::vector<double> sorted;
    for (double x : v)
      if (!std::isnan(x)) sorted.push_back(x);
    std::sort(sorted.begin(), sorted.end());
    std::vector<double> work = v;
    const auto [lo, hi] = percentile_bounds(work);
    if (sorted.empty()) {
      EXPECT_TRUE(std::isnan(lo) && std::isnan(hi));
      continue;
    }
    const double b = static_cast<double>(sorted.size());
    const auto lo_i = std::min(static_cast<std::size_t>(std::floor(0.025 * b)), sorted.size() - 1);
    const auto hi_c = static_cast<std::size_t>(std::ceil(0.975 * b));
    const auto hi_i = hi_c == 0 ? 0 : std::min(hi_c - 1, sorted.size() - 1);
    EXPECT_EQ(lo, sorted[lo_i]) << size;
    EXPECT_EQ(hi, sorted[hi_i]) << size;
    std::vector<double> span_work = v;
    const auto [slo, shi] = percentile_bounds(std::span<double>(span_work));
    EXPECT_EQ(slo, lo) << size;
    EXPECT_EQ(shi, hi) << size;
  }
}

TEST(PercentileBounds, TheSampleBracketAgreesWithAFullSortOnEveryShapeOfData) {
  // The bracketing path (B >= 512, short tails) against the sort oracle on shapes that stress its sample:
  // continuous, heavy ties, ascending, descending, a constant, two values, one far outlier per tail, and NaN
  // placed where the sample does not look (odd positions), which must still be left out.
  Rng rng = Rng::keyed(5, "statistics_test", "percentile-bracket");
  int checked = 0;
  for (std::size_t size : {512u, 777u, 2000u, 4001u, 5120u})
    for (int shape = 0; shape < 8; ++shape)
      for (int trial = 0; trial < 20; ++trial) {
        std::vector<double> v(size);
        for (std::size_t i = 0; i < size; ++i) {
          const double z = rng.normal();
          switch (shape) {
            case 0: v[i] = z; break;
            case 1: v[i] = std::round(z * 2.0); break;
            case 2: v[i] = static_cast<double>(i) + 0.01 * z; break;
            case 3: v[i] = -static_cast<double>(i); break;
            case 4: v[i] = 0.25; break;
            case 5: v[i] = rng.uniform() < 0.5 ? 0.0 : 1.0; break;
            case 6: v[i] = z + (i == 7 ? 1e9 : i == 11 ? -1e9 : 0.0); break;
            default: v[i] = i % 2 == 1 && i % 97 == 3 ? std::nan("") : z; break;
          }
        }
        std::vector<double> sorted;
        for (double x : v)
          if (!std::isnan(x)) sorted.push_back(x);
        std::sort(sorted.begin(), sorted.end());
        const double b = static_cast<double>(sorted.size());
        const auto lo_i = static_cast<std::size_t>(std::floor(0.025 * b));
        const auto hi_i = static_cast<std::size_t>(std::ceil(0.975 * b)) - 1;
        const auto [lo, hi] = percentile_bounds(std::span<double>(v));
        ASSERT_EQ(lo, sorted[lo_i]) << "size " << size << " shape " << shape << " trial " << trial;
        ASSERT_EQ(hi, sorted[hi_i]) << "size " << size << " shape " << shape << " trial " << trial;
        ++checked;
      }
  EXPECT_EQ(checked, 5 * 8 * 20);
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
