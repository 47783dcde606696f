// Judge canaries (issue 48, finding 9; docs/RUBRIC.md "Canaries"): known-bad plans built from the run's scenarios,
// whose must-fail items every judge grades. A judge that passes everything is flagged (in canary_judges.csv, the
// scores table and on stderr); the rule judges are not; canary grades never reach the plans' scores.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "advplan/io/csv.hpp"
#include "advplan/rubric/canaries.hpp"
#include "advplan/rubric/judge.hpp"
#include "advplan/rubric/plans.hpp"
#include "advplan/run/config.hpp"
#include "support/chat_server.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using namespace rubric;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::quote;
using testing::TempDir;

/// A model forced into the reply schema that lists nothing: every item passes.
class PassEverythingClient final : public CompletionClient {
 public:
  Completion complete(const CompletionRequest&) const override {
    Completion c;
    c.ok = true;
    c.text = R"({"failed_items": []})";
    return c;
  }
  std::string name() const override { return "pass-everything"; }
};

/// A corpus and its items: the built-in templates over `seeds` seeds (the default experiment's templates).
struct Corpus {
  ExperimentConfig cfg = default_experiment_config();
  std::vector<Scenario> scenarios;
  std::vector<std::vector<RubricItem>> items;
  explicit Corpus(int seeds) {
    cfg.seed_from = 100;
    cfg.seed_to = 100 + static_cast<std::uint64_t>(seeds) - 1;
    scenarios = generate_corpus(cfg);
    for (const auto& sc : scenarios)
      for (const auto& t : cfg.templates)
        if (t.id == sc.template_id) items.push_back(plan_rubric_items(sc, t.rubric_items));
  }
};

std::vector<std::string> ids_of(const std::vector<RubricItem>& items, const std::vector<std::size_t>& idx) {
  std::vector<std::string> out;
  for (const std::size_t i : idx) out.push_back(items[i].item_id);
  return out;
}

TEST(Canaries, AreBuiltDeterministicallyFromTheRunsScenarios) {
  const Corpus c(4);
  ASSERT_GT(c.scenarios.size(), kCanaryScenarios);
  const auto a = build_canaries(c.scenarios, c.items, 20240601);
  const auto b = build_canaries(c.scenarios, c.items, 20240601);
  ASSERT_EQ(a.size(), 2 * kCanaryScenarios);  // an empty and a planted canary per chosen scenario
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].id, b[i].id);
    EXPECT_EQ(a[i].plan, b[i].plan);
    EXPECT_EQ(a[i].must_fail, b[i].must_fail);
  }
  // The choice is keyed by the seed and each scenario's id, not by corpus order.
  std::vector<Scenario> reversed(c.scenarios.rbegin(), c.scenarios.rend());
  std::vector<std::vector<RubricItem>> reversed_items(c.items.rbegin(), c.items.rend());
  std::set<std::string> ids_a, ids_r;
  for (const auto& x : a) ids_a.insert(x.id);
  for (const auto& x : build_canaries(reversed, reversed_items, 20240601)) ids_r.insert(x.id);
  EXPECT_EQ(ids_a, ids_r);
  // An empty plan must fail its objective, sustainment and branch items (and civil_engaged where it applies).
  for (const auto& x : a) {
    const auto must = ids_of(c.items[x.scenario], x.must_fail);
    EXPECT_THAT(must, ::testing::IsSupersetOf({"objective_names_target", "sustainment_present", "branch_contingency"}))
        << x.id;
    if (x.kind == CanaryKind::empty) {
      EXPECT_TRUE(x.plan.actions.empty() && x.plan.chain.empty()) << x.id;
    }
    for (const std::size_t i : x.must_fail) EXPECT_FALSE(c.items[x.scenario][i].negative()) << x.id;
  }
}

// The must-fail rule reads the canary's structure; the exact judge defines the items. On every scenario of a larger
// corpus, the exact judge fails every must-fail item of both canaries, and the planted canaries plant failures
// beyond the empty plan's (an uncovered exposed step or a blind first exposure somewhere).
TEST(Canaries, TheExactJudgeFailsEveryMustFailItem) {
  const Corpus c(6);
  std::size_t planted_extra = 0, checked = 0;
  for (std::size_t s = 0; s < c.scenarios.size(); ++s) {
    const Scenario& sc = c.scenarios[s];
    std::vector<Plan> plans{empty_canary(sc)};
    if (auto p = planted_canary(sc)) plans.push_back(*p);
    for (std::size_t k = 0; k < plans.size(); ++k) {
      const auto must = must_fail_items(c.items[s], plans[k], sc);
      const auto passed = judge_plan("exact", c.items[s], plans[k], sc);
      for (const std::size_t i : must) EXPECT_FALSE(passed[i]) << sc.id << " " << c.items[s][i].item_id;
      checked += must.size();
      if (k != 1) continue;
      for (const auto& id : ids_of(c.items[s], must))
        planted_extra += id.starts_with("exposed_steps_covered") || id == "information_before_exposure";
    }
  }
  EXPECT_GT(checked, 100u);
  EXPECT_GT(planted_extra, 0u);
}

TEST(Canaries, APassEverythingJudgeIsFlaggedAndTheRuleJudgesAreNot) {
  const Corpus c(4);
  const auto canaries = build_canaries(c.scenarios, c.items, 7);
  const PassEverythingClient pass_all;
  const OfflineJudgeClient offline;
  const std::vector<std::string> llm{"llm_judge:pass-all", "llm_judge_offline", "llm_judge:absent"};
  const std::vector<const CompletionClient*> clients{&pass_all, &offline, nullptr};
  const std::vector<std::string> setup{"", "", "no endpoint"};
  const auto grades = grade_canaries(canaries, c.scenarios, c.items, {llm, clients, setup, 2, nullptr});
  std::vector<std::string> all = rule_judges();
  all.insert(all.end(), llm.begin(), llm.end());
  const auto tallies = tally_canaries(canaries, grades, all);
  ASSERT_EQ(tallies.size(), all.size());
  std::map<std::string, CanaryTally> by;
  for (const auto& t : tallies) by[t.judge] = t;
  for (const auto& j : rule_judges()) {
    EXPECT_FALSE(by[j].flagged()) << j << " passed " << by[j].passed << " of " << by[j].must_fail;
    EXPECT_GT(by[j].must_fail, 0u) << j;
  }
  EXPECT_EQ(by["exact"].passed, 0u);
  EXPECT_TRUE(by["llm_judge:pass-all"].flagged());
  EXPECT_EQ(by["llm_judge:pass-all"].passed, by["llm_judge:pass-all"].must_fail);
  EXPECT_FALSE(by["llm_judge_offline"].flagged());  // it answers with the exact judge's verdicts
  EXPECT_EQ(by["llm_judge:absent"].errors, canaries.size());  // a failure is no evidence either way
  EXPECT_FALSE(by["llm_judge:absent"].flagged());
  EXPECT_THAT(canary_warning(by["llm_judge:pass-all"]),
              HasSubstr("rubric judge llm_judge:pass-all passed " + std::to_string(by["llm_judge:pass-all"].passed) +
                        " of "));
}

/// A judge endpoint that lists no failed item, as the noise model of finding 9 mostly did.
class PassAllServer {
 public:
  PassAllServer()
      : server_([](const httplib::Request&, httplib::Response& r) {
          r.set_content(testing::chat_reply(R"({"failed_items": []})").dump(), "application/json");
        }) {}
  std::string url() const { return server_.url(); }

 private:
  testing::LoopbackServer server_;
};

std::string canary_config(const TempDir& dir) {
  return testing::small_config(
      dir, {{"budget_sweep: [1, 2, 4, 8, 16]",
             "budget_sweep: []\nrubric: {judges: [\"llm_judge:m\", llm_judge_offline], judge_retries: 0}"},
            {"studies: {rubric: true, framing: true, components: true}",
             "studies: {rubric: true, framing: false, components: false}"}});
}

std::map<std::string, std::string> rubric_files(const std::string& run) {
  std::map<std::string, std::string> out;
  for (const char* sub : {"rubric", "tables/rubric"})
    for (const auto& e : std::filesystem::directory_iterator(run + "/" + sub))
      out[std::string(sub) + "/" + e.path().filename().string()] = testing::read_file(e.path().string());
  return out;
}

TEST(Canaries, ARunFlagsAPassEverythingJudgeInItsTablesAndOnStderr) {
  PassAllServer server;
  TempDir dir("canary-run");
  const std::string config = canary_config(dir);
  auto run = [&](const std::string& out, int threads) {
    return testing::run_command("ADVPLAN_LLM_ENDPOINT=" + server.url() + " " + quote(testing::kBinary) + " run " +
                                    quote(config) + " --out " + quote(dir / out) + " --progress none --threads " +
                                    std::to_string(threads),
                                dir);
  };
  const auto x = run("a", 1);
  ASSERT_EQ(x.status, 0) << x.err;
  EXPECT_THAT(x.err, HasSubstr("advplan: warning: rubric judge llm_judge:m passed "));
  for (const std::string j : {"exact ", "constraint ", "logistics ", "adversarial_review ", "llm_judge_offline "})
    EXPECT_THAT(x.err, Not(HasSubstr("rubric judge " + j + "passed"))) << j;

  const auto cj = io::CsvTable::read(dir / "a/rubric/canary_judges.csv");
  ASSERT_EQ(cj.size(), rule_judges().size() + 2);
  for (std::size_t i = 0; i < cj.size(); ++i)
    EXPECT_EQ(cj.at(i, "flagged"), cj.at(i, "judge") == "llm_judge:m" ? "1" : "0") << cj.at(i, "judge");
  // The scores table marks the flagged judge's rows, and only those.
  const std::string md = testing::read_file(dir / "a/tables/rubric/scores_per_policy.md");
  std::size_t flagged_rows = 0;
  for (std::size_t pos = 0, end; (end = md.find('\n', pos)) != std::string::npos; pos = end + 1) {
    const std::string line = md.substr(pos, end - pos);
    if (line.find("FLAGGED") == std::string::npos) continue;
    ++flagged_rows;
    EXPECT_THAT(line, HasSubstr("| llm_judge:m |"));
  }
  EXPECT_GT(flagged_rows, 0u);
  EXPECT_THAT(testing::read_file(dir / "a/tables/rubric/canary_judges.md"), HasSubstr("FLAGGED"));
  // Canary grades stay out of the plans' scores and verdicts.
  EXPECT_THAT(testing::read_file(dir / "a/rubric/scores_per_brief.csv"), Not(HasSubstr("canary")));
  EXPECT_THAT(testing::read_file(dir / "a/rubric/verdicts.jsonl"), Not(HasSubstr("canary")));
  EXPECT_THAT(testing::read_file(dir / "a/rubric/transcripts.jsonl"), HasSubstr("\"graded\":\"canary:empty\""));

  // Same seed, another thread count: the same bytes.
  const auto y = run("b", 2);
  ASSERT_EQ(y.status, 0) << y.err;
  const auto fa = rubric_files(dir / "a"), fb = rubric_files(dir / "b");
  ASSERT_EQ(fa.size(), fb.size());
  for (const auto& [name, text] : fa) EXPECT_EQ(text, fb.at(name)) << name;
}

}  // namespace
}  // namespace advplan
