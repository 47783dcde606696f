// MA-Bench's per-model table from its own files (`advplan rubric score ... --briefs briefs.jsonl`), on the hand-made
// fixture tests/data/mabench/models/: two cases of four items (CI +9, I +5, SI +2, CD -9; total positive 16),
// model-a under two conditions (effort-low with two seeds on c1) and model-b, graded by j1 and j2. Every number
// below is worked by hand in the comments.
#include <gtest/gtest.h>

#include <cmath>

#include "advplan/core/error.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/rubric/mabench.hpp"
#include "advplan/rubric/model_table.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using namespace rubric;
const std::string kDir = std::string(ADVPLAN_SOURCE_DIR) + "/tests/data/mabench/models";

io::CsvTable file_of(const ModelTables& t, const std::string& name) {
  for (const auto& [n, text] : t.files)
    if (n == name) return io::CsvTable::parse(text, name);
  ADD_FAILURE() << name;
  return {};
}

std::size_t row_of(const io::CsvTable& t, const std::vector<std::string>& key) {
  for (std::size_t r = 0; r < t.size(); ++r)
    if (std::equal(key.begin(), key.end(), t.rows()[r].begin())) return r;
  ADD_FAILURE() << "no row " << key[0] << " " << key[1];
  return 0;
}

ModelTables tables() {
  auto verdicts = read_verdicts(kDir + "/verdicts.jsonl");
  attach_briefs(verdicts, read_briefs(kDir + "/briefs.jsonl"));
  return model_tables(read_rubric_items(kDir + "/rubric_items.jsonl"), verdicts, 200, 3);
}

TEST(ModelTable, HandWorkedPerModelAndCondition) {
  const auto t = tables();
  const auto sm = file_of(t, "scores_per_model.csv");
  // j1, model-a, effort-low. c1 seed 1: x2 failed, x4 not listed (the CD mistake made): (9 + 2 - 9)/16 = 0.125, items
  // correct 2/4, one wrong move, a critical one; seed 2: x4 listed (avoided): 11/16, 3/4. c1's mean: 0.40625,
  // 0.625, 0.5 wrong moves, 0.5 critical wrong moves. c2: x1 (CI) failed, x4 avoided: 7/16 = 0.4375, 3/4, one
  // critical omission. The model: the mean over cases: 0.421875, items correct 0.6875, wrong moves 0.25, critical
  // omissions 0.5, critical wrong moves 0.25, positive pass rate 2/3 in both cases.
  const std::size_t lo = row_of(sm, {"j1", "model-a", "effort-low"});
  EXPECT_EQ(sm.at(lo, "cases"), "2");
  EXPECT_EQ(sm.at(lo, "briefs"), "3");
  EXPECT_NEAR(sm.real(lo, "weighted_score"), 0.421875, 1e-6);
  EXPECT_NEAR(sm.real(lo, "items_correct"), 0.6875, 1e-6);
  EXPECT_NEAR(sm.real(lo, "wrong_moves_per_brief"), 0.25, 1e-6);
  EXPECT_NEAR(sm.real(lo, "critical_omissions_per_brief"), 0.5, 1e-6);
  EXPECT_NEAR(sm.real(lo, "critical_wrong_moves_per_brief"), 0.25, 1e-6);
  EXPECT_NEAR(sm.real(lo, "positive_pass_rate"), 2.0 / 3, 1e-6);
  // The interval over the two case means 0.40625 and 0.4375 lies between them.
  EXPECT_GE(sm.real(lo, "weighted_lo"), 0.40625 - 1e-9);
  EXPECT_LE(sm.real(lo, "weighted_hi"), 0.4375 + 1e-9);
  // effort-high: c1 16/16, c2 x3 failed: 14/16; mean 0.9375. model-b: c1 -9/16, c2 0: -0.28125 (not clamped).
  EXPECT_NEAR(sm.real(row_of(sm, {"j1", "model-a", "effort-high"}), "weighted_score"), 0.9375, 1e-6);
  EXPECT_NEAR(sm.real(row_of(sm, {"j1", "model-b", "default"}), "weighted_score"), -0.28125, 1e-6);
  // j2 differs on model-b only: c1 nothing failed, x4 charged: 7/16; c2 16/16: 0.71875.
  EXPECT_NEAR(sm.real(row_of(sm, {"j2", "model-b", "default"}), "weighted_score"), 0.71875, 1e-6);

  // Condition difference of model-a, paired by case: c1 1 - 0.40625 = 0.59375, c2 0.875 - 0.4375 = 0.4375.
  const auto cd = file_of(t, "condition_differences.csv");
  ASSERT_EQ(cd.size(), 2U);  // one per judge
  const std::size_t d = row_of(cd, {"j1", "model-a"});
  EXPECT_EQ(cd.at(d, "condition_a"), "effort-high");  // conditions in name order: b - a = low - high
  EXPECT_NEAR(cd.real(d, "difference"), -(0.59375 + 0.4375) / 2, 1e-6);
  EXPECT_NEAR(cd.real(d, "difference_lo"), -0.59375, 1e-6);  // the bootstrap of two cases: at most both extremes
  EXPECT_LE(cd.real(d, "difference_hi"), -0.4375 + 1e-6);

  // Rankings of the three (model, condition) units: j1 high > low > b; j2 high > b > low: rho = 1 - 6*2/(3*8) = 0.5.
  const auto rc = file_of(t, "judge_rank_correlation.csv");
  ASSERT_EQ(rc.size(), 1U);
  EXPECT_EQ(rc.at(0, "models"), "3");
  EXPECT_NEAR(rc.real(0, "spearman"), 0.5, 1e-6);
  EXPECT_LE(rc.real(0, "spearman_lo"), 0.5);
  EXPECT_GE(rc.real(0, "spearman_hi"), 0.5);
  EXPECT_EQ(tables().files, t.files);  // same seed, same bytes
}

TEST(ModelTable, BriefsMustMatchTheVerdicts) {
  auto verdicts = read_verdicts(kDir + "/verdicts.jsonl");
  auto briefs = read_briefs(kDir + "/briefs.jsonl");
  EXPECT_EQ(briefs.at("a-lo-c1-s2").seed, "2");
  EXPECT_EQ(briefs.at("b-c1").model_slug, "other/model-b");
  auto missing = briefs;
  missing.erase("b-c2");
  EXPECT_THROW(attach_briefs(verdicts, missing), Error);
  auto moved = briefs;
  moved.at("b-c2").case_id = "c1";
  EXPECT_THROW(attach_briefs(verdicts, moved), Error);
  verdicts[0].model = "someone-else";
  EXPECT_THROW(attach_briefs(verdicts, briefs), Error);
  try {
    parse_briefs(R"({"brief_id":"x","model":"m","case":"c"})" "\n" R"({"brief_id":"x","model":"m","case":"c"})" "\n", "briefs.jsonl");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("briefs.jsonl line 2, field 'brief_id'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_briefs(R"({"brief_id":"x","case":"c"})" "\n", "briefs.jsonl"), Error);  // no model
}

TEST(ModelTableCli, ScoreWithBriefsWritesTheModelTable) {
  testing::TempDir tmp("model-table");
  const auto x = testing::advplan("rubric score " + testing::quote(kDir + "/rubric_items.jsonl") + " " +
                                      testing::quote(kDir + "/verdicts.jsonl") + " --briefs " +
                                      testing::quote(kDir + "/briefs.jsonl") + " --out " + testing::quote(tmp / "out"),
                                  tmp);
  ASSERT_EQ(x.status, 0) << x.err;
  EXPECT_NE(x.out.find("| j1 | model-a | effort-low | 2 | 0.422"), std::string::npos) << x.out;
  const auto policy = io::CsvTable::read(tmp / "out/scores_per_policy.csv");
  // With briefs.jsonl, the per-policy table has the models (no field added by hand to the verdicts).
  bool model_a = false;
  for (std::size_t r = 0; r < policy.size(); ++r) model_a = model_a || policy.at(r, "model") == "model-a";
  EXPECT_TRUE(model_a);
  EXPECT_TRUE(std::filesystem::exists(tmp / "out/condition_differences.csv"));
}

}  // namespace
}  // namespace advplan
