// Nash averaging (Balduzzi, Tuyls, Perolat and Graepel 2018, "Re-evaluating evaluation") of the BLUE x RED
// meta-game (docs/METRICS.md "Nash averaging"): each side's maximum-entropy equilibrium mixture over its optimal
// set, by Newton's method on a log-barrier path in the optimal set's affine hull, certified in rationals against the
// equilibrium polytope; a policy's rating is its payoff against the other side's maxent mixture.
#include <gmpxx.h>

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "advplan/core/error.hpp"
#include "advplan/metagame/metagame.hpp"
#include "core/det_math.hpp"

namespace advplan::metagame {
namespace {

/// One side's optimal set: {x in the simplex : x_i = 0 outside `support`, c_k'x >= b for every k}, c_k integer
/// numerators over `den`, b exact; the constraints with `tight[k]` hold with equality on the whole set.
struct OptimalSet {
  std::size_t n = 0;
  std::vector<bool> support;
  std::vector<std::vector<std::int64_t>> c;
  std::vector<bool> tight;
  mpq_class b;
  std::int64_t den = 1;
};

OptimalSet blue_set(const IntMatrix& a, const GameSolution& g, const mpq_class& v) {
  OptimalSet s;
  s.n = a.rows;
  s.den = a.den;
  s.b = v;
  for (const auto& r : g.blue_range) s.support.push_back(r.second.num != "0");
  for (std::size_t j = 0; j < a.cols; ++j) {
    std::vector<std::int64_t> c(a.rows);
    for (std::size_t i = 0; i < a.rows; ++i) c[i] = a.at(i, j);
    s.c.push_back(std::move(c));
    s.tight.push_back(g.red_range[j].second.num != "0");
  }
  return s;
}

OptimalSet red_set(const IntMatrix& a, const GameSolution& g, const mpq_class& v) {
  OptimalSet s;
  s.n = a.cols;
  s.den = a.den;
  s.b = -v;
  for (const auto& r : g.red_range) s.support.push_back(r.second.num != "0");
  for (std::size_t i = 0; i < a.rows; ++i) {
    std::vector<std::int64_t> c(a.cols);
    for (std::size_t j = 0; j < a.cols; ++j) c[j] = -a.at(i, j);
    s.c.push_back(std::move(c));
    s.tight.push_back(g.blue_range[i].second.num != "0");
  }
  return s;
}

/// A basis of the null space of the affine hull's equations (sum over the support, and every tight constraint,
/// on the support's variables), by exact Gauss-Jordan elimination in rationals: one column per free variable.
std::vector<std::vector<double>> hull_directions(const OptimalSet& s, const std::vector<std::size_t>& vars) {
  const std::size_t nv = vars.size();
  std::vector<std::vector<mpq_class>> e;
  e.emplace_back(nv, mpq_class(1));
  for (std::size_t k = 0; k < s.c.size(); ++k) {
    if (!s.tight[k]) continue;
    std::vector<mpq_class> row(nv);
    for (std::size_t q = 0; q < nv; ++q) row[q] = mpq_class(static_cast<long>(s.c[k][vars[q]]));
    e.push_back(std::move(row));
  }
  std::vector<std::size_t> pivot_col;
  std::size_t r = 0;
  for (std::size_t col = 0; col < nv && r < e.size(); ++col) {
    std::size_t p = r;
    while (p < e.size() && e[p][col] == 0) ++p;
    if (p == e.size()) continue;
    std::swap(e[r], e[p]);
    const mpq_class inv = 1 / e[r][col];
    for (auto& x : e[r]) x *= inv;
    for (std::size_t o = 0; o < e.size(); ++o) {
      if (o == r || e[o][col] == 0) continue;
      const mpq_class f = e[o][col];
      for (std::size_t q = 0; q < nv; ++q) e[o][q] -= f * e[r][q];
    }
    pivot_col.push_back(col);
    ++r;
  }
  std::vector<bool> is_pivot(nv, false);
  for (const std::size_t c : pivot_col) is_pivot[c] = true;
  std::vector<std::vector<double>> dirs;  // dirs[d][q]
  for (std::size_t f = 0; f < nv; ++f) {
    if (is_pivot[f]) continue;
    std::vector<double> d(nv, 0.0);
    d[f] = 1;
    for (std::size_t row = 0; row < pivot_col.size(); ++row) d[pivot_col[row]] = -e[row][f].get_d();
    dirs.push_back(std::move(d));
  }
  return dirs;
}

/// Solves H dz = -g for a symmetric positive definite H (d x d, row-major) by Cholesky; false when not positive.
bool cholesky_solve(std::vector<double> h, const std::vector<double>& g, std::size_t d, std::vector<double>& dz) {
  for (std::size_t j = 0; j < d; ++j) {
    double s = h[j * d + j];
    for (std::size_t k = 0; k < j; ++k) s -= h[j * d + k] * h[j * d + k];
    if (!(s > 0)) return false;
    h[j * d + j] = std::sqrt(s);
    for (std::size_t i = j + 1; i < d; ++i) {
      double t = h[i * d + j];
      for (std::size_t k = 0; k < j; ++k) t -= h[i * d + k] * h[j * d + k];
      h[i * d + j] = t / h[j * d + j];
    }
  }
  dz.assign(d, 0.0);
  for (std::size_t i = 0; i < d; ++i) {
    double t = -g[i];
    for (std::size_t k = 0; k < i; ++k) t -= h[i * d + k] * dz[k];
    dz[i] = t / h[i * d + i];
  }
  for (std::size_t i = d; i-- > 0;) {
    double t = dz[i];
    for (std::size_t k = i + 1; k < d; ++k) t -= h[k * d + i] * dz[k];
    dz[i] = t / h[i * d + i];
  }
  return true;
}

/// The barrier problem on the affine hull: x = x0 + N z over the support's variables, the slack constraints
/// (c_k'x - b) / den in payoff units. f = sum x log x - mu sum log slack; +inf outside the domain.
struct Barrier {
  std::vector<double> x0;
  std::vector<std::vector<double>> dirs;  ///< N's columns
  std::vector<std::vector<double>> c;     ///< slack constraints on the support's variables, in payoff units
  std::vector<double> b;
  std::vector<double> point(const std::vector<double>& z) const {
    std::vector<double> x = x0;
    for (std::size_t d = 0; d < dirs.size(); ++d)
      for (std::size_t q = 0; q < x.size(); ++q) x[q] += z[d] * dirs[d][q];
    return x;
  }
  std::vector<double> slacks(const std::vector<double>& x) const {
    std::vector<double> s(c.size());
    for (std::size_t k = 0; k < c.size(); ++k) {
      double t = -b[k];
      for (std::size_t q = 0; q < x.size(); ++q) t += c[k][q] * x[q];
      s[k] = t;
    }
    return s;
  }
  double value(const std::vector<double>& z, double mu) const {
    const std::vector<double> x = point(z), s = slacks(x);
    double f = 0;
    for (const double v : x) {
      if (!(v > 0)) return INFINITY;
      f += v * det::log(v);
    }
    for (const double v : s) {
      if (!(v > 0)) return INFINITY;
      f -= mu * det::log(v);
    }
    return f;
  }
};

/// One Newton step of the barrier problem at z (gradient g, Hessian h in z); returns the decrement -g'dz.
double newton_step(const Barrier& p, const std::vector<double>& z, double mu, std::vector<double>& dz, double& slope) {
  const std::size_t d = p.dirs.size(), nv = p.x0.size();
  const std::vector<double> x = p.point(z), s = p.slacks(x);
  std::vector<double> g(d, 0.0), h(d * d, 0.0);
  for (std::size_t a = 0; a < d; ++a)
    for (std::size_t q = 0; q < nv; ++q) {
      g[a] += p.dirs[a][q] * (det::log(x[q]) + 1);
      for (std::size_t bb = 0; bb <= a; ++bb) h[a * d + bb] += p.dirs[a][q] * p.dirs[bb][q] / x[q];
    }
  for (std::size_t k = 0; k < p.c.size(); ++k) {
    std::vector<double> nc(d, 0.0);
    for (std::size_t a = 0; a < d; ++a)
      for (std::size_t q = 0; q < nv; ++q) nc[a] += p.dirs[a][q] * p.c[k][q];
    for (std::size_t a = 0; a < d; ++a) {
      g[a] -= mu * nc[a] / s[k];
      for (std::size_t bb = 0; bb <= a; ++bb) h[a * d + bb] += mu * nc[a] * nc[bb] / (s[k] * s[k]);
    }
  }
  for (std::size_t a = 0; a < d; ++a)
    for (std::size_t bb = a + 1; bb < d; ++bb) h[a * d + bb] = h[bb * d + a];
  if (!cholesky_solve(h, g, d, dz)) throw Error("metagame: Nash averaging's Newton system is not positive definite");
  slope = 0;
  for (std::size_t a = 0; a < d; ++a) slope += g[a] * dz[a];
  return -slope;
}

/// The barrier path mu = 1, 1e-1, ..., 1e-14: at each mu Newton steps from the last point until the decrement is at
/// most kNewtonDecrement or kNewtonSteps steps, each step halved until the point stays inside and f falls by a quarter
/// of the step's first-order decrease (at most 60 halvings). Returns the steps taken.
constexpr double kNewtonDecrement = 1e-22;
constexpr int kNewtonSteps = 100;

std::size_t follow_path(const Barrier& p, std::vector<double>& z) {
  std::size_t steps = 0;
  std::vector<double> dz, trial(z.size());
  double mu = 1;
  for (int e = 0; e <= 14; ++e, mu /= 10) {
    for (int it = 0; it < kNewtonSteps; ++it) {
      double slope = 0;
      if (newton_step(p, z, mu, dz, slope) <= kNewtonDecrement) break;
      const double f0 = p.value(z, mu);
      double t = 1;
      bool moved = false;
      for (int half = 0; half < 60 && !moved; ++half, t *= 0.5) {
        for (std::size_t a = 0; a < z.size(); ++a) trial[a] = z[a] + t * dz[a];
        moved = p.value(trial, mu) <= f0 + 0.25 * t * slope;
      }
      ++steps;
      if (!moved) break;
      z = trial;
    }
  }
  return steps;
}

/// The exact distance of the rounded mixture x from the optimal set's equations and inequalities: the largest of
/// |sum x - 1|, |c_k'x - b| / den for the tight k, (b - c_k'x) / den for a violated slack k and -x_i for a negative x_i.
double certify(const OptimalSet& s, const std::vector<double>& x) {
  mpq_class worst = 0, sum = 0;
  auto at_least = [&](const mpq_class& r) {
    if (r > worst) worst = r;
  };
  std::vector<mpq_class> xq(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    xq[i] = mpq_class(x[i]);
    sum += xq[i];
    at_least(-xq[i]);
    if (!s.support[i]) at_least(abs(xq[i]));
  }
  at_least(abs(sum - 1));
  const mpq_class den(static_cast<long>(s.den));
  for (std::size_t k = 0; k < s.c.size(); ++k) {
    mpq_class r = -s.b;
    for (std::size_t i = 0; i < x.size(); ++i) r += xq[i] * static_cast<long>(s.c[k][i]);
    at_least((s.tight[k] ? mpq_class(abs(r)) : mpq_class(-r)) / den);
  }
  return worst.get_d();
}

struct SideResult {
  std::vector<double> mix;
  bool point = false;
  double residual = 0;
  std::size_t steps = 0;
};

SideResult maxent_side(const OptimalSet& s, const std::vector<Fraction>& interior) {
  std::vector<std::size_t> vars;
  for (std::size_t i = 0; i < s.n; ++i)
    if (s.support[i]) vars.push_back(i);
  Barrier p;
  for (const std::size_t i : vars) p.x0.push_back(interior[i].value);
  p.dirs = hull_directions(s, vars);
  const double den = static_cast<double>(s.den);
  for (std::size_t k = 0; k < s.c.size(); ++k) {
    if (s.tight[k]) continue;
    std::vector<double> row;
    for (const std::size_t i : vars) row.push_back(static_cast<double>(s.c[k][i]) / den);
    p.c.push_back(std::move(row));
    p.b.push_back(mpq_class(s.b / den).get_d());
  }
  SideResult r;
  r.point = p.dirs.empty();
  std::vector<double> z(p.dirs.size(), 0.0);
  if (!r.point) r.steps = follow_path(p, z);
  const std::vector<double> x = p.point(z);
  r.mix.assign(s.n, 0.0);
  for (std::size_t q = 0; q < vars.size(); ++q) r.mix[vars[q]] = x[q];
  r.residual = certify(s, r.mix);
  return r;
}

mpq_class exact_value(const Fraction& f) {
  mpq_class q(f.num + "/" + f.den);
  q.canonicalize();
  return q;
}

}  // namespace

NashAverage nash_average(const IntMatrix& a, const GameSolution& g, bool win) {
  if (g.blue_range.size() != a.rows || g.red_range.size() != a.cols)
    throw Error("metagame: Nash averaging needs solve_game's ranges over the equilibria");
  const mpq_class v = exact_value(g.value) * static_cast<long>(a.den);  // in units of 1 / den
  const OptimalSet bs = blue_set(a, g, v), rs = red_set(a, g, v);
  const auto [x0, y0] = relative_interior_equilibrium(a, bs.support, rs.support);
  const SideResult blue = maxent_side(bs, x0), red = maxent_side(rs, y0);
  NashAverage out;
  out.blue = blue.mix;
  out.red = red.mix;
  out.blue_point = blue.point;
  out.red_point = red.point;
  out.blue_residual = blue.residual;
  out.red_residual = red.residual;
  out.newton_steps = blue.steps + red.steps;
  for (std::size_t i = 0; i < a.rows; ++i) {
    double s = 0;
    for (std::size_t j = 0; j < a.cols; ++j) s += a.value(i, j) * red.mix[j];
    out.blue_rating.push_back(s);
  }
  for (std::size_t j = 0; j < a.cols; ++j) {
    double s = 0;
    for (std::size_t i = 0; i < a.rows; ++i) s += a.value(i, j) * blue.mix[i];
    out.red_rating.push_back(win ? 1.0 - s : -s);
  }
  return out;
}

}  // namespace advplan::metagame
