#include "advplan/metrics/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "advplan/core/random.hpp"

namespace advplan {

double mean(std::span<const double> v) {
  if (v.empty()) return 0.0;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

Interval bootstrap_mean(std::span<const double> v, int resamples, std::uint64_t seed, std::string_view key) {
  Interval out;
  out.n = v.size();
  out.mean = mean(v);
  if (v.size() <= 1 || resamples < 1) {
    out.lo = out.hi = out.mean;
    return out;
  }
  Rng rng = Rng::keyed(seed, "bootstrap", key);
  const auto n = static_cast<std::int64_t>(v.size());
  std::vector<double> means(static_cast<std::size_t>(resamples));
  for (auto& m : means) {
    double s = 0;
    for (std::int64_t i = 0; i < n; ++i) s += rng.pick(v);
    m = s / static_cast<double>(n);
  }
  // Order statistics by selection (the full sort is not needed).
  const auto lo_i = std::min(static_cast<std::size_t>(std::floor(0.025 * resamples)), means.size() - 1);
  auto hi_i = static_cast<std::size_t>(std::ceil(0.975 * resamples));
  hi_i = hi_i == 0 ? 0 : std::min(hi_i - 1, means.size() - 1);
  std::nth_element(means.begin(), means.begin() + static_cast<std::ptrdiff_t>(hi_i), means.end());
  out.hi = means[hi_i];
  std::nth_element(means.begin(), means.begin() + static_cast<std::ptrdiff_t>(lo_i), means.begin() + static_cast<std::ptrdiff_t>(hi_i));
  out.lo = means[lo_i];
  return out;
}

Interval bootstrap_paired_difference(std::span<const double> a, std::span<const double> b, int resamples,
                                     std::uint64_t seed, std::string_view key) {
  std::vector<double> d(std::min(a.size(), b.size()));
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = a[i] - b[i];
  return bootstrap_mean(d, resamples, seed, key);
}

}  // namespace advplan
