// Template-clustered intervals (src/stats/cluster.cpp, docs/METRICS.md "Template-clustered intervals") against
// R's clubSandwich (CR2 standard error, Satterthwaite df) and a brute-force wild cluster bootstrap over all 6^G
// Webb weight vectors with a general matrix CR2, both computed once by tests/data/oracles/make_cluster_fixtures.py
// into tests/data/oracles/cluster_fixtures.json. Tolerances: 1e-10 on the standard error, 1e-8 on df (the closed
// forms here against clubSandwich's matrices), 1e-9 on the wild bounds.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "advplan/stats/cluster.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

const nlohmann::json& fixtures() {
  static const nlohmann::json j = nlohmann::json::parse(
      testing::read_file(std::string(ADVPLAN_SOURCE_DIR) + "/tests/data/oracles/cluster_fixtures.json"));
  return j;
}

TEST(ClusteredMean, Cr2AndSatterthwaiteMatchClubSandwichAndTheWildBoundsTheEnumeration) {
  ASSERT_GE(fixtures()["cases"].size(), 5U);
  for (const auto& c : fixtures()["cases"]) {
    const auto y = c["y"].get<std::vector<double>>();
    const auto g = c["g"].get<std::vector<std::size_t>>();
    const ClusteredMean m = clustered_mean(y, g, 999, 1, "test");
    EXPECT_NEAR(m.se, c["se"].get<double>(), 1e-10) << y.size();
    EXPECT_NEAR(m.df, c["df"].get<double>(), 1e-8) << y.size();
    EXPECT_NEAR(m.wild_lo, c["wild_lo"].get<double>(), 1e-9) << y.size();
    EXPECT_NEAR(m.wild_hi, c["wild_hi"].get<double>(), 1e-9) << y.size();
    EXPECT_LT(m.t_lo, m.mean);
    EXPECT_GT(m.t_hi, m.mean);
  }
}

TEST(ClusteredMean, OneClusterHasNoIntervalAndManyAreDrawnFromTheKeyedStream) {
  const std::vector<double> y{0.1, 0.2, 0.3};
  const std::vector<std::size_t> one{0, 0, 0};
  EXPECT_TRUE(std::isnan(clustered_mean(y, one, 99, 1, "k").se));
  const std::vector<std::size_t> two{0, 0, 1};
  const ClusteredMean m2 = clustered_mean(y, two, 99, 1, "k");
  EXPECT_FALSE(std::isnan(m2.se));
  EXPECT_TRUE(std::isnan(m2.wild_lo));  // two clusters: no wild bootstrap
  std::vector<double> many;
  std::vector<std::size_t> g;
  for (std::size_t i = 0; i < 40; ++i) {
    many.push_back(std::sin(static_cast<double>(i)));
    g.push_back(i / 5);  // 8 clusters: drawn, not enumerated
  }
  const ClusteredMean a = clustered_mean(many, g, 499, 3, "k"), b = clustered_mean(many, g, 499, 3, "k");
  EXPECT_EQ(a.wild_draws, 499U);
  EXPECT_EQ(a.wild_lo, b.wild_lo);
  EXPECT_EQ(a.wild_hi, b.wild_hi);
}

}  // namespace
}  // namespace advplan
