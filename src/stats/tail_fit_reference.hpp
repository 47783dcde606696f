#pragma once
// The plain budget-extrapolation algorithms as they were before issue 52 (docs/METRICS.md "Budget extrapolation",
// docs/DECISIONS.md): the GPD fits by a 241-shape grid with 64 halvings per shape and 120 golden-section steps, and
// E[M_k] by 512-panel Simpson evaluated from scratch for each k. Kept, unchanged, as the reference the faster
// src/stats/tail_fit.cpp is tested (tests/stats/tail_fit_test.cpp) and benchmarked (bench/bench_sweeps.cpp)
// against; not part of the library.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <span>
#include <utility>

#include "advplan/stats/tail_fit.hpp"
#include "core/det_math.hpp"

namespace advplan::reference {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr int kGridShapes = 241;    // shapes on [kGpdXiMin, kGpdXiMax], 0.0125 apart
inline constexpr int kBisections = 64;     // per grid shape (theta to ~2^-64 of its bracket)
inline constexpr int kBracketSteps = 200;  // the bracket of the shape range's ends
inline constexpr int kGoldenSteps = 120;   // the golden-section refinement
inline constexpr int kSimpsonPanels = 512;  // even: the GPD part of E[max]

/// sum log(1 + theta y_i), the profile's one pass over the data.
inline double sum_log1p(std::span<const double> y, double theta) {
  double s = 0;
  for (double v : y) s += det::log1p(theta * v);
  return s;
}

/// xi(theta) = mean log(1 + theta y_i).
inline double xi_of(std::span<const double> y, double theta) { return sum_log1p(y, theta) / static_cast<double>(y.size()); }

/// Grimshaw's profile log-likelihood l*(theta) = -m (log(xi / theta) + 1 + xi), xi = xi(theta); at theta = 0 the
/// exponential's -m (log mean(y) + 1).
inline double profile(std::span<const double> y, double theta, double mean_y) {
  const double m = static_cast<double>(y.size());
  if (theta == 0) return -m * (det::log(mean_y) + 1);
  const double xi = xi_of(y, theta);
  const double ratio = xi / theta;
  if (!(ratio > 0)) return -kInf;
  return -m * (det::log(ratio) + 1 + xi);
}

/// The theta in [a, b] at which the increasing xi(theta) reaches `target` (xi(a) <= target <= xi(b)): kBisections
/// halvings, returning the end with xi >= target; a and b stay inside the domain.
inline double theta_at(std::span<const double> y, double target, double a, double b) {
  for (int i = 0; i < kBisections; ++i) {
    const double mid = a + (b - a) / 2;
    if (xi_of(y, mid) < target)
      a = mid;
    else
      b = mid;
  }
  return b;
}

/// GPD survival S(z) for z >= 0: (1 + xi z / sigma)^(-1/xi), exp(-z / sigma) at xi = 0; 0 past the endpoint.
inline double gpd_survival(double z, double xi, double sigma) {
  if (z <= 0) return 1;
  const double w = xi * z / sigma;
  if (xi == 0) return det::exp(-z / sigma);
  if (w <= -1) return 0;
  return det::exp(-det::log1p(w) / xi);
}

/// 1 - (1 - t)^k for t in [0, 1], without cancellation near t = 0.
inline double one_minus_pow(double t, double k) {
  if (t <= 0) return 0;
  if (t >= 1) return 1;
  return -det::expm1(k * det::log1p(-t));
}

inline GpdFit fit_gpd(std::span<const double> y) {
  GpdFit out;
  if (y.size() < 2) return out;
  double y_max = 0, sum = 0;
  for (double v : y) {
    if (!std::isfinite(v) || v < 0) return out;
    y_max = std::max(y_max, v);
    sum += v;
  }
  if (!(y_max > 0)) return out;
  const double mean_y = sum / static_cast<double>(y.size());

  // The shape range's ends in theta: xi(theta_lo) = kGpdXiMin on (-1/y_max, 0), xi(theta_hi) = kGpdXiMax.
  double theta_lo = 0;
  {
    double a = -1 / y_max, b = 0;  // xi(a) = -inf, xi(b) = 0
    for (int i = 0; i < kBracketSteps; ++i) {
      const double mid = a + (b - a) / 2;
      if (mid <= a || mid >= b) break;
      if (xi_of(y, mid) < kGpdXiMin)
        a = mid;
      else
        b = mid;
    }
    theta_lo = b;
  }
  double theta_hi = 1 / y_max;
  {
    double a = 0;
    int steps = 0;
    while (xi_of(y, theta_hi) < kGpdXiMax && steps++ < 1000) {
      a = theta_hi;
      theta_hi *= 2;
    }
    theta_hi = theta_at(y, kGpdXiMax, a, theta_hi);
  }

  // The grid: shape j's theta and profile value.
  std::array<double, kGridShapes> thetas{}, ls{};
  for (int j = 0; j < kGridShapes; ++j) {
    const double target = kGpdXiMin + (kGpdXiMax - kGpdXiMin) * j / (kGridShapes - 1);
    double theta;
    if (j == 0)
      theta = theta_lo;
    else if (j == kGridShapes - 1)
      theta = theta_hi;
    else if (target == 0)
      theta = 0;
    else
      theta = target < 0 ? theta_at(y, target, theta_lo, 0) : theta_at(y, target, 0, theta_hi);
    thetas[j] = theta;
    ls[j] = profile(y, theta, mean_y);
  }
  // Golden section on [a, b], fixed steps: the theta of the larger end value and that value.
  auto golden = [&](double a, double b) {
    const double g = (std::sqrt(5.0) - 1) / 2;
    double c = b - g * (b - a), d = a + g * (b - a);
    double fc = profile(y, c, mean_y), fd = profile(y, d, mean_y);
    for (int i = 0; i < kGoldenSteps; ++i) {
      if (fc >= fd) {
        b = d;
        d = c;
        fd = fc;
        c = b - g * (b - a);
        fc = profile(y, c, mean_y);
      } else {
        a = c;
        c = d;
        fc = fd;
        d = a + g * (b - a);
        fd = profile(y, d, mean_y);
      }
    }
    return fc >= fd ? std::make_pair(c, fc) : std::make_pair(d, fd);
  };
  // The largest interior local maximum of the profile (a stationary point, as Grimshaw's algorithm finds): close to
  // xi = -1 the likelihood is dominated by the largest exceedance and rises without bound below it, so an end of
  // the range is taken only when the profile has no interior maximum.
  double theta = 0, best_l = -kInf;
  for (int j = 1; j + 1 < kGridShapes; ++j) {
    if (!(ls[j] >= ls[j - 1] && ls[j] >= ls[j + 1]) || !std::isfinite(ls[j])) continue;
    auto [t, l] = golden(thetas[j - 1], thetas[j + 1]);
    if (!(l >= ls[j])) t = thetas[j], l = ls[j];
    if (l > best_l) theta = t, best_l = l;
  }
  if (!std::isfinite(best_l)) {
    const int j = ls[0] >= ls[kGridShapes - 1] ? 0 : kGridShapes - 1;
    if (!std::isfinite(ls[j])) return out;
    theta = thetas[j];
  }

  out.xi = theta == 0 ? 0.0 : xi_of(y, theta);
  out.sigma = theta == 0 ? mean_y : out.xi / theta;
  out.loglik = gpd_loglik(y, out.xi, out.sigma);
  out.ok = std::isfinite(out.loglik) && out.sigma > 0;
  return out;
}

/// For a fixed shape xi != 0, the scale that maximises l(xi, .): the score in sigma vanishes where
/// mean(theta y_i / (1 + theta y_i)) = xi / (1 + xi), theta = xi / sigma; the left side increases with theta, so
/// kBisections halvings find it (on (-1/y_max, 0) for xi < 0, on (0, inf) for xi > 0).
inline double sigma_at(std::span<const double> y, double xi, double y_max, double mean_y) {
  if (xi == 0) return mean_y;
  const double target = xi / (1 + xi);
  auto h = [&](double theta) {
    double s = 0;
    for (double v : y) s += theta * v / (1 + theta * v);
    return s / static_cast<double>(y.size());
  };
  double a, b;
  if (xi < 0) {
    a = -1 / y_max;
    b = 0;
  } else {
    a = 0;
    b = 1 / y_max;
    for (int i = 0; i < 1000 && h(b) < target; ++i) {
      a = b;
      b *= 2;
    }
  }
  for (int i = 0; i < kBisections; ++i) {
    const double mid = a + (b - a) / 2;
    if (mid <= a || mid >= b) break;
    if (h(mid) < target)
      a = mid;
    else
      b = mid;
  }
  const double theta = xi < 0 ? a + (b - a) / 2 : b;
  return xi / theta;
}

/// The penalised profile: max over sigma of l(xi, sigma), minus lambda (1 / (1 + xi) - 1) when xi < 0.
inline double penalised_profile(std::span<const double> y, double xi, double lambda, double y_max, double mean_y,
                         double* sigma_out) {
  const double sigma = sigma_at(y, xi, y_max, mean_y);
  if (sigma_out != nullptr) *sigma_out = sigma;
  const double l = gpd_loglik(y, xi, sigma);
  return xi < 0 ? l - lambda * (1 / (1 + xi) - 1) : l;
}

inline GpdFit fit_gpd_penalised(std::span<const double> y, double lambda) {
  GpdFit out;
  if (y.size() < 2 || !(lambda >= 0)) return out;
  double y_max = 0, sum = 0;
  for (double v : y) {
    if (!std::isfinite(v) || v < 0) return out;
    y_max = std::max(y_max, v);
    sum += v;
  }
  if (!(y_max > 0)) return out;
  const double mean_y = sum / static_cast<double>(y.size());
  // Shapes xi_j = -1 + 0.0125 j, j = 1 .. 240 (xi = -1 itself has no finite penalty).
  constexpr int kShapes = kGridShapes - 1;
  std::array<double, kShapes> xis{}, ls{};
  for (int j = 0; j < kShapes; ++j) {
    xis[j] = kGpdXiMin + (kGpdXiMax - kGpdXiMin) * (j + 1) / (kGridShapes - 1);
    ls[j] = penalised_profile(y, xis[j], lambda, y_max, mean_y, nullptr);
  }
  auto f = [&](double xi) { return penalised_profile(y, xi, lambda, y_max, mean_y, nullptr); };
  double best_xi = 0, best_l = -kInf;
  for (int j = 1; j + 1 < kShapes; ++j) {
    if (!(ls[j] >= ls[j - 1] && ls[j] >= ls[j + 1]) || !std::isfinite(ls[j])) continue;
    const double g = (std::sqrt(5.0) - 1) / 2;
    double a = xis[j - 1], b = xis[j + 1];
    double c = b - g * (b - a), d = a + g * (b - a);
    double fc = f(c), fd = f(d);
    for (int i = 0; i < kGoldenSteps; ++i) {
      if (fc >= fd) {
        b = d;
        d = c;
        fd = fc;
        c = b - g * (b - a);
        fc = f(c);
      } else {
        a = c;
        c = d;
        fc = fd;
        d = a + g * (b - a);
        fd = f(d);
      }
    }
    double x = fc >= fd ? c : d, l = std::max(fc, fd);
    if (!(l >= ls[j])) x = xis[j], l = ls[j];
    if (l > best_l) best_xi = x, best_l = l;
  }
  if (!std::isfinite(best_l)) {
    const int j = ls[0] >= ls[kShapes - 1] ? 0 : kShapes - 1;
    if (!std::isfinite(ls[j])) return out;
    best_xi = xis[j];
  }
  out.xi = best_xi;
  (void)penalised_profile(y, best_xi, lambda, y_max, mean_y, &out.sigma);
  out.loglik = gpd_loglik(y, out.xi, out.sigma);
  out.ok = std::isfinite(out.loglik) && out.sigma > 0;
  return out;
}

inline double expected_max(const TailModel& model, double k) {
  const auto& sorted = model.sorted;
  const auto method = model.method;
  const auto exceedances = model.exceedances;
  const auto threshold = model.threshold;
  const auto& gpd = model.gpd;
  const auto drawn = model.drawn;
  const std::size_t n = sorted.size();
  const double nd = static_cast<double>(n);
  const double q0 = static_cast<double>(n) / static_cast<double>(drawn);  // 1 - p0
  const double p0 = 1 - q0;
  const double denom = p0 > 0 ? -det::expm1(k * det::log(p0)) : 1.0;  // 1 - p0^k
  double e = sorted.front();
  const std::size_t body = method == TailMethod::gpd ? n - exceedances : n;
  for (std::size_t i = 1; i < body; ++i) {
    const double width = sorted[i] - sorted[i - 1];
    if (width <= 0) continue;
    const double t = q0 * static_cast<double>(n - i) / nd;  // 1 - F on [sorted[i-1], sorted[i])
    e += width * one_minus_pow(t, k) / denom;
  }
  if (method != TailMethod::gpd) return e;
  const double end = model.endpoint();
  const double len = end - threshold;
  if (!(len > 0)) return e;
  const double zeta = q0 * static_cast<double>(exceedances) / nd;
  auto h = [&](double r) {
    const double x = end - len * r * r;
    const double t = zeta * gpd_survival(x - threshold, gpd.xi, gpd.sigma);
    return one_minus_pow(t, k) / denom * 2 * len * r;
  };
  const double step = 1.0 / kSimpsonPanels;
  double s = h(0) + h(1);
  for (int i = 1; i < kSimpsonPanels; ++i) s += (i % 2 == 1 ? 4 : 2) * h(i * step);
  return e + s * step / 3;
}

}  // namespace advplan::reference
