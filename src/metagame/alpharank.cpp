// alpha-Rank (Omidshafiei et al. 2019) and the response graph of the meta-game (docs/METRICS.md "Meta-game").
// Fixation probabilities follow the paper's formulas and are kept as logarithms; the stationary distribution is
// computed so that no alpha can make it fail: the closed classes of the chain are found first, each is solved
// by GTH elimination in logarithms (no subtraction, so probabilities far below the smallest double stay
// accurate), and the mass of the uniform start is split among them by absorption probabilities.
#include <Eigen/Dense>

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

/// The stationary distribution from log-transition probabilities (off-diagonal entries; -inf for none).
std::vector<double> stationary_from_log(const std::vector<double>& l, std::size_t n, std::size_t* closed_classes) {
  if (n == 0) return {};
  // Reachability (transitive closure; n is at most a few hundred profiles).
  std::vector<char> reach(n * n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    reach[i * n + i] = 1;
    for (std::size_t j = 0; j < n; ++j)
      if (i != j && l[i * n + j] > kNegInf) reach[i * n + j] = 1;
  }
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t i = 0; i < n; ++i)
      if (reach[i * n + k])
        for (std::size_t j = 0; j < n; ++j)
          if (reach[k * n + j]) reach[i * n + j] = 1;
  // A state is recurrent when every state it reaches reaches it back; its class is the states mutually reachable.
  std::vector<long> cls(n, -1);
  std::vector<std::vector<std::size_t>> classes;
  for (std::size_t i = 0; i < n; ++i) {
    if (cls[i] >= 0) continue;
    bool recurrent = true;
    for (std::size_t j = 0; j < n && recurrent; ++j)
      if (reach[i * n + j] && !reach[j * n + i]) recurrent = false;
    if (!recurrent) continue;
    std::vector<std::size_t> members;
    for (std::size_t j = 0; j < n; ++j)
      if (reach[i * n + j] && reach[j * n + i]) {
        members.push_back(j);
        cls[j] = static_cast<long>(classes.size());
      }
    classes.push_back(std::move(members));
  }
  if (closed_classes) *closed_classes = classes.size();
  // Absorption probabilities of the transient states from the uniform start: (I - Q) B = R.
  std::vector<std::size_t> transient;
  for (std::size_t i = 0; i < n; ++i)
    if (cls[i] < 0) transient.push_back(i);
  std::vector<double> weight(classes.size(), 0);
  for (std::size_t c = 0; c < classes.size(); ++c) weight[c] = static_cast<double>(classes[c].size());
  if (!transient.empty()) {
    const auto t = static_cast<Eigen::Index>(transient.size());
    Eigen::MatrixXd a = Eigen::MatrixXd::Zero(t, t);
    Eigen::MatrixXd r = Eigen::MatrixXd::Zero(t, static_cast<Eigen::Index>(classes.size()));
    for (Eigen::Index u = 0; u < t; ++u) {
      const std::size_t i = transient[static_cast<std::size_t>(u)];
      double out = 0;  // the diagonal of I - Q as the sum of the exits, not as 1 - P_ii (which cancels)
      for (std::size_t j = 0; j < n; ++j) {
        if (j == i) continue;
        const double pij = det::exp(l[i * n + j]);
        out += pij;
        if (cls[j] >= 0) r(u, cls[j]) += pij;
      }
      a(u, u) = out;
      for (Eigen::Index v = 0; v < t; ++v)
        if (v != u) a(u, v) = -det::exp(l[i * n + transient[static_cast<std::size_t>(v)]]);
    }
    const Eigen::MatrixXd b = a.fullPivLu().solve(r);
    for (std::size_t c = 0; c < classes.size(); ++c)
      for (Eigen::Index u = 0; u < t; ++u) weight[c] += std::clamp(b(u, static_cast<Eigen::Index>(c)), 0.0, 1.0);
  }
  const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
  std::vector<double> pi(n, 0);
  for (std::size_t c = 0; c < classes.size(); ++c) {
    const auto& mem = classes[c];
    const std::size_t k = mem.size();
    std::vector<double> block(k * k, kNegInf);
    for (std::size_t x = 0; x < k; ++x)
      for (std::size_t y = 0; y < k; ++y) block[x * k + y] = l[mem[x] * n + mem[y]];
    const auto local = k == 1 ? std::vector<double>{1.0} : gth_log(std::move(block), k);
    for (std::size_t x = 0; x < k; ++x) pi[mem[x]] += weight[c] / total * local[x];
  }
  return pi;
}

/// Fills out.transition from the log matrix (diagonal: 1 minus the exits) and solves for pi.
void finish(AlphaRank& out, std::vector<double>& l, std::size_t n) {
  out.transition.assign(n * n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    double off = 0;
    for (std::size_t j = 0; j < n; ++j)
      if (j != i) off += out.transition[i * n + j] = det::exp(l[i * n + j]);
    out.transition[i * n + i] = 1 - off;
    l[i * n + i] = kNegInf;
  }
  out.pi = stationary_from_log(l, n, &out.closed_classes);
}

}  // namespace

std::vector<double> stationary_distribution(const std::vector<double>& p, std::size_t n, std::size_t* closed_classes) {
  std::vector<double> l(n * n, kNegInf);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (i != j && p[i * n + j] > 0) l[i * n + j] = det::log(p[i * n + j]);
  return stationary_from_log(l, n, closed_classes);
}

AlphaRank alpharank_two_population(const std::vector<double>& blue, const std::vector<double>& red, std::size_t rows,
                                   std::size_t cols, double alpha, int m) {
  if (m < 2) throw Error("alpha-Rank: the population size m must be at least 2");
  if (!(alpha > 0)) throw Error("alpha-Rank: alpha must be positive");
  const std::size_t n = rows * cols;
  AlphaRank out;
  const std::size_t deviations = (rows - 1) + (cols - 1);
  if (deviations == 0) {
    out.pi = {1.0};
    out.transition = {1.0};
    return out;
  }
  const double log_eta = -det::log(static_cast<double>(deviations));
  std::vector<double> l(n * n, kNegInf);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) {
      const std::size_t s = i * cols + j;
      for (std::size_t i2 = 0; i2 < rows; ++i2)
        if (i2 != i) l[s * n + i2 * cols + j] = log_eta + log_fixation(blue[i2 * cols + j] - blue[s], alpha, m);
      for (std::size_t j2 = 0; j2 < cols; ++j2)
        if (j2 != j) l[s * n + i * cols + j2] = log_eta + log_fixation(red[i * cols + j2] - red[s], alpha, m);
    }
  finish(out, l, n);
  return out;
}

AlphaRank alpharank_single_population(const std::vector<double>& payoff, std::size_t k, double alpha, int m) {
  if (m < 2) throw Error("alpha-Rank: the population size m must be at least 2");
  if (!(alpha > 0)) throw Error("alpha-Rank: alpha must be positive");
  AlphaRank out;
  if (k == 1) {
    out.pi = {1.0};
    out.transition = {1.0};
    return out;
  }
  const double log_eta = -det::log(static_cast<double>(k - 1));
  auto M = [&](std::size_t a, std::size_t b) { return payoff[a * k + b]; };
  std::vector<double> l(k * k, kNegInf);
  for (std::size_t s = 0; s < k; ++s)
    for (std::size_t r = 0; r < k; ++r)
      if (r != s) l[s * k + r] = log_eta + detail::single_log_fixation(M, s, r, alpha, m);
  finish(out, l, k);
  return out;
}

std::vector<ResponseEdge> response_graph(const std::vector<double>& blue, const std::vector<double>& red,
                                         std::size_t rows, std::size_t cols) {
  std::vector<ResponseEdge> out;
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) {
      double best_b = blue[i * cols + j], best_r = red[i * cols + j];
      for (std::size_t i2 = 0; i2 < rows; ++i2) best_b = std::max(best_b, blue[i2 * cols + j]);
      for (std::size_t j2 = 0; j2 < cols; ++j2) best_r = std::max(best_r, red[i * cols + j2]);
      for (std::size_t i2 = 0; i2 < rows; ++i2) {
        const double g = blue[i2 * cols + j] - blue[i * cols + j];
        if (i2 != i && g > kTie) out.push_back({i, j, i2, j, true, g, blue[i2 * cols + j] == best_b});
      }
      for (std::size_t j2 = 0; j2 < cols; ++j2) {
        const double g = red[i * cols + j2] - red[i * cols + j];
        if (j2 != j && g > kTie) out.push_back({i, j, i, j2, false, g, red[i * cols + j2] == best_r});
      }
    }
  return out;
}

}  // namespace advplan::metagame
