#include "advplan/stats/cluster.hpp"

#include <boost/math/distributions/students_t.hpp>
#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "advplan/core/random.hpp"
#include "advplan/stats/statistics.hpp"

namespace advplan {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Per cluster: its size n_g and the sum S_g of its residuals about the overall mean. For an intercept-only model
/// these are all CR2 needs: A_g e_g sums to S_g / sqrt(1 - n_g / n).
struct ClusterSums {
  std::vector<double> size, sum;
  double n = 0;
};

/// The CR2 variance of the mean from per-cluster residual sums: (1 / n^2) sum_g S_g^2 / (1 - n_g / n).
double cr2_variance(const ClusterSums& c, std::span<const double> sums) {
  double v = 0;
  for (std::size_t g = 0; g < sums.size(); ++g) v += sums[g] * sums[g] / (1 - c.size[g] / c.n);
  return v / (c.n * c.n);
}

/// Satterthwaite's degrees of freedom under the working model of independent, equal-variance errors:
/// (sum_g p_g'p_g)^2 / sum_{g,h} (p_g'p_h)^2 with p_g'p_h = c_g c_h (delta_gh n_g - n_g n_h / n) / n^2 and
/// c_g^2 = 1 / (1 - n_g / n).
double satterthwaite_df(const ClusterSums& c) {
  const std::size_t k = c.size.size();
  double trace = 0, frob = 0;
  for (std::size_t g = 0; g < k; ++g)
    for (std::size_t h = 0; h < k; ++h) {
      const double cg = 1 / std::sqrt(1 - c.size[g] / c.n), ch = 1 / std::sqrt(1 - c.size[h] / c.n);
      const double p = cg * ch * ((g == h ? c.size[g] : 0.0) - c.size[g] * c.size[h] / c.n) / (c.n * c.n);
      if (g == h) trace += p;
      frob += p * p;
    }
  return trace * trace / frob;
}

/// Webb's six-point weights: -sqrt(3/2), -1, -sqrt(1/2), sqrt(1/2), 1, sqrt(3/2), each with probability 1/6.
double webb(std::size_t i) {
  static const double w[6] = {-std::sqrt(1.5), -1.0, -std::sqrt(0.5), std::sqrt(0.5), 1.0, std::sqrt(1.5)};
  return w[i];
}

/// One wild draw's t statistic: y* = mean + w_g e_i, so the draw's mean moves by delta = sum_g w_g S_g / n and its
/// residual sums are w_g S_g - n_g delta.
double wild_t(const ClusterSums& c, std::span<const double> w, std::vector<double>& scratch) {
  double delta = 0;
  for (std::size_t g = 0; g < w.size(); ++g) delta += w[g] * c.sum[g];
  delta /= c.n;
  for (std::size_t g = 0; g < w.size(); ++g) scratch[g] = w[g] * c.sum[g] - c.size[g] * delta;
  const double v = cr2_variance(c, scratch);
  return v > 0 ? delta / std::sqrt(v) : kNaN;
}

/// The t statistics of every weight vector (6^G of them when G <= 6), or of `resamples` keyed draws.
std::vector<double> wild_ts(const ClusterSums& c, int resamples, std::uint64_t seed, std::string_view key) {
  const std::size_t k = c.size.size();
  std::vector<double> w(k), scratch(k), ts;
  if (k <= 6) {
    std::size_t total = 1;
    for (std::size_t g = 0; g < k; ++g) total *= 6;
    for (std::size_t code = 0; code < total; ++code) {
      std::size_t rest = code;
      for (std::size_t g = 0; g < k; ++g, rest /= 6) w[g] = webb(rest % 6);
      ts.push_back(wild_t(c, w, scratch));
    }
    return ts;
  }
  Rng rng = Rng::keyed(seed, "wild", key);
  for (int b = 0; b < resamples; ++b) {
    for (std::size_t g = 0; g < k; ++g) w[g] = webb(static_cast<std::size_t>(rng.uniform_int(0, 5)));
    ts.push_back(wild_t(c, w, scratch));
  }
  return ts;
}

ClusterSums cluster_sums(std::span<const double> y, std::span<const std::size_t> cluster, double mean) {
  ClusterSums c;
  c.n = static_cast<double>(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (cluster[i] >= c.size.size()) {
      c.size.resize(cluster[i] + 1, 0.0);
      c.sum.resize(cluster[i] + 1, 0.0);
    }
    c.size[cluster[i]] += 1;
    c.sum[cluster[i]] += y[i] - mean;
  }
  return c;
}

}  // namespace

ClusteredMean clustered_mean(std::span<const double> y, std::span<const std::size_t> cluster, int resamples,
                             std::uint64_t seed, std::string_view key) {
  ClusteredMean out;
  out.n = y.size();
  out.mean = mean(y);
  const ClusterSums c = cluster_sums(y, cluster, out.mean);
  out.clusters = c.size.size();
  out.se = out.df = out.t_lo = out.t_hi = out.wild_lo = out.wild_hi = kNaN;
  if (out.clusters < 2) return out;
  out.se = std::sqrt(cr2_variance(c, c.sum));
  out.df = satterthwaite_df(c);
  const double q = boost::math::quantile(boost::math::complement(boost::math::students_t(out.df), 0.025));
  out.t_lo = out.mean - q * out.se;
  out.t_hi = out.mean + q * out.se;
  if (out.clusters < 3) return out;  // two clusters: every other weight vector cancels, the bootstrap is empty
  std::vector<double> ts = wild_ts(c, resamples, seed, key);
  out.wild_draws = static_cast<std::size_t>(std::count_if(ts.begin(), ts.end(), [](double t) { return !std::isnan(t); }));
  const auto [lo, hi] = percentile_bounds(ts);
  out.wild_lo = out.mean - hi * out.se;
  out.wild_hi = out.mean - lo * out.se;
  return out;
}

std::string few_clusters_note(std::size_t fewest) {
  if (fewest < 2) return "With fewer than two templates there is no clustered interval.";
  if (fewest <= 10)
    return fmt::format("With {} templates the intervals are wide: a claim beyond these templates rests on {} "
                       "independent units.",
                       fewest, fewest);
  return fmt::format("The intervals treat each of at least {} templates as one independent unit.", fewest);
}

}  // namespace advplan
