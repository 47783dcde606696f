// An engagement run end to end (docs/METRICS.md "Engagement wargame" and "Simulator validity"): its traces let every
// win rate be audited (per_scenario.csv's blue_win_rate is the mean of replications.csv's blue_won), the same bytes
// at 1 and 2 threads, and studies/simulator_validity.csv's correlations recomputed here from per_scenario.csv with
// the Lanchester model played on each row's forces.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "advplan/geo/map.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/io/played_plans.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/geo_eval.hpp"
#include "advplan/sim/engagement.hpp"
#include "advplan/sim/wargame.hpp"
#include "advplan/stats/agreement.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::TempDir;

class EngagementRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("engagement-run");
    config_ = testing::small_config(
        *dir_, {{"simulator: {replications: 50,", "simulator: {model: engagement, replications: 50,"},
                {"studies: {rubric: true, framing: true, components: true}", "studies: {rubric: false, framing: false, components: false}"}});
    for (const char* threads : {"1", "2"}) {
      const auto r = testing::advplan("run " + testing::quote(config_) + " --progress none --threads " + threads +
                                          " --out " + testing::quote(*dir_ / (std::string("run") + threads)),
                                      *dir_);
      ASSERT_EQ(r.status, 0) << r.err;
    }
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string run() { return *dir_ / "run1"; }
  static TempDir* dir_;
  static std::string config_;
};
TempDir* EngagementRun::dir_ = nullptr;
std::string EngagementRun::config_;

TEST_F(EngagementRun, EveryWinRateIsTheMeanOfItsReplicationsAndTheBytesDoNotDependOnThreads) {
  EXPECT_EQ(testing::compare_runs(run(), *dir_ / "run2"), "");
  const io::CsvTable per = io::CsvTable::read(run() + "/per_scenario.csv");
  const io::CsvTable reps = io::CsvTable::read(run() + "/replications.csv");
  const io::CsvTable eng = io::CsvTable::read(run() + "/engagements.csv");
  EXPECT_GT(eng.size(), 0u);
  std::map<std::pair<std::string, std::string>, std::pair<int, int>> won;  // (scenario, condition) -> (wins, n)
  for (std::size_t i = 0; i < reps.size(); ++i) {
    const std::string w = reps.at(i, "blue_won");
    const int wins = static_cast<int>(std::count(w.begin(), w.end(), '1'));
    EXPECT_EQ(w.find_first_not_of("01"), std::string::npos);
    EXPECT_EQ(reps.at(i, "blue_wins"), std::to_string(wins));
    EXPECT_EQ(reps.at(i, "replications"), std::to_string(w.size()));
    won[{reps.at(i, "scenario_id"), reps.at(i, "condition")}] = {wins, static_cast<int>(w.size())};
  }
  // engagements.csv lists the first five replications of each cell.
  for (std::size_t i = 0; i < eng.size(); ++i) EXPECT_LT(std::stoi(eng.at(i, "replication")), 5);
  std::size_t checked = 0;
  for (std::size_t i = 0; i < per.size(); ++i) {
    if (per.at(i, "status") != "ok") continue;
    const auto it = won.find({per.at(i, "scenario_id"), per.at(i, "condition")});
    ASSERT_NE(it, won.end()) << per.at(i, "condition");
    EXPECT_EQ(it->second.second, 50);
    EXPECT_EQ(per.at(i, "blue_win_rate"), io::fmt_real(it->second.first / 50.0));
    ++checked;
  }
  EXPECT_GT(checked, 0u);
  EXPECT_EQ(checked, won.size());
}

TEST_F(EngagementRun, OnAMapEveryWinRateIsItsPlansPlayedOnTheirRoutes) {
  // terrain: geo: the moves' routes set their steps and exposure (tests/geo/engagement_routes_test.cpp has the
  // hand-made case). Here the wiring: each cell's win rate is played again from plans.jsonl, the per_scenario.csv
  // forces and the scenario's map, with the routes' times and exposures.
  const std::string cfg_path = testing::small_config(
      *dir_, {{"simulator: {replications: 50,", "terrain: geo\ntraces: {plans: true}\nsimulator: {model: engagement, replications: 50,"},
              {"studies: {rubric: true, framing: true, components: true}", "studies: {rubric: false, framing: false, components: false}"}},
      "geo.yaml");
  const std::string geo = *dir_ / "geo";
  const auto r = testing::advplan("run " + testing::quote(cfg_path) + " --progress none --threads 2 --out " + testing::quote(geo),
                                  *dir_);
  ASSERT_EQ(r.status, 0) << r.err;
  const ExperimentConfig cfg = load_experiment_config(cfg_path);
  const std::vector<Scenario> corpus = generate_corpus(cfg);
  std::map<std::string, Plan> blue, red;  // (scenario/policy) -> BLUE plan, (scenario/condition) -> RED plan
  for (const PlayedPlan& p : read_played_plans(geo + "/plans.jsonl"))
    if (p.plan) (p.side == Side::Blue ? blue : red)[p.scenario_id + "/" + (p.side == Side::Blue ? p.policy : p.condition)] = *p.plan;
  const io::CsvTable per = io::CsvTable::read(geo + "/per_scenario.csv");
  int checked = 0, routed = 0, exposed = 0;
  for (std::size_t i = 0; i < per.size(); ++i) {
    const std::string id = per.at(i, "scenario_id");
    const auto b = blue.find(id + "/" + per.at(i, "blue_policy")), rd = red.find(id + "/" + per.at(i, "condition"));
    if (per.at(i, "status") != "ok" || per.at(i, "condition_group") == "grid" || b == blue.end() || rd == red.end()) continue;
    const Scenario& sc = *std::find_if(corpus.begin(), corpus.end(), [&](const Scenario& x) { return x.id == id; });
    const geo::GeoMap map = scenario_map(cfg, sc);
    const PlanOnMap bm = plan_on_map(map, geo_plan_effect(map, b->second, Side::Blue));
    const PlanOnMap rm = plan_on_map(map, geo_plan_effect(map, rd->second, Side::Red));
    for (const auto* m : {&bm, &rm})
      for (const auto& mv : m->moves) {
        ++routed;
        exposed += mv.exposure > 0 ? 1 : 0;
      }
    const Force fb{per.real(i, "blue_raw_capability"), per.real(i, "blue_quality"), per.real(i, "blue_coherence"), 1.0};
    const Force fr{per.real(i, "red_raw_capability"), per.real(i, "red_quality"), per.real(i, "red_coherence"), 1.0};
    const SimResult res = simulate_engagement(sc, b->second, fb, rd->second, fr, draw_noise(cfg.seed, id, cfg.sim),
                                              cfg.sim, nullptr, 0, {&bm, &rm});
    EXPECT_EQ(per.at(i, "blue_win_rate"), io::fmt_real(res.win_rate)) << id << " " << per.at(i, "condition");
    ++checked;
  }
  EXPECT_GT(checked, 10);
  EXPECT_GT(routed, checked);  // moves on routes
  EXPECT_GT(exposed, 0);       // some of them through the other side's zones
  std::printf("[ wiring ] %d cells played again, %d routed moves, %d exposed\n", checked, routed, exposed);
}

TEST_F(EngagementRun, SimulatorValidityIsTheSpearmanOfEachProxyWithTheEngagementWinRate) {
  const io::CsvTable per = io::CsvTable::read(run() + "/per_scenario.csv");
  const io::CsvTable v = io::CsvTable::read(run() + "/studies/simulator_validity.csv");
  ASSERT_EQ(v.size(), 4u);
  const ExperimentConfig cfg = load_experiment_config(config_);
  SimConfig lan = cfg.sim;
  lan.model = "lanchester";
  std::vector<double> q, d, a, l, y;
  for (std::size_t i = 0; i < per.size(); ++i) {
    if (per.at(i, "status") != "ok" || per.at(i, "condition_group") == "grid") continue;
    q.push_back(per.real(i, "blue_quality"));
    d.push_back(per.real(i, "blue_coherence"));
    a.push_back(per.real(i, "advantage"));
    const SimNoise noise = draw_noise(cfg.seed, per.at(i, "scenario_id"), lan);
    l.push_back(simulate({per.real(i, "blue_raw_capability"), q.back(), d.back(), 1.0},
                         {per.real(i, "red_raw_capability"), per.real(i, "red_quality"), per.real(i, "red_coherence"), 1.0},
                         noise, lan)
                    .win_rate);
    y.push_back(per.real(i, "blue_win_rate"));
  }
  const std::vector<std::pair<std::string, const std::vector<double>*>> want{
      {"blue_quality", &q}, {"blue_coherence", &d}, {"advantage", &a}, {"lanchester_win_rate", &l}};
  for (std::size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(v.at(k, "predictor"), want[k].first);
    EXPECT_EQ(v.at(k, "rows"), std::to_string(y.size()));
    EXPECT_EQ(v.at(k, "spearman"), io::fmt_real(agreement::spearman(*want[k].second, y))) << want[k].first;
    EXPECT_LE(v.real(k, "ci_lo"), v.real(k, "ci_hi"));
  }
  const io::CsvTable dis = io::CsvTable::read(run() + "/studies/simulator_disagreements.csv");
  EXPECT_GT(dis.size(), 1u);
}

TEST(EngagementAnalyses, TablesEvaluateTheMetaGameTheFrontierAndTheReportReadAnEngagementRun) {
  // docs/METRICS.md "Engagement wargame": an engagement run's traces have the Lanchester run's layout, so every
  // analysis reads it unchanged. A small matrix run (BLUE x RED) under the engagement model, then each command.
  TempDir tmp("engagement-analyses");
  const std::string cfg = testing::small_config(
      tmp, {{"conditions: [single, greedy@8, constraint@8, llm_offline, {label: council, blue: council, red: greedy@8}]",
             "matrix: {blue: [seed, council], red: [single, greedy@4, constraint@8]}"},
            {"budget_sweep: [1, 2, 4, 8, 16]", ""},
            {"simulator: {replications: 50,", "simulator: {model: engagement, replications: 50,"},
            {"studies: {rubric: true, framing: true, components: true}", "studies: {rubric: false, framing: false, components: false}"}},
      "matrix.yaml");
  const std::string run = tmp / "run";
  auto ok = [&](const std::string& args) {
    const auto r = testing::advplan(args, tmp);
    EXPECT_EQ(r.status, 0) << args << ": " << r.err;
  };
  ok("run " + testing::quote(cfg) + " --progress none --candidate-plans --out " + testing::quote(run));
  // tables: rebuilt from the CSVs alone, byte for byte the run's own
  const auto before = testing::run_files(run + "/tables");
  ok("tables " + testing::quote(run));
  EXPECT_EQ(testing::run_files(run + "/tables"), before);
  ok("metagame " + testing::quote(run) + " --out " + testing::quote(tmp / "mg"));
  EXPECT_FALSE(testing::run_files(tmp / "mg").empty());
  ok("frontier " + testing::quote(run) + " --out " + testing::quote(tmp / "fr"));
  ok("report " + testing::quote(run) + " --out " + testing::quote(tmp / "rep"));
  EXPECT_TRUE(fs::exists(fs::path(tmp / "rep") / "index.html"));
  ok("evaluate --blue seed --red single --no-reference --config " + testing::quote(cfg) + " --out " +
     testing::quote(tmp / "ev"));
  // evaluate played the engagement model too: its seed-against-single cells are the matrix run's, bit for bit
  // (the same config, seed, scenarios and streams).
  const io::CsvTable ev = io::CsvTable::read((tmp / "ev") + "/per_scenario.csv");
  const io::CsvTable mx = io::CsvTable::read(run + "/per_scenario.csv");
  std::map<std::string, std::string> want;
  for (std::size_t i = 0; i < mx.size(); ++i)
    if (mx.at(i, "blue_policy") == "seed" && mx.at(i, "red_policy") == "single")
      want[mx.at(i, "scenario_id")] = mx.at(i, "blue_win_rate") + " " + mx.at(i, "blue_final_strength");
  std::size_t same = 0;
  for (std::size_t i = 0; i < ev.size(); ++i)
    if (ev.at(i, "blue_policy") == "seed" && ev.at(i, "red_policy") == "single") {
      EXPECT_EQ(ev.at(i, "blue_win_rate") + " " + ev.at(i, "blue_final_strength"), want[ev.at(i, "scenario_id")]);
      ++same;
    }
  EXPECT_EQ(same, want.size());
  EXPECT_GT(io::CsvTable::read((tmp / "ev") + "/replications.csv").size(), 0u);
  ok("check " + testing::quote(run));
}

TEST(EngagementPaperRun, TheBytesDoNotDependOnThreads) {
  // configs/experiments/engagement.yaml, the paper under the engagement wargame, whole: the same bytes at 1 and 2
  // threads (every trace, table and study; run_metadata.json's timing aside, as compare_runs takes it).
  TempDir tmp("engagement-paper");
  for (const char* threads : {"1", "2"}) {
    const auto r = testing::advplan("run " + testing::quote(ADVPLAN_SOURCE_DIR "/configs/experiments/engagement.yaml") +
                                        " --progress none --threads " + threads + " --out " +
                                        testing::quote(tmp / (std::string("run") + threads)),
                                    tmp);
    ASSERT_EQ(r.status, 0) << r.err;
  }
  EXPECT_EQ(testing::compare_runs(tmp / "run1", tmp / "run2"), "");
}

TEST_F(EngagementRun, BadEngagementSettingsAreOneSentence) {
  const std::string bad = testing::small_config(*dir_, {{"simulator: {replications: 50,", "simulator: {model: duel, replications: 50,"}},
                                                "bad.yaml");
  const auto r = testing::advplan("run " + testing::quote(bad) + " --out " + testing::quote(*dir_ / "bad"), *dir_);
  testing::expect_one_line_error(r);
  EXPECT_THAT(r.err, HasSubstr("'duel' is no simulator model (accepted: lanchester, engagement)"));
  const std::string bad2 = testing::small_config(
      *dir_, {{"simulator: {replications: 50,", "simulator: {engagement: {durations: 2}, replications: 50,"}}, "bad2.yaml");
  const auto r2 = testing::advplan("run " + testing::quote(bad2) + " --out " + testing::quote(*dir_ / "bad2"), *dir_);
  testing::expect_one_line_error(r2);
  EXPECT_THAT(r2.err, HasSubstr("simulator.engagement"));
}

}  // namespace
}  // namespace advplan
