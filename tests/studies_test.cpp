// The rubric-sensitivity and framing-sensitivity studies (docs/METRICS.md "Rubric validators" and "Framing").
#include <gtest/gtest.h>

#include <cmath>

#include "advplan/experiment/studies.hpp"
#include "advplan/experiment/trace_schema.hpp"
#include "advplan/metrics/rubric.hpp"

namespace advplan {
namespace {

using io::CsvTable;

/// One scenario, two records, scores chosen by hand:
///   record r1: base .5, constraint .6, logistics .5, adversarial .4
///   record r2: base .8, constraint .8, logistics .6, adversarial .8
CsvTable hand_records() {
  CsvTable t(schema::rubric_records());
  auto add = [&](const char* rec, const char* v, const char* score) { t.add({rec, "s-1", "seed_blue", v, score}); };
  add("s-1/r1", "base", "0.500000");
  add("s-1/r1", "constraint", "0.600000");
  add("s-1/r1", "logistics", "0.500000");
  add("s-1/r1", "adversarial_review", "0.400000");
  add("s-1/r2", "base", "0.800000");
  add("s-1/r2", "constraint", "0.800000");
  add("s-1/r2", "logistics", "0.600000");
  add("s-1/r2", "adversarial_review", "0.800000");
  return t;
}

double stat(const CsvTable& t, const std::string& s, const std::string& a, const std::string& b) {
  for (std::size_t i = 0; i < t.size(); ++i)
    if (t.at(i, "statistic") == s && t.at(i, "validator_a") == a && t.at(i, "validator_b") == b) return t.real(i, "mean");
  ADD_FAILURE() << "no row " << s << " " << a << " " << b;
  return std::nan("");
}

TEST(RubricStudy, AgreementAndDeviationOnHandMadeRecords) {
  const CsvTable t = rubric_sensitivity_table(hand_records(), {200, 7});
  // constraint vs logistics: |.6-.5| = .1, |.8-.6| = .2 -> mean .15 -> agreement .85
  EXPECT_NEAR(stat(t, "agreement", "constraint", "logistics"), 0.85, 1e-6);
  // constraint vs adversarial: .2, 0 -> .1 -> .9
  EXPECT_NEAR(stat(t, "agreement", "constraint", "adversarial_review"), 0.90, 1e-6);
  // logistics vs adversarial: .1, .2 -> .15 -> .85
  EXPECT_NEAR(stat(t, "agreement", "logistics", "adversarial_review"), 0.85, 1e-6);
  EXPECT_NEAR(stat(t, "mean_pairwise_agreement", "", ""), (0.85 + 0.90 + 0.85) / 3, 1e-6);
  // deviations from base: constraint (.1 + 0)/2 = .05; logistics (0 + .2)/2 = .1; adversarial (.1 + 0)/2 = .05
  EXPECT_NEAR(stat(t, "deviation_from_base", "constraint", "base"), 0.05, 1e-6);
  EXPECT_NEAR(stat(t, "deviation_from_base", "logistics", "base"), 0.10, 1e-6);
  EXPECT_NEAR(stat(t, "deviation_from_base", "adversarial_review", "base"), 0.05, 1e-6);
  EXPECT_NEAR(stat(t, "mean_deviation_from_base", "", "base"), 0.2 / 3, 1e-6);
}

TEST(RubricStudy, ValidatorsAreTheBaseRubricAndThreeEmphases) {
  const auto& v = rubric_validators();
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].name, "base");
  for (double w : v[0].weights) EXPECT_EQ(w, 1.0);
  EXPECT_EQ(rubric_agreement({0.2, 0.4}, {0.3, 0.4}), 1.0 - 0.05);
}

class FramingStudy : public ::testing::Test {
 protected:
  void SetUp() override {
    cfg_ = default_experiment_config();
    cfg_.seed_to = cfg_.seed_from + 4;  // 5 seeds x 5 templates
    plan_ = prepare_run(cfg_, {{"greedy@8", "seed", "greedy@8", "main"}});
    red_ = make_red_policy("greedy@8", plan_.ctx);
    blue_ = make_blue_policy("seed", plan_.ctx);
  }
  ExperimentConfig cfg_;
  RunPlan plan_;
  std::unique_ptr<RedPolicy> red_;
  std::unique_ptr<BluePolicy> blue_;
};

TEST_F(FramingStudy, MetadataDeltaIsExactlyZeroComputed) {
  const auto neutral = framing_outcome(plan_, FramingMode::metadata, Framing::neutral, *blue_, *red_);
  for (Framing f : {Framing::blue_favorable, Framing::red_favorable}) {
    const auto o = framing_outcome(plan_, FramingMode::metadata, f, *blue_, *red_);
    ASSERT_EQ(o.blue_quality.size(), 25u);
    for (std::size_t i = 0; i < o.blue_quality.size(); ++i) {
      EXPECT_EQ(o.blue_quality[i], neutral.blue_quality[i]) << i;
      EXPECT_EQ(o.advantage[i], neutral.advantage[i]) << i;
    }
  }
}

TEST_F(FramingStudy, AppliedBlueFavourableFramingChangesTheSeedPlans) {
  const auto neutral = framing_outcome(plan_, FramingMode::applied, Framing::neutral, *blue_, *red_);
  const auto blue = framing_outcome(plan_, FramingMode::applied, Framing::blue_favorable, *blue_, *red_);
  std::size_t changed = 0;
  for (std::size_t i = 0; i < neutral.blue_quality.size(); ++i) changed += blue.blue_quality[i] != neutral.blue_quality[i];
  EXPECT_GT(changed, 0u);
}

}  // namespace
}  // namespace advplan
