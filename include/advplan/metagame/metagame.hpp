#pragma once
// The empirical BLUE x RED meta-game (docs/METRICS.md "Meta-game"): the payoff matrix from the trace CSVs of one
// or more runs, its exact solution as a constant-sum game, exploitability, bootstrap intervals over scenarios,
// alpha-Rank and the response graph. The exact solver is GLPK's rational simplex (glp_exact, GPL-3+); this
// header and src/metagame/ form the separate target advplan_metagame, which libadvplan does not
// link (see README "Meta-game" on licensing).
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "advplan/stats/ratings.hpp"

namespace advplan::metagame {

/// An exact rational, as reduced decimal strings, with its nearest double.
struct Fraction {
  std::string num = "0", den = "1";
  double value = 0;
  /// "p/q", or "p" when q = 1.
  std::string str() const { return den == "1" ? num : num + "/" + den; }
  bool operator==(const Fraction& o) const { return num == o.num && den == o.den; }
};

/// num / den, reduced.
Fraction make_fraction(std::int64_t num, std::int64_t den);

/// BLUE's payoff matrix with a common denominator: A[i][j] = num[i * cols + j] / den.
struct IntMatrix {
  std::size_t rows = 0, cols = 0;
  std::vector<std::int64_t> num;
  std::int64_t den = 1;
  std::int64_t at(std::size_t i, std::size_t j) const { return num[i * cols + j]; }
  double value(std::size_t i, std::size_t j) const { return static_cast<double>(at(i, j)) / static_cast<double>(den); }
};

/// The exact analysis of the constant-sum game A (BLUE maximises, RED minimises).
struct GameSolution {
  Fraction value;                          ///< v = max_x min_y x'Ay
  std::vector<Fraction> blue, red;         ///< one equilibrium (a vertex of each optimal set)
  /// Over every equilibrium: the least and greatest probability of each policy (filled by with_ranges).
  std::vector<std::pair<Fraction, Fraction>> blue_range, red_range;
  bool unique = true;                      ///< both optimal sets are single points (with_ranges only)
  /// Exploitability of each pure policy (v - min_j A_ij for BLUE i, max_i A_ij - v for RED j) and its best reply.
  std::vector<Fraction> blue_exploit, red_exploit;
  std::vector<std::size_t> blue_best_reply, red_best_reply;
  /// The same for the equilibrium mixtures above (0 at an exact equilibrium).
  Fraction blue_mix_exploit, red_mix_exploit;
  std::size_t blue_mix_best_reply = 0, red_mix_best_reply = 0;
};

/// Solves A exactly with GLPK's rational simplex. `with_ranges` adds 2(rows + cols) linear programs that give
/// each policy's probability range over the equilibrium set, and uniqueness. Throws advplan::Error when GLPK
/// reports no optimum (which a finite matrix game cannot cause).
GameSolution solve_game(const IntMatrix& a, bool with_ranges = true);

/// An equilibrium (x, y) in the relative interior of X* x Y*, exactly: the equilibrium program with a variable t in
/// [0, 1] subtracted from every constraint that some equilibrium leaves slack (x_i >= t for BLUE i in
/// `blue_support`, y_j >= t for RED j in `red_support`; BLUE's constraint against each column outside
/// `red_support` and RED's against each row outside `blue_support` need a slack of t units), t maximised. The
/// supports are the policies whose range over the equilibria has a positive maximum (solve_game's ranges); by
/// strict complementarity (Goldman-Tucker) the optimal t is positive. Throws Error when it is not.
std::pair<std::vector<Fraction>, std::vector<Fraction>> relative_interior_equilibrium(
    const IntMatrix& a, const std::vector<bool>& blue_support, const std::vector<bool>& red_support);

/// Exploitability of the BLUE mixture x (v - min_j (x'A)_j) and of the RED mixture y (max_i (Ay)_i - v), in
/// doubles, with their best replies; used on bootstrap resamples.
struct MixExploit {
  double blue = 0, red = 0;
  std::size_t blue_best_reply = 0, red_best_reply = 0;
};
MixExploit mixture_exploitability(const IntMatrix& a, double value, const std::vector<double>& x,
                                  const std::vector<double>& y);

// ---- Nash averaging (Balduzzi et al. 2018) ----------------------------------------------------------------------

/// The maximum-entropy equilibrium of the zero-sum game A and the ratings it gives (docs/METRICS.md "Nash
/// averaging"). Each side's optimal set is a polytope (X* for BLUE, Y* for RED; the equilibria are X* x Y*), so the
/// maxent equilibrium is the pair of each side's maxent mixture over its own set.
struct NashAverage {
  std::vector<double> blue, red;                ///< the maxent mixtures
  /// BLUE i: (A q)_i, its payoff against RED's maxent mixture q; RED j: its own payoff against BLUE's maxent mixture
  /// p, 1 - (p'A)_j for win rates and -(p'A)_j for advantage (alpha-Rank's convention).
  std::vector<double> blue_rating, red_rating;
  bool blue_point = false, red_point = false;   ///< the side's optimal set is one point: the mixture is exact (rounded)
  /// The largest violation, computed exactly in rationals, of the side's optimal set's equations and inequalities by
  /// the reported (double) mixture.
  double blue_residual = 0, red_residual = 0;
  std::size_t newton_steps = 0;
};

/// `g` must come from solve_game(a, true) (the ranges give the supports and the always-tight constraints).
NashAverage nash_average(const IntMatrix& a, const GameSolution& g, bool win);

// ---- alpha-Rank (Omidshafiei et al. 2019) ---------------------------------------------------------------------

inline constexpr double kInfiniteAlpha = std::numeric_limits<double>::infinity();

/// The stationary distribution of a row-stochastic matrix P (n x n, row-major). For a reducible chain it is the
/// long-run average from the uniform start: each closed class's own stationary distribution (GTH elimination),
/// weighted by the probability of ending in it. `closed_classes` receives their number.
std::vector<double> stationary_distribution(const std::vector<double>& p, std::size_t n,
                                            std::size_t* closed_classes = nullptr);

struct AlphaRank {
  std::vector<double> pi;         ///< over profiles (two populations: index i * cols + j) or strategies
  std::vector<double> transition; ///< the Markov chain, row-major
  std::size_t closed_classes = 1; ///< 1 when the chain has a single closed class
};

/// Two populations (BLUE rows, RED columns) with payoffs blue[i*cols+j] and red[i*cols+j]; population size m,
/// selection intensity alpha (kInfiniteAlpha: the limit chain, fixation 1 for a gain, 1/m for a tie, 0 for a loss).
AlphaRank alpharank_two_population(const std::vector<double>& blue, const std::vector<double>& red, std::size_t rows,
                                   std::size_t cols, double alpha, int m);
/// `advplan metagame` solves alpha-Rank densely up to this many profiles and sparsely above.
inline constexpr std::size_t kDenseAlphaRankMax = 256;

/// How the sparse solver treats a closed class: GTH elimination in logarithms (the dense solver's, exact) up to
/// gth_max states, BiCGSTAB with a diagonal (Jacobi) preconditioner above, to a relative residual of `tolerance`.
struct SparseAlphaRankOptions {
  std::size_t gth_max = 200;
  double tolerance = 1e-14;
  int max_iterations = 20000;
};
struct SparseAlphaRank {
  std::vector<double> pi;          ///< over profiles, index i * cols + j
  std::size_t closed_classes = 1;
  std::size_t edges = 0;           ///< off-diagonal transitions kept (profiles x (|B| + |R| - 2) at most)
  std::size_t iterations = 0;      ///< BiCGSTAB iterations of the largest iterative class solve (0: none)
  double residual = 0;             ///< ||pi P - pi||_1 of the answer
};
/// alpharank_two_population without the n x n matrix (docs/METRICS.md "Sparse alpha-Rank"): the same chain as its
/// edges, closed classes by Tarjan's SCC, each class by GTH (as the dense solver) or BiCGSTAB, the transient
/// mass by one sparse LU solve. Agrees with the dense solver to 1e-10 wherever both run
/// (tests/metagame/alpharank_sparse_test.cpp).
SparseAlphaRank alpharank_two_population_sparse(const std::vector<double>& blue, const std::vector<double>& red,
                                                std::size_t rows, std::size_t cols, double alpha, int m,
                                                const SparseAlphaRankOptions& opt = {});
/// The matrix-free solver (docs/METRICS.md "Matrix-free alpha-Rank") takes a finite alpha with
/// (m - 1) alpha (largest payoff spread of either population) at most this, so that no transition underflows.
inline constexpr double kMatrixFreeExponentMax = 700;
/// `advplan metagame` keeps the explicit sparse chain up to this many transitions and goes matrix-free above (where
/// the gate admits alpha).
inline constexpr std::size_t kMatrixFreeAlphaRankEdges = 50'000'000;
/// The near pairs it keeps are pairs of a line whose payoffs differ by less than 4 / (m alpha): at a small alpha
/// that is nearly every pair (O(profiles x line length)), so it also takes at most this many (about 1.5 GB).
inline constexpr std::size_t kMatrixFreeNearPairsMax = 60'000'000;
/// The near pairs the matrix-free solver would keep.
std::size_t matrix_free_near_pairs(const std::vector<double>& blue, const std::vector<double>& red, std::size_t rows,
                                   std::size_t cols, double alpha, int m);
bool matrix_free_alpharank_applies(const std::vector<double>& blue, const std::vector<double>& red, std::size_t rows,
                                   std::size_t cols, double alpha, int m);
/// The same chain as alpharank_two_population_sparse without storing it: each product with the chain is computed
/// from the payoffs along each population's lines, sorted by payoff (far pairs by running sums of a series of
/// exponentials, near pairs kept), and the balance equations solved with a Jacobi preconditioner to a residual
/// of opt.tolerance by restarted GMRES. Memory O(profiles + near pairs). The chain is irreducible (closed_classes 1). Throws Error when
/// matrix_free_alpharank_applies is false. Agrees with the dense solver to 1e-10 (tests/metagame/alpharank_sparse_test.cpp).
SparseAlphaRank alpharank_two_population_matrix_free(const std::vector<double>& blue, const std::vector<double>& red,
                                                     std::size_t rows, std::size_t cols, double alpha, int m,
                                                     const SparseAlphaRankOptions& opt = {});
/// alpharank_single_population by the same sparse path.
SparseAlphaRank alpharank_single_population_sparse(const std::vector<double>& payoff, std::size_t strategies,
                                                   double alpha, int m, const SparseAlphaRankOptions& opt = {});

/// One population of a symmetric game with payoff M[r*s + c] to the row strategy (non-local selection model).
AlphaRank alpharank_single_population(const std::vector<double>& payoff, std::size_t strategies, double alpha, int m);

/// One edge of the response graph: a single population's deviation that raises its own payoff.
struct ResponseEdge {
  std::size_t from_blue = 0, from_red = 0, to_blue = 0, to_red = 0;
  bool blue_moves = true;
  double gain = 0;
  bool best = false;  ///< the deviation is to a best reply
};
std::vector<ResponseEdge> response_graph(const std::vector<double>& blue, const std::vector<double>& red,
                                         std::size_t rows, std::size_t cols);

// ---- data and the command -------------------------------------------------------------------------------------

enum class Payoff { advantage, win_rate };

/// Per-scenario integer payoffs read from runs' per_scenario.csv: cells[s][i][j] in units of 1/unit (wins out
/// of R replications for win_rate, millionths for advantage).
struct MetaGameData {
  Payoff payoff = Payoff::advantage;
  std::vector<std::string> blue, red;  ///< policy specs in order of first appearance
  std::vector<std::string> scenarios;  ///< scenarios where every cell has an ok row
  std::size_t dropped_scenarios = 0;   ///< scenarios without an ok row for every cell
  std::int64_t unit = 1;
  std::vector<std::int64_t> cells;     ///< [s * rows * cols + i * cols + j]
  std::uint64_t bootstrap_seed = 7;
  /// The mean over the scenarios listed by `idx` (all when empty), as an exact matrix.
  IntMatrix matrix(const std::vector<std::size_t>& idx = {}) const;
};

/// Reads every run directory's per_scenario.csv and run_metadata.json (conditions of group main). Throws
/// advplan::Error naming the file and field on bad input, a missing BLUE x RED cell or a non-integral win rate.
MetaGameData read_metagame_data(const std::vector<std::string>& run_dirs, Payoff payoff);

struct MetaGameOptions {
  int resamples = 1000;
  std::uint64_t seed = 7;
  int m = 50;
  std::vector<double> alphas{0.01, 0.1, 1, 10, 100, kInfiniteAlpha};
  /// `--alpha suggest`: sweep alpha (suggest_alpha), write alpha_sweep.csv, and rank at the suggested alpha and inf.
  bool suggest_alpha = false;
};

/// `--alpha suggest` (docs/METRICS.md "Suggested alpha"): alpha-Rank at alpha = 10^(e/4), e = -8..16 (0.01 to
/// 10^4); the ranking at an alpha is the order of each population's strategies by their marginal mass (ties within
/// 1e-9 by index). The suggestion is the smallest grid alpha from which the ranking no longer changes up to 10^4.
struct AlphaSweepRow {
  double alpha = 0;
  std::vector<std::size_t> blue_order, red_order;
};
struct AlphaSuggestion {
  double alpha = 0;
  std::vector<AlphaSweepRow> sweep;
};
AlphaSuggestion suggest_alpha(const std::vector<double>& blue, const std::vector<double>& red, std::size_t rows,
                              std::size_t cols, int m);

// ---- ratings (docs/METRICS.md "Ratings") -----------------------------------------------------------------------

/// Players are the BLUE policies (0..|B|-1) then the RED ones (|B|..): each cell of the scenarios listed by `idx`
/// (all when empty) is R games (win rates: BLUE scored its wins) or one (advantage: BLUE scored 1 above 0, 1/2 at 0).
PairwiseCounts pairwise_counts(const MetaGameData& d, const std::vector<std::size_t>& idx);
/// One Elo game per cell in corpus order (scenario, then BLUE, then RED); BLUE's score is its share of the cell.
std::vector<EloGame> elo_games(const MetaGameData& d);

struct RatingsResult {
  BradleyTerryFit bt;
  std::vector<std::pair<double, double>> ci;  ///< bt's 95% percentile interval per player (NaN without)
  std::size_t resamples = 0, resamples_used = 0;  ///< used: the MLE existed and the fit converged
  std::string key;                            ///< the bootstrap stream's key, "ratings/<payoff>"
  std::vector<double> elo;
  NashAverage nash;
};
/// `g` from solve_game(a, true). The bootstrap resamples scenarios from Rng::keyed(seed, "bootstrap", key).
RatingsResult compute_ratings(const MetaGameData& d, const MetaGameOptions& opt, const IntMatrix& a,
                              const GameSolution& g);
/// ratings.csv (one row per BLUE then RED policy) and ratings.json (the fits' settings and diagnostics).
void write_ratings(const MetaGameData& d, const MetaGameOptions& opt, const IntMatrix& a, const RatingsResult& r,
                   const std::string& csv_path, const std::string& json_path);

/// Writes payoff_matrix.csv, equilibrium.json, exploitability.csv, alpharank.csv, response_graph.csv,
/// ratings.csv, ratings.json, metagame.md and metagame.tex under `out_dir`; returns the Markdown summary.
std::string write_metagame(const MetaGameData& data, const MetaGameOptions& opt, const std::string& out_dir);

}  // namespace advplan::metagame
