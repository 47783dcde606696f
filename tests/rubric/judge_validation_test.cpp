// `advplan rubric validate`: judges against an expert study (docs/RUBRIC.md "Validating a judge against experts").
// Known answers: the hand-worked study in tests/data/mabench/expert_study/ (four experts, eight items, two ties;
// worked in the comments below), and statsmodels' values (cohens_kappa, fleiss_kappa) for it and for a random study
// of 101 items, stored by tests/data/oracles/make_validation_fixtures.py in validation_fixtures.json, to 1e-6 (the
// CSV has six decimals).
// The bootstrap intervals are checked against a brute force that builds every resampled study and recomputes.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/core/random.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/rubric/mabench.hpp"
#include "advplan/rubric/validate.hpp"
#include "advplan/stats/agreement.hpp"
#include "advplan/stats/statistics.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using namespace rubric;
using testing::TempDir;

const std::string kStudyDir = std::string(ADVPLAN_SOURCE_DIR) + "/tests/data/mabench/expert_study";

const nlohmann::json& fixtures() {
  static const nlohmann::json j = nlohmann::json::parse(
      testing::read_file(std::string(ADVPLAN_SOURCE_DIR) + "/tests/data/oracles/validation_fixtures.json"));
  return j;
}

io::CsvTable file_of(const ValidationReport& r, const std::string& name) {
  for (const auto& [n, text] : r.files)
    if (n == name) return io::CsvTable::parse(text, name);
  ADD_FAILURE() << name << " not written";
  return {};
}

/// The row of `t` whose first columns are `key` (e.g. {judge, dimension, group}).
std::size_t row_of(const io::CsvTable& t, const std::vector<std::string>& key) {
  for (std::size_t r = 0; r < t.size(); ++r)
    if (std::equal(key.begin(), key.end(), t.rows()[r].begin())) return r;
  ADD_FAILURE() << "no row " << key.front() << " " << (key.size() > 1 ? key[1] : "");
  return 0;
}

ValidationReport validate_hand(ValidationOptions o = {}) {
  const auto study = read_expert_study(kStudyDir + "/study.jsonl");
  const auto others = read_verdicts(kStudyDir + "/other_verdicts.jsonl");
  return validate_judges(study, others, o);
}

TEST(JudgeValidation, HandWorkedStudy) {
  ValidationOptions o;
  o.families["judge"] = "gpt";
  const auto rep = validate_hand(o);
  EXPECT_EQ(rep.ignored_verdicts, 1U);  // b9 is not in the study
  const auto j = file_of(rep, "validation_judges.csv");
  // The production judge against the majority on the six items that are not ties: TP i2, j1; FP j2; FN j4;
  // TN i1, i4. Agreement 4/6; kappa (2/3 - 1/2) / (1 - 1/2) = 1/3 (both fail rates 1/2); F1 = 4 / (4 + 1 + 1).
  const std::size_t a = row_of(j, {"judge", "all", "all"});
  EXPECT_EQ(j.at(a, "items"), "6");
  EXPECT_EQ(j.at(a, "tp"), "2");
  EXPECT_EQ(j.at(a, "fp"), "1");
  EXPECT_EQ(j.at(a, "fn"), "1");
  EXPECT_EQ(j.at(a, "tn"), "2");
  EXPECT_NEAR(j.real(a, "agreement"), 4.0 / 6, 1e-6);
  EXPECT_NEAR(j.real(a, "kappa"), 1.0 / 3, 1e-6);
  EXPECT_NEAR(j.real(a, "f1_fail"), 2.0 / 3, 1e-6);
  // Ties i3, j3: the judge says Fail on both, so read as Pass it agrees on 4 of 8 items, read as Fail on 6 of 8.
  EXPECT_NEAR(j.real(a, "agreement_ties_pass"), 0.5, 1e-6);
  EXPECT_NEAR(j.real(a, "agreement_ties_fail"), 0.75, 1e-6);
  // The second judge agrees with every non-tie majority.
  const std::size_t c = row_of(j, {"claude-judge", "all", "all"});
  EXPECT_NEAR(j.real(c, "agreement"), 1.0, 1e-6);
  EXPECT_NEAR(j.real(c, "kappa"), 1.0, 1e-6);
  EXPECT_NEAR(j.real(c, "agreement_ties_fail"), 0.75, 1e-6);
  // By tier: tier 2 non-tie items are i2 (F/F) and j2 (judge F, majority P).
  const std::size_t t2 = row_of(j, {"judge", "tier", "2"});
  EXPECT_EQ(j.at(t2, "items"), "2");
  EXPECT_NEAR(j.real(t2, "agreement"), 0.5, 1e-6);
  EXPECT_EQ(j.at(t2, "ties"), "1");  // j3

  // Fleiss: the experts' fail counts per item are 1,3,2,0,3,1,2,3 of 4: mean P_i = 25/48, p_fail = 15/32, so
  // kappa = (25/48 - 257/512) / (1 - 257/512) = 29/765. With the judge (5 raters): fail counts 1,4,3,0,4,2,3,3, mean
  // P_i = 0.55, p_fail = 1/2: kappa = 0.1.
  const auto p = file_of(rep, "validation_panel.csv");
  const std::size_t pj = row_of(p, {"judge"});
  EXPECT_NEAR(p.real(pj, "fleiss_panel"), 29.0 / 765, 1e-6);
  EXPECT_NEAR(p.real(pj, "fleiss_with_judge"), 0.1, 1e-6);
  EXPECT_NEAR(p.real(pj, "difference"), 0.1 - 29.0 / 765, 1e-6);
  // claude-judge: fail counts 1,4,2,0,4,1,2,4 of 5: mean P_i = 0.6, p_fail = 0.45: kappa = 0.095 / 0.495 = 19/99.
  EXPECT_NEAR(p.real(row_of(p, {"claude-judge"}), "fleiss_with_judge"), 19.0 / 99, 1e-6);

  // Self-preference. The judge (family gpt) on b1 (gpt-4o): i1 +9 and i4 +2 pass, i3 (D) failed = avoided: 11/16;
  // claude-judge passes i3, charging -5: 6/16. Difference 0.3125. claude-judge (family claude) on b2 (claude-3):
  // j2 +5 passes and j3 (CD) passes, charged -9: -4/16; the judge: j4 +2 only: 2/16. Difference -0.375.
  const auto s = file_of(rep, "validation_self_preference.csv");
  ASSERT_EQ(s.size(), 2U);
  const std::size_t sj = row_of(s, {"judge"});
  EXPECT_EQ(s.at(sj, "family"), "gpt");
  EXPECT_NEAR(s.real(sj, "judge_score"), 11.0 / 16, 1e-6);
  EXPECT_NEAR(s.real(sj, "others_score"), 6.0 / 16, 1e-6);
  EXPECT_NEAR(s.real(sj, "difference"), 0.3125, 1e-6);
  EXPECT_NEAR(s.real(row_of(s, {"claude-judge"}), "difference"), -0.375, 1e-6);
}

/// Every point statistic against statsmodels (and direct counts), on both fixtures, every judge and group.
TEST(JudgeValidation, AgreesWithStatsmodels) {
  ASSERT_EQ(fixtures()["cases"].size(), 2U);
  for (const auto& c : fixtures()["cases"]) {
    const auto study = parse_expert_study(c["study"].get<std::string>(), c["name"].get<std::string>());
    const auto others = parse_verdicts(c["verdicts"].get<std::string>(), "verdicts");
    ValidationOptions o;
    o.resamples = 0;
    const auto rep = validate_judges(study, others, o);
    const auto j = file_of(rep, "validation_judges.csv");
    const auto p = file_of(rep, "validation_panel.csv");
    std::size_t checked = 0;
    for (const auto& [judge, groups] : c["expected"].items()) {
      for (const auto& [group, want] : groups.items()) {
        if (group == "panel") {
          const std::size_t r = row_of(p, {judge});
          for (const char* k : {"fleiss_panel", "fleiss_with_judge", "mean_pairwise_expert_kappa"})
            EXPECT_NEAR(p.real(r, k), want[k].get<double>(), 1e-6) << c["name"] << " " << judge << " " << k;
          EXPECT_EQ(p.at(r, "items"), std::to_string(want["items"].get<int>()));
          ++checked;
          continue;
        }
        const auto sp = group.find(' ');
        const std::size_t r = group == "all" ? row_of(j, {judge, "all", "all"})
                                             : row_of(j, {judge, group.substr(0, sp), group.substr(sp + 1)});
        for (const char* k : {"agreement", "kappa", "kappa_se", "kappa_lo", "kappa_hi", "f1_fail", "precision_fail",
                              "recall_fail", "agreement_ties_pass", "agreement_ties_fail"}) {
          if (!want.contains(k)) continue;
          if (want[k].is_null()) EXPECT_TRUE(std::isnan(j.real(r, k))) << c["name"] << " " << judge << " " << group << " " << k;
          else EXPECT_NEAR(j.real(r, k), want[k].get<double>(), 1e-6) << c["name"] << " " << judge << " " << group << " " << k;
        }
        for (const char* k : {"items", "tp", "fp", "fn", "tn"})
          EXPECT_EQ(j.at(r, k), std::to_string(want[k].get<int>())) << c["name"] << " " << judge << " " << group << " " << k;
        ++checked;
      }
    }
    EXPECT_GE(checked, 10U);
  }
}

/// The intervals: replicate b draws the scenarios (sorted) with multiplicities from Rng::keyed(seed,
/// "rubric-validate", "scenarios") (resample_counts, one stream for all B); the brute force builds the study of
/// each replicate (every line of a drawn scenario repeated as often as it was drawn), recomputes agreement, kappa,
/// F1 and Fleiss' kappa with and without the judge from scratch, and takes the percentile bounds.
TEST(JudgeValidation, BootstrapMatchesBruteForce) {
  const auto& c = fixtures()["cases"][1];
  const auto study = parse_expert_study(c["study"].get<std::string>(), "random");
  const auto others = parse_verdicts(c["verdicts"].get<std::string>(), "verdicts");
  ValidationOptions o;
  o.resamples = 200;
  o.seed = 7;
  const auto rep = validate_judges(study, others, o);
  const auto j = file_of(rep, "validation_judges.csv");
  const auto p = file_of(rep, "validation_panel.csv");

  std::vector<std::string> scen;
  for (const auto& l : study.lines) scen.push_back(l.scenario);
  std::sort(scen.begin(), scen.end());
  scen.erase(std::unique(scen.begin(), scen.end()), scen.end());
  Rng rng = Rng::keyed(o.seed, "rubric-validate", "scenarios");
  std::vector<std::uint32_t> draw(scen.size());
  std::vector<double> agree, kappa, f1, diff;
  for (int b = 0; b < o.resamples; ++b) {
    resample_counts(rng, draw);
    std::vector<int> jf, mf;
    agreement::Matrix panel, with;
    for (std::size_t s = 0; s < scen.size(); ++s)
      for (std::uint32_t k = 0; k < draw[s]; ++k)
        for (const auto& l : study.lines) {
          if (l.scenario != scen[s] || !l.judge_fail) continue;
          const double fails = static_cast<double>(std::count(l.expert_fail.begin(), l.expert_fail.end(), true));
          panel.push_back({fails, 4 - fails});
          with.push_back({fails + *l.judge_fail, 5 - fails - *l.judge_fail});
          if (l.majority == 2) continue;
          jf.push_back(*l.judge_fail ? 1 : 0);
          mf.push_back(l.majority);
        }
    double tp = 0, fp = 0, fn = 0;
    for (std::size_t i = 0; i < jf.size(); ++i) {
      tp += jf[i] && mf[i];
      fp += jf[i] && !mf[i];
      fn += !jf[i] && mf[i];
    }
    agree.push_back(agreement::percent_agreement(jf, mf));
    kappa.push_back(agreement::cohen_kappa(jf, mf, 2).kappa);
    f1.push_back(2 * tp / (2 * tp + fp + fn));
    diff.push_back(agreement::fleiss_kappa(with) - agreement::fleiss_kappa(panel));
  }
  const std::size_t r = row_of(j, {"judge", "all", "all"});
  const auto check = [&](std::vector<double> v, double lo, double hi, const char* what) {
    const auto [blo, bhi] = percentile_bounds(v);
    EXPECT_NEAR(lo, blo, 1e-6) << what;
    EXPECT_NEAR(hi, bhi, 1e-6) << what;
  };
  check(agree, j.real(r, "agreement_lo"), j.real(r, "agreement_hi"), "agreement");
  check(kappa, j.real(r, "kappa_boot_lo"), j.real(r, "kappa_boot_hi"), "kappa");
  check(f1, j.real(r, "f1_lo"), j.real(r, "f1_hi"), "f1");
  const std::size_t pr = row_of(p, {"judge"});
  check(diff, p.real(pr, "difference_lo"), p.real(pr, "difference_hi"), "fleiss difference");
  EXPECT_LT(p.real(pr, "difference_lo"), p.real(pr, "difference_hi"));
  // The gate: admitted when the lower bound is at least -margin.
  EXPECT_EQ(p.at(pr, "admitted"), p.real(pr, "difference_lo") >= -0.05 ? "yes" : "no");
  // judge-b (60% accurate) lowers the panel's kappa and is not admitted; judge-a (90%) is.
  EXPECT_EQ(p.at(row_of(p, {"judge-b"}), "admitted"), "no");
  EXPECT_EQ(p.at(row_of(p, {"judge-a"}), "admitted"), "yes");
  // The same inputs and seed give the same bytes.
  EXPECT_EQ(validate_judges(study, others, o).files, rep.files);
}

TEST(JudgeValidation, MalformedStudiesAreOneSentenceNamingLineAndField) {
  const std::string good =
      R"({"brief":"b","scenario":"s","item_id":"i","tier":1,"severity":"CI","expert_1":"Pass","expert_2":"Fail","majority":"tie"})";
  EXPECT_NO_THROW(parse_expert_study(good + "\n", "study.jsonl"));
  const auto fails_with = [&](const std::string& from, const std::string& to, const std::string& want) {
    std::string text = good;
    text.replace(text.find(from), from.size(), to);
    try {
      parse_expert_study(text + "\n", "study.jsonl");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  };
  fails_with(R"("majority":"tie")", R"("majority":"Pass")", "study.jsonl line 1, field 'majority': \"Pass\" is not the experts' majority");
  fails_with(R"("majority":"tie")", R"("majority":"maybe")", "field 'majority': expected");
  fails_with(R"("expert_2":"Fail")", R"("expert_2":"Fail?")", "field 'expert_2': expected \"Pass\" or \"Fail\"");
  fails_with(R"("expert_2":"Fail")", R"("expert_3":"Fail")", "field 'expert_2': missing");
  fails_with(R"(,"expert_2":"Fail")", "", "at least two experts");
  fails_with(R"("expert_2":"Fail")", R"("expert_02":"Fail")", "without leading zeros");
  fails_with(R"("tier":1)", R"("tier":4)", "field 'tier'");
  fails_with(R"("severity":"CI")", R"("severity":"XX")", "field 'severity'");
  fails_with(R"("brief":"b",)", "", "field 'brief': missing");
  // A repeated item of a brief, a brief in two scenarios, a different panel size on a later line.
  const auto second = [&](const std::string& line2, const std::string& want) {
    try {
      parse_expert_study(good + "\n" + line2 + "\n", "study.jsonl");
      ADD_FAILURE() << "accepted: " << line2;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  };
  second(good, "line 2, field 'item_id': item 'i' of brief 'b' is repeated");
  std::string other_scenario = good;
  other_scenario.replace(other_scenario.find("\"s\""), 3, "\"t\"");
  other_scenario.replace(other_scenario.find("\"i\""), 3, "\"k\"");
  second(other_scenario, "line 2, field 'scenario': brief 'b' is in scenario 's'");
  std::string three = good;
  three.replace(three.find("\"i\""), 3, "\"k\"");
  three.replace(three.find(R"("majority":"tie")"), 16, R"("expert_3":"Fail","majority":"Fail")");
  second(three, "line 2, field 'expert_1': 3 experts on this line, 2 on the first");
  EXPECT_THROW(parse_expert_study("\n", "empty.jsonl"), Error);
  EXPECT_THROW(parse_expert_study("[1]\n", "array.jsonl"), Error);
}

TEST(JudgeValidation, VerdictsMustNameTheStudysBriefs) {
  const auto study = read_expert_study(kStudyDir + "/study.jsonl");
  auto others = read_verdicts(kStudyDir + "/other_verdicts.jsonl");
  others[0].case_id = "s2";  // b1 is in s1
  EXPECT_THROW(validate_judges(study, others, {}), Error);
  others = read_verdicts(kStudyDir + "/other_verdicts.jsonl");
  others.push_back(others[0]);  // two verdicts of one judge on b1
  EXPECT_THROW(validate_judges(study, others, {}), Error);
  others = read_verdicts(kStudyDir + "/other_verdicts.jsonl");
  others[0].judge = "judge";  // the production judge's name
  EXPECT_THROW(validate_judges(study, others, {}), Error);
  // A judge error verifies nothing: every positive item Fail, every negative item Pass (the mistake charged).
  others = read_verdicts(kStudyDir + "/other_verdicts.jsonl");
  others[0].error = true;
  ValidationOptions o;
  o.families["judge"] = "gpt";
  const auto s = file_of(validate_judges(study, others, o), "validation_self_preference.csv");
  EXPECT_NEAR(s.real(row_of(s, {"judge"}), "others_score"), -5.0 / 16, 1e-6);
}

TEST(JudgeValidation, NoIntervalNoAdmission) {
  // One scenario (b1's four items) or no resamples: the change in the panel's kappa has no interval, so the gate
  // cannot be passed, whatever the point says.
  auto study = read_expert_study(kStudyDir + "/study.jsonl");
  study.lines.resize(4);
  const auto one = file_of(validate_judges(study, {}, {}), "validation_panel.csv");
  EXPECT_EQ(one.at(0, "admitted"), "no");
  ValidationOptions o;
  o.resamples = 0;
  const auto none = file_of(validate_judges(read_expert_study(kStudyDir + "/study.jsonl"), {}, o), "validation_panel.csv");
  EXPECT_EQ(none.at(0, "admitted"), "no");
}

TEST(JudgeValidation, ModelFamilies) {
  EXPECT_EQ(model_family("gpt-4o"), "gpt");
  EXPECT_EQ(model_family("openai/gpt-5"), "openai");
  EXPECT_EQ(model_family("llm_judge:Claude-Opus-4"), "claude");
  EXPECT_EQ(model_family("gemini"), "gemini");
}

TEST(JudgeValidationCli, WritesTheTablesAndRefusesBadInput) {
  TempDir tmp("validate-cli");
  const auto x = testing::advplan("rubric validate " + testing::quote(kStudyDir + "/study.jsonl") + " " +
                                      testing::quote(kStudyDir + "/other_verdicts.jsonl") + " --family judge=gpt --out " +
                                      testing::quote(tmp / "out"),
                                  tmp);
  ASSERT_EQ(x.status, 0) << x.err;
  EXPECT_NE(x.out.find("One more expert"), std::string::npos) << x.out;
  EXPECT_NE(x.err.find("1 verdicts on briefs outside the study ignored"), std::string::npos) << x.err;
  for (const char* f : {"validation_judges.csv", "validation_panel.csv", "validation_self_preference.csv", "validation.md"})
    EXPECT_TRUE(std::filesystem::exists(tmp / (std::string("out/") + f))) << f;
  testing::write_file(tmp / "bad.jsonl", R"({"brief":"b","scenario":"s","item_id":"i","tier":1,"severity":"CI","expert_1":"Pass","expert_2":"Pass","majority":"Fail"})" "\n");
  const auto bad = testing::advplan("rubric validate " + testing::quote(tmp / "bad.jsonl"), tmp);
  testing::expect_one_line_error(bad);
  EXPECT_NE(bad.err.find("bad.jsonl line 1, field 'majority'"), std::string::npos) << bad.err;
  const auto fam = testing::advplan("rubric validate " + testing::quote(kStudyDir + "/study.jsonl") + " --family gpt", tmp);
  testing::expect_one_line_error(fam);
}

}  // namespace
}  // namespace advplan
