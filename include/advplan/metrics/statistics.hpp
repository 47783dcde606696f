#pragma once
// Percentile-bootstrap intervals over scenarios (docs/METRICS.md "Statistics"). Resamples come from a stream
// keyed by (bootstrap seed, key), so the same CSV rows and seed give the same interval in `advplan run` and
// `advplan tables`.
#include <cstdint>
#include <span>
#include <string_view>

namespace advplan {

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

}  // namespace advplan
