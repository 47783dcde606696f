// Shapley values (docs/METRICS.md "Attribution"): the subset formula against the brute force over all m! orders of
// the players (the average marginal contribution), the interaction index against its definition by nested
// differences, efficiency exact on the decimal grid (the written values sum to the written total digit for digit),
// and each written value within one grid unit of its exact value.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "advplan/stats/shapley.hpp"

namespace advplan {
namespace {

/// The brute force: phi_i = (1/m!) sum over orders of v(players before i, and i) - v(players before i).
std::vector<double> by_orders(const std::vector<double>& v, std::size_t m) {
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::vector<double> phi(m, 0.0);
  double count = 0;
  do {
    std::size_t s = 0;
    for (std::size_t i : order) {
      phi[i] += v[s | (std::size_t{1} << i)] - v[s];
      s |= std::size_t{1} << i;
    }
    ++count;
  } while (std::next_permutation(order.begin(), order.end()));
  for (double& x : phi) x /= count;
  return phi;
}

std::vector<double> random_game(std::size_t m, std::uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> v(std::size_t{1} << m);
  for (double& x : v) x = u(g);
  return v;
}

TEST(Shapley, TheSubsetFormulaIsTheAverageOverOrders) {
  for (std::size_t m = 1; m <= kMaxShapleyPlayers; ++m)
    for (std::uint32_t seed = 1; seed <= 5; ++seed) {
      const auto v = random_game(m, seed);
      const auto got = shapley_values(v, m), want = by_orders(v, m);
      for (std::size_t i = 0; i < m; ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << m << " " << seed << " " << i;
    }
}

TEST(Shapley, KnownGamesHaveTheirTextbookValues) {
  // Glove game: player 0 holds a left glove, players 1 and 2 right gloves; a pair is worth 1.
  std::vector<double> v(8);
  for (std::size_t s = 0; s < 8; ++s) v[s] = (s & 1) && (s & 6) ? 1 : 0;
  const auto phi = shapley_values(v, 3);
  EXPECT_NEAR(phi[0], 2.0 / 3, 1e-15);
  EXPECT_NEAR(phi[1], 1.0 / 6, 1e-15);
  EXPECT_NEAR(phi[2], 1.0 / 6, 1e-15);
  // An additive game: each player's value is its own worth, and every interaction is 0.
  std::vector<double> add(16);
  const double w[4] = {0.5, -0.25, 0.125, 2};
  for (std::size_t s = 0; s < 16; ++s)
    for (std::size_t i = 0; i < 4; ++i) add[s] += (s >> i & 1) ? w[i] : 0;
  const auto pa = shapley_values(add, 4);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(pa[i], w[i]);
  for (double x : shapley_interactions(add, 4)) EXPECT_NEAR(x, 0, 1e-15);
  EXPECT_THROW((void)shapley_values(add, 3), std::invalid_argument);
  EXPECT_THROW((void)shapley_values(std::vector<double>(128), 7), std::invalid_argument);
}

TEST(Shapley, TheInteractionIndexIsItsDefinition) {
  // Two players: I_01 = v(01) - v(0) - v(1) + v(); a pure pair synergy of 1 among three gives I = 1 for the pair.
  EXPECT_DOUBLE_EQ(shapley_interactions(std::vector<double>{0.1, 0.3, 0.2, 0.9}, 2)[0], 0.9 - 0.3 - 0.2 + 0.1);
  std::vector<double> v(8);
  for (std::size_t s = 0; s < 8; ++s) v[s] = (s & 3) == 3 ? 1 : 0;
  const auto in = shapley_interactions(v, 3);  // pairs (0,1), (0,2), (1,2)
  EXPECT_NEAR(in[0], 1, 1e-15);
  EXPECT_NEAR(in[1], 0, 1e-15);
  EXPECT_NEAR(in[2], 0, 1e-15);
}

TEST(Shapley, OnTheGridTheValuesSumToTheTotalExactlyAndStayWithinOneUnit) {
  for (std::size_t m = 1; m <= 6; ++m)
    for (const std::size_t units : {1u, 3u, 150u}) {
      std::vector<double> games;
      for (std::size_t u = 0; u < units; ++u) {
        const auto v = random_game(m, static_cast<std::uint32_t>(1000 * m + u));
        games.insert(games.end(), v.begin(), v.end());
      }
      for (const int d : {1, 6, 9, 12}) {
        const auto grid = shapley_on_grid(games, units, m, d);
        std::int64_t sum = 0;
        for (std::size_t i = 0; i < m; ++i) sum += grid[i];
        EXPECT_EQ(sum, grid[m]) << m << " " << units << " " << d;
        // Against the double mean of the per-unit values (which is exact to ~1e-15).
        std::vector<double> mean(m, 0.0);
        double total = 0;
        const std::size_t n = std::size_t{1} << m;
        for (std::size_t u = 0; u < units; ++u) {
          const std::span<const double> game(games.data() + u * n, n);
          const auto phi = shapley_values(game, m);
          for (std::size_t i = 0; i < m; ++i) mean[i] += phi[i] / static_cast<double>(units);
          total += (game[n - 1] - game[0]) / static_cast<double>(units);
        }
        const double unit = std::pow(10.0, -d);
        for (std::size_t i = 0; i < m; ++i)
          EXPECT_LE(std::abs(static_cast<double>(grid[i]) * unit - mean[i]), unit * (1 + 1e-6) + 1e-12) << i;
        EXPECT_LE(std::abs(static_cast<double>(grid[m]) * unit - total), unit / 2 * (1 + 1e-6) + 1e-12);
      }
    }
}

TEST(Shapley, GridTextIsTheDecimal) {
  EXPECT_EQ(grid_text(-1234, 3), "-1.234");
  EXPECT_EQ(grid_text(5, 3), "0.005");
  EXPECT_EQ(grid_text(-5, 3), "-0.005");
  EXPECT_EQ(grid_text(0, 2), "0.00");
  EXPECT_EQ(grid_text(1000000000, 9), "1.000000000");
}

}  // namespace
}  // namespace advplan
