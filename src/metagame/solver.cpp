// The exact solution of the constant-sum meta-game (docs/METRICS.md "Meta-game"). GLPK's rational simplex
// (glp_exact) finds an optimal basis of a linear program whose data are integers (so GLPK's doubles hold them
// exactly); the basic solution is then read off exactly by solving the basis equations in GMP rationals.
//
// The equilibrium program: variables x (BLUE, rows), v, y (RED, columns), w with
//   sum_i A_ij x_i - v >= 0 (each j),  sum_j A_ij y_j - w <= 0 (each i),  v - w >= 0,  sum x = sum y = 1.
// Weak duality gives v <= v* <= w, so its feasible set is exactly X* x {v*} x Y* x {v*}: maximising or
// minimising one probability over it gives that policy's range over all equilibria.
#include <glpk.h>
#include <gmpxx.h>

#include <algorithm>
#include <fmt/format.h>
#include <memory>

#include "advplan/core/error.hpp"
#include "advplan/metagame/metagame.hpp"

namespace advplan::metagame {
namespace {

struct Bound {
  int type = GLP_FR;
  std::int64_t lb = 0, ub = 0;
};
struct Entry {
  int row, col;
  std::int64_t a;
};

/// An integer linear program, kept beside its GLPK copy so the basic solution can be recomputed exactly.
struct IntLp {
  std::vector<Bound> rows, cols;
  std::vector<Entry> entries;
  std::vector<std::int64_t> obj;
};

struct GlpDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};
using GlpPtr = std::unique_ptr<glp_prob, GlpDeleter>;

GlpPtr to_glpk(const IntLp& lp) {
  GlpPtr p(glp_create_prob());
  glp_add_rows(p.get(), static_cast<int>(lp.rows.size()));
  glp_add_cols(p.get(), static_cast<int>(lp.cols.size()));
  for (std::size_t i = 0; i < lp.rows.size(); ++i)
    glp_set_row_bnds(p.get(), static_cast<int>(i) + 1, lp.rows[i].type, static_cast<double>(lp.rows[i].lb),
                     static_cast<double>(lp.rows[i].ub));
  for (std::size_t j = 0; j < lp.cols.size(); ++j)
    glp_set_col_bnds(p.get(), static_cast<int>(j) + 1, lp.cols[j].type, static_cast<double>(lp.cols[j].lb),
                     static_cast<double>(lp.cols[j].ub));
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0};
  for (const auto& e : lp.entries) {
    ia.push_back(e.row + 1);
    ja.push_back(e.col + 1);
    ar.push_back(static_cast<double>(e.a));
  }
  glp_load_matrix(p.get(), static_cast<int>(lp.entries.size()), ia.data(), ja.data(), ar.data());
  return p;
}

void set_objective(glp_prob* p, const IntLp& lp, int dir) {
  glp_set_obj_dir(p, dir);
  for (std::size_t j = 0; j < lp.cols.size(); ++j)
    glp_set_obj_coef(p, static_cast<int>(j) + 1, static_cast<double>(lp.obj[j]));
}

/// Runs the floating-point simplex for a starting basis, then the exact one; throws unless optimal.
void solve_exact(glp_prob* p) {
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  glp_simplex(p, &parm);  // a good starting basis; its result is not used
  const int rc = glp_exact(p, &parm);
  if (rc != 0 || glp_get_status(p) != GLP_OPT)
    throw Error(fmt::format("metagame: GLPK's exact simplex found no optimum (return code {}, status {})", rc,
                            glp_get_status(p)));
}

mpq_class nonbasic_value(int stat, const Bound& b) {
  switch (stat) {
    case GLP_NL:
    case GLP_NS: return mpq_class(static_cast<long>(b.lb));
    case GLP_NU: return mpq_class(static_cast<long>(b.ub));
    default: return mpq_class(0);  // GLP_NF
  }
}

/// The exact values of the structural variables at GLPK's final basis: the basis equations
/// sum_j a_ij x_j - r_i = 0 solved in rationals for the basic variables, the others at their bounds.
std::vector<mpq_class> exact_basic_solution(glp_prob* p, const IntLp& lp) {
  const std::size_t nr = lp.rows.size(), nc = lp.cols.size();
  std::vector<int> rstat(nr), cstat(nc);
  for (std::size_t i = 0; i < nr; ++i) rstat[i] = glp_get_row_stat(p, static_cast<int>(i) + 1);
  for (std::size_t j = 0; j < nc; ++j) cstat[j] = glp_get_col_stat(p, static_cast<int>(j) + 1);
  // Unknowns: basic columns, then basic rows.
  std::vector<long> col_unknown(nc, -1), row_unknown(nr, -1);
  long k = 0;
  for (std::size_t j = 0; j < nc; ++j)
    if (cstat[j] == GLP_BS) col_unknown[j] = k++;
  for (std::size_t i = 0; i < nr; ++i)
    if (rstat[i] == GLP_BS) row_unknown[i] = k++;
  if (static_cast<std::size_t>(k) != nr) throw Error("metagame: GLPK returned a basis of the wrong size");
  std::vector<mpq_class> xn(nc);
  for (std::size_t j = 0; j < nc; ++j)
    if (cstat[j] != GLP_BS) xn[j] = nonbasic_value(cstat[j], lp.cols[j]);
  std::vector<std::vector<mpq_class>> m(nr, std::vector<mpq_class>(nr + 1));
  for (std::size_t i = 0; i < nr; ++i) {
    if (row_unknown[i] >= 0)
      m[i][static_cast<std::size_t>(row_unknown[i])] = -1;
    else
      m[i][nr] += nonbasic_value(rstat[i], lp.rows[i]);
  }
  for (const auto& e : lp.entries) {
    const auto i = static_cast<std::size_t>(e.row), j = static_cast<std::size_t>(e.col);
    if (col_unknown[j] >= 0)
      m[i][static_cast<std::size_t>(col_unknown[j])] += mpq_class(static_cast<long>(e.a));
    else
      m[i][nr] -= mpq_class(static_cast<long>(e.a)) * xn[j];
  }
  // Gauss-Jordan elimination on the (non-singular) basis matrix.
  for (std::size_t c = 0; c < nr; ++c) {
    std::size_t piv = c;
    while (piv < nr && m[piv][c] == 0) ++piv;
    if (piv == nr) throw Error("metagame: GLPK returned a singular basis");
    std::swap(m[c], m[piv]);
    const mpq_class inv = 1 / m[c][c];
    for (std::size_t t = c; t <= nr; ++t) m[c][t] *= inv;
    for (std::size_t r = 0; r < nr; ++r) {
      if (r == c || m[r][c] == 0) continue;
      const mpq_class f = m[r][c];
      for (std::size_t t = c; t <= nr; ++t) m[r][t] -= f * m[c][t];
    }
  }
  std::vector<mpq_class> x(nc);
  for (std::size_t j = 0; j < nc; ++j) x[j] = col_unknown[j] >= 0 ? m[static_cast<std::size_t>(col_unknown[j])][nr] : xn[j];
  return x;
}

/// The equilibrium program above. Columns: x_0..x_{m-1}, v, y_0..y_{n-1}, w.
IntLp equilibrium_lp(const IntMatrix& a) {
  const std::size_t m = a.rows, n = a.cols;
  const std::int64_t lo = *std::min_element(a.num.begin(), a.num.end());
  const std::int64_t hi = *std::max_element(a.num.begin(), a.num.end());
  const Bound value_bound{lo == hi ? GLP_FX : GLP_DB, lo, hi};
  IntLp lp;
  lp.cols.assign(m + n + 2, Bound{GLP_LO, 0, 0});
  const int v = static_cast<int>(m), w = static_cast<int>(m + n + 1);
  lp.cols[static_cast<std::size_t>(v)] = value_bound;
  lp.cols[static_cast<std::size_t>(w)] = value_bound;
  auto ycol = [&](std::size_t j) { return static_cast<int>(m + 1 + j); };
  int row = 0;
  for (std::size_t j = 0; j < n; ++j, ++row) {
    lp.rows.push_back({GLP_LO, 0, 0});
    for (std::size_t i = 0; i < m; ++i)
      if (a.at(i, j) != 0) lp.entries.push_back({row, static_cast<int>(i), a.at(i, j)});
    lp.entries.push_back({row, v, -1});
  }
  for (std::size_t i = 0; i < m; ++i, ++row) {
    lp.rows.push_back({GLP_UP, 0, 0});
    for (std::size_t j = 0; j < n; ++j)
      if (a.at(i, j) != 0) lp.entries.push_back({row, ycol(j), a.at(i, j)});
    lp.entries.push_back({row, w, -1});
  }
  lp.rows.push_back({GLP_LO, 0, 0});
  lp.entries.push_back({row, v, 1});
  lp.entries.push_back({row, w, -1});
  ++row;
  lp.rows.push_back({GLP_FX, 1, 1});
  for (std::size_t i = 0; i < m; ++i) lp.entries.push_back({row, static_cast<int>(i), 1});
  ++row;
  lp.rows.push_back({GLP_FX, 1, 1});
  for (std::size_t j = 0; j < n; ++j) lp.entries.push_back({row, ycol(j), 1});
  lp.obj.assign(lp.cols.size(), 0);
  return lp;
}

Fraction to_fraction(mpq_class q) {
  q.canonicalize();
  Fraction f;
  f.num = q.get_num().get_str();
  f.den = q.get_den().get_str();
  f.value = q.get_d();
  return f;
}

}  // namespace

Fraction make_fraction(std::int64_t num, std::int64_t den) {
  return to_fraction(mpq_class(static_cast<long>(num)) / mpq_class(static_cast<long>(den)));
}

GameSolution solve_game(const IntMatrix& a, bool with_ranges) {
  if (a.rows == 0 || a.cols == 0 || a.num.size() != a.rows * a.cols || a.den <= 0)
    throw Error("metagame: the payoff matrix is empty or malformed");
  glp_term_out(GLP_OFF);
  const std::size_t m = a.rows, n = a.cols;
  IntLp lp = equilibrium_lp(a);
  const GlpPtr p = to_glpk(lp);
  lp.obj[m] = 1;  // maximise v: any feasible point is an equilibrium; this one is a vertex
  set_objective(p.get(), lp, GLP_MAX);
  solve_exact(p.get());
  const auto sol = exact_basic_solution(p.get(), lp);
  const mpq_class den(static_cast<long>(a.den));
  const mpq_class v = sol[m];  // in units of 1/den

  GameSolution g;
  g.value = to_fraction(v / den);
  std::vector<mpq_class> x(sol.begin(), sol.begin() + static_cast<std::ptrdiff_t>(m));
  std::vector<mpq_class> y(sol.begin() + static_cast<std::ptrdiff_t>(m + 1),
                           sol.begin() + static_cast<std::ptrdiff_t>(m + 1 + n));
  for (const auto& q : x) g.blue.push_back(to_fraction(q));
  for (const auto& q : y) g.red.push_back(to_fraction(q));

  // Exploitability of pure policies and of the mixtures, exactly; ties go to the lower index.
  for (std::size_t i = 0; i < m; ++i) {
    std::size_t br = 0;
    for (std::size_t j = 1; j < n; ++j)
      if (a.at(i, j) < a.at(i, br)) br = j;
    g.blue_exploit.push_back(to_fraction((v - mpq_class(static_cast<long>(a.at(i, br)))) / den));
    g.blue_best_reply.push_back(br);
  }
  for (std::size_t j = 0; j < n; ++j) {
    std::size_t br = 0;
    for (std::size_t i = 1; i < m; ++i)
      if (a.at(i, j) > a.at(br, j)) br = i;
    g.red_exploit.push_back(to_fraction((mpq_class(static_cast<long>(a.at(br, j))) - v) / den));
    g.red_best_reply.push_back(br);
  }
  {
    mpq_class worst;
    for (std::size_t j = 0; j < n; ++j) {
      mpq_class s = 0;
      for (std::size_t i = 0; i < m; ++i) s += x[i] * static_cast<long>(a.at(i, j));
      if (j == 0 || s < worst) {
        worst = s;
        g.blue_mix_best_reply = j;
      }
    }
    g.blue_mix_exploit = to_fraction((v - worst) / den);
    mpq_class best;
    for (std::size_t i = 0; i < m; ++i) {
      mpq_class s = 0;
      for (std::size_t j = 0; j < n; ++j) s += y[j] * static_cast<long>(a.at(i, j));
      if (i == 0 || s > best) {
        best = s;
        g.red_mix_best_reply = i;
      }
    }
    g.red_mix_exploit = to_fraction((best - v) / den);
  }
  if (!with_ranges) return g;

  // Ranges over the equilibrium set: min and max of each probability, warm-started from the last basis.
  lp.obj.assign(lp.cols.size(), 0);
  auto range_of = [&](std::size_t col) {
    std::pair<Fraction, Fraction> r;
    lp.obj[col] = 1;
    for (const int dir : {GLP_MIN, GLP_MAX}) {
      set_objective(p.get(), lp, dir);
      solve_exact(p.get());
      const auto s = exact_basic_solution(p.get(), lp);
      (dir == GLP_MIN ? r.first : r.second) = to_fraction(s[col]);
    }
    lp.obj[col] = 0;
    return r;
  };
  g.unique = true;
  for (std::size_t i = 0; i < m; ++i) {
    g.blue_range.push_back(range_of(i));
    if (!(g.blue_range.back().first == g.blue_range.back().second)) g.unique = false;
  }
  for (std::size_t j = 0; j < n; ++j) {
    g.red_range.push_back(range_of(m + 1 + j));
    if (!(g.red_range.back().first == g.red_range.back().second)) g.unique = false;
  }
  return g;
}

std::pair<std::vector<Fraction>, std::vector<Fraction>> relative_interior_equilibrium(
    const IntMatrix& a, const std::vector<bool>& blue_support, const std::vector<bool>& red_support) {
  const std::size_t m = a.rows, n = a.cols;
  if (blue_support.size() != m || red_support.size() != n) throw Error("metagame: support flags of the wrong size");
  glp_term_out(GLP_OFF);
  IntLp lp = equilibrium_lp(a);
  const int t = static_cast<int>(lp.cols.size());
  lp.cols.push_back({GLP_DB, 0, 1});
  // Row j (< n) is BLUE's constraint against column j, row n + i RED's against row i (equilibrium_lp's order).
  for (std::size_t j = 0; j < n; ++j)
    if (!red_support[j]) lp.entries.push_back({static_cast<int>(j), t, -1});
  for (std::size_t i = 0; i < m; ++i)
    if (!blue_support[i]) lp.entries.push_back({static_cast<int>(n + i), t, 1});
  auto floor_row = [&](int col) {  // col - t >= 0
    const int row = static_cast<int>(lp.rows.size());
    lp.rows.push_back({GLP_LO, 0, 0});
    lp.entries.push_back({row, col, 1});
    lp.entries.push_back({row, t, -1});
  };
  for (std::size_t i = 0; i < m; ++i)
    if (blue_support[i]) floor_row(static_cast<int>(i));
  for (std::size_t j = 0; j < n; ++j)
    if (red_support[j]) floor_row(static_cast<int>(m + 1 + j));
  lp.obj.assign(lp.cols.size(), 0);
  lp.obj[static_cast<std::size_t>(t)] = 1;
  const GlpPtr p = to_glpk(lp);
  set_objective(p.get(), lp, GLP_MAX);
  solve_exact(p.get());
  const auto sol = exact_basic_solution(p.get(), lp);
  if (sol[static_cast<std::size_t>(t)] <= 0)
    throw Error("metagame: no equilibrium is strictly inside the constraints the supports leave slack");
  std::pair<std::vector<Fraction>, std::vector<Fraction>> out;
  for (std::size_t i = 0; i < m; ++i) out.first.push_back(to_fraction(sol[i]));
  for (std::size_t j = 0; j < n; ++j) out.second.push_back(to_fraction(sol[m + 1 + j]));
  return out;
}

MixExploit mixture_exploitability(const IntMatrix& a, double value, const std::vector<double>& x,
                                  const std::vector<double>& y) {
  MixExploit e;
  double worst = 0, best = 0;
  for (std::size_t j = 0; j < a.cols; ++j) {
    double s = 0;
    for (std::size_t i = 0; i < a.rows; ++i) s += x[i] * a.value(i, j);
    if (j == 0 || s < worst) {
      worst = s;
      e.blue_best_reply = j;
    }
  }
  for (std::size_t i = 0; i < a.rows; ++i) {
    double s = 0;
    for (std::size_t j = 0; j < a.cols; ++j) s += y[j] * a.value(i, j);
    if (i == 0 || s > best) {
      best = s;
      e.red_best_reply = i;
    }
  }
  e.blue = std::max(0.0, value - worst);
  e.red = std::max(0.0, best - value);
  return e;
}

}  // namespace advplan::metagame
