#include "advplan/stats/power.hpp"

#include <boost/math/distributions/non_central_t.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>

namespace advplan {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

double paired_t_power(double effect_size, std::size_t n, double alpha) {
  if (n < 2 || !(alpha > 0 && alpha < 1) || !std::isfinite(effect_size)) return kNaN;
  const auto df = static_cast<double>(n - 1);
  try {
    const double crit = boost::math::quantile(boost::math::complement(boost::math::students_t(df), alpha / 2));
    const double nc = effect_size * std::sqrt(static_cast<double>(n));
    const boost::math::non_central_t dist(df, nc);
    return boost::math::cdf(boost::math::complement(dist, crit)) + boost::math::cdf(dist, -crit);
  } catch (const std::exception&) {  // Boost's series past its range (a noncentrality beyond about 65,000)
    return kNaN;
  }
}

double detectable_effect_size(std::size_t n, double alpha, double power) {
  if (n < 2 || !(alpha > 0 && alpha < 1) || !(power > alpha && power < 1)) return kNaN;
  // Power rises monotonically in d >= 0 from alpha. The bracket [0, hi] doubles hi from 1 until it holds the root
  // (at n = 2 and a Holm level of 1e-4 the root is near 6,000); then bisection to a fixed step count: no
  // tolerance, no CPU-dependent stopping. A power Boost cannot evaluate (NaN) counts as below the target, so a
  // root beyond its range gives +inf: no detectable effect to state.
  double lo = 0, hi = 1;
  while (!(paired_t_power(hi, n, alpha) >= power)) {
    if (hi > 1e12) return std::numeric_limits<double>::infinity();
    lo = hi;
    hi *= 2;
  }
  for (int i = 0; i < 200 && lo < hi; ++i) {
    const double mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    (!(paired_t_power(mid, n, alpha) >= power) ? lo : hi) = mid;
  }
  return std::isnan(paired_t_power(hi, n, alpha)) ? std::numeric_limits<double>::infinity() : hi;
}

double minimum_detectable_effect(std::span<const double> d, double alpha, double power) {
  const std::size_t n = d.size();
  if (n < 2) return kNaN;
  if (std::all_of(d.begin(), d.end(), [&](double x) { return x == d[0]; })) return 0.0;  // no spread, no rounding
  double mean = 0;
  for (double x : d) mean += x;
  mean /= static_cast<double>(n);
  double ss = 0;
  for (double x : d) ss += (x - mean) * (x - mean);
  const double sd = std::sqrt(ss / static_cast<double>(n - 1));
  return detectable_effect_size(n, alpha, power) * sd;
}

}  // namespace advplan
