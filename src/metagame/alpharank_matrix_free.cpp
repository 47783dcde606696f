// alpha-Rank without the chain (docs/METRICS.md "Matrix-free alpha-Rank"): for 10^6 profiles the chain has 2 x 10^9
// transitions, too many to keep, so each product with it is computed from the payoffs. A population's moves stay
// on one line of profiles (a column for BLUE, a row for RED), and along a line sorted by the mover's payoff the
// fixation probability of a far pair is a short series of exponentials in the payoff difference, each of which a
// running sum over the sorted line gives for every profile at once. Near pairs (payoff differences below delta)
// are kept explicitly. The balance equations are then solved by restarted GMRES with a Jacobi preconditioner.
#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <vector>

#include "advplan/core/error.hpp"
#include "advplan/metagame/metagame.hpp"
#include "core/det_math.hpp"

namespace advplan::metagame {
namespace {

/// The fixation probability of a mutant `d` ahead (d >= 0: rho_plus) or behind (rho_minus), in doubles, as the
/// dense solver's log form gives it: rho(d) = (1 - e^{-a d}) / (1 - e^{-m a d}); rho(-d) = e^{-(m-1) a d} rho(d);
/// 1/m for a tie.
struct Rho {
  double up = 0, down = 0;
};
Rho rho_pair(double d, double alpha, int m) {
  const double u = alpha * d;
  if (std::abs(u) < 1e-14) return {1.0 / m, 1.0 / m};
  const double up = det::expm1(-u) / det::expm1(-u * m);
  return {up, det::exp(-(m - 1) * u) * up};
}

/// One line of profiles: the strategies of the moving population against one strategy of the other, sorted by the
/// mover's payoff u_0 <= ... <= u_{n-1}.
struct Line {
  std::vector<std::uint32_t> profile;  ///< the profile at each sorted position
  std::vector<double> gap_a, gap_b;    ///< position j >= 1: e^{-alpha (u_j - u_{j-1})}, e^{-m alpha (...)}
  /// Far below p: positions 0..below[p] (u <= u_p - delta; -1 for none), with the jump factors of u_p - u_below;
  /// far above: above[p]..n-1 (u >= u_p + delta; n for none).
  std::vector<std::int32_t> below, above;
  std::vector<double> below_a, below_b, above_a, above_b;
  /// Near pairs (p < q, u_q - u_p < delta) with rho(u_q - u_p) (p to q) and rho(u_p - u_q) (q to p).
  std::vector<std::uint32_t> near_p, near_q;
  std::vector<double> near_up, near_down;
};

/// How the series is cut: delta = kDeltaScale / (m alpha) and N = 40 / kDeltaScale terms leave a relative error of
/// e^{-40} (4 x 10^-18) in every far pair.
constexpr double kDeltaScale = 4;
constexpr int kTerms = 10;
/// GMRES's Krylov space between restarts.
constexpr std::size_t kKrylov = 40;

Line make_line(std::vector<std::pair<double, std::uint32_t>> v, double alpha, int m, double delta) {
  std::sort(v.begin(), v.end());  // by payoff, then profile: a fixed order
  const std::size_t n = v.size();
  Line l;
  l.profile.resize(n);
  for (std::size_t j = 0; j < n; ++j) l.profile[j] = v[j].second;
  l.gap_a.assign(n, 1.0);
  l.gap_b.assign(n, 1.0);
  for (std::size_t j = 1; j < n; ++j) {
    const double g = v[j].first - v[j - 1].first;
    l.gap_a[j] = det::exp(-alpha * g);
    l.gap_b[j] = det::exp(-alpha * m * g);
  }
  l.below.resize(n);
  l.above.resize(n);
  l.below_a.resize(n);
  l.below_b.resize(n);
  l.above_a.resize(n);
  l.above_b.resize(n);
  std::int32_t b = -1;
  std::size_t a = 0;
  for (std::size_t p = 0; p < n; ++p) {
    while (static_cast<std::size_t>(b + 1) < n && v[static_cast<std::size_t>(b + 1)].first <= v[p].first - delta) ++b;
    l.below[p] = b;
    const double db = b < 0 ? 0 : v[p].first - v[static_cast<std::size_t>(b)].first;
    l.below_a[p] = det::exp(-alpha * db);
    l.below_b[p] = det::exp(-alpha * m * db);
    while (a < n && v[a].first < v[p].first + delta) ++a;
    l.above[p] = static_cast<std::int32_t>(a);
    const double da = a >= n ? 0 : v[a].first - v[p].first;
    l.above_a[p] = det::exp(-alpha * da);
    l.above_b[p] = det::exp(-alpha * m * da);
    for (std::size_t q = p + 1; q < a; ++q) {
      const Rho r = rho_pair(v[q].first - v[p].first, alpha, m);
      l.near_p.push_back(static_cast<std::uint32_t>(p));
      l.near_q.push_back(static_cast<std::uint32_t>(q));
      l.near_up.push_back(r.up);
      l.near_down.push_back(r.down);
    }
  }
  return l;
}

/// The series' exponents for one kernel: rho_plus(g) = sum_n e^{-n m a g} - e^{-(n m + 1) a g};
/// rho_minus(g) = sum_n e^{-(n m + m - 1) a g} - e^{-(n m + m) a g}. Each term's factor for a gap with
/// (e^{-a g}, e^{-m a g}) = (ga, gb) is gb^n times one of 1, ga, gb / ga, gb.
struct Kernel {
  bool plus;
  /// The two factors of term n, given gb^n.
  void factors(double ga, double gb, double gbn, double& f1, double& f2) const {
    if (plus) {
      f1 = gbn;
      f2 = gbn * ga;
    } else {
      f1 = gbn * gb / ga;
      f2 = gbn * gb;
    }
  }
};

/// out[p] += sum over far q of w[q] K(|u_p - u_q|), with K_below for q below p and K_above for q above, at sorted
/// positions; w and out are in sorted order.
void far_sums(const Line& l, const double* w, Kernel below_k, Kernel above_k, double* out) {
  const std::size_t n = l.profile.size();
  double acc1[kTerms], acc2[kTerms];
  // Below: accumulators over 0..j of w[q] e^{-r a (u_j - u_q)}, advanced to below[p] as p rises.
  std::fill(acc1, acc1 + kTerms, 0.0);
  std::fill(acc2, acc2 + kTerms, 0.0);
  std::int32_t at = -1;
  for (std::size_t p = 0; p < n; ++p) {
    const std::int32_t target = l.below[p];
    while (at < target) {
      ++at;
      const auto j = static_cast<std::size_t>(at);
      double gbn = 1;
      for (int t = 0; t < kTerms; ++t) {
        double f1, f2;
        below_k.factors(l.gap_a[j], l.gap_b[j], gbn, f1, f2);
        acc1[t] = w[j] + f1 * acc1[t];
        acc2[t] = w[j] + f2 * acc2[t];
        gbn *= l.gap_b[j];
      }
    }
    if (target < 0) continue;
    double s = 0, gbn = 1;
    for (int t = 0; t < kTerms; ++t) {
      double f1, f2;
      below_k.factors(l.below_a[p], l.below_b[p], gbn, f1, f2);
      s += f1 * acc1[t] - f2 * acc2[t];
      gbn *= l.below_b[p];
    }
    out[p] += s;
  }
  // Above: accumulators over j..n-1 of w[q] e^{-r a (u_q - u_j)}, moved down to above[p] as p falls.
  std::fill(acc1, acc1 + kTerms, 0.0);
  std::fill(acc2, acc2 + kTerms, 0.0);
  auto top = static_cast<std::int32_t>(n);
  for (std::size_t pp = n; pp-- > 0;) {
    const std::int32_t target = l.above[pp];
    while (top > target) {
      --top;
      const auto j = static_cast<std::size_t>(top);
      // The gap from j to j + 1 (none at the top).
      const double ga = j + 1 < n ? l.gap_a[j + 1] : 1.0, gb = j + 1 < n ? l.gap_b[j + 1] : 1.0;
      double gbn = 1;
      for (int t = 0; t < kTerms; ++t) {
        double f1, f2;
        above_k.factors(ga, gb, gbn, f1, f2);
        acc1[t] = w[j] + f1 * acc1[t];
        acc2[t] = w[j] + f2 * acc2[t];
        gbn *= gb;
      }
    }
    if (target >= static_cast<std::int32_t>(n)) continue;
    double s = 0, gbn = 1;
    for (int t = 0; t < kTerms; ++t) {
      double f1, f2;
      above_k.factors(l.above_a[pp], l.above_b[pp], gbn, f1, f2);
      s += f1 * acc1[t] - f2 * acc2[t];
      gbn *= l.above_b[pp];
    }
    out[pp] += s;
  }
}

/// The chain's lines and exits.
struct Chain {
  std::size_t rows = 0, cols = 0;
  double eta = 0;
  std::vector<Line> blue_lines, red_lines;  ///< one per RED strategy (a column), one per BLUE strategy (a row)
  std::vector<double> exits;                ///< sum of the off-diagonal transitions out of each profile
  /// Per-line scratch (a population's lines have one length and partition the profiles), so a product allocates
  /// nothing.
  mutable std::vector<double> w_scratch, o_scratch, red_part;
};

/// What flows into each profile from x: sum over s != t of x_s P(s, t) (inflow = true), or the exits of each profile
/// (x = 1, inflow = false: sum over t' of P(t, t')).
void line_sums(const Chain& c, const std::vector<double>& x, bool inflow, std::vector<double>& out) {
  std::fill(out.begin(), out.end(), 0.0);
  // Inflow to t from a worse source is rho_plus (the mover gains), from a better one rho_minus; the exits of t to a
  // worse mutant are rho_minus, to a better one rho_plus.
  const Kernel below{inflow}, above{!inflow};
  auto run = [&](const std::vector<Line>& lines) {
    tbb::parallel_for(std::size_t{0}, lines.size(), [&](std::size_t li) {
      const Line& l = lines[li];
      const std::size_t n = l.profile.size();
      double* w = c.w_scratch.data() + li * n;
      double* o = c.o_scratch.data() + li * n;
      std::fill(o, o + n, 0.0);
      for (std::size_t p = 0; p < n; ++p) w[p] = inflow ? x[l.profile[p]] : 1.0;
      far_sums(l, w, below, above, o);
      for (std::size_t k = 0; k < l.near_p.size(); ++k) {
        const std::uint32_t p = l.near_p[k], q = l.near_q[k];
        if (inflow) {  // p -> q gains (rho up), q -> p loses (rho down)
          o[q] += w[p] * l.near_up[k];
          o[p] += w[q] * l.near_down[k];
        } else {       // exits of p to q gain, of q to p lose
          o[p] += l.near_up[k];
          o[q] += l.near_down[k];
        }
      }
      for (std::size_t p = 0; p < n; ++p) out[l.profile[p]] += c.eta * o[p];  // each profile on one line per population
    });
  };
  run(c.blue_lines);
  std::swap(out, c.red_part);
  std::fill(out.begin(), out.end(), 0.0);
  run(c.red_lines);
  for (std::size_t t = 0; t < out.size(); ++t) out[t] = c.red_part[t] + out[t];  // BLUE's moves, then RED's
}

/// y = A x, A = (I - P)^T with its last row replaced by ones.
void apply(const Chain& c, const std::vector<double>& x, std::vector<double>& in, std::vector<double>& y) {
  line_sums(c, x, true, in);
  const std::size_t n = x.size();
  for (std::size_t t = 0; t + 1 < n; ++t) y[t] = x[t] * c.exits[t] - in[t];
  double s = 0;
  for (double v : x) s += v;
  y[n - 1] = s;
}

/// sqrt(a^2 + b^2) without overflow, from IEEE operations only (std::hypot comes from the C library, whose result
/// depends on the CPU).
double norm2(double a, double b) {
  a = std::abs(a);
  b = std::abs(b);
  if (a < b) std::swap(a, b);
  if (a == 0) return 0;
  const double r = b / a;
  return a * std::sqrt(1 + r * r);
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

}  // namespace

std::size_t matrix_free_near_pairs(const std::vector<double>& blue, const std::vector<double>& red, std::size_t rows,
                                   std::size_t cols, double alpha, int m) {
  const double delta = kDeltaScale / (m * alpha);
  std::size_t pairs = 0;
  std::vector<double> v;
  auto count = [&] {
    std::sort(v.begin(), v.end());
    for (std::size_t p = 0, q = 0; p < v.size(); ++p) {
      q = std::max(q, p + 1);
      while (q < v.size() && v[q] < v[p] + delta) ++q;
      pairs += q - p - 1;
    }
  };
  for (std::size_t j = 0; j < cols && rows > 1; ++j) {
    v.clear();
    for (std::size_t i = 0; i < rows; ++i) v.push_back(blue[i * cols + j]);
    count();
  }
  for (std::size_t i = 0; i < rows && cols > 1; ++i) {
    v.assign(red.begin() + static_cast<std::ptrdiff_t>(i * cols), red.begin() + static_cast<std::ptrdiff_t>((i + 1) * cols));
    count();
  }
  return pairs;
}

bool matrix_free_alpharank_applies(const std::vector<double>& blue, const std::vector<double>& red, std::size_t rows,
                                   std::size_t cols, double alpha, int m) {
  if (!(alpha > 0) || std::isinf(alpha) || m < 2 || blue.size() != rows * cols || red.size() != rows * cols) return false;
  auto spread = [](const std::vector<double>& v) {
    const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    return v.empty() ? 0.0 : *hi - *lo;
  };
  if ((m - 1) * alpha * std::max(spread(blue), spread(red)) > kMatrixFreeExponentMax) return false;
  return matrix_free_near_pairs(blue, red, rows, cols, alpha, m) <= kMatrixFreeNearPairsMax;
}

SparseAlphaRank alpharank_two_population_matrix_free(const std::vector<double>& blue, const std::vector<double>& red,
                                                     std::size_t rows, std::size_t cols, double alpha, int m,
                                                     const SparseAlphaRankOptions& opt) {
  if (rows * cols < 2 || rows * cols > std::numeric_limits<std::uint32_t>::max())
    throw Error(fmt::format("alpha-Rank: {} x {} profiles are outside the matrix-free solver's range", rows, cols));
  if (!matrix_free_alpharank_applies(blue, red, rows, cols, alpha, m))
    throw Error(fmt::format("alpha-Rank: the matrix-free solver takes a finite alpha with (m - 1) alpha times the "
                            "payoff spread at most {} and at most {} near pairs (here alpha {}, m {})",
                            kMatrixFreeExponentMax, kMatrixFreeNearPairsMax, alpha, m));
  const std::size_t n = rows * cols;
  Chain c;
  c.rows = rows;
  c.cols = cols;
  c.eta = 1.0 / static_cast<double>((rows - 1) + (cols - 1));
  const double delta = kDeltaScale / (m * alpha);
  c.blue_lines.resize(rows > 1 ? cols : 0);
  c.red_lines.resize(cols > 1 ? rows : 0);
  tbb::parallel_for(std::size_t{0}, c.blue_lines.size(), [&](std::size_t j) {
    std::vector<std::pair<double, std::uint32_t>> v(rows);
    for (std::size_t i = 0; i < rows; ++i) v[i] = {blue[i * cols + j], static_cast<std::uint32_t>(i * cols + j)};
    c.blue_lines[j] = make_line(std::move(v), alpha, m, delta);
  });
  tbb::parallel_for(std::size_t{0}, c.red_lines.size(), [&](std::size_t i) {
    std::vector<std::pair<double, std::uint32_t>> v(cols);
    for (std::size_t j = 0; j < cols; ++j) v[j] = {red[i * cols + j], static_cast<std::uint32_t>(i * cols + j)};
    c.red_lines[i] = make_line(std::move(v), alpha, m, delta);
  });
  c.exits.assign(n, 0.0);
  c.w_scratch.assign(n, 0.0);
  c.o_scratch.assign(n, 0.0);
  c.red_part.assign(n, 0.0);
  line_sums(c, {}, false, c.exits);

  // Restarted GMRES(kKrylov) with right Jacobi preconditioning, from the uniform vector. GMRES cannot break down
  // as BiCGSTAB can on these systems (a sink's equation has a coefficient of 1e-100 and its r̂·v vanishes).
  // A sink's exits can be 1e-100 and below, so the preconditioner takes the exits no smaller than 1e-6 of the
  // largest (any positive diagonal is a valid preconditioner).
  std::vector<double> diag(n), x(n, 1.0 / static_cast<double>(n)), r(n), w(n), in(n), z(n);
  const double floor = 1e-6 * *std::max_element(c.exits.begin(), c.exits.end());
  for (std::size_t k = 0; k + 1 < n; ++k) diag[k] = std::max(c.exits[k], floor > 0 ? floor : 1.0);
  diag[n - 1] = 1.0;
  const int mk = static_cast<int>(std::min<std::size_t>(kKrylov, n));
  std::vector<std::vector<double>> V(static_cast<std::size_t>(mk + 1), std::vector<double>(n));
  std::vector<double> H(static_cast<std::size_t>((mk + 1) * mk), 0.0), cs(static_cast<std::size_t>(mk)),
      sn(static_cast<std::size_t>(mk)), g(static_cast<std::size_t>(mk + 1)), yv(static_cast<std::size_t>(mk));
  auto h = [&](int i, int j) -> double& { return H[static_cast<std::size_t>(i * mk + j)]; };
  SparseAlphaRank out;
  int it = 0;
  while (it < opt.max_iterations) {
    apply(c, x, in, w);
    for (std::size_t k = 0; k < n; ++k) r[k] = (k + 1 == n ? 1.0 : 0.0) - w[k];
    const double beta = std::sqrt(dot(r, r));
    if (beta <= opt.tolerance) break;
    for (std::size_t k = 0; k < n; ++k) V[0][k] = r[k] / beta;
    std::fill(g.begin(), g.end(), 0.0);
    g[0] = beta;
    int used = 0;
    for (int j = 0; j < mk && it < opt.max_iterations; ++j, ++it) {
      for (std::size_t k = 0; k < n; ++k) z[k] = V[static_cast<std::size_t>(j)][k] / diag[k];
      apply(c, z, in, w);
      for (int i = 0; i <= j; ++i) {  // modified Gram-Schmidt
        const double hij = dot(w, V[static_cast<std::size_t>(i)]);
        h(i, j) = hij;
        for (std::size_t k = 0; k < n; ++k) w[k] -= hij * V[static_cast<std::size_t>(i)][k];
      }
      const double hn = std::sqrt(dot(w, w));
      h(j + 1, j) = hn;
      if (hn > 0)
        for (std::size_t k = 0; k < n; ++k) V[static_cast<std::size_t>(j + 1)][k] = w[k] / hn;
      for (int i = 0; i < j; ++i) {  // the earlier rotations on the new column
        const double a = h(i, j), b2 = h(i + 1, j);
        h(i, j) = cs[static_cast<std::size_t>(i)] * a + sn[static_cast<std::size_t>(i)] * b2;
        h(i + 1, j) = -sn[static_cast<std::size_t>(i)] * a + cs[static_cast<std::size_t>(i)] * b2;
      }
      const double a = h(j, j), b2 = h(j + 1, j), rr = norm2(a, b2);
      cs[static_cast<std::size_t>(j)] = rr > 0 ? a / rr : 1.0;
      sn[static_cast<std::size_t>(j)] = rr > 0 ? b2 / rr : 0.0;
      h(j, j) = rr;
      h(j + 1, j) = 0;
      g[static_cast<std::size_t>(j + 1)] = -sn[static_cast<std::size_t>(j)] * g[static_cast<std::size_t>(j)];
      g[static_cast<std::size_t>(j)] *= cs[static_cast<std::size_t>(j)];
      used = j + 1;
      if (std::abs(g[static_cast<std::size_t>(j + 1)]) <= opt.tolerance || hn == 0) {
        ++it;
        break;
      }
    }
    for (int i = used; i-- > 0;) {  // H y = g, upper triangular
      double v = g[static_cast<std::size_t>(i)];
      for (int j = i + 1; j < used; ++j) v -= h(i, j) * yv[static_cast<std::size_t>(j)];
      yv[static_cast<std::size_t>(i)] = h(i, i) != 0 ? v / h(i, i) : 0.0;
    }
    for (std::size_t k = 0; k < n; ++k) {
      double v = 0;
      for (int i = 0; i < used; ++i) v += yv[static_cast<std::size_t>(i)] * V[static_cast<std::size_t>(i)][k];
      x[k] += v / diag[k];
    }
    if (used == 0) break;
  }
  out.iterations = static_cast<std::size_t>(it);
  out.pi.assign(n, 0.0);
  double sum = 0;
  for (std::size_t k = 0; k < n; ++k) sum += out.pi[k] = std::max(x[k], 0.0);
  for (double& q : out.pi) q /= sum;
  // The residual ||pi P - pi||_1: (pi P)_t - pi_t = inflow_t - pi_t exits_t.
  line_sums(c, out.pi, true, in);
  double res = 0;
  for (std::size_t k = 0; k < n; ++k) res += std::abs(in[k] - out.pi[k] * c.exits[k]);
  out.residual = res;
  out.closed_classes = 1;
  out.edges = 0;
  for (const auto* lines : {&c.blue_lines, &c.red_lines})
    for (const Line& l : *lines) out.edges += 2 * l.near_p.size();
  return out;
}

}  // namespace advplan::metagame
