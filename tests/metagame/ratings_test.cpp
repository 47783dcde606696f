// Nash averaging, Bradley-Terry and Elo on the meta-game (docs/METRICS.md "Ratings", "Nash averaging"): the clone
// test (a RED policy under a second label moves the mean-payoff ranking but leaves the Nash-averaged ratings of the
// original policies unchanged to 1e-12), its documented limit, the maxent mixture on known optimal sets, and the
// output files' determinism.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "advplan/metagame/metagame.hpp"
#include "support/cli.hpp"

namespace advplan::metagame {
namespace {

/// A one-scenario (or several identical scenarios) advantage game with cells in millionths.
MetaGameData game(const std::vector<std::vector<std::int64_t>>& a, std::size_t scenarios = 1) {
  MetaGameData d;
  d.payoff = Payoff::advantage;
  d.unit = 1000000;
  for (std::size_t i = 0; i < a.size(); ++i) d.blue.push_back("b" + std::to_string(i));
  for (std::size_t j = 0; j < a[0].size(); ++j) d.red.push_back("r" + std::to_string(j));
  for (std::size_t s = 0; s < scenarios; ++s) {
    d.scenarios.push_back("s" + std::to_string(s));
    for (const auto& row : a) d.cells.insert(d.cells.end(), row.begin(), row.end());
  }
  return d;
}

/// The game with RED policy j duplicated as a last column labelled "clone".
MetaGameData with_clone(const std::vector<std::vector<std::int64_t>>& a, std::size_t j, std::size_t scenarios = 1) {
  auto b = a;
  for (auto& row : b) row.push_back(row[j]);
  MetaGameData d = game(b, scenarios);
  d.red.back() = "clone";
  return d;
}

NashAverage nash_of(const MetaGameData& d) {
  const IntMatrix a = d.matrix();
  return nash_average(a, solve_game(a, true), false);
}

std::vector<double> blue_means(const MetaGameData& d) {
  const IntMatrix a = d.matrix();
  std::vector<double> m(a.rows, 0.0);
  for (std::size_t i = 0; i < a.rows; ++i)
    for (std::size_t j = 0; j < a.cols; ++j) m[i] += a.value(i, j) / static_cast<double>(a.cols);
  return m;
}

// BLUE b0, b1 mix (x = 2/7, 5/7), b2 is outside every equilibrium; RED r0, r1 mix (3/7, 4/7), r2 is dominated.
const std::vector<std::vector<std::int64_t>> kUnique{
    {300000, -200000, 500000}, {-100000, 100000, 500000}, {0, -100000, 500000}};

TEST(MetagameRatings, CloneMovesTheMeanRankingButNotNashAveraging) {
  const MetaGameData d = game(kUnique), c = with_clone(kUnique, 1);
  // The gameable half: the mean over RED ranks b0 above b1, and b1 above b0 once r1 has a clone.
  const auto m0 = blue_means(d), m1 = blue_means(c);
  EXPECT_GT(m0[0], m0[1]);
  EXPECT_LT(m1[0], m1[1]);
  // The half that cannot be gamed: every original policy's Nash-averaged rating is unchanged, the clone rates as
  // its original, and the original's probability is split evenly with the clone.
  const NashAverage n0 = nash_of(d), n1 = nash_of(c);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(n1.blue_rating[i], n0.blue_rating[i], 1e-12) << "BLUE " << i;
  for (std::size_t j = 0; j < 3; ++j) EXPECT_NEAR(n1.red_rating[j], n0.red_rating[j], 1e-12) << "RED " << j;
  EXPECT_NEAR(n1.red_rating[3], n0.red_rating[1], 1e-12);
  EXPECT_NEAR(n1.red[1], n0.red[1] / 2, 1e-12);
  EXPECT_NEAR(n1.red[3], n0.red[1] / 2, 1e-12);
  EXPECT_NEAR(n0.blue_rating[0], 1.0 / 70, 1e-15);  // v = 1/7 in tenths
  EXPECT_NEAR(n0.blue_rating[2], -0.4 / 7, 1e-15);
  EXPECT_TRUE(n0.blue_point && n0.red_point);
  EXPECT_FALSE(n1.red_point);
  EXPECT_LE(n1.red_residual, 1e-15);
}

TEST(MetagameRatings, CloneMovesElo) {
  // As kUnique, but b1 ties r2 (advantage 0): b0 scores 2 of 3 games a scenario and b1 1.5, so b0 leads on Elo;
  // with r1 cloned b0 scores 2 of 4 and b1 2.5, and b1 leads. The equilibrium is still unique.
  const std::vector<std::vector<std::int64_t>> cells{{300000, -200000, 500000}, {-100000, 100000, 0}, {0, -100000, 500000}};
  MetaGameOptions opt;
  opt.resamples = 50;
  const MetaGameData d = game(cells, 4), c = with_clone(cells, 1, 4);
  const IntMatrix a = d.matrix(), ac = c.matrix();
  const RatingsResult r0 = compute_ratings(d, opt, a, solve_game(a, true));
  const RatingsResult r1 = compute_ratings(c, opt, ac, solve_game(ac, true));
  EXPECT_GT(r0.elo[0], r0.elo[1]);
  EXPECT_LT(r1.elo[0], r1.elo[1]);
  EXPECT_TRUE(r0.nash.blue_point && r0.nash.red_point);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(r1.nash.blue_rating[i], r0.nash.blue_rating[i], 1e-12);
  for (std::size_t j = 0; j < 3; ++j) EXPECT_NEAR(r1.nash.red_rating[j], r0.nash.red_rating[j], 1e-12);
}

TEST(MetagameRatings, CloneInvarianceNeedsTheClonedProbabilityFixed) {
  // Documented limit: b0 weakly dominates, so RED's optimal set is the whole simplex and its maxent mixture is
  // uniform; a clone of r1 shifts that uniform mixture towards r1, and b1 (outside BLUE's support) rates lower.
  const std::vector<std::vector<std::int64_t>> a{{0, 0}, {-100000, -200000}};
  const NashAverage n0 = nash_of(game(a)), n1 = nash_of(with_clone(a, 1));
  EXPECT_NEAR(n0.blue_rating[1], -0.15, 1e-12);
  EXPECT_NEAR(n1.blue_rating[1], -0.5 / 3, 1e-12);
  EXPECT_NEAR(n1.blue_rating[0], n0.blue_rating[0], 1e-12);  // the support's ratings are v either way
}

TEST(MetagameRatings, MaxentMixtureOnKnownOptimalSets) {
  // X* = {x : x_1 >= 0.7}: the maxent point is on the face the constraint against r1 bounds, (0.3, 0.7).
  const NashAverage face = nash_of(game({{0, -700000}, {0, 300000}}));
  EXPECT_NEAR(face.blue[0], 0.3, 1e-10);
  EXPECT_NEAR(face.blue[1], 0.7, 1e-10);
  EXPECT_LE(face.blue_residual, 1e-12);
  EXPECT_TRUE(face.red_point);
  // Every mixture is an equilibrium: both maxent mixtures are uniform.
  const NashAverage flat = nash_of(game({{0, 0}, {0, 0}, {0, 0}}));
  for (const double p : flat.blue) EXPECT_NEAR(p, 1.0 / 3, 1e-13);
  for (const double p : flat.red) EXPECT_NEAR(p, 0.5, 1e-13);
}

TEST(MetagameRatings, RatingsFilesAreDeterministic) {
  MetaGameOptions opt;
  opt.resamples = 100;
  MetaGameData d = game(kUnique, 5);
  d.cells[2] = -100000;  // scenario 0: r2 beats b0 once
  const auto dir = std::filesystem::temp_directory_path() / "advplan_ratings_test";
  std::filesystem::remove_all(dir);
  write_metagame(d, opt, (dir / "a").string());
  write_metagame(d, opt, (dir / "b").string());
  const std::string csv = testing::read_file((dir / "a" / "ratings.csv").string());
  EXPECT_EQ(csv, testing::read_file((dir / "b" / "ratings.csv").string()));
  EXPECT_EQ(testing::read_file((dir / "a" / "ratings.json").string()),
            testing::read_file((dir / "b" / "ratings.json").string()));
  EXPECT_NE(csv.find("side,policy,mean_payoff,bt_theta,bt_ci_lo,bt_ci_hi,elo,nash_probability,nash_rating"),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace advplan::metagame
