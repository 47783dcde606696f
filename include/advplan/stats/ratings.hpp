#pragma once
// Ratings from pairwise outcomes (docs/METRICS.md "Ratings"): Bradley-Terry strengths fitted by Hunter's (2004)
// minorisation-maximisation (MM) algorithm with a fixed iteration rule, and Elo ratings in a given game order.
#include <cstddef>
#include <vector>

namespace advplan {

/// Pairwise outcomes among `players`: score[a * players + b] is a's score against b summed over their games (a win
/// 1, a tie 1/2, a share of replications its share), games[a * players + b] = games[b * players + a] their count.
struct PairwiseCounts {
  std::size_t players = 0;
  std::vector<double> score, games;
  explicit PairwiseCounts(std::size_t n = 0) : players(n), score(n * n, 0.0), games(n * n, 0.0) {}
  /// `n` games of a against b in which a scored `score_a` (0 <= score_a <= n).
  void add(std::size_t a, std::size_t b, double score_a, double n = 1);
};

/// The MM fit stops after the first sweep whose largest change of a log-strength is at most this ...
inline constexpr double kBradleyTerryTolerance = 1e-13;
/// ... or after this many sweeps (then converged is false).
inline constexpr std::size_t kBradleyTerryMaxSweeps = 100000;

struct BradleyTerryFit {
  bool exists = false;        ///< Hunter's condition: the "scored against" graph is strongly connected
  bool converged = false;     ///< the change fell to kBradleyTerryTolerance within kBradleyTerryMaxSweeps
  std::size_t sweeps = 0;
  std::vector<double> theta;  ///< log-strengths, mean 0 over the players (empty when !exists)
};

/// Bradley-Terry maximum likelihood, P(a beats b) = 1 / (1 + exp(theta_b - theta_a)), by Hunter's MM sweep
/// gamma_i <- W_i / sum_j n_ij / (gamma_i + gamma_j) (all i from the previous sweep), each sweep rescaled to
/// geometric mean 1. Throws advplan::Error for fewer than two players or a malformed count.
BradleyTerryFit bradley_terry_mm(const PairwiseCounts& c);

/// One game for Elo: a against b, a's score in [0, 1].
struct EloGame {
  std::size_t a = 0, b = 0;
  double score_a = 0;
};
inline constexpr double kEloK = 16, kEloInitial = 1500, kEloScale = 400;

/// Elo in the order of `games`: E = 1 / (1 + 10^((R_b - R_a) / 400)), R_a += K (S - E), R_b -= K (S - E).
std::vector<double> elo_ratings(std::size_t players, const std::vector<EloGame>& games, double k = kEloK);

}  // namespace advplan
