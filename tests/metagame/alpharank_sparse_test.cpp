// Sparse alpha-Rank (docs/METRICS.md "Sparse alpha-Rank") against the dense solver, to 1e-10: random games of up
// to 12 x 15 (180 profiles; the dense solver's O(n^3) GTH in logarithms makes larger ones slow for a test, and the
// bench compares larger sizes) at every alpha of the command's default sweep, games with ties
// whose limit chains are reducible (several closed classes and transient profiles), the iterative class solve
// forced on, and OpenSpiel's Han et al. fixture through the single-population path.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include <tbb/global_control.h>

#include "advplan/core/error.hpp"
#include "advplan/metagame/metagame.hpp"

namespace advplan::metagame {
namespace {

struct Game {
  std::vector<double> blue, red;
  std::size_t rows, cols;
};

/// Win rates in [0, 1] (RED's 1 - BLUE's, as the command plays them); `levels` > 0 rounds them to that many
/// steps, so ties make the limit chain reducible.
Game random_game(std::size_t rows, std::size_t cols, std::uint32_t seed, int levels = 0) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(0, 1);
  Game x{{}, {}, rows, cols};
  for (std::size_t i = 0; i < rows * cols; ++i) {
    double v = u(g);
    if (levels > 0) v = std::round(v * levels) / levels;
    x.blue.push_back(v);
    x.red.push_back(1 - v);
  }
  return x;
}

double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double d = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return d;
}

TEST(SparseAlphaRank, AgreesWithTheDenseSolverOnRandomGames) {
  std::uint32_t seed = 1;
  for (const auto& [rows, cols] : std::vector<std::pair<std::size_t, std::size_t>>{
           {1, 2}, {2, 1}, {2, 3}, {5, 7}, {10, 10}, {12, 15}})
    for (const double alpha : {0.01, 0.1, 1.0, 10.0, 100.0, kInfiniteAlpha}) {
      const Game g = random_game(rows, cols, seed++);
      const AlphaRank dense = alpharank_two_population(g.blue, g.red, rows, cols, alpha, 50);
      const SparseAlphaRank sparse = alpharank_two_population_sparse(g.blue, g.red, rows, cols, alpha, 50);
      EXPECT_LE(max_diff(dense.pi, sparse.pi), 1e-10) << rows << "x" << cols << " alpha " << alpha;
      EXPECT_EQ(dense.closed_classes, sparse.closed_classes) << rows << "x" << cols << " alpha " << alpha;
      EXPECT_LE(sparse.residual, 1e-10) << rows << "x" << cols << " alpha " << alpha;
      EXPECT_LE(sparse.edges, rows * cols * (rows + cols - 2));
    }
}

TEST(SparseAlphaRank, AgreesOnReducibleLimitChainsWithTransientProfiles) {
  for (std::uint32_t seed = 100; seed < 110; ++seed) {
    const Game g = random_game(12, 9, seed, 3);  // four payoff levels: many ties
    const AlphaRank dense = alpharank_two_population(g.blue, g.red, 12, 9, kInfiniteAlpha, 50);
    const SparseAlphaRank sparse = alpharank_two_population_sparse(g.blue, g.red, 12, 9, kInfiniteAlpha, 50);
    EXPECT_LE(max_diff(dense.pi, sparse.pi), 1e-10) << seed;
    EXPECT_EQ(dense.closed_classes, sparse.closed_classes) << seed;
  }
  // A coordination game: two sinks, the other profiles transient.
  const std::vector<double> coord{1, 0, 0, 1};
  const SparseAlphaRank c = alpharank_two_population_sparse(coord, coord, 2, 2, kInfiniteAlpha, 50);
  EXPECT_EQ(c.closed_classes, 2u);
  EXPECT_NEAR(c.pi[0], 0.5, 1e-12);
  EXPECT_NEAR(c.pi[3], 0.5, 1e-12);
}

TEST(SparseAlphaRank, TheIterativeClassSolveAgreesToo) {
  SparseAlphaRankOptions iterative;
  iterative.gth_max = 1;  // every class of two or more profiles by BiCGSTAB
  for (const double alpha : {0.1, 1.0, 10.0}) {
    const Game g = random_game(15, 12, 7, 0);
    const AlphaRank dense = alpharank_two_population(g.blue, g.red, 15, 12, alpha, 50);
    const SparseAlphaRank sparse = alpharank_two_population_sparse(g.blue, g.red, 15, 12, alpha, 50, iterative);
    EXPECT_LE(max_diff(dense.pi, sparse.pi), 1e-10) << alpha;
    EXPECT_GT(sparse.iterations, 0u);
    EXPECT_LE(sparse.residual, 1e-10) << alpha;
  }
}

// Matrix-free alpha-Rank (docs/METRICS.md "Matrix-free alpha-Rank"): the same chain computed along sorted lines,
// far pairs by a series of exponentials and near pairs kept, against the dense solver (to 1e-10) wherever its gate
// admits alpha, with ties (near pairs at distance 0) and with m small; against the explicit sparse chain on a game
// too large for the dense solver; bit for bit at 1 and 2 threads.
TEST(MatrixFreeAlphaRank, AgreesWithTheDenseSolver) {
  std::uint32_t seed = 500;
  std::size_t compared = 0;
  for (const auto& [rows, cols] : std::vector<std::pair<std::size_t, std::size_t>>{
           {1, 2}, {2, 1}, {2, 3}, {5, 7}, {10, 10}, {12, 15}})
    for (const double alpha : {0.01, 0.1, 1.0, 3.0, 10.0})
      for (const int m : {5, 50})
        for (const int levels : {0, 4}) {
          const Game g = random_game(rows, cols, seed++, levels);
          ASSERT_TRUE(matrix_free_alpharank_applies(g.blue, g.red, rows, cols, alpha, m));
          const AlphaRank dense = alpharank_two_population(g.blue, g.red, rows, cols, alpha, m);
          const SparseAlphaRank free = alpharank_two_population_matrix_free(g.blue, g.red, rows, cols, alpha, m);
          EXPECT_LE(max_diff(dense.pi, free.pi), 1e-10) << rows << "x" << cols << " alpha " << alpha << " m " << m
                                                        << " levels " << levels;
          EXPECT_LE(free.residual, 1e-10);
          ++compared;
        }
  EXPECT_EQ(compared, 6u * 5u * 2u * 2u);
  // Outside the gate (a transition would underflow, or the limit chain) it refuses in one sentence.
  const Game g = random_game(4, 4, 1);
  EXPECT_FALSE(matrix_free_alpharank_applies(g.blue, g.red, 4, 4, 100.0, 50));
  EXPECT_FALSE(matrix_free_alpharank_applies(g.blue, g.red, 4, 4, kInfiniteAlpha, 50));
  EXPECT_THROW(alpharank_two_population_matrix_free(g.blue, g.red, 4, 4, kInfiniteAlpha, 50), Error);
  // The near pairs are counted as the solver keeps them: every pair of a line when 4 / (m alpha) exceeds the spread.
  EXPECT_EQ(matrix_free_near_pairs(g.blue, g.red, 4, 4, 0.01, 50), 4u * 6u + 4u * 6u);
  const SparseAlphaRank small = alpharank_two_population_matrix_free(g.blue, g.red, 4, 4, 0.01, 50);
  EXPECT_EQ(small.edges, 2 * matrix_free_near_pairs(g.blue, g.red, 4, 4, 0.01, 50));
}

TEST(MatrixFreeAlphaRank, AgreesWithTheExplicitSparseChainAndIsTheSameAtAnyThreadCount) {
  const Game g = random_game(60, 70, 77);
  const SparseAlphaRank sparse = alpharank_two_population_sparse(g.blue, g.red, 60, 70, 10.0, 50);
  const SparseAlphaRank free = alpharank_two_population_matrix_free(g.blue, g.red, 60, 70, 10.0, 50);
  EXPECT_LE(max_diff(sparse.pi, free.pi), 1e-10);
  EXPECT_LT(free.edges, sparse.edges / 4);  // only the near pairs are kept
  SparseAlphaRank one;
  {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, 1);
    one = alpharank_two_population_matrix_free(g.blue, g.red, 60, 70, 10.0, 50);
  }
  EXPECT_EQ(one.pi, free.pi);
  EXPECT_EQ(one.iterations, free.iterations);
}

TEST(SparseAlphaRank, HanEtAlFixtureMatchesOpenSpielThroughTheSparsePath) {
  const double r = 1, t = 2, p = 0, s = -1, delta = 4, eps = 0.25;
  const std::vector<double> m{r - eps / 2, r - eps, 0, s + delta - eps, r - eps,  //
                              r,           r,       s, s,               s,        //
                              0,           t,       p, p,               p,        //
                              t - delta,   t,       p, p,               p,        //
                              r,           t,       p, p,               p};
  const SparseAlphaRank ar = alpharank_single_population_sparse(m, 5, 0.1, 20);
  const std::vector<double> expected{0.40966787, 0.07959841, 0.20506998, 0.08505983, 0.2206039};
  for (std::size_t i = 0; i < 5; ++i) EXPECT_NEAR(ar.pi[i], expected[i], 1e-6) << i;
  const AlphaRank dense = alpharank_single_population(m, 5, 0.1, 20);
  EXPECT_LE(max_diff(dense.pi, ar.pi), 1e-12);
}

}  // namespace
}  // namespace advplan::metagame

namespace advplan::metagame {
namespace {

TEST(SuggestedAlpha, IsTheSmallestGridAlphaFromWhichTheRankingNoLongerChanges) {
  const Game g = random_game(6, 5, 42);
  const AlphaSuggestion s = suggest_alpha(g.blue, g.red, 6, 5, 50);
  ASSERT_EQ(s.sweep.size(), 25u);
  EXPECT_DOUBLE_EQ(s.sweep.front().alpha, 0.01);
  EXPECT_DOUBLE_EQ(s.sweep.back().alpha, 10000);
  std::size_t at = 0;
  while (s.sweep[at].alpha != s.alpha) ++at;
  for (std::size_t i = at; i < s.sweep.size(); ++i) {
    EXPECT_EQ(s.sweep[i].blue_order, s.sweep.back().blue_order) << i;
    EXPECT_EQ(s.sweep[i].red_order, s.sweep.back().red_order) << i;
  }
  if (at > 0) {  // the grid alpha just below ranks differently
    EXPECT_TRUE(s.sweep[at - 1].blue_order != s.sweep.back().blue_order ||
                s.sweep[at - 1].red_order != s.sweep.back().red_order);
  }
  // The ranking is each population's order by its marginal mass under alpha-Rank at that alpha.
  const AlphaRank ar = alpharank_two_population(g.blue, g.red, 6, 5, s.alpha, 50);
  std::vector<double> mb(6, 0.0);
  for (std::size_t i = 0; i < 6; ++i)
    for (std::size_t j = 0; j < 5; ++j) mb[i] += ar.pi[i * 5 + j];
  for (std::size_t r = 1; r < 6; ++r) EXPECT_GE(mb[s.sweep[at].blue_order[r - 1]] + 1e-9, mb[s.sweep[at].blue_order[r]]);
}

}  // namespace
}  // namespace advplan::metagame
