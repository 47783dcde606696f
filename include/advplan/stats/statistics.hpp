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

/// The percentile bootstrap's settings (docs/METRICS.md "Statistics"): resamples per interval and the seed of the
/// keyed resample streams.
struct BootstrapSettings {
  int resamples = 2000;
  std::uint64_t seed = 7;
};

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

/// Joint percentile bootstrap over units (docs/METRICS.md "Joint bootstrap"). `values` is a units x columns matrix,
/// row-major, NaN where a unit has no value in a column. Resample b draws n = units indices with replacement from
/// Rng::keyed(seed, "bootstrap-joint", key, b), once for every column, as multiplicities c_s; column j's replicate
/// is sum_s c_s x_sj / sum_s c_s [x_sj present] (NaN when none of its units was drawn, and then left out). Column
/// j's interval has the mean and n of its present values (in unit order) and the percentile bounds of its
/// replicates; lo = hi = mean when n <= 1 or resamples < 1. Resamples are keyed by b, so the result does not
/// depend on the thread count. Every column's replicates come from the same resamples, so intervals of different
/// conditions and metrics are paired.
std::vector<Interval> joint_bootstrap_means(std::span<const double> values, std::size_t columns, int resamples,
                                            std::uint64_t seed, std::string_view key);
/// The joint bootstrap's replicates themselves, from the same resamples as joint_bootstrap_means with the same
/// arguments (bit for bit): a resamples x columns matrix, column-major (column j's replicates are
/// [j * resamples, (j + 1) * resamples)), NaN where none of the column's units was drawn. For statistics of
/// several columns at once within a resample: differences, the argmax.
std::vector<double> joint_bootstrap_replicates(std::span<const double> values, std::size_t columns, int resamples,
                                               std::uint64_t seed, std::string_view key);

/// The percentile interval of bootstrap replicates (reordered in place): the order statistics at
/// floor(.025 B) and ceil(.975 B) - 1, as bootstrap_mean uses, B counting the replicates that are not NaN (NaN
/// ones are removed). Returns {lo, hi}; {NaN, NaN} when none is left.
std::pair<double, double> percentile_bounds(std::vector<double>& replicates);
/// The same on a span, in place (NaN replicates are moved past the end of the part that is selected from).
std::pair<double, double> percentile_bounds(std::span<double> replicates);

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
