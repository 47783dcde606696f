#pragma once
// The plain k* search as it was before issue 52 (docs/METRICS.md "Budget extrapolation", docs/DECISIONS.md): every
// mean curve scanned in increasing k over k_star_grid(), each column from the plain E[M_k]
// (stats/tail_fit_reference.hpp). Kept as the reference that the bisection of src/sweeps/extrapolation.cpp is tested
// (tests/sweeps/extrapolation_test.cpp) and benchmarked (bench/bench_sweeps.cpp) against; not part of the library.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "advplan/core/random.hpp"
#include "advplan/stats/statistics.hpp"
#include "advplan/sweeps/extrapolation.hpp"
#include "stats/tail_fit_reference.hpp"

namespace advplan::reference {

/// The plain k* search: every curve scanned in increasing k with reference::expected_max, columns computed as the
/// scan reaches them, the multiplicities drawn as the joint bootstrap of scope "extrapolation" draws them.
inline KStarSearch scanned_k_star(const ExtrapolationFit& fit, const BootstrapSettings& bs, double level) {
  const std::size_t units = fit.scenarios.size(), B = units > 1 && bs.resamples >= 1 ? static_cast<std::size_t>(bs.resamples) : 0;
  const std::uint64_t prefix = Rng::key_prefix(bs.seed, "bootstrap-joint", "extrapolation");
  std::vector<std::vector<std::uint32_t>> counts(B, std::vector<std::uint32_t>(units));
  for (std::size_t b = 0; b < B; ++b) {
    Rng rng = Rng::keyed_at(prefix, b);
    resample_counts(rng, counts[b]);
  }
  KStarSearch out;
  out.replicates.assign(B, std::numeric_limits<double>::infinity());
  std::vector<double> column(units);
  for (int k : k_star_grid()) {
    for (std::size_t s = 0; s < units; ++s)
      column[s] = (1 + fit.scenarios[s].blue_quality - reference::expected_max(fit.scenarios[s].model, k)) / 2;
    double sum = 0;
    for (double v : column) sum += v;
    if (std::isinf(out.k_star) && sum / static_cast<double>(units) < level) out.k_star = k;
    bool open = std::isinf(out.k_star);
    for (std::size_t b = 0; b < B; ++b) {
      if (!std::isinf(out.replicates[b])) continue;
      double ws = 0, w = 0;
      for (std::size_t s = 0; s < units; ++s) ws += counts[b][s] * column[s], w += counts[b][s];
      if (ws / w < level) out.replicates[b] = k;
      open = open || std::isinf(out.replicates[b]);
    }
    if (!open) break;
  }
  return out;
}

}  // namespace advplan::reference
