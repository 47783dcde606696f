#pragma once
// Cluster-robust inference for a mean (docs/METRICS.md "Template-clustered intervals"): the CR2 standard error
// with Satterthwaite degrees of freedom (Bell and McCaffrey 2002; as R's clubSandwich computes it for an
// intercept-only linear model), and a wild cluster bootstrap-t with Webb's six-point weights.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace advplan {

struct ClusteredMean {
  double mean = 0;
  std::size_t n = 0, clusters = 0;
  double se = 0;      ///< CR2 standard error of the mean; NaN with fewer than two clusters
  double df = 0;      ///< Satterthwaite degrees of freedom
  double t_lo = 0, t_hi = 0;        ///< mean -/+ t_{df, .975} se
  double wild_lo = 0, wild_hi = 0;  ///< wild cluster bootstrap-t interval (Webb weights)
  std::size_t wild_draws = 0;       ///< weight vectors kept (t* defined) of all 6^G when G <= 6, else of B
};

/// `y` with the cluster index of each value (0..G-1, every index present). Deterministic: the wild bootstrap
/// enumerates all 6^G weight vectors when G <= 6, and otherwise draws `resamples` of them from the keyed stream
/// Rng::keyed(seed, "wild", key). The wild interval is NaN with fewer than three clusters, and the CR2 values with
/// fewer than two.
ClusteredMean clustered_mean(std::span<const double> y, std::span<const std::size_t> cluster, int resamples,
                             std::uint64_t seed, std::string_view key);

/// The sentence a clustered table carries about its fewest clusters G: none below two, "wide" up to 10, else the
/// count of independent units.
std::string few_clusters_note(std::size_t fewest);

}  // namespace advplan
