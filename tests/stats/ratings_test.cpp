// Bradley-Terry (Hunter's MM) and Elo (docs/METRICS.md "Ratings"). The oracle is R's BradleyTerry2::BTm, computed
// once by tests/data/oracles/make_bt_fixtures.R and stored with its inputs in tests/data/oracles/bt_fixtures.json
// (CI has no R). Tolerance 1e-9 on the mean-zero log-strengths against BTm (its IRLS stops at a relative deviance
// change of 1e-14); 1e-10 against the brute-force Newton fit below.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/stats/ratings.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

constexpr double kOracleTol = 1e-9;

const nlohmann::json& fixtures() {
  static const nlohmann::json j = nlohmann::json::parse(
      testing::read_file(std::string(ADVPLAN_SOURCE_DIR) + "/tests/data/oracles/bt_fixtures.json"));
  return j;
}

PairwiseCounts counts_of(const nlohmann::json& c) {
  const auto n = c["players"].get<std::size_t>();
  PairwiseCounts p(n);
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b) {
      p.score[a * n + b] = c["score"][a][b].get<double>();
      p.games[a * n + b] = c["games"][a][b].get<double>();
    }
  return p;
}

/// Brute force by another method: Newton's method on the log-likelihood in theta with theta_0 = 0 (full Hessian,
/// Gaussian elimination), 200 steps, then centred.
std::vector<double> newton_mle(const PairwiseCounts& c) {
  const std::size_t n = c.players, m = n - 1;
  std::vector<double> th(n, 0.0);
  for (int it = 0; it < 200; ++it) {
    std::vector<double> g(m, 0.0), h(m * m, 0.0);
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = 0; b < n; ++b) {
        if (a == b || c.games[a * n + b] == 0) continue;
        const double p = 1 / (1 + std::exp(th[b] - th[a])), nab = c.games[a * n + b];
        if (a > 0) g[a - 1] += c.score[a * n + b] - nab * p;
        if (a > 0) h[(a - 1) * m + (a - 1)] += nab * p * (1 - p);
        if (a > 0 && b > 0) h[(a - 1) * m + (b - 1)] -= nab * p * (1 - p);
      }
    for (std::size_t col = 0; col < m; ++col)  // solve h d = g in place (h is positive definite)
      for (std::size_t r = col + 1; r < m; ++r) {
        const double f = h[r * m + col] / h[col * m + col];
        for (std::size_t k = col; k < m; ++k) h[r * m + k] -= f * h[col * m + k];
        g[r] -= f * g[col];
      }
    for (std::size_t r = m; r-- > 0;) {
      for (std::size_t k = r + 1; k < m; ++k) g[r] -= h[r * m + k] * g[k];
      g[r] /= h[r * m + r];
    }
    for (std::size_t k = 0; k < m; ++k) th[k + 1] += g[k];
  }
  double mean = 0;
  for (const double t : th) mean += t / static_cast<double>(n);
  for (double& t : th) t -= mean;
  return th;
}

TEST(Ratings, BradleyTerryMatchesBradleyTerry2) {
  ASSERT_GE(fixtures()["cases"].size(), 3U);
  for (const auto& c : fixtures()["cases"]) {
    ASSERT_TRUE(c["converged"].get<bool>()) << c["name"];
    const BradleyTerryFit f = bradley_terry_mm(counts_of(c));
    ASSERT_TRUE(f.exists && f.converged) << c["name"];
    ASSERT_EQ(f.theta.size(), c["theta"].size());
    for (std::size_t i = 0; i < f.theta.size(); ++i)
      EXPECT_NEAR(f.theta[i], c["theta"][i].get<double>(), kOracleTol) << c["name"] << " player " << i;
  }
}

TEST(Ratings, BradleyTerryMatchesNewtonOnTheLikelihood) {
  PairwiseCounts p(4);  // with ties (half points) and a pair that never met
  p.add(0, 1, 2.5, 4);
  p.add(1, 2, 1.5, 3);
  p.add(2, 3, 4, 6);
  p.add(3, 0, 1, 5);
  p.add(0, 2, 3, 3.5);
  const BradleyTerryFit f = bradley_terry_mm(p);
  ASSERT_TRUE(f.exists && f.converged);
  const std::vector<double> brute = newton_mle(p);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(f.theta[i], brute[i], 1e-10) << i;
  for (const auto& c : fixtures()["cases"]) {
    const std::vector<double> b = newton_mle(counts_of(c)), mm = bradley_terry_mm(counts_of(c)).theta;
    for (std::size_t i = 0; i < b.size(); ++i) EXPECT_NEAR(mm[i], b[i], 1e-10) << c["name"];
  }
}

TEST(Ratings, BradleyTerryReportsAMissingMle) {
  PairwiseCounts p(3);  // player 0 never loses: no finite maximum
  p.add(0, 1, 3, 3);
  p.add(1, 2, 1, 2);
  p.add(0, 2, 2, 2);
  const BradleyTerryFit f = bradley_terry_mm(p);
  EXPECT_FALSE(f.exists);
  EXPECT_TRUE(f.theta.empty());
  EXPECT_THROW(p.add(0, 0, 1, 1), Error);
  EXPECT_THROW(p.add(0, 1, 3, 2), Error);
  EXPECT_THROW(bradley_terry_mm(PairwiseCounts(1)), Error);
}

TEST(Ratings, EloFollowsTheDocumentedUpdate) {
  // Game 1: equal ratings, E = 1/2, A wins: A = 1500 + 16 / 2 = 1508, B = 1492. Game 2: B draws C at 1500 and 1492.
  const std::vector<double> r = elo_ratings(3, {{0, 1, 1.0}, {1, 2, 0.5}});
  EXPECT_DOUBLE_EQ(r[0], 1508);
  EXPECT_DOUBLE_EQ(r[1] + r[2], 1492 + 1500);
  const double e = 1 / (1 + std::pow(10.0, (1500.0 - 1492.0) / 400));
  EXPECT_NEAR(r[1], 1492 + 16 * (0.5 - e), 1e-12);
  // Order matters: the same games the other way round give other ratings.
  EXPECT_NE(elo_ratings(3, {{1, 2, 0.5}, {0, 1, 1.0}})[1], r[1]);
  EXPECT_THROW(elo_ratings(2, {{0, 1, 1.5}}), Error);
}

}  // namespace
}  // namespace advplan
