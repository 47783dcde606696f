#include "advplan/metrics/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include "advplan/core/random.hpp"

namespace advplan {

double mean(std::span<const double> v) {
  if (v.empty()) return 0.0;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

std::pair<double, double> percentile_bounds(std::vector<double>& means) {
  if (means.empty()) return {std::nan(""), std::nan("")};
  const double b = static_cast<double>(means.size());
  // Order statistics by selection (the full sort is not needed).
  const auto lo_i = std::min(static_cast<std::size_t>(std::floor(0.025 * b)), means.size() - 1);
  auto hi_i = static_cast<std::size_t>(std::ceil(0.975 * b));
  hi_i = hi_i == 0 ? 0 : std::min(hi_i - 1, means.size() - 1);
  std::nth_element(means.begin(), means.begin() + static_cast<std::ptrdiff_t>(hi_i), means.end());
  const double hi = means[hi_i];
  std::nth_element(means.begin(), means.begin() + static_cast<std::ptrdiff_t>(lo_i), means.begin() + static_cast<std::ptrdiff_t>(hi_i));
  return {means[lo_i], hi};
}

void resample_counts(Rng& rng, std::vector<std::uint32_t>& counts) {
  const auto n = static_cast<std::int64_t>(counts.size());
  std::fill(counts.begin(), counts.end(), 0U);
  for (std::int64_t i = 0; i < n; ++i) ++counts[static_cast<std::size_t>(rng.uniform_int(0, n - 1))];
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
  std::tie(out.lo, out.hi) = percentile_bounds(means);
  return out;
}

Interval bootstrap_paired_difference(std::span<const double> a, std::span<const double> b, int resamples,
                                     std::uint64_t seed, std::string_view key) {
  std::vector<double> d(std::min(a.size(), b.size()));
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = a[i] - b[i];
  return bootstrap_mean(d, resamples, seed, key);
}

double sign_flip_p_value(std::span<const double> d, int resamples, std::uint64_t seed, std::string_view key) {
  const std::size_t n = d.size();
  double total = 0;
  for (double x : d) total += x;
  const double observed = std::abs(total);
  if (n == 0 || observed == 0.0) return 1.0;
  double scale = 0;
  for (double x : d) scale += std::abs(x);
  const double threshold = observed - 1e-12 * scale;  // sums equal up to rounding count as ties
  if (n <= kSignFlipExactMax) {
    // Exact: every sign vector, enumerated as the bits of a counter.
    const std::uint64_t count = std::uint64_t{1} << n;
    std::uint64_t extreme = 0;
    for (std::uint64_t mask = 0; mask < count; ++mask) {
      double s = 0;
      for (std::size_t i = 0; i < n; ++i) s += (mask >> i) & 1U ? -d[i] : d[i];
      extreme += std::abs(s) >= threshold ? 1 : 0;
    }
    return static_cast<double>(extreme) / static_cast<double>(count);
  }
  Rng rng = Rng::keyed(seed, "signflip", key);
  std::uint64_t extreme = 0;
  for (int b = 0; b < resamples; ++b) {
    double s = 0;
    std::uint64_t bits = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (i % 64 == 0) bits = rng.next_u64();
      s += (bits >> (i % 64)) & 1U ? -d[i] : d[i];
    }
    extreme += std::abs(s) >= threshold ? 1 : 0;
  }
  return (1.0 + static_cast<double>(extreme)) / (1.0 + static_cast<double>(std::max(resamples, 0)));
}

std::vector<double> holm_adjust(std::span<const double> p) {
  const std::size_t m = p.size();
  std::vector<std::size_t> order(m);
  for (std::size_t i = 0; i < m; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  std::vector<double> out(m);
  double running = 0;
  for (std::size_t r = 0; r < m; ++r) {
    const double adj = std::min(1.0, static_cast<double>(m - r) * p[order[r]]);
    running = std::max(running, adj);  // step-down: adjusted p-values never decrease with rank
    out[order[r]] = running;
  }
  return out;
}

}  // namespace advplan
