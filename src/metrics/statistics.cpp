#include "advplan/metrics/statistics.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <Eigen/Core>
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
  // NaN replicates (a statistic undefined on some resample) are left out; selection needs a strict weak order.
  means.erase(std::remove_if(means.begin(), means.end(), [](double v) { return std::isnan(v); }), means.end());
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

std::vector<Interval> joint_bootstrap_means(std::span<const double> values, std::size_t columns, int resamples,
                                            std::uint64_t seed, std::string_view key) {
  using Array = Eigen::Array<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const std::size_t units = columns == 0 ? 0 : values.size() / columns;
  const auto n = static_cast<Eigen::Index>(units), m = static_cast<Eigen::Index>(columns);
  std::vector<Interval> out(columns);
  if (columns == 0) return out;
  // Values with absent cells as 0, and the presence indicator: replicate sums and counts are then two
  // count-weighted row sums.
  Array x(n, m), present(n, m);
  for (Eigen::Index s = 0; s < n; ++s)
    for (Eigen::Index j = 0; j < m; ++j) {
      const double v = values[static_cast<std::size_t>(s * m + j)];
      const bool ok = !std::isnan(v);
      x(s, j) = ok ? v : 0.0;
      present(s, j) = ok ? 1.0 : 0.0;
    }
  bool any_interval = false;
  for (std::size_t j = 0; j < columns; ++j) {
    Interval& i = out[j];
    double sum = 0;
    for (std::size_t s = 0; s < units; ++s) {
      const double v = values[s * columns + j];
      if (std::isnan(v)) continue;
      sum += v;
      ++i.n;
    }
    i.mean = i.n == 0 ? 0.0 : sum / static_cast<double>(i.n);
    i.lo = i.hi = i.mean;
    any_interval = any_interval || i.n > 1;
  }
  if (!any_interval || resamples < 1 || units == 0) return out;
  // Replicates: one row per resample. Each resample's multiset is drawn once and applied to every column; the
  // sums run over units in a fixed order (coefficient-wise, no blocked product), so the bits do not depend on
  // the machine or the thread count.
  const auto b_count = static_cast<Eigen::Index>(resamples);
  Array replicate(b_count, m);
  tbb::parallel_for(tbb::blocked_range<Eigen::Index>(0, b_count, 16), [&](const tbb::blocked_range<Eigen::Index>& r) {
    std::vector<std::uint32_t> counts(units);
    Eigen::Array<double, 1, Eigen::Dynamic> sums(m), drawn(m);
    for (Eigen::Index b = r.begin(); b != r.end(); ++b) {
      Rng rng = Rng::keyed(seed, "bootstrap-joint", key, static_cast<std::uint64_t>(b));
      resample_counts(rng, counts);
      sums.setZero();
      drawn.setZero();
      for (Eigen::Index s = 0; s < n; ++s) {
        const std::uint32_t c = counts[static_cast<std::size_t>(s)];
        if (c == 0) continue;
        sums += static_cast<double>(c) * x.row(s);
        drawn += static_cast<double>(c) * present.row(s);
      }
      replicate.row(b) = (drawn > 0).select(sums / drawn, std::nan(""));
    }
  });
  tbb::parallel_for(std::size_t{0}, columns, [&](std::size_t j) {
    Interval& i = out[j];
    if (i.n <= 1) return;
    std::vector<double> col(static_cast<std::size_t>(b_count));
    for (Eigen::Index b = 0; b < b_count; ++b) col[static_cast<std::size_t>(b)] = replicate(b, static_cast<Eigen::Index>(j));
    std::tie(i.lo, i.hi) = percentile_bounds(col);
  });
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
