#include "advplan/stats/shapley.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace advplan {
namespace {

using boost::multiprecision::cpp_int;
using boost::multiprecision::cpp_rational;

void check(std::span<const double> v, std::size_t m) {
  if (m < 1 || m > kMaxShapleyPlayers || v.size() != (std::size_t{1} << m))
    throw std::invalid_argument(fmt::format("a game of {} players has {} coalition values, not {}", m,
                                            m <= kMaxShapleyPlayers ? (std::size_t{1} << m) : 0, v.size()));
}

double factorial(std::size_t n) {
  double f = 1;
  for (std::size_t i = 2; i <= n; ++i) f *= static_cast<double>(i);
  return f;
}
cpp_int factorial_int(std::size_t n) {
  cpp_int f = 1;
  for (std::size_t i = 2; i <= n; ++i) f *= static_cast<unsigned>(i);
  return f;
}

std::size_t popcount(std::size_t s) { return static_cast<std::size_t>(__builtin_popcountll(s)); }

/// The exact value of a finite double.
cpp_rational exact(double x) {
  if (!std::isfinite(x)) throw std::invalid_argument("a coalition value is not a finite number");
  if (x == 0) return 0;
  int e = 0;
  const double f = std::frexp(x, &e);                                 // x = f 2^e, |f| in [0.5, 1)
  const auto mant = static_cast<std::int64_t>(std::ldexp(f, 53));     // exact: 53 bits
  e -= 53;
  cpp_rational r = cpp_int(mant);
  if (e > 0) r *= cpp_rational(cpp_int(1) << e);
  if (e < 0) r /= cpp_rational(cpp_int(1) << -e);
  return r;
}

/// floor(x) of a rational.
cpp_int floor_of(const cpp_rational& x) {
  const cpp_int n = numerator(x), d = denominator(x);  // d > 0
  cpp_int q = n / d;                                   // truncates towards zero
  if (n < 0 && q * d != n) q -= 1;
  return q;
}

}  // namespace

std::vector<double> shapley_values(std::span<const double> v, std::size_t m) {
  check(v, m);
  const double mf = factorial(m);
  std::vector<double> phi(m, 0.0);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t s = 0; s < v.size(); ++s) {
      if (s & (std::size_t{1} << i)) continue;
      const std::size_t k = popcount(s);
      const double w = factorial(k) * factorial(m - k - 1) / mf;
      phi[i] += w * (v[s | (std::size_t{1} << i)] - v[s]);
    }
  return phi;
}

std::vector<double> shapley_interactions(std::span<const double> v, std::size_t m) {
  check(v, m);
  std::vector<double> out;
  if (m < 2) return out;
  const double mf = factorial(m - 1);
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = i + 1; j < m; ++j) {
      const std::size_t bi = std::size_t{1} << i, bj = std::size_t{1} << j;
      double x = 0;
      for (std::size_t s = 0; s < v.size(); ++s) {
        if (s & (bi | bj)) continue;
        const std::size_t k = popcount(s);
        const double w = factorial(k) * factorial(m - k - 2) / mf;
        x += w * (v[s | bi | bj] - v[s | bi] - v[s | bj] + v[s]);
      }
      out.push_back(x);
    }
  return out;
}

std::vector<std::int64_t> shapley_on_grid(std::span<const double> games, std::size_t units, std::size_t m,
                                          int decimals) {
  if (decimals < 1 || decimals > 12) throw std::invalid_argument("decimals must be 1 to 12");
  const std::size_t n = std::size_t{1} << m;
  if (m < 1 || m > kMaxShapleyPlayers || games.size() != units * n)
    throw std::invalid_argument(fmt::format("{} games of {} players need {} values, not {}", units, m, units * n,
                                            games.size()));
  std::vector<std::int64_t> out(m + 1, 0);
  if (units == 0) return out;
  // Sums over units of sum_S w_S (v[S+i] - v[S]) scaled by m!, exact: the weights |S|! (m-|S|-1)! are integers.
  const cpp_int mf = factorial_int(m);
  std::vector<cpp_rational> phi(m), total_v(1);
  cpp_rational total = 0;
  for (std::size_t u = 0; u < units; ++u) {
    const double* v = games.data() + u * n;
    std::vector<cpp_rational> x(n);
    for (std::size_t s = 0; s < n; ++s) x[s] = exact(v[s]);
    total += x[n - 1] - x[0];
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t s = 0; s < n; ++s) {
        if (s & (std::size_t{1} << i)) continue;
        const std::size_t k = popcount(s);
        phi[i] += cpp_rational(factorial_int(k) * factorial_int(m - k - 1)) * (x[s | (std::size_t{1} << i)] - x[s]);
      }
  }
  cpp_int scale = 1;
  for (int d = 0; d < decimals; ++d) scale *= 10;
  const cpp_rational per = cpp_rational(scale) / (cpp_rational(mf) * cpp_rational(cpp_int(units)));
  // The total on the grid: nearest, halves away from zero.
  const cpp_rational t = total * cpp_rational(scale) / cpp_rational(cpp_int(units));
  const cpp_int t_grid = t >= 0 ? floor_of(t + cpp_rational(1, 2)) : -floor_of(-t + cpp_rational(1, 2));
  std::vector<cpp_int> floors(m);
  std::vector<cpp_rational> rem(m);
  cpp_int sum = 0;
  for (std::size_t i = 0; i < m; ++i) {
    const cpp_rational y = phi[i] * per;  // the exact mean Shapley value on the grid's scale
    floors[i] = floor_of(y);
    rem[i] = y - cpp_rational(floors[i]);
    sum += floors[i];
  }
  // sum_i y_i = t exactly (efficiency), so t_grid - sum(floors) lies in [0, m]: that many largest remainders get one.
  cpp_int left = t_grid - sum;
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rem[a] > rem[b]; });
  for (std::size_t r = 0; left > 0 && r < m; ++r, --left) floors[order[r]] += 1;
  if (left != 0) throw std::logic_error("Shapley values on the grid: efficiency lost (a bug)");
  for (std::size_t i = 0; i < m; ++i) out[i] = static_cast<std::int64_t>(floors[i]);
  out[m] = static_cast<std::int64_t>(t_grid);
  return out;
}

std::string grid_text(std::int64_t value, int decimals) {
  const bool neg = value < 0;
  const std::uint64_t a = neg ? static_cast<std::uint64_t>(-(value + 1)) + 1 : static_cast<std::uint64_t>(value);
  std::uint64_t scale = 1;
  for (int d = 0; d < decimals; ++d) scale *= 10;
  return fmt::format("{}{}.{:0{}}", neg ? "-" : "", a / scale, a % scale, decimals);
}

}  // namespace advplan
