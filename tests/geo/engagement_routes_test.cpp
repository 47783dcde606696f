// The engagement wargame on a map (terrain: geo; docs/METRICS.md "Engagement wargame", "Moves on the map"): a
// movement takes its route's time, and a route through the other side's threat zones takes that side's fire on the
// moving asset's share. On a hand-made map where the direct road runs through a RED battery and a detour avoids it,
// the route through the threat costs BLUE more than the detour. The sign is asserted and the size printed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <numbers>

#include "advplan/geo/map.hpp"
#include "advplan/geo/user_map.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/geo_eval.hpp"
#include "advplan/sim/engagement.hpp"

namespace advplan {
namespace {

/// A direct road west to east along the equator, 0.4 degrees, whose middle half (x in 0.1..0.3) a RED battery
/// covers; a detour north, east and back south (1.2 degrees) that it does not touch. BLUE's infantry at the west
/// end, the objective and RED's platoon at the east end. 40 km/h, a 6-hour window.
constexpr const char* kMapText = R"({"type": "FeatureCollection", "name": "routes", "features": [
{"type": "Feature", "id": "road-direct", "geometry": {"type": "LineString", "coordinates": [[0, 0], [0.1, 0], [0.3, 0], [0.4, 0]]}, "properties": {"kind": "road", "name": "direct road"}},
{"type": "Feature", "id": "road-detour", "geometry": {"type": "LineString", "coordinates": [[0, 0], [0, 0.4], [0.4, 0.4], [0.4, 0]]}, "properties": {"kind": "road", "name": "detour"}},
{"type": "Feature", "id": "objective", "geometry": {"type": "Point", "coordinates": [0.4, 0]}, "properties": {"kind": "place", "name": "objective"}},
{"type": "Feature", "id": "b-inf-1", "geometry": {"type": "Point", "coordinates": [0, 0]}, "properties": {"kind": "asset", "side": "BLUE", "domain": "land", "mobility": 1, "name": "infantry"}},
{"type": "Feature", "id": "r-inf-1", "geometry": {"type": "Point", "coordinates": [0.4, 0]}, "properties": {"kind": "asset", "side": "RED", "domain": "land", "name": "platoon"}},
{"type": "Feature", "id": "battery", "geometry": {"type": "Polygon", "coordinates": [[[0.1, -0.1], [0.3, -0.1], [0.3, 0.1], [0.1, 0.1], [0.1, -0.1]]]}, "properties": {"kind": "threat", "side": "RED", "name": "battery"}},
{"type": "Feature", "geometry": null, "properties": {"kind": "order", "text": "Take the objective. Time window: 6 hours.", "objective": "objective", "speed_kmh": 40, "time_window_h": 6}}
]})";

Scenario two_asset_scenario() {
  Scenario sc = corpus_scenario(default_experiment_config(), 0);
  Asset b{"b-inf-1", Side::Blue, "infantry", "land", "assault", 0.8, 1.0, 1.0, {Category::movement, Category::fires,
                                                                              Category::information}};
  Asset r{"r-inf-1", Side::Red, "infantry", "land", "defend", 0.8, 1.0, 0.5, {Category::fires}};
  sc.assets = {b, r};
  sc.terrain.mobility = 1.0;
  return sc;
}

/// Move to the objective, then gather information, then fire; `through` binds the move to the plan's own route
/// call, which avoids nothing (so it takes the direct road through the battery); otherwise the move is bound to the
/// route that avoids RED's zones (the detour).
Plan blue_plan(bool through) {
  Plan p;
  p.plan_id = through ? "through" : "detour";
  p.side = Side::Blue;
  p.actions = {{"m1", "b-inf-1", "advance", Category::movement, "objective", 3, {}},
               {"i1", "b-inf-1", "observe", Category::information, "r-inf-1", 3, {}},
               {"f1", "b-inf-1", "attack", Category::fires, "r-inf-1", 3, {}}};
  p.chain = {"m1", "i1", "f1"};
  if (through) p.tool_calls = {{"route", R"({"from":"b-inf-1","to":"objective"})"}};
  return p;
}

Plan red_plan() {
  Plan p;
  p.plan_id = "hold";
  p.side = Side::Red;
  p.actions = {{"f1", "r-inf-1", "defend", Category::fires, "b-inf-1", 3, {}}};
  p.chain = {"f1"};
  return p;
}

TEST(EngagementRoutes, ARouteThroughAThreatZoneCostsMoreThanTheDetour) {
  const geo::GeoMap m = geo::parse_user_map(kMapText, "routes.geojson");
  const Scenario sc = two_asset_scenario();
  SimConfig cfg = default_experiment_config().sim;
  cfg.model = "engagement";
  const double kDeg = 6371.0088 * std::numbers::pi / 180;

  const GeoPlanEffect through = geo_plan_effect(m, blue_plan(true), Side::Blue);
  const GeoPlanEffect detour = geo_plan_effect(m, blue_plan(false), Side::Blue);
  const PlanOnMap tm = plan_on_map(m, through), dm = plan_on_map(m, detour);
  ASSERT_EQ(tm.moves.size(), 1u);
  ASSERT_EQ(dm.moves.size(), 1u);
  EXPECT_DOUBLE_EQ(tm.time_window_h, 6);
  // The direct road: 0.4 degrees, half of it inside the battery; the detour: 1.2 degrees, none of it.
  EXPECT_NEAR(tm.moves[0].exposure, 0.5, 1e-3);
  EXPECT_NEAR(tm.moves[0].hours, 0.4 * kDeg / 40, 0.01);
  EXPECT_EQ(dm.moves[0].exposure, 0.0);
  EXPECT_GT(dm.moves[0].hours, 2.5 * tm.moves[0].hours);
  // Its steps: T x hours / window.
  EXPECT_EQ(route_steps(tm.moves[0].hours, 6, cfg), std::lround(60 * tm.moves[0].hours / 6));
  EXPECT_EQ(route_steps(-1, 6, cfg), 60);
  EXPECT_EQ(route_steps(100, 6, cfg), 60);

  const Plan red = red_plan();
  const Force fb{0.8, 0.5, 0.5, 1.0}, fr{0.8, 0.5, 0.5, 1.0};  // the same forces: only the route differs
  const SimNoise noise = draw_noise(7, sc.id, cfg);
  auto run = [&](const Plan& blue, const PlanOnMap* bm) {
    EngagementTrace tr;
    const SimResult res = simulate_engagement(sc, blue, fb, red, fr, noise, cfg, &tr, 0, {bm, nullptr});
    double loss = 0;
    for (const auto& o : tr.outcomes) loss += o.blue_loss / static_cast<double>(tr.outcomes.size());
    return std::pair{res.win_rate, loss};
  };
  const auto [win_t, loss_t] = run(blue_plan(true), &tm);
  const auto [win_d, loss_d] = run(blue_plan(false), &dm);
  std::printf("[ sensitivity ] route: through the threat zone win %.3f loss %.4f; detour win %.3f loss %.4f\n", win_t,
              loss_t, win_d, loss_d);
  EXPECT_GT(loss_t, loss_d);
  EXPECT_LT(win_t, win_d);
  // Off the map the two plans are one plan: the same template steps, no exposure, the same outcome.
  EXPECT_EQ(run(blue_plan(true), nullptr), run(blue_plan(false), nullptr));
}

}  // namespace
}  // namespace advplan
