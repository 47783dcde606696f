#pragma once
// The arithmetic the dense and the sparse alpha-Rank solvers share (docs/METRICS.md "Meta-game"): log-space
// addition, the two-population fixation probability and GTH elimination in logarithms. One copy, so the two
// solvers make the same chain bit for bit. Private to src/metagame/.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/det_math.hpp"

namespace advplan::metagame::detail {

inline constexpr double kTie = 1e-14;
inline constexpr double kNegInf = -std::numeric_limits<double>::infinity();

inline double log_add(double a, double b) {
  if (a == kNegInf) return b;
  if (b == kNegInf) return a;
  const double m = std::max(a, b);
  return m + det::log1p(det::exp(-std::abs(a - b)));
}

/// log of the fixation probability of a mutant whose payoff exceeds the resident's by f (two populations):
/// rho = (1 - e^{-u}) / (1 - e^{-mu}), u = alpha f; kept in logarithms so that no alpha underflows it.
inline double log_fixation(double f, double alpha, int m) {
  if (std::isinf(alpha)) return std::abs(f) <= kTie ? -det::log(m) : (f > 0 ? 0.0 : kNegInf);
  const double u = alpha * f;
  if (std::abs(u) < kTie) return -det::log(m);
  if (u > 0) return det::log(-det::expm1(-u)) - det::log(-det::expm1(-u * m));
  const double g = -u;  // rho = e^{-(m-1)g} (1 - e^{-g}) / (1 - e^{-mg})
  return -(m - 1) * g + det::log(-det::expm1(-g)) - det::log(-det::expm1(-g * m));
}

/// GTH elimination on one irreducible block, in logarithms (row-major k x k log-probabilities; the diagonal is
/// not used). No subtraction occurs, so transition probabilities far below the smallest double stay exact.
inline std::vector<double> gth_log(std::vector<double> l, std::size_t k) {
  for (std::size_t n = k; n-- > 1;) {
    double s = kNegInf;
    for (std::size_t j = 0; j < n; ++j) s = log_add(s, l[n * k + j]);
    for (std::size_t i = 0; i < n; ++i) l[i * k + n] -= s;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        if (i != j) l[i * k + j] = log_add(l[i * k + j], l[i * k + n] + l[n * k + j]);
  }
  std::vector<double> lp(k, kNegInf);
  lp[0] = 0;
  for (std::size_t j = 1; j < k; ++j)
    for (std::size_t i = 0; i < j; ++i) lp[j] = log_add(lp[j], lp[i] + l[i * k + j]);
  double t = kNegInf;
  for (double x : lp) t = log_add(t, x);
  std::vector<double> pi(k);
  for (std::size_t j = 0; j < k; ++j) pi[j] = det::exp(lp[j] - t);
  return pi;
}

/// log of the fixation probability of mutant r in a population of resident s (one population, the non-local
/// selection model): rho = 1 / (1 + sum_{l=1}^{m-1} prod_{p=1}^{l} exp(-alpha (f_r(p) - f_s(m - p)))), with
/// f_r(p) = ((p-1) M(r,r) + (m-p) M(r,s)) / (m-1) and f_s(q) = ((q-1) M(s,s) + (m-q) M(s,r)) / (m-1).
template <class Payoff>
double single_log_fixation(const Payoff& M, std::size_t s, std::size_t r, double alpha, int m) {
  const double md = m;
  if (std::isinf(alpha)) {
    const double f = M(r, s) - M(s, r);
    return std::abs(f) <= kTie ? -det::log(md) : (f > 0 ? 0.0 : kNegInf);
  }
  double acc = 0, lse = 0;  // lse = log(1 + sum exp(acc_l))
  for (int p = 1; p < m; ++p) {
    const double q = md - p;
    const double fr = ((p - 1) * M(r, r) + (md - p) * M(r, s)) / (md - 1);
    const double fs = ((q - 1) * M(s, s) + (md - q) * M(s, r)) / (md - 1);
    acc += -alpha * (fr - fs);
    lse = log_add(lse, acc);
  }
  return -lse;
}

}  // namespace advplan::metagame::detail
