// Plans for a run that kept none (docs/REPORT.md "Plans made again"): the built-in policies' plans made again from
// the run's config and streams are the lines a run with traces: {plans: true} writes to plans.jsonl, byte for byte,
// and a report of a run that kept none shows them on every scenario page, as `view` serves them.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "advplan/report/report.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/run/scenario_eval.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using testing::advplan;
using testing::quote;
using testing::read_file;
using testing::TempDir;

/// The value a data file passes to ADVPLAN_DATA(key, value).
nlohmann::json data_of(const std::string& text, const std::string& key) {
  const std::string head = "ADVPLAN_DATA(\"" + key + "\", ";
  EXPECT_EQ(text.rfind(head, 0), 0u);
  return nlohmann::json::parse(text.substr(head.size(), text.size() - head.size() - 3));
}

/// Every scenario's plans made again from `config`, in corpus order, as plans.jsonl text.
std::string made_again(const std::string& config) {
  const ExperimentConfig cfg = load_experiment_config(config);
  const RunPlan plan = prepare_run(cfg, run_conditions(cfg));
  std::string text;
  for (const Scenario& sc : generate_corpus(cfg))
    for (const std::string& line : replay_plans(sc, plan)) text += line + "\n";
  return text;
}

TEST(PlanReplay, TheBuiltInPoliciesPlansMadeAgainAreTheRunsPlansJsonl) {
  TempDir dir("plan-replay");
  const std::string keep = "framing_mode: metadata\ntraces: {plans: true}";
  for (const std::string terrain : {"", "\nterrain: geo"}) {
    const std::string name = terrain.empty() ? "plain" : "geo";
    const std::string config = testing::small_config(dir, {{"framing_mode: metadata", keep + terrain}}, name + ".yaml");
    const auto r = advplan("run " + quote(config) + " --out " + quote(dir / name) + " --progress none", dir);
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string kept = read_file(fs::path(dir / name) / "plans.jsonl");
    ASSERT_FALSE(kept.empty());
    EXPECT_EQ(made_again(config), kept) << name;
  }
}

TEST(PlanReplay, AReportOfARunThatKeptNoPlansShowsThemMadeAgainAsViewServesThem) {
  TempDir dir("plan-replay-report");
  const std::string kept_cfg =
      testing::small_config(dir, {{"framing_mode: metadata", "framing_mode: metadata\ntraces: {plans: true}"}}, "kept.yaml");
  const std::string none_cfg = testing::small_config(dir, {}, "none.yaml");
  for (const auto& [cfg, name] : {std::pair{kept_cfg, "kept"}, std::pair{none_cfg, "none"}}) {
    const auto r = advplan("run " + quote(cfg) + " --out " + quote(dir / name) + " --progress none", dir);
    ASSERT_EQ(r.status, 0) << r.err;
    const auto x = advplan("report " + quote(dir / name) + " --out " + quote(dir / (std::string(name) + "-site")), dir);
    ASSERT_EQ(x.status, 0) << x.err;
  }
  ASSERT_FALSE(fs::exists(fs::path(dir / "none") / "plans.jsonl"));
  const ExperimentConfig cfg = load_experiment_config(none_cfg);
  report::ViewSite view(report::ReportRun{dir / "none", &cfg});
  for (std::size_t i = 0; i < view.scenarios(); ++i) {
    const std::string file = "data/s/" + std::to_string(i) + ".js", key = "s/" + std::to_string(i);
    const nlohmann::json kept = data_of(read_file(fs::path(dir / "kept-site") / file), key);
    const std::string none_text = read_file(fs::path(dir / "none-site") / file);
    const nlohmann::json none = data_of(none_text, key);
    ASSERT_FALSE(kept["plans"].empty());
    EXPECT_EQ(none["plans"], kept["plans"]) << file;
    EXPECT_EQ(none["plans_made_again"], true) << file;
    EXPECT_FALSE(kept.contains("plans_made_again")) << file;
    const auto served = view.get("/" + file);
    ASSERT_TRUE(served.has_value());
    EXPECT_EQ(served->body, none_text) << file;
  }
}

}  // namespace
}  // namespace advplan
