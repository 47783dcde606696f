// Nested variance components (src/stats/variance_components.cpp, docs/METRICS.md "Variance components") against
// tests/data/oracles/variance_components_fixtures.json (tests/data/oracles/make_variance_components_fixtures.py):
// - the mean squares, Searle's coefficients and the moment estimates against a matrix-algebra oracle (traces of
//   the strata's projections), tolerance 1e-10: this is the estimator's own definition, balanced or not;
// - R's lme4 (REML): on balanced designs, where REML equals the ANOVA estimates when none is negative, to 1e-6;
//   on unbalanced ones the two are different estimators (the matrix oracle is the ANOVA estimator's check), so
//   lme4 is a sanity bound only: within 2% for the within-scenario component and 30% for the two between
//   components (observed on the fixtures: at most 0.7%, 17% and 20%; docs/METRICS.md).
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <vector>

#include "advplan/stats/variance_components.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

const nlohmann::json& fixtures() {
  static const nlohmann::json j = nlohmann::json::parse(testing::read_file(
      std::string(ADVPLAN_SOURCE_DIR) + "/tests/data/oracles/variance_components_fixtures.json"));
  return j;
}

VarianceComponents of(const nlohmann::json& c) {
  const auto y = c["y"].get<std::vector<double>>();
  const auto t = c["t"].get<std::vector<std::size_t>>(), s = c["s"].get<std::vector<std::size_t>>();
  return nested_variance_components(y, t, s);
}

TEST(VarianceComponents, MomentEstimatesMatchTheMatrixOracle) {
  ASSERT_GE(fixtures()["cases"].size(), 4U);
  for (const auto& c : fixtures()["cases"]) {
    const VarianceComponents v = of(c);
    const auto& a = c["anova"];
    EXPECT_NEAR(v.ms_template, a["ms"][0].get<double>(), 1e-10);
    EXPECT_NEAR(v.ms_scenario, a["ms"][1].get<double>(), 1e-10);
    EXPECT_NEAR(v.ms_within, a["ms"][2].get<double>(), 1e-10);
    EXPECT_NEAR(v.k1, a["k1"].get<double>(), 1e-10);
    EXPECT_NEAR(v.k2, a["k2"].get<double>(), 1e-10);
    EXPECT_NEAR(v.k3, a["k3"].get<double>(), 1e-10);
    EXPECT_NEAR(v.between_templates, std::max(0.0, a["s2_t"].get<double>()), 1e-10);
    EXPECT_NEAR(v.between_scenarios, std::max(0.0, a["s2_s"].get<double>()), 1e-10);
    EXPECT_NEAR(v.within_scenario, a["s2_w"].get<double>(), 1e-10);
  }
}

TEST(VarianceComponents, AgreeWithLme4ExactlyWhenBalancedAndWithinTheToleranceOtherwise) {
  for (const auto& c : fixtures()["cases"]) {
    const VarianceComponents v = of(c);
    const auto& r = c["lme4"];
    const bool bal = c["balanced"];
    const double tt = r["s2_t"], ts = r["s2_s"], tw = r["s2_w"];
    EXPECT_NEAR(v.between_templates, tt, bal ? 1e-6 : 0.30 * tt);
    EXPECT_NEAR(v.between_scenarios, ts, bal ? 1e-6 : 0.30 * ts);
    EXPECT_NEAR(v.within_scenario, tw, bal ? 1e-6 : 0.02 * tw);
  }
}

TEST(VarianceComponents, ANegativeEstimateIsZeroAndSaysSo) {
  // Two templates with equal means and spread scenarios: the template component's moment estimate is negative.
  const std::vector<double> y{0, 0.1, 1, 1.1, 0, 0.1, 1, 1.1};
  const std::vector<std::size_t> t{0, 0, 0, 0, 1, 1, 1, 1}, s{0, 0, 1, 1, 2, 2, 3, 3};
  const VarianceComponents v = nested_variance_components(y, t, s);
  EXPECT_EQ(v.between_templates, 0.0);
  EXPECT_TRUE(v.truncated);
  EXPECT_GT(v.between_scenarios, 0.0);
}

}  // namespace
}  // namespace advplan
