// `terrain: geo` runs (docs/GEO.md "Plans on the map"): the config key, maps in the run directory and its
// MANIFEST, geo_moves.csv with infeasible moves, and the e/r/readiness formulas checked against the traces.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include "advplan/pipeline/standard_run.hpp"
#include "advplan/core/error.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/geo_eval.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/run/trace_schema.hpp"
#include "advplan/geo/map.hpp"
#include "advplan/geo/tools.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/sim/wargame.hpp"
#include "support/cli.hpp"

namespace {
using namespace advplan;
namespace fs = std::filesystem;

TEST(GeoConfig, TerrainKeyIsReadStrictly) {
  const std::string base = "name: t\ncorpus: {templates: [urban], seeds: [100, 101]}\nconditions: [single]\n";
  EXPECT_FALSE(parse_experiment_config(base, "t.yaml", "").terrain_geo);
  EXPECT_TRUE(parse_experiment_config(base + "terrain: geo\n", "t.yaml", "").terrain_geo);
  EXPECT_FALSE(parse_experiment_config(base + "terrain: templates\n", "t.yaml", "").terrain_geo);
  try {
    (void)parse_experiment_config(base + "terrain: moon\n", "t.yaml", "");
    FAIL() << "terrain: moon was accepted";
  } catch (const ConfigError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("t.yaml"), std::string::npos) << w;
    EXPECT_NE(w.find("terrain"), std::string::npos) << w;
    EXPECT_EQ(w.find('\n'), std::string::npos) << w;
  }
}

TEST(GeoEval, FormulasAndPlanToolCalls) {
  const Scenario sc = corpus_scenario(default_experiment_config(), 0);  // urban-100
  const geo::GeoMap m = geo::generate_map(sc);
  const auto* asset = m.of_kind("asset", "BLUE")[0];
  const auto* place = m.of_kind("place")[0];
  Plan p;
  p.plan_id = "t";
  p.actions.push_back({"a1", asset->id, "advance", Category::movement, place->name, 3, {}});
  // The plan's own route call for that move (nothing avoided), a map call with a bad argument, and a call to
  // a tool that is not a map tool (ignored).
  p.tool_calls.push_back({"route", R"({"from":")" + asset->id + R"(","to":")" + place->id + R"("})"});
  p.tool_calls.push_back({"area", R"({"id":"no-such-zone"})"});
  p.tool_calls.push_back({"branch_planner", "{}"});
  const GeoPlanEffect g = geo_plan_effect(m, p, Side::Blue);
  ASSERT_EQ(g.moves.size(), 2u);
  EXPECT_EQ(g.moves[0].tool, "route (plan)");
  EXPECT_EQ(g.moves[0].status, "ok");
  EXPECT_NEAR(g.moves[0].length_km, m.net.shortest_path(asset->node, place->node).length, 1e-3);
  EXPECT_NEAR(g.moves[0].hours, g.moves[0].length_km / geo::travel_speed(m, *asset), 1e-9);
  EXPECT_EQ(g.moves[1].tool, "area");
  EXPECT_EQ(g.moves[1].status, "failed");
  EXPECT_NE(g.moves[1].reason.find("no-such-zone"), std::string::npos);
  EXPECT_EQ(g.bound, 1);
  EXPECT_NEAR(g.readiness, 1 - 0.3 * std::min(1.0, g.moves[0].hours / m.rule.time_window_h), 1e-12);

  GeoPlanEffect h;
  h.bound = 4;
  h.infeasible = 1;
  h.mean_exposure = 0.5;
  const QualityWeights w{0.5, 0.3, 0.2};
  const QualityParts q{0.6, 0.4, 0.2, 0.5 * 0.6 + 0.3 * 0.6 + 0.2 * 0.8};
  const QualityParts a = apply_geo(q, h, w);
  EXPECT_NEAR(a.e, 0.6 * (1 - 0.5 * 0.25), 1e-12);
  EXPECT_NEAR(a.r, 0.2 + 0.5 * 0.5 * 0.8, 1e-12);
  EXPECT_NEAR(a.q, 0.5 * a.e + 0.3 * (1 - a.c) + 0.2 * (1 - a.r), 1e-12);
  EXPECT_EQ(apply_geo(q, GeoPlanEffect{}, w).q, q.q);  // no moves on the map: nothing changes
  EXPECT_DOUBLE_EQ(effective_power(Force{2, 0.5, 0.5, 0.8}), 0.8 * effective_power(Force{2, 0.5, 0.5}));
}

TEST(GeoRun, WritesMapsAndMovesAndAdjustsTheMetrics) {
  const auto geo_cfg = load_experiment_config(ADVPLAN_SOURCE_DIR "/configs/experiments/geo.yaml");
  ASSERT_TRUE(geo_cfg.terrain_geo);
  auto paper_cfg = default_experiment_config();
  paper_cfg.studies.attribution = false;  // geo.yaml is the paper config on maps, without the attribution study
  advplan::testing::TempDir tmp("geo-run");
  auto run = [&](const ExperimentConfig& cfg, const std::string& dir) {
    RunOptions opts;
    opts.out_dir = tmp / dir;
    opts.progress = false;
    opts.threads = 2;
    opts.observers = standard_observers(opts.studies);
    run_experiment(prepare_run(cfg, run_conditions(cfg)), opts);
    return opts.out_dir;
  };
  const std::string g = run(geo_cfg, "geo"), p = run(paper_cfg, "paper");
  EXPECT_FALSE(fs::exists(fs::path(p) / "geo_moves.csv"));
  EXPECT_FALSE(fs::exists(fs::path(p) / "maps"));
  // Maps: one per scenario, each in the MANIFEST.
  const std::string manifest = advplan::testing::read_file(g + "/MANIFEST");
  std::size_t maps = 0;
  for (const auto& e : fs::directory_iterator(fs::path(g) / "maps")) {
    ++maps;
    EXPECT_NE(manifest.find("  maps/" + e.path().filename().string() + "\n"), std::string::npos) << e.path();
  }
  EXPECT_EQ(maps, corpus_size(geo_cfg));
  EXPECT_NE(manifest.find("  geo_moves.csv\n"), std::string::npos);
  // Moves: every status known, some infeasible.
  const auto moves = io::CsvTable::read(g + "/geo_moves.csv", schema::geo_moves());
  std::map<std::string, int> status;
  for (std::size_t i = 0; i < moves.size(); ++i) ++status[moves.at(i, "status")];
  for (const auto& [s, n] : status) EXPECT_TRUE(s == "ok" || s == "infeasible" || s == "unbound" || s == "failed") << s;
  EXPECT_GT(status["infeasible"], 0);
  EXPECT_GT(status["ok"], status["infeasible"]);
  // The corpus is the same; the metrics move by the documented formulas: blue_e = e (1 - .5 f) per row.
  EXPECT_EQ(advplan::testing::read_file(g + "/scenarios.csv"), advplan::testing::read_file(p + "/scenarios.csv"));
  const auto pg = io::CsvTable::read(g + "/per_scenario.csv"), pp = io::CsvTable::read(p + "/per_scenario.csv");
  ASSERT_EQ(pg.size(), pp.size());
  std::map<std::pair<std::string, std::string>, std::pair<int, int>> blue_moves;  // (scenario, condition) -> (bound, infeasible)
  for (std::size_t i = 0; i < moves.size(); ++i) {
    if (moves.at(i, "side") != "BLUE" || moves.at(i, "action_id").empty()) continue;
    auto& bm = blue_moves[{moves.at(i, "scenario_id"), moves.at(i, "condition")}];
    const std::string s = moves.at(i, "status");
    if (s == "ok" || s == "infeasible") ++bm.first;
    if (s == "infeasible") ++bm.second;
  }
  int changed = 0;
  for (std::size_t i = 0; i < pg.size(); ++i) {
    ASSERT_EQ(pg.at(i, "scenario_id"), pp.at(i, "scenario_id"));
    if (pg.at(i, "status") != "ok" || pg.at(i, "condition") == "council") continue;
    const auto bm = blue_moves[{pg.at(i, "scenario_id"), pg.at(i, "condition")}];
    const double f = bm.first > 0 ? static_cast<double>(bm.second) / bm.first : 0.0;
    EXPECT_NEAR(pg.real(i, "blue_e"), pp.real(i, "blue_e") * (1 - 0.5 * f), 2e-6) << pg.at(i, "scenario_id");
    EXPECT_GE(pg.real(i, "blue_r"), pp.real(i, "blue_r") - 1e-6);
    changed += pg.at(i, "blue_quality") != pp.at(i, "blue_quality") ? 1 : 0;
  }
  EXPECT_GT(changed, 0);
}

}  // namespace
