// MA-Bench scoring: severity weights, the unclamped weighted score (the spec's worked example 0.875, 0.4375,
// -0.5625), items-correct, the decomposition, and `advplan rubric score|agreement` on the hand-made files in
// tests/data/mabench/worked/ (known answers: the worked example is case c1 judged by j1; j2 differs from j1 on one
// item verdict of 12, so percent = 11/12 and Cohen's kappa = 5/6 by hand), MANIFEST.json checking and one-sentence
// errors on malformed input.
#include <gtest/gtest.h>
#include <set>
#include <algorithm>

#include <cmath>
#include <filesystem>

#include "advplan/core/error.hpp"
#include "advplan/rubric/mabench.hpp"
#include "advplan/rubric/score.hpp"
#include "advplan/io/csv.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using namespace rubric;
using testing::CommandResult;
using testing::TempDir;
using testing::run_command;
using testing::shell_quote;

const std::string kWorked = std::string(ADVPLAN_SOURCE_DIR) + "/tests/data/mabench/worked";

std::vector<RubricItem> worked_items() {
  auto item = [](std::string id, Severity s, std::string step, int tier) {
    RubricItem it;
    it.case_id = "c1";
    it.item_id = std::move(id);
    it.severity = s;
    it.step = std::move(step);
    it.tier = tier;
    return it;
  };
  return {item("a", Severity::CI, "S1", 1), item("b", Severity::I, "S2", 2), item("c", Severity::SI, "S2", 3),
          item("d", Severity::CD, "S3", 3)};
}

TEST(RubricScore, FailedIdsAreFoundByScanOrBySetAlike) {
  // A brief's few items and failures are matched by scans, many by a set (passed_from_failed, and the unknown-id
  // count of score_verdicts): either way an item passes when no failure names it, duplicates and unknown ids
  // included. The reference is the set.
  for (const std::size_t n_items : {0u, 1u, 5u, 64u, 65u, 200u})
    for (const std::size_t n_failed : {0u, 1u, 3u, 64u, 65u, 300u}) {
      std::vector<RubricItem> items(n_items);
      for (std::size_t i = 0; i < n_items; ++i) items[i].item_id = "it-" + std::to_string(i * 7 % 997);
      std::vector<std::string> failed;
      for (std::size_t k = 0; k < n_failed; ++k) failed.push_back("it-" + std::to_string(k * 13 % 1000));
      const std::set<std::string> f(failed.begin(), failed.end());
      const auto got = passed_from_failed(items, failed);
      ASSERT_EQ(got.size(), n_items);
      for (std::size_t i = 0; i < n_items; ++i) EXPECT_EQ(got[i], f.count(items[i].item_id) == 0) << n_items << " " << n_failed << " " << i;
    }
}

TEST(RubricScore, SeverityWeights) {
  EXPECT_EQ(severity_weight(Severity::CI), 9);
  EXPECT_EQ(severity_weight(Severity::I), 5);
  EXPECT_EQ(severity_weight(Severity::SI), 2);
  EXPECT_EQ(severity_weight(Severity::D), -5);
  EXPECT_EQ(severity_weight(Severity::CD), -9);
  EXPECT_TRUE(is_negative(Severity::D));
  EXPECT_FALSE(is_negative(Severity::SI));
  EXPECT_EQ(parse_severity("SI"), Severity::SI);
  EXPECT_FALSE(parse_severity("X"));
}

TEST(RubricScore, WorkedExampleIsUnclamped) {
  const auto items = worked_items();
  // Passing the first two and avoiding the mistake (the negative item is listed as failed).
  const auto s1 = score_brief(items, passed_from_failed(items, std::vector<std::string>{"c", "d"}));
  EXPECT_DOUBLE_EQ(s1.weighted, 0.875);
  EXPECT_DOUBLE_EQ(s1.total_positive, 16);
  EXPECT_EQ(s1.correct, 3U);
  // Passing all three but committing the mistake (nothing listed).
  const auto s2 = score_brief(items, passed_from_failed(items, std::vector<std::string>{}));
  EXPECT_DOUBLE_EQ(s2.weighted, 0.4375);
  EXPECT_DOUBLE_EQ(s2.incurred_negative, -9);
  // Committing the mistake with nothing passed: negative, not floored at zero.
  const auto s3 = score_brief(items, passed_from_failed(items, std::vector<std::string>{"a", "b", "c"}));
  EXPECT_DOUBLE_EQ(s3.weighted, -0.5625);
  EXPECT_DOUBLE_EQ(s3.items_correct, 0.0);
}

TEST(RubricScore, DecompositionSumsToTheScorePerDimension) {
  const auto items = worked_items();
  const auto passed = passed_from_failed(items, std::vector<std::string>{"c"});
  const double score = score_brief(items, passed).weighted;  // (16 - 9) / 16 with c failed: (14 - 9) / 16
  EXPECT_DOUBLE_EQ(score, 5.0 / 16);
  std::map<std::string, double> sums;
  std::map<std::string, std::size_t> items_per_dim;
  for (const auto& g : decompose(items, passed)) {
    sums[g.dimension] += g.contribution;
    items_per_dim[g.dimension] += g.items;
    if (g.dimension == "step" && g.group == "S2") {
      EXPECT_DOUBLE_EQ(g.contribution, 5.0 / 16);
    }
    if (g.dimension == "severity" && g.group == "CD") {
      EXPECT_EQ(g.correct, 0U);
    }
  }
  ASSERT_EQ(sums.size(), 3U);
  for (const auto& [dim, s] : sums) {
    EXPECT_NEAR(s, score, 1e-12) << dim;
    EXPECT_EQ(items_per_dim[dim], items.size()) << dim;
  }
}

// The groups come dimension by dimension (step, tier, severity), each dimension's in key order, whatever order
// the items name them in.
TEST(RubricScore, DecompositionListsEachDimensionsGroupsInKeyOrder) {
  std::vector<RubricItem> items = worked_items();
  std::reverse(items.begin(), items.end());
  const auto groups = decompose(items, std::vector<bool>(items.size(), true));
  std::vector<std::string> dims;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    if (dims.empty() || dims.back() != groups[i].dimension) dims.push_back(groups[i].dimension);
    if (i > 0 && groups[i].dimension == groups[i - 1].dimension) {
      EXPECT_LT(groups[i - 1].group, groups[i].group);
    }
  }
  EXPECT_EQ(dims, (std::vector<std::string>{"step", "tier", "severity"}));
  std::set<std::string> steps;
  for (const auto& it : items) steps.insert(it.step);
  EXPECT_GE(steps.size(), 2u);  // more than one group, so the order is tested
}

TEST(RubricScore, JudgeErrorIsNeverAPass) {
  RubricSet set{{"c1", worked_items()}};
  Verdict v;
  v.brief_id = "b";
  v.judge = "j";
  v.case_id = "c1";
  v.model = "m";
  v.group = "c1";
  v.error = true;
  const auto rep = score_verdicts(set, std::vector<Verdict>{v}, MeanOver::group, 10);
  EXPECT_EQ(rep.errors, 1U);
  const auto csv = io::CsvTable::parse(rep.files[0].second, "briefs");
  EXPECT_EQ(csv.at(0, "weighted_score"), "-0.562500");
  EXPECT_EQ(csv.at(0, "judge_error"), "1");
}

TEST(RubricScore, PolicyScoreAveragesGroupsThenBriefs) {
  // Two briefs in group g1 (scores 0.875 and 0.4375), one in g2 (-0.5625): mean over groups
  // ((0.875 + 0.4375) / 2 - 0.5625) / 2 = 0.046875; mean over briefs 0.25.
  RubricSet set{{"c1", worked_items()}};
  auto v = [](std::string brief, std::string group, std::vector<std::string> failed) {
    Verdict x;
    x.brief_id = std::move(brief);
    x.judge = "j";
    x.case_id = "c1";
    x.model = "m";
    x.group = std::move(group);
    x.failed_items = std::move(failed);
    return x;
  };
  const std::vector<Verdict> vs{v("b1", "g1", {"c", "d"}), v("b2", "g1", {}), v("b3", "g2", {"a", "b", "c"})};
  const auto by_group = io::CsvTable::parse(score_verdicts(set, vs, MeanOver::group, 10).files[1].second, "p");
  EXPECT_EQ(by_group.at(0, "weighted_score"), "0.046875");
  EXPECT_EQ(by_group.at(0, "units"), "2");
  const auto by_brief = io::CsvTable::parse(score_verdicts(set, vs, MeanOver::brief, 10).files[1].second, "p");
  EXPECT_EQ(by_brief.at(0, "weighted_score"), "0.250000");
  EXPECT_EQ(by_brief.at(0, "units"), "3");
}

// Two conflicting verdicts of one judge on one brief are refused by the scorer as by the agreement (the scorer once
// counted both: exact/council 0.736801 became 0.723085); the same brief under another judge is fine.
TEST(RubricScore, TwoVerdictsOfOneJudgeOnOneBriefAreRefused) {
  RubricSet set{{"c1", worked_items()}};
  auto v = [](std::string judge, std::vector<std::string> failed) {
    Verdict x;
    x.brief_id = "b1";
    x.judge = std::move(judge);
    x.case_id = "c1";
    x.model = "m";
    x.group = "g";
    x.failed_items = std::move(failed);
    return x;
  };
  const std::vector<Verdict> two{v("j", {"c"}), v("j", {})};
  for (const bool agreement : {false, true}) {
    try {
      if (agreement)
        (void)judge_agreement(set, two, 10);
      else
        (void)score_verdicts(set, two, MeanOver::brief, 10);
      ADD_FAILURE() << (agreement ? "agreement" : "score") << " accepted two verdicts";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "judge 'j' has two verdicts on brief 'b1' of case 'c1'");
    }
  }
  const std::vector<Verdict> judges{v("j", {"c"}), v("k", {})};
  EXPECT_NO_THROW((void)score_verdicts(set, judges, MeanOver::brief, 10));
}

TEST(RubricMabench, ScoreCommandReproducesTheWorkedExample) {
  TempDir dir("rubric-score");
  const auto r = run_command(shell_quote(ADVPLAN_BINARY) + " rubric score " + shell_quote(kWorked + "/rubric_items.jsonl") +
                                 " " + shell_quote(kWorked + "/verdicts_j1.jsonl") + " --out " + shell_quote(dir / "out"),
                             dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("3 manifest hashes checked"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("2 unknown item ids"), std::string::npos) << r.err;
  const auto briefs = io::CsvTable::read(dir / "out/scores_per_brief.csv");
  ASSERT_EQ(briefs.size(), 4U);
  EXPECT_EQ(briefs.at(0, "weighted_score"), "0.875000");
  EXPECT_EQ(briefs.at(1, "weighted_score"), "0.437500");
  EXPECT_EQ(briefs.at(2, "weighted_score"), "-0.562500");
  EXPECT_EQ(briefs.at(3, "weighted_score"), "1.000000");  // case c2: the D item listed = avoided
  const auto policy = io::CsvTable::read(dir / "out/scores_per_policy.csv");
  EXPECT_EQ(policy.at(0, "model"), "m1");
  EXPECT_EQ(policy.at(0, "weighted_score"), "0.250000");
  EXPECT_EQ(policy.at(0, "items_correct"), "0.500000");
}

TEST(RubricMabench, AgreementCommandGivesTheHandComputedKappa) {
  TempDir dir("rubric-agree");
  const auto r = run_command(shell_quote(ADVPLAN_BINARY) + " rubric agreement --items " +
                                 shell_quote(kWorked + "/rubric_items.jsonl") + " " +
                                 shell_quote(kWorked + "/verdicts_j1.jsonl") + " " +
                                 shell_quote(kWorked + "/verdicts_j2.jsonl") + " --out " + shell_quote(dir / "a"),
                             dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto pairs = io::CsvTable::read(dir / "a/agreement_pairs.csv");
  ASSERT_EQ(pairs.size(), 1U);
  EXPECT_EQ(pairs.at(0, "items"), "12");
  EXPECT_EQ(pairs.at(0, "percent_agreement"), io::fmt_real(11.0 / 12));
  EXPECT_EQ(pairs.at(0, "kappa"), io::fmt_real(5.0 / 6));
  EXPECT_TRUE(std::filesystem::exists(dir / "a/agreement_panel.tex"));
}

TEST(RubricMabench, ManifestMismatchIsOneSentence) {
  TempDir dir("rubric-manifest");
  for (const char* f : {"rubric_items.jsonl", "verdicts_j1.jsonl", "verdicts_j2.jsonl", "MANIFEST.json"})
    std::filesystem::copy_file(kWorked + "/" + f, dir / f);
  testing::write_file(dir / "verdicts_j2.jsonl", testing::read_file(dir / "verdicts_j2.jsonl") + "\n");
  const auto r = run_command(shell_quote(ADVPLAN_BINARY) + " rubric score " + shell_quote(dir / "rubric_items.jsonl") +
                                 " " + shell_quote(dir / "verdicts_j1.jsonl"),
                             dir);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("MANIFEST.json: the sha256 of 'verdicts_j2.jsonl' is"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

TEST(RubricMabench, MalformedRecordsNameFileLineAndField) {
  const std::string ok =
      R"({"case_id": "c", "item_id": "a", "step": "S1", "tier": 1, "severity": "CI"})"
      "\n";
  EXPECT_EQ(parse_rubric_items(ok, "items.jsonl").at("c").size(), 1U);
  auto message = [](auto fn) {
    try {
      fn();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] { parse_rubric_items(ok + R"({"case_id": "c", "item_id": "b", "step": "S1", "tier": 4, "severity": "CI"})", "items.jsonl"); }),
            "items.jsonl line 2, field 'tier': expected an integer 1, 2 or 3");
  EXPECT_EQ(message([&] { parse_rubric_items(ok + ok, "items.jsonl"); }),
            "items.jsonl line 2, field 'item_id': 'a' is repeated in case 'c'");
  EXPECT_EQ(message([&] { parse_rubric_items(R"({"case_id": "c", "item_id": "a", "step": "S1", "tier": 1, "severity": "CD", "weight": 9})", "i"); }),
            "i line 1, field 'weight': severity CD has weight -9, while 9 was given");
  EXPECT_EQ(message([&] { parse_rubric_items(R"({"case_id": "c", "item_id": "a", "step": "S1", "tier": 1, "severity": "CD", "weight": "heavy"})", "i"); }),
            "i line 1, field 'weight': severity CD has weight -9, while \"heavy\" was given");
  EXPECT_EQ(message([&] { parse_rubric_items(R"({"case_id": "c", "item_id": "a", "step": "S1", "tier": 1, "severity": "CD", "polarity": "positive"})", "i"); }),
            "i line 1, field 'polarity': severity CD needs polarity 'negative'");
  EXPECT_EQ(message([&] { parse_verdicts(R"({"brief_id": "b", "judge": "j", "case_id": "c"})", "v.jsonl"); }),
            "v.jsonl line 1, field 'failed_items': missing");
  EXPECT_EQ(message([&] { parse_verdicts(R"({"brief_id": "b", "judge": "j", "case_id": "c", "failed_items": [1]})", "v.jsonl"); }),
            "v.jsonl line 1, field 'failed_items': entry 0 is not a string of at most 256 bytes");
  EXPECT_EQ(message([&] { parse_verdicts("[1]", "v.jsonl"); }), "v.jsonl line 1: the record is not a JSON object");
  EXPECT_NE(message([&] { parse_verdicts("{\"a\": " + std::string(100, '[') + std::string(100, ']') + "}", "v.jsonl"); })
                .find("v.jsonl line 1: JSON nests deeper than"),
            std::string::npos);
  EXPECT_NE(message([&] { parse_verdicts(std::string(kMaxJsonlLine + 1, ' ') + "x", "v.jsonl"); })
                .find("v.jsonl line 1: the line has"),
            std::string::npos);
  // A verdict on a case without items names the brief, the judge and the case.
  RubricSet set{{"c1", worked_items()}};
  auto vs = parse_verdicts(R"({"brief_id": "b", "judge": "j", "case_id": "nope", "failed_items": []})", "v");
  EXPECT_EQ(message([&] { score_verdicts(set, vs, MeanOver::group, 10); }),
            "verdict on brief 'b' by judge 'j': case 'nope' has no rubric items");
}

}  // namespace
}  // namespace advplan
