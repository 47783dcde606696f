#pragma once
// Percentile-bootstrap intervals over scenarios (docs/METRICS.md "Statistics"). Resamples come from a stream
// keyed by (bootstrap seed, key), so the same CSV rows and seed give the same interval in `advplan run` and
// `advplan tables`.
#include <cstdint>
#include <span>
#include <utility>
#include <string_view>
#include <vector>

namespace advplan {

class Rng;

struct Interval {
  double mean = 0, lo = 0, hi = 0;
  std::size_t n = 0;
};

double mean(std::span<const double> v);

/// Mean with a percentile-bootstrap 95% interval: B resamples of size n with replacement; the interval is the
/// 2.5th and 97.5th percentiles of the resample means (order statistics at floor(.025 B) and ceil(.975 B) - 1).
Interval bootstrap_mean(std::span<const double> v, int resamples, std::uint64_t seed, std::string_view key);
/// Paired: mean of a_i - b_i with the pairs resampled together.
Interval bootstrap_paired_difference(std::span<const double> a, std::span<const double> b, int resamples,
                                     std::uint64_t seed, std::string_view key);

/// The percentile interval of bootstrap replicates (reordered in place): the order statistics at
/// floor(.025 B) and ceil(.975 B) - 1, as bootstrap_mean uses. Returns {lo, hi}; {NaN, NaN} when empty.
std::pair<double, double> percentile_bounds(std::vector<double>& replicates);

/// One bootstrap resample of n rows as multiplicities: counts[i] = how often row i was drawn (n uniform draws).
void resample_counts(Rng& rng, std::vector<std::uint32_t>& counts);

/// Two-sided sign-flip (paired permutation) test of "the paired differences d are centred on 0", statistic
/// |mean d|. Exact over all 2^n sign vectors when n <= kSignFlipExactMax, otherwise Monte Carlo with `resamples`
/// random sign vectors from the stream keyed (seed, "signflip", key), p = (1 + #{|T*| >= |T|}) / (resamples + 1).
/// p = 1 when n = 0 or every difference is 0. Ties count with a relative tolerance of 1e-12.
double sign_flip_p_value(std::span<const double> d, int resamples, std::uint64_t seed, std::string_view key);
inline constexpr std::size_t kSignFlipExactMax = 16;

/// Holm's step-down adjustment of a family of p-values (same order as given), each capped at 1.
std::vector<double> holm_adjust(std::span<const double> p);

}  // namespace advplan
