// Bradley-Terry by Hunter's MM algorithm and Elo (docs/METRICS.md "Ratings").
#include "advplan/stats/ratings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "advplan/core/error.hpp"
#include "core/det_math.hpp"

namespace advplan {

void PairwiseCounts::add(std::size_t a, std::size_t b, double score_a, double n) {
  if (a >= players || b >= players || a == b || !(n > 0) || !(score_a >= 0 && score_a <= n))
    throw Error(fmt::format("ratings: a game of player {} against {} with score {} of {} is malformed", a, b, score_a, n));
  score[a * players + b] += score_a;
  score[b * players + a] += n - score_a;
  games[a * players + b] += n;
  games[b * players + a] += n;
}

namespace {

constexpr double kLn10 = 2.302585092994045684017991454684364208;

/// Players reached from player 0 along edges a -> b with score(a, b) > 0 (forward) or score(b, a) > 0 (backward).
std::vector<bool> reached(const PairwiseCounts& c, bool forward) {
  const std::size_t n = c.players;
  std::vector<bool> seen(n, false);
  std::vector<std::size_t> stack{0};
  seen[0] = true;
  while (!stack.empty()) {
    const std::size_t a = stack.back();
    stack.pop_back();
    for (std::size_t b = 0; b < n; ++b) {
      const double s = forward ? c.score[a * n + b] : c.score[b * n + a];
      if (!seen[b] && s > 0) seen[b] = true, stack.push_back(b);
    }
  }
  return seen;
}

}  // namespace

BradleyTerryFit bradley_terry_mm(const PairwiseCounts& c) {
  const std::size_t n = c.players;
  if (n < 2 || c.score.size() != n * n || c.games.size() != n * n)
    throw Error(fmt::format("ratings: Bradley-Terry needs at least two players and an n x n count ({} players)", n));
  BradleyTerryFit fit;
  const std::vector<bool> fw = reached(c, true), bw = reached(c, false);
  fit.exists = std::all_of(fw.begin(), fw.end(), [](bool b) { return b; }) &&
               std::all_of(bw.begin(), bw.end(), [](bool b) { return b; });
  if (!fit.exists) return fit;
  std::vector<double> w(n, 0.0), gamma(n, 1.0), next(n);
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b) w[a] += c.score[a * n + b];
  while (fit.sweeps < kBradleyTerryMaxSweeps && !fit.converged) {
    ++fit.sweeps;
    double log_sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
      double den = 0;
      for (std::size_t j = 0; j < n; ++j)
        if (j != i && c.games[i * n + j] > 0) den += c.games[i * n + j] / (gamma[i] + gamma[j]);
      next[i] = w[i] / den;
      log_sum += det::log(next[i]);
    }
    const double scale = det::exp(-log_sum / static_cast<double>(n));
    double change = 0;
    for (std::size_t i = 0; i < n; ++i) {
      next[i] *= scale;
      change = std::max(change, std::fabs(det::log(next[i]) - det::log(gamma[i])));
    }
    gamma.swap(next);
    fit.converged = change <= kBradleyTerryTolerance;
  }
  double mean = 0;
  for (const double g : gamma) mean += det::log(g);
  mean /= static_cast<double>(n);
  for (const double g : gamma) fit.theta.push_back(det::log(g) - mean);
  return fit;
}

std::vector<double> elo_ratings(std::size_t players, const std::vector<EloGame>& games, double k) {
  std::vector<double> r(players, kEloInitial);
  for (const EloGame& g : games) {
    if (g.a >= players || g.b >= players || g.a == g.b || !(g.score_a >= 0 && g.score_a <= 1))
      throw Error(fmt::format("ratings: Elo game {} against {} with score {} is malformed", g.a, g.b, g.score_a));
    const double e = 1.0 / (1.0 + det::exp((r[g.b] - r[g.a]) / kEloScale * kLn10));
    const double d = k * (g.score_a - e);
    r[g.a] += d;
    r[g.b] -= d;
  }
  return r;
}

}  // namespace advplan
