// Sparse alpha-Rank (docs/METRICS.md "Meta-game", "Sparse alpha-Rank"): the two-population chain kept as its
// off-diagonal edges only (each profile has |B| + |R| - 2 of them), its closed classes found by Tarjan's
// strongly-connected-components pass (Boost.Graph), each class solved by the dense solver's own GTH elimination in
// logarithms when it is small and by a Jacobi-preconditioned BiCGSTAB on the sparse balance equations otherwise (with the
// residual reported), and the uniform start's mass split among the classes by one sparse solve of the transient
// part. Memory is O(profiles x (|B| + |R|)); nothing is profiles squared.
#include <Eigen/IterativeLinearSolvers>
#include <Eigen/Sparse>
#include <Eigen/SparseLU>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/strong_components.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "advplan/core/error.hpp"
#include "advplan/metagame/metagame.hpp"
#include "alpharank_math.hpp"
#include "core/det_math.hpp"

namespace advplan::metagame {
namespace {

using detail::gth_log;
using detail::kNegInf;
using detail::kTie;
using detail::log_add;
using detail::log_fixation;

/// The chain's off-diagonal edges, row-compressed: profile s's edges are [start[s], start[s+1]), each a target
/// and its log-probability (finite: -inf edges are not kept).
struct Edges {
  std::vector<std::size_t> start, to;
  std::vector<double> logp;
};

Edges build_edges(const std::vector<double>& blue, const std::vector<double>& red, std::size_t rows, std::size_t cols,
                  double alpha, int m) {
  const std::size_t n = rows * cols, deviations = (rows - 1) + (cols - 1);
  const double log_eta = -det::log(static_cast<double>(deviations));
  Edges e;
  e.start.reserve(n + 1);
  e.start.push_back(0);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) {
      const std::size_t s = i * cols + j;
      // Targets in increasing index order, as the dense matrix's row: the column's blue moves interleave with
      // the row's red moves by index.
      auto add = [&](std::size_t t, double lp) {
        if (lp > kNegInf) {
          e.to.push_back(t);
          e.logp.push_back(lp);
        }
      };
      for (std::size_t i2 = 0; i2 < rows; ++i2) {
        if (i2 == i) {
          for (std::size_t j2 = 0; j2 < cols; ++j2)
            if (j2 != j) add(i * cols + j2, log_eta + log_fixation(red[i * cols + j2] - red[s], alpha, m));
          continue;
        }
        add(i2 * cols + j, log_eta + log_fixation(blue[i2 * cols + j] - blue[s], alpha, m));
      }
      e.start.push_back(e.to.size());
    }
  return e;
}

/// The single-population chain (alpharank.cpp's alpharank_single_population, the same operations) as edges.
Edges build_single_edges(const std::vector<double>& payoff, std::size_t k, double alpha, int m) {
  const double log_eta = -det::log(static_cast<double>(k - 1));
  auto M = [&](std::size_t a, std::size_t b) { return payoff[a * k + b]; };
  Edges e;
  e.start.push_back(0);
  for (std::size_t s = 0; s < k; ++s) {
    for (std::size_t r = 0; r < k; ++r) {
      if (r == s) continue;
      const double log_rho = detail::single_log_fixation(M, s, r, alpha, m);
      if (log_eta + log_rho > kNegInf) {
        e.to.push_back(r);
        e.logp.push_back(log_eta + log_rho);
      }
    }
    e.start.push_back(e.to.size());
  }
  return e;
}

SparseAlphaRank solve_sparse(const Edges& e, std::size_t n, const SparseAlphaRankOptions& opt);

}  // namespace

SparseAlphaRank alpharank_two_population_sparse(const std::vector<double>& blue, const std::vector<double>& red,
                                                std::size_t rows, std::size_t cols, double alpha, int m,
                                                const SparseAlphaRankOptions& opt) {
  if (m < 2) throw Error("alpha-Rank: the population size m must be at least 2");
  if (!(alpha > 0)) throw Error("alpha-Rank: alpha must be positive");
  const std::size_t n = rows * cols;
  if (n == 0) return {};
  if (rows + cols == 2) {
    SparseAlphaRank out;
    out.pi = {1.0};
    return out;
  }
  return solve_sparse(build_edges(blue, red, rows, cols, alpha, m), n, opt);
}

SparseAlphaRank alpharank_single_population_sparse(const std::vector<double>& payoff, std::size_t k, double alpha,
                                                   int m, const SparseAlphaRankOptions& opt) {
  if (m < 2) throw Error("alpha-Rank: the population size m must be at least 2");
  if (!(alpha > 0)) throw Error("alpha-Rank: alpha must be positive");
  if (k == 0) return {};
  if (k == 1) {
    SparseAlphaRank out;
    out.pi = {1.0};
    return out;
  }
  return solve_sparse(build_single_edges(payoff, k, alpha, m), k, opt);
}

AlphaSuggestion suggest_alpha(const std::vector<double>& blue, const std::vector<double>& red, std::size_t rows,
                              std::size_t cols, int m) {
  AlphaSuggestion out;
  auto order_of = [](const std::vector<double>& mass) {
    std::vector<std::size_t> o(mass.size());
    std::iota(o.begin(), o.end(), std::size_t{0});
    std::stable_sort(o.begin(), o.end(), [&](std::size_t a, std::size_t b) { return mass[a] > mass[b] + 1e-9; });
    return o;
  };
  for (int e = -8; e <= 16; ++e) {
    // 10^(e/4): the whole powers as literals, the others by the CPU-independent exp (core/det_math.hpp).
    static constexpr double kWhole[] = {0.01, 0.1, 1, 10, 100, 1000, 10000};
    const double alpha = e % 4 == 0 ? kWhole[(e + 8) / 4] : det::exp(e / 4.0 * 2.302585092994045684);
    std::vector<double> pi;
    if (rows * cols <= kDenseAlphaRankMax) {
      pi = alpharank_two_population(blue, red, rows, cols, alpha, m).pi;
    } else {
      pi = alpharank_two_population_sparse(blue, red, rows, cols, alpha, m).pi;
    }
    std::vector<double> mb(rows, 0.0), mr(cols, 0.0);
    for (std::size_t i = 0; i < rows; ++i)
      for (std::size_t j = 0; j < cols; ++j) {
        mb[i] += pi[i * cols + j];
        mr[j] += pi[i * cols + j];
      }
    out.sweep.push_back({alpha, order_of(mb), order_of(mr)});
  }
  std::size_t from = out.sweep.size() - 1;
  while (from > 0 && out.sweep[from - 1].blue_order == out.sweep.back().blue_order &&
         out.sweep[from - 1].red_order == out.sweep.back().red_order)
    --from;
  out.alpha = out.sweep[from].alpha;
  return out;
}

namespace {

/// The chain's closed classes: the strongly connected components with no edge out of them, in order of their
/// smallest profile (the dense solver's order); each profile's class (-1 when transient).
struct ClosedClasses {
  std::vector<long> of;
  std::vector<std::vector<std::size_t>> members;
};

ClosedClasses closed_classes(const Edges& e, std::size_t n) {
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS>;
  Graph g(n);
  for (std::size_t s = 0; s < n; ++s)
    for (std::size_t x = e.start[s]; x < e.start[s + 1]; ++x) boost::add_edge(s, e.to[x], g);
  std::vector<int> comp(n);
  const int n_comp = boost::strong_components(g, boost::make_iterator_property_map(comp.begin(),
                                                                                     boost::get(boost::vertex_index, g)));
  std::vector<char> leaves(static_cast<std::size_t>(n_comp), 0);
  for (std::size_t s = 0; s < n; ++s)
    for (std::size_t x = e.start[s]; x < e.start[s + 1]; ++x)
      if (comp[e.to[x]] != comp[s]) leaves[static_cast<std::size_t>(comp[s])] = 1;
  ClosedClasses out;
  out.of.assign(n, -1);
  std::vector<long> class_of_comp(static_cast<std::size_t>(n_comp), -1);
  for (std::size_t s = 0; s < n; ++s) {
    const auto c = static_cast<std::size_t>(comp[s]);
    if (leaves[c]) continue;
    if (class_of_comp[c] < 0) {
      class_of_comp[c] = static_cast<long>(out.members.size());
      out.members.emplace_back();
    }
    out.of[s] = class_of_comp[c];
    out.members[static_cast<std::size_t>(out.of[s])].push_back(s);
  }
  return out;
}

/// The uniform start's mass of each class: its own states, plus sum_u B(u, c) over the transient states u, the
/// absorption probabilities, as y^T R_c with (I - Q)^T y = 1 (one solve for every class).
std::vector<double> class_weights(const Edges& e, std::size_t n, const ClosedClasses& cc) {
  const auto& classes = cc.members;
  const auto& cls = cc.of;
  std::vector<double> weight(classes.size());
  for (std::size_t c = 0; c < classes.size(); ++c) weight[c] = static_cast<double>(classes[c].size());
  std::vector<std::size_t> transient, t_index(n, n);
  for (std::size_t s = 0; s < n; ++s)
    if (cls[s] < 0) {
      t_index[s] = transient.size();
      transient.push_back(s);
    }
  if (transient.empty()) return weight;
  const auto t = static_cast<Eigen::Index>(transient.size());
  std::vector<Eigen::Triplet<double>> trip;
  for (std::size_t u = 0; u < transient.size(); ++u) {
    const std::size_t s = transient[u];
    double exits = 0;  // the diagonal of I - Q as the sum of the exits, not 1 - P_ss (which cancels)
    for (std::size_t x = e.start[s]; x < e.start[s + 1]; ++x) {
      const double p = det::exp(e.logp[x]);
      exits += p;
      if (const std::size_t v = t_index[e.to[x]]; v < n)  // (I - Q)^T: entry (v, u) = -P(u -> v)
        trip.emplace_back(static_cast<Eigen::Index>(v), static_cast<Eigen::Index>(u), -p);
    }
    trip.emplace_back(static_cast<Eigen::Index>(u), static_cast<Eigen::Index>(u), exits);
  }
  Eigen::SparseMatrix<double> a(t, t);
  a.setFromTriplets(trip.begin(), trip.end());
  a.makeCompressed();
  Eigen::SparseLU<Eigen::SparseMatrix<double>, Eigen::COLAMDOrdering<int>> lu;
  lu.compute(a);
  if (lu.info() != Eigen::Success) throw Error("alpha-Rank: the transient part of the chain could not be factorised");
  const Eigen::VectorXd y = lu.solve(Eigen::VectorXd::Ones(t));
  for (std::size_t u = 0; u < transient.size(); ++u) {
    const std::size_t s = transient[u];
    for (std::size_t x = e.start[s]; x < e.start[s + 1]; ++x)
      if (const long c = cls[e.to[x]]; c >= 0)
        weight[static_cast<std::size_t>(c)] += y(static_cast<Eigen::Index>(u)) * det::exp(e.logp[x]);
  }
  for (double& w : weight) w = std::max(w, 0.0);
  return weight;
}

/// A large class's stationary distribution. Balance: pi (I - P) = 0 over the class, i.e. (I - P)^T pi = 0, with the
/// last equation replaced by sum pi = 1; BiCGSTAB with a diagonal preconditioner, from the uniform vector. `pos` is
/// each profile's place in the class (n outside); the solver's iterations raise `iterations`.
std::vector<double> class_by_bicgstab(const Edges& e, const std::vector<std::size_t>& mem,
                                      const std::vector<std::size_t>& pos, const SparseAlphaRankOptions& opt,
                                      std::size_t& iterations) {
  const std::size_t k = mem.size();
  const auto kk = static_cast<Eigen::Index>(k);
  std::vector<Eigen::Triplet<double>> trip;
  for (std::size_t x = 0; x < k; ++x) {
    double exits = 0;
    for (std::size_t y = e.start[mem[x]]; y < e.start[mem[x] + 1]; ++y) {
      const double p = det::exp(e.logp[y]);
      exits += p;
      const std::size_t to = pos[e.to[y]];
      if (to + 1 < k) trip.emplace_back(static_cast<Eigen::Index>(to), static_cast<Eigen::Index>(x), -p);
    }
    if (x + 1 < k) trip.emplace_back(static_cast<Eigen::Index>(x), static_cast<Eigen::Index>(x), exits);
    trip.emplace_back(kk - 1, static_cast<Eigen::Index>(x), 1.0);
  }
  Eigen::SparseMatrix<double> a(kk, kk);
  a.setFromTriplets(trip.begin(), trip.end());
  a.makeCompressed();
  Eigen::VectorXd b = Eigen::VectorXd::Zero(kk);
  b(kk - 1) = 1;
  Eigen::BiCGSTAB<Eigen::SparseMatrix<double>, Eigen::DiagonalPreconditioner<double>> solver;
  solver.setTolerance(opt.tolerance);
  solver.setMaxIterations(opt.max_iterations);
  solver.compute(a);
  if (solver.info() != Eigen::Success) throw Error("alpha-Rank: a closed class could not be preconditioned");
  const Eigen::VectorXd v = solver.solveWithGuess(b, Eigen::VectorXd::Constant(kk, 1.0 / static_cast<double>(k)));
  iterations = std::max(iterations, static_cast<std::size_t>(solver.iterations()));
  std::vector<double> local(k, 0.0);
  double sum = 0;
  for (std::size_t x = 0; x < k; ++x) sum += local[x] = std::max(v(static_cast<Eigen::Index>(x)), 0.0);
  for (double& x : local) x /= sum;
  return local;
}

/// A closed class's stationary distribution (over its members, in order): GTH elimination in logarithms up to
/// opt.gth_max members, BiCGSTAB beyond.
std::vector<double> class_distribution(const Edges& e, std::size_t n, const std::vector<std::size_t>& mem,
                                       const SparseAlphaRankOptions& opt, std::size_t& iterations) {
  const std::size_t k = mem.size();
  if (k == 1) return {1.0};
  std::vector<std::size_t> pos(n, n);  // a profile's place in the class
  for (std::size_t x = 0; x < k; ++x) pos[mem[x]] = x;
  if (k > opt.gth_max) return class_by_bicgstab(e, mem, pos, opt, iterations);
  std::vector<double> block(k * k, kNegInf);
  for (std::size_t x = 0; x < k; ++x)
    for (std::size_t y = e.start[mem[x]]; y < e.start[mem[x] + 1]; ++y)
      if (pos[e.to[y]] < n) block[x * k + pos[e.to[y]]] = e.logp[y];
  return gth_log(std::move(block), k);
}

/// The residual ||pi P - pi||_1 of the answer, over the whole chain (P's diagonal is 1 minus the exits).
double chain_residual(const Edges& e, std::size_t n, const std::vector<double>& pi) {
  std::vector<double> next(pi);
  for (std::size_t s = 0; s < n; ++s)
    for (std::size_t x = e.start[s]; x < e.start[s + 1]; ++x) {
      const double f = pi[s] * det::exp(e.logp[x]);
      next[e.to[x]] += f;
      next[s] -= f;
    }
  double r = 0;
  for (std::size_t s = 0; s < n; ++s) r += std::abs(next[s] - pi[s]);
  return r;
}

SparseAlphaRank solve_sparse(const Edges& e, std::size_t n, const SparseAlphaRankOptions& opt) {
  SparseAlphaRank out;
  out.edges = e.to.size();
  const ClosedClasses cc = closed_classes(e, n);
  out.closed_classes = cc.members.size();
  const std::vector<double> weight = class_weights(e, n, cc);
  const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
  // Each class's stationary distribution, weighted by its share of the start's mass.
  out.pi.assign(n, 0.0);
  for (std::size_t c = 0; c < cc.members.size(); ++c) {
    const auto& mem = cc.members[c];
    const std::vector<double> local = class_distribution(e, n, mem, opt, out.iterations);
    for (std::size_t x = 0; x < mem.size(); ++x) out.pi[mem[x]] += weight[c] / total * local[x];
  }
  out.residual = chain_residual(e, n, out.pi);
  return out;
}

}  // namespace
}  // namespace advplan::metagame
