// The rubric layer for plans (docs/RUBRIC.md): the optional `rubric:` section of a template and its strict
// checks; items derived from a scenario with known verdicts on constructed plans; the validator judges as stricter
// or looser than the exact check; and the run's rubric/ files re-scored through the MA-Bench reader.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/run/config.hpp"
#include "advplan/rubric/mabench.hpp"
#include "advplan/rubric/plans.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/io/embedded_files.hpp"
#include "advplan/metrics/coherence.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/metrics/rubric.hpp"
#include "advplan/scenario/scenario_template.hpp"
#include "rubric/jsonl.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using namespace rubric;
using testing::act;
using testing::make_plan;
using testing::tiny_scenario;

std::string urban_text() { return std::string(*io::embedded_file("configs/templates/urban.yaml")); }

std::string template_error(const std::string& rubric_section) {
  std::string text = urban_text();
  const auto pos = text.find("rubric:");
  EXPECT_NE(pos, std::string::npos);
  text = text.substr(0, pos) + rubric_section;
  try {
    (void)parse_template(text, "my.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(RubricTemplate, SectionIsOptionalAndStrict) {
  const auto t = parse_template(urban_text(), "urban.yaml");
  EXPECT_EQ(t.rubric_items.size(), 8U);
  EXPECT_EQ(template_error(""), "no error");  // no rubric section: valid, no items
  EXPECT_TRUE(parse_template(urban_text().substr(0, urban_text().find("rubric:")), "u").rubric_items.empty());
  EXPECT_NE(template_error("rubric:\n  items: [objective_names_target, flying]\n").find("unknown rubric item kind 'flying'"),
            std::string::npos);
  EXPECT_NE(template_error("rubric:\n  items: [civil_engaged, civil_engaged]\n").find("listed twice"), std::string::npos);
  EXPECT_NE(template_error("rubric:\n  items: []\n").find("the list is empty"), std::string::npos);
  EXPECT_NE(template_error("rubric:\n  items: [civil_engaged]\n  weights: 1\n").find("weights"), std::string::npos);
  EXPECT_NE(template_error("rubric:\n  items: [flying]\n").find("my.yaml"), std::string::npos);
}

TEST(RubricTemplate, EveryBuiltInTemplateDeclaresKnownKinds) {
  for (const char* id : {"urban", "humanitarian", "maritime", "air-defense", "mixed"}) {
    const std::string path = std::string("configs/templates/") + id + ".yaml";
    const auto t = parse_template(std::string(*io::embedded_file(path)), path);
    EXPECT_GE(t.rubric_items.size(), 7U) << id;
  }
}

TEST(RubricPlans, ItemsAndExactVerdictsOnConstructedPlans) {
  Scenario sc = tiny_scenario();
  using C = Category;
  ASSERT_TRUE(is_exposed(C::fires, sc));
  ASSERT_FALSE(is_exposed(C::information, sc));
  // Reference plan: fires exposed at position 2.
  sc.blue_seed_plans = {make_plan("Secure the bridge",
                                  {act("a1", "b2", "scan", C::information, "bridge", 3),
                                   act("a2", "b3", "strike", C::fires, "bridge", 3)},
                                  {"a1", "a2"})};
  const std::vector<std::string> kinds = rubric_item_kinds();
  const auto items = plan_rubric_items(sc, kinds);
  std::map<std::string, const RubricItem*> by_id;
  for (const auto& it : items) by_id[it.item_id] = &it;
  ASSERT_TRUE(by_id.count("exposed_steps_covered@2")) << items.size();
  EXPECT_EQ(by_id["exposed_steps_covered@2"]->step, "chain:2");
  EXPECT_EQ(by_id["exposed_steps_covered@2"]->severity, Severity::CI);
  EXPECT_EQ(by_id["fires_before_information"]->severity, Severity::CD);
  EXPECT_NE(by_id["objective_names_target"]->question.find("'bridge'"), std::string::npos);

  // A bad plan: fires first, no information before exposure, one asset does everything, nothing protects step 2.
  const Plan bad = make_plan("Hold on", {act("x1", "b3", "strike", C::fires, "town", 3),
                                         act("x2", "b3", "strike", C::fires, "town", 3),
                                         act("x3", "b3", "prepare", C::command, "town", 3)},
                             {"x1", "x2", "x3"});
  // A good plan: names the bridge, scans first, protects, sustains, branches, shares the work, engages nobody civil.
  const Plan good = make_plan("Secure the bridge",
                              {act("g1", "b2", "scan", C::information, "bridge", 3),
                               act("g2", "b1", "harden", C::protection, "bridge", 3),
                               act("g3", "b3", "strike", C::fires, "bridge", 3),
                               act("g4", "b1", "resupply", C::sustainment, "bridge", 3),
                               act("g5", "b2", "decoy", C::deception, "ridge", 3)},
                              {"g1", "g2", "g3", "g4"}, {Branch{"g3", "if contested", {{"g5"}}}});
  const auto vb = judge_plan("exact", items, bad, sc);
  const auto vg = judge_plan("exact", items, good, sc);
  std::map<std::string, std::pair<bool, bool>> v;  // id -> (bad, good)
  for (std::size_t i = 0; i < items.size(); ++i) v[items[i].item_id] = {vb[i], vg[i]};
  EXPECT_EQ(v["objective_names_target"], std::make_pair(false, true));
  EXPECT_EQ(v["exposed_steps_covered@2"], std::make_pair(false, true));
  EXPECT_EQ(v["information_before_exposure"], std::make_pair(false, true));
  EXPECT_EQ(v["fires_before_information"], std::make_pair(true, false));  // the mistake is made by `bad`
  EXPECT_EQ(v["sustainment_present"], std::make_pair(false, true));
  EXPECT_EQ(v["branch_contingency"], std::make_pair(false, true));
  EXPECT_EQ(v["single_asset_overload"], std::make_pair(true, false));
  EXPECT_EQ(v["civil_engaged"], std::make_pair(false, false));
  EXPECT_LT(score_brief(items, vb).weighted, 0.0);  // unclamped: the bad plan is charged below zero
  EXPECT_GT(score_brief(items, vg).weighted, 0.8);
}

TEST(RubricPlans, ValidatorJudgesAreStricterOnTheirEmphasisAndLooserElsewhere) {
  const auto& cfg = testing::paper_config();
  auto corpus = generate_corpus(cfg);
  corpus.resize(20);
  const auto& kinds = cfg.templates.front().rubric_items;
  std::size_t differs = 0;
  for (const auto& sc : corpus) {
    const auto items = plan_rubric_items(sc, kinds);
    const Plan& p = sc.blue_seed_plans.front();
    const auto exact = judge_plan("exact", items, p, sc);
    for (const auto& judge : rule_judges()) {
      if (judge == "exact") continue;
      const auto v = judge_plan(judge, items, p, sc);
      const RubricValidator* val = nullptr;
      for (const auto& x : rubric_validators())
        if (x.name == judge) val = &x;
      ASSERT_NE(val, nullptr) << judge;
      for (std::size_t i = 0; i < items.size(); ++i) {
        const bool emphasised = val->weights[static_cast<std::size_t>(coherence_part_of(items[i]))] > 1.0;
        // "correct" is the good outcome; a stricter judge can only take it away, a looser one only give it.
        const bool good_exact = items[i].negative() ? !exact[i] : exact[i];
        const bool good_judge = items[i].negative() ? !v[i] : v[i];
        differs += good_exact != good_judge ? 1 : 0;
        if (emphasised) EXPECT_TRUE(!good_judge || good_exact) << judge << " is looser on " << items[i].item_id;
        else EXPECT_TRUE(!good_exact || good_judge) << judge << " is stricter on " << items[i].item_id;
      }
    }
  }
  EXPECT_GT(differs, 0U) << "the validator judges never disagree with the exact check";
  EXPECT_THROW(judge_plan("nobody", plan_rubric_items(corpus.front(), kinds), corpus.front().blue_seed_plans.front(),
                          corpus.front()),
               Error);
}

TEST(RubricPlans, GoldenRunRubricFilesRescoreThroughTheMabenchReader) {
  const std::string dir = std::string(ADVPLAN_SOURCE_DIR) + "/tests/golden/small/rubric";
  ASSERT_TRUE(std::filesystem::exists(dir + "/verdicts.jsonl"));
  const auto items = read_rubric_items(dir + "/rubric_items.jsonl");
  const auto verdicts = read_verdicts(dir + "/verdicts.jsonl");
  EXPECT_EQ(verdicts.size(), items.size() * 2 * rule_judges().size());  // 2 BLUE policies (seed, council)
  const auto rep = score_verdicts(items, verdicts, MeanOver::group, 10);
  const auto again = io::CsvTable::parse(rep.files[0].second, "rescored");
  const auto golden = io::CsvTable::read(dir + "/scores_per_brief.csv");
  ASSERT_EQ(again.size(), golden.size());
  for (std::size_t i = 0; i < golden.size(); ++i) EXPECT_EQ(again.rows()[i], golden.rows()[i]) << i;
}

// ctest: slow
TEST(RubricPlans, PlotDrawsScoreByTierAndSeverityAndTheAgreementHeatMap) {
  testing::TempDir scratch("rubric-plot");
  const std::string probe = "/usr/bin/python3 -c 'import matplotlib, numpy'";
  if (std::system((probe + " >/dev/null 2>&1").c_str()) != 0) GTEST_SKIP() << "matplotlib is not available";
  const std::string golden = std::string(ADVPLAN_SOURCE_DIR) + "/tests/golden/small";
  const auto r = testing::run_command("/usr/bin/python3 " + testing::shell_quote(std::string(ADVPLAN_SOURCE_DIR) +
                                                                               "/experiments/plot.py") +
                                          " " + testing::shell_quote(golden) + " --out " +
                                          testing::shell_quote(scratch / "fig"),
                                      scratch);
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* stem : {"rubric_scores", "judge_agreement", "agreement_panel"})
    for (const char* ext : {".png", ".svg"}) {
      const std::string f = scratch / ("fig/" + std::string(stem) + ext);
      EXPECT_TRUE(std::filesystem::is_regular_file(f)) << f;
      EXPECT_NE(r.out.find(f), std::string::npos) << f;
    }
}


// The layer grades each plan for all rule judges in one call; each judge's verdicts must be those it gives alone,
// whatever the other judges and their order.
TEST(RubricPlans, AllJudgesAtOnceGiveEachJudgesOwnVerdicts) {
  const auto& cfg = testing::paper_config();
  auto corpus = generate_corpus(cfg);
  corpus.resize(25);
  const std::vector<std::string> rules = rule_judges();
  std::vector<std::string> reversed(rules.rbegin(), rules.rend());
  std::size_t differ_between_judges = 0;
  for (const auto& sc : corpus) {
    const auto items = plan_rubric_items(sc, rubric_item_kinds());
    const Plan& p = sc.blue_seed_plans.front();
    const auto all = judge_plan_all(rules, items, p, sc), back = judge_plan_all(reversed, items, p, sc);
    ASSERT_EQ(all.size(), rules.size());
    for (std::size_t j = 0; j < rules.size(); ++j) {
      EXPECT_EQ(all[j], judge_plan_all({rules[j]}, items, p, sc).front()) << rules[j] << " on " << sc.id;
      EXPECT_EQ(all[j], back[rules.size() - 1 - j]) << rules[j] << " on " << sc.id;
      differ_between_judges += all[j] != all[0] ? 1 : 0;
    }
  }
  EXPECT_GT(differ_between_judges, 0u);  // the judges disagree somewhere, so a mix-up would show
  EXPECT_THROW(judge_plan_all({"exact", "nobody"}, plan_rubric_items(corpus.front(), rubric_item_kinds()),
                              corpus.front().blue_seed_plans.front(), corpus.front()),
               Error);
}

// The layer writes its JSON lines directly; each must be the nlohmann object it replaced, byte for byte.
TEST(RubricJsonl, LinesAreTheNlohmannDumps) {
  auto item_dump = [](const std::string& case_id, const RubricItem& it) {
    nlohmann::json j{{"case_id", case_id},
                     {"item_id", it.item_id},
                     {"step", it.step},
                     {"tier", it.tier},
                     {"severity", severity_code(it.severity)},
                     {"polarity", it.negative() ? "negative" : "positive"},
                     {"weight", static_cast<int>(it.weight())},
                     {"question", it.question},
                     {"pass_condition", it.pass_condition},
                     {"fail_condition", it.fail_condition}};
    return j.dump() + "\n";
  };
  auto verdict_dump = [](const Verdict& v) {
    // The object the layer built for a rule judge's verdict (which never has unknown ids).
    nlohmann::json j{{"brief_id", v.brief_id}, {"judge", v.judge},   {"case_id", v.case_id},
                     {"model", v.model},       {"group", v.group},   {"failed_items", v.failed_items},
                     {"failures", nlohmann::json::array()},          {"unknown_ids", nlohmann::json::array()},
                     {"error", v.error}};
    return j.dump() + "\n";
  };
  std::vector<std::pair<std::string, RubricItem>> items;
  for (const Scenario& sc : generate_corpus(testing::paper_config()))
    for (const auto& it : plan_rubric_items(sc, rubric_item_kinds())) items.emplace_back(sc.id, it);
  ASSERT_GT(items.size(), 100u);
  RubricItem odd = items.front().second;
  odd.question = "Is \"it\" a\\b?\tline\nbreak \x01 caf\xc3\xa9";
  odd.tier = -3;
  for (Severity s : {Severity::CI, Severity::I, Severity::SI, Severity::D, Severity::CD}) {
    odd.severity = s;
    items.emplace_back("case \"q\"", odd);
  }
  for (const auto& [case_id, it] : items) {
    std::string line;
    detail::append_item_line(line, case_id, it);
    ASSERT_EQ(line, item_dump(case_id, it));
  }
  Verdict v;
  v.brief_id = "urban-100/seed";
  v.judge = "rule-structure";
  v.case_id = "urban-100";
  v.model = "seed";
  v.group = "urban";
  for (int k = 0; k < 4; ++k) {
    std::string line;
    detail::append_rule_verdict_line(line, v);
    EXPECT_EQ(line, verdict_dump(v)) << k;
    v.failed_items.push_back(k % 2 ? "s\"tep-" + std::to_string(k) : "tier-" + std::to_string(k));
    v.error = !v.error;
    v.group += "\x7f";
  }
  // Unknown ids, which a rule judge never has, are written as the verdict holds them.
  v.unknown_ids = {"x", "y\\z"};
  std::string with_unknown;
  detail::append_rule_verdict_line(with_unknown, v);
  EXPECT_NE(with_unknown.find(R"("unknown_ids":["x","y\\z"])"), std::string::npos) << with_unknown;
  v.unknown_ids.clear();
  // Invalid UTF-8 is nlohmann's error, from both.
  v.model = "bad \xfe";
  std::string line;
  EXPECT_THROW(detail::append_rule_verdict_line(line, v), nlohmann::json::type_error);
  EXPECT_THROW((void)verdict_dump(v), nlohmann::json::type_error);
}

}  // namespace
}  // namespace advplan
