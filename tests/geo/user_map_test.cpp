// A user's GeoJSON map (docs/GEO.md "Bring your own map"): the hand-made map tests/data/geo/user_map.geojson (a
// square of five roads 0.2 degrees apart at the equator, two RED batteries that each close one road segment, a
// ridge, two sectors, an order) gives routes and questions whose answers are worked by hand below; a scenario put
// on it keeps the map's terrain; bad features are refused naming the feature index and property.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <numbers>
#include <set>

#include "advplan/core/error.hpp"
#include "advplan/core/random.hpp"
#include "advplan/geo/questions.hpp"
#include "advplan/geo/tools.hpp"
#include "advplan/geo/user_map.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/pipeline/standard_run.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/runner.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

const std::string kMap = std::string(ADVPLAN_SOURCE_DIR) + "/tests/data/geo/user_map.geojson";
/// Kilometres per degree of latitude, and of longitude at the map's middle latitude (0.2: its latitudes run from 0
/// to 0.4), whose cosine scales east-west distances.
const double kDeg = 6371.0088 * std::numbers::pi / 180;
const double kDegX = kDeg * std::cos(0.2 * std::numbers::pi / 180);

const geo::Question& question(const std::vector<geo::Question>& qs, const std::string& kind) {
  for (const auto& q : qs)
    if (q.kind == kind) return q;
  ADD_FAILURE() << "no question " << kind;
  return qs.front();
}

TEST(UserMap, ReadsTheFeaturesAndTheNetwork) {
  const geo::GeoMap m = geo::read_user_map(kMap);
  EXPECT_EQ(m.scenario_id, "hand-map");
  EXPECT_EQ(m.net.num_nodes(), 9U);   // a 3 x 3 grid of distinct vertices
  EXPECT_EQ(m.net.num_edges(), 10U);  // five roads of two segments
  EXPECT_EQ(m.rule.network, "road");
  EXPECT_DOUBLE_EQ(m.rule.speed_kmh, 40);
  EXPECT_DOUBLE_EQ(m.rule.time_window_h, 3);
  EXPECT_EQ(m.objective_place, "depot");
  ASSERT_NE(m.find("blue-sector"), nullptr);
  EXPECT_EQ(m.find("blue-sector")->name, "our side");
  EXPECT_NEAR(m.find("depot")->point->x, 0.4 * kDegX, 1e-9);
  EXPECT_NEAR(m.find("depot")->point->y, 0.4 * kDeg, 1e-9);
  EXPECT_EQ(m.find("b-inf-1")->side, "BLUE");
}

TEST(UserMap, RoutesAndQuestionsMatchAHandComputation) {
  const geo::GeoMap m = geo::read_user_map(kMap);
  // b-inf-1 (0, 0) to the depot (0.4, 0.4) avoiding RED: the east road's southern segment (battery at 0.35..0.45 x
  // 0.05..0.15) and the middle road's northern one (battery at 0.15..0.25 x 0.25..0.35) are closed, so the only
  // route is west then north: 0.8 degrees.
  const auto r = nlohmann::json::parse(geo::call_tool(m, "route", R"({"from":"b-inf-1","to":"depot","avoid":["RED"]})").json);
  EXPECT_TRUE(r["feasible"].get<bool>());
  EXPECT_NEAR(r["length_km"].get<double>(), 0.4 * kDeg + 0.4 * kDegX, 1e-3);
  // Without avoiding anything every monotone path is 0.8 degrees too; to the ford (0.2, 0.2): south then middle, 0.4.
  const auto qs = geo::generate_questions(m);
  EXPECT_EQ(question(qs, "sector").answer, "red sector");  // the depot lies in the RED sector polygon
  EXPECT_NEAR(std::stod(question(qs, "area").answer), 0.1 * kDegX * 0.1 * kDeg, 1e-3);  // the east battery
  EXPECT_NEAR(std::stod(question(qs, "distance").answer), 0.4 * std::hypot(kDeg, kDegX), 1e-3);
  EXPECT_EQ(question(qs, "nearest_place").answer, "ford");  // 0.28 degrees against 0.57
  EXPECT_EQ(question(qs, "line_of_sight").answer, "no");    // the ridge lies across depot-ford at (0.3, 0.3)
  EXPECT_EQ(question(qs, "places_in_threats").answer, "0");
  EXPECT_NEAR(std::stod(question(qs, "route_length").answer), 0.2 * kDegX + 0.2 * kDeg, 1e-3);  // to the ford
  // The order: reach the depot in 3 h at 40 km/h: 0.8 degrees / 40 = 2.224 h.
  EXPECT_NEAR(std::stod(question(qs, "order_reach").answer), (0.4 * kDeg + 0.4 * kDegX) / 40, 1e-3);
  EXPECT_EQ(question(qs, "first_to_reach").answer, "b-inf-1");
}

TEST(UserMap, BadFeaturesAreOneSentenceNamingTheFeatureAndProperty) {
  const std::string text = testing::read_file(kMap);
  const auto refused = [&](const std::string& from, const std::string& to, const std::string& want) {
    std::string t = text;
    const auto pos = t.find(from);
    ASSERT_NE(pos, std::string::npos) << from;
    t.replace(pos, from.size(), to);
    try {
      geo::parse_user_map(t, "map.geojson");
      ADD_FAILURE() << "accepted " << to;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  };
  refused(R"("kind": "threat", "side": "RED", "name": "east battery")", R"("kind": "threat", "name": "east battery")",
          "map.geojson: feature 9, property 'side': expected BLUE or RED");
  refused(R"("side": "BLUE", "domain": "land", "mobility": 1)", R"("side": "BLUE", "domain": "land", "mobility": 3)",
          "feature 7, property 'mobility': expected a number in [0, 1]");
  refused(R"("capacity": 400)", R"("capacity": "wide")", "feature 0, property 'capacity'");
  refused(R"({"kind": "place", "name": "ford"})", R"({"kind": "lake", "name": "ford"})", "feature 6, property 'kind': a Point is a place or an asset");
  refused(R"([[0.35, 0.05], [0.45, 0.05], [0.45, 0.15], [0.35, 0.15], [0.35, 0.05]])",
          R"([[0.35, 0.05], [0.45, 0.05], [0.45, 0.15], [0.35, 0.15], [0.35, 0.06]])", "feature 9, geometry: the ring is not closed");
  refused(R"("coordinates": [0.2, 0.2]})", R"("coordinates": [200, 0.2]})", "feature 6, geometry: the position [200, 0.2]");
  refused(R"("id": "ford")", R"("id": "depot")", "feature 6, id: 'depot' is used by an earlier feature");
  refused(R"("kind": "road", "name": "west road")", R"("kind": "sea-lane", "name": "west road")", "feature 1, property 'kind': 'sea-lane' on a map whose network is 'road'");
  refused(R"("objective": "depot")", R"("objective": "nowhere")", "the order's property 'objective': 'nowhere' is not a place");
  refused(R"({"type": "Feature", "geometry": {"type": "LineString")", R"({"type": "Feature", "geometry": {"type": "MultiLineString")",
          "feature 0, geometry: 'MultiLineString' is not a Point, LineString or Polygon");
  refused(R"("id": "ford")", R"("id": "blue-sector")", "feature 6, id: 'blue-sector' is reserved for the sectors");
  refused(R"([[0, 0], [0, 0.2], [0, 0.4]])", R"([[0, 0], [0, 0.2], [0, 89.5]])", "latitudes reach 89.5");
  EXPECT_THROW(geo::parse_user_map("[]", "map.geojson"), ConfigError);
  // No road: nothing can move, and no route has a node to start from.
  try {
    geo::parse_user_map(R"({"type":"FeatureCollection","features":[{"type":"Feature","id":"p","geometry":{"type":"Point","coordinates":[0,0]},"properties":{"kind":"place"}}]})",
                        "map.geojson");
    ADD_FAILURE() << "a map without roads was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no road or sea-lane"), std::string::npos) << e.what();
  }
  // A text that would parse into far more values than a map within the limits has is refused before parsing.
  EXPECT_THROW(geo::parse_user_map(R"({"type":"FeatureCollection","features":[)" + std::string(2'600'000, '[') + "]}", "map.geojson"), ConfigError);
  EXPECT_THROW(geo::parse_user_map(std::string(40, '[') + std::string(40, ']'), "map.geojson"), ConfigError);  // depth
}

/// The grid search gives nearest_node's answer for every point, ties to the lowest index included.
/// The hand map with its east battery's ring (feature 9, 'threat-east') replaced by `ring`, parsed.
geo::GeoMap with_east_battery(const std::string& ring) {
  std::string t = testing::read_file(kMap);
  const std::string from = "[[0.35, 0.05], [0.45, 0.05], [0.45, 0.15], [0.35, 0.15], [0.35, 0.05]]";
  t.replace(t.find(from), from.size(), ring);
  return geo::parse_user_map(t, "map.geojson");
}

std::string refusal(const std::string& ring) {
  try {
    (void)with_east_battery(ring);
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted the ring " << ring;
  return "";
}

// Issue 47, item 12: an asymmetric bow-tie was accepted and its area answered from the signed shoelace sum
// (the difference of its two lobes). A ring that is not a simple polygon (RFC 7946, OGC simple features) is
// refused, naming the feature; a valid ring keeps its area.
TEST(UserMap, RingsThatAreNotSimplePolygonsAreRefusedNamingTheFeature) {
  const std::string head = "map.geojson: feature 9 (threat 'threat-east'), geometry: ";
  EXPECT_EQ(refusal("[[0.35, 0.05], [0.45, 0.15], [0.45, 0.05], [0.35, 0.12], [0.35, 0.05]]")
                .rfind(head + "the ring crosses or touches itself", 0),
            0U);
  // a figure eight whose loops share one vertex, and a spike
  EXPECT_NE(
      refusal(
          "[[0.35, 0.05], [0.4, 0.1], [0.45, 0.05], [0.45, 0.15], [0.4, 0.1], [0.35, 0.15], [0.35, 0.05]]")
          .find("crosses or touches itself"),
      std::string::npos);
  EXPECT_NE(refusal("[[0.35, 0.05], [0.45, 0.05], [0.45, 0.15], [0.45, 0.1], [0.35, 0.15], [0.35, 0.05]]")
                .find("feature 9 (threat 'threat-east'), geometry: the ring"),
            std::string::npos);
  // too few positions, and unclosed
  EXPECT_NE(refusal("[[0.35, 0.05], [0.45, 0.05], [0.35, 0.05]]")
                .find("feature 9, geometry: the ring has 3 positions; a ring needs at least 4"),
            std::string::npos);
  EXPECT_NE(refusal("[[0.35, 0.05], [0.45, 0.05], [0.35, 0.05], [0.35, 0.05]]")
                .find("feature 9 (threat 'threat-east'), geometry: the ring has no area"),
            std::string::npos);
  EXPECT_NE(refusal("[[0.35, 0.05], [0.45, 0.05], [0.45, 0.15], [0.35, 0.15]]")
                .find("feature 9, geometry: the ring is not closed"),
            std::string::npos);
  // Valid rings: clockwise (turned), and with a repeated position (OGC allows it), keep the square's area.
  for (const char* ring :
       {"[[0.35, 0.05], [0.35, 0.15], [0.45, 0.15], [0.45, 0.05], [0.35, 0.05]]",
        "[[0.35, 0.05], [0.45, 0.05], [0.45, 0.05], [0.45, 0.15], [0.35, 0.15], [0.35, 0.05]]"}) {
    const geo::GeoMap m = with_east_battery(ring);
    EXPECT_NEAR(geo::area(*m.find("threat-east")->polygon), 0.1 * kDegX * 0.1 * kDeg, 1e-9) << ring;
    EXPECT_GT(geo::signed_area(*m.find("threat-east")->polygon), 0) << ring;
  }
  EXPECT_NEAR(geo::area(*geo::read_user_map(kMap).find("threat-east")->polygon), 0.1 * kDegX * 0.1 * kDeg,
              1e-9);
}

TEST(UserMap, NearestNodesEqualTheScan) {
  Rng rng(20261203);
  for (int round = 0; round < 20; ++round) {
    geo::RoadNetwork net;
    const int n = 1 + static_cast<int>(rng.uniform(0, 400));
    for (int i = 0; i < n; ++i) {
      // Coordinates on a coarse lattice half the time, so equal distances (ties) occur.
      const bool lattice = rng.bernoulli(0.5);
      net.add_node(lattice ? geo::Point{std::floor(rng.uniform(0, 10)), std::floor(rng.uniform(0, 10))}
                           : geo::Point{rng.uniform(0, 10), rng.uniform(0, 10)});
    }
    std::vector<geo::Point> pts;
    for (int i = 0; i < 300; ++i)
      pts.push_back(rng.bernoulli(0.3) ? geo::Point{std::floor(rng.uniform(0, 10)) + 0.5, std::floor(rng.uniform(0, 10))}
                                       : geo::Point{rng.uniform(0, 10), rng.uniform(0, 10)});
    const auto fast = geo::nearest_nodes(net, pts, geo::BBox{0, 0, 10, 10});
    for (std::size_t i = 0; i < pts.size(); ++i) ASSERT_EQ(fast[i], net.nearest_node(pts[i])) << round << " " << i;
  }
}

TEST(UserMap, AScenarioAssetMayNotTakeAMapFeaturesId) {
  const ExperimentConfig cfg = default_experiment_config();
  const Scenario sc = corpus_scenario(cfg, 0);
  std::string asset;  // a scenario asset the map does not have
  for (const auto& a : sc.assets)
    if (a.id != "b-inf-1" && a.id != "r-inf-1") asset = a.id;
  ASSERT_FALSE(asset.empty());
  std::string text = testing::read_file(kMap);
  text.replace(text.find(R"("id": "ford")"), 12, "\"id\": \"" + asset + "\"");
  const geo::GeoMap base = geo::parse_user_map(text, "map.geojson");
  EXPECT_THROW(geo::overlay_scenario(sc, base), ConfigError);
}

TEST(UserMap, AScenarioOnTheUsersMapKeepsItsTerrain) {
  const geo::GeoMap base = geo::read_user_map(kMap);
  const ExperimentConfig cfg = default_experiment_config();
  const Scenario sc = corpus_scenario(cfg, 0);
  const geo::GeoMap m = geo::overlay_scenario(sc, base);
  EXPECT_EQ(m.scenario_id, sc.id);
  EXPECT_EQ(m.net.num_edges(), base.net.num_edges());
  EXPECT_NE(m.find("threat-east"), nullptr);
  EXPECT_NE(m.find("ridge"), nullptr);
  EXPECT_NE(m.find("depot"), nullptr);  // the map's own places stay
  for (const auto& a : sc.assets) {
    const auto* f = m.find(a.id);
    ASSERT_NE(f, nullptr) << a.id;
    EXPECT_EQ(f->kind, "asset");
    ASSERT_GE(f->node, 0);
  }
  ASSERT_FALSE(sc.places.empty());
  EXPECT_EQ(m.find(m.objective_place)->name, sc.places[0]);
  EXPECT_EQ(geo::to_geojson(geo::overlay_scenario(sc, base)), geo::to_geojson(m));  // a function of (sc, map)
}

TEST(UserMapCli, QuestionsAndQuizOnTheUsersMap) {
  testing::TempDir tmp("user-map-cli");
  const auto q = testing::advplan("questions --map " + testing::quote(kMap) + " --out " + testing::quote(tmp / "q.jsonl"), tmp);
  ASSERT_EQ(q.status, 0) << q.err;
  const std::string lines = testing::read_file(tmp / "q.jsonl");
  EXPECT_NE(lines.find("\"id\":\"hand-map/route_length\""), std::string::npos) << lines;
  const auto oracle = testing::advplan("quiz --questions " + testing::quote(tmp / "q.jsonl") + " --map " + testing::quote(kMap) +
                                           " --agent scripted --summary " + testing::quote(tmp / "s.csv"), tmp);
  ASSERT_EQ(oracle.status, 0) << oracle.err;
  const auto s = io::CsvTable::read(tmp / "s.csv");
  bool overall = false;
  for (std::size_t r = 0; r < s.size(); ++r)
    if (s.at(r, "group") == "overall" && s.at(r, "grading") == "strict") {
      overall = true;
      EXPECT_EQ(s.at(r, "correct"), s.at(r, "n"));  // the scripted agent replays each reference call
    }
  EXPECT_TRUE(overall);
  // Questions of the map need the map: without --map the quiz cannot find scenario 'hand-map'.
  const auto lost = testing::advplan("quiz --questions " + testing::quote(tmp / "q.jsonl") + " --agent scripted", tmp);
  testing::expect_one_line_error(lost);
  testing::write_file(tmp / "bad.geojson", R"({"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]},"properties":{"kind":"threat"}}]})");
  const auto bad = testing::advplan("questions --map " + testing::quote(tmp / "bad.geojson"), tmp);
  testing::expect_one_line_error(bad);
  EXPECT_NE(bad.err.find("feature 0, property 'side'"), std::string::npos) << bad.err;
}

TEST(UserMapRun, TerrainGeojsonPutsTheRunOnTheUsersMap) {
  testing::TempDir tmp("user-map-run");
  testing::write_file(tmp / "map.geojson", testing::read_file(kMap));
  const std::string cfg_text = "name: t\ncorpus: {templates: [urban], seeds: [100, 101]}\nconditions: [single]\n"
                               "terrain: {geo: {geojson: map.geojson}}\n";
  const ExperimentConfig cfg = parse_experiment_config(cfg_text, tmp / "t.yaml", tmp.path().string());
  ASSERT_TRUE(cfg.terrain_geo);
  ASSERT_TRUE(cfg.geo_map);
  EXPECT_EQ(cfg.geo_map_sha256.size(), 64U);
  RunOptions opts;
  opts.out_dir = tmp / "run";
  opts.progress = false;
  opts.threads = 2;
  opts.observers = standard_observers(opts.studies);
  run_experiment(prepare_run(cfg, run_conditions(cfg)), opts);
  // The user's map once (its bytes, by their sha256), and per scenario a layer on it (docs/GEO.md "A run on the map").
  const std::string shared = testing::read_file(tmp / ("run/maps/_shared/" + cfg.geo_map_sha256 + ".geojson"));
  EXPECT_EQ(shared, testing::read_file(tmp / "map.geojson"));
  EXPECT_NE(shared.find("\"threat-east\""), std::string::npos);  // the user's terrain, not a generated one
  const std::string map = testing::read_file(tmp / "run/maps/urban-100.geojson");
  EXPECT_NE(map.find("\"base\":\"_shared/" + cfg.geo_map_sha256 + ".geojson\""), std::string::npos) << map;
  EXPECT_EQ(map.find("\"threat-red-1\""), std::string::npos);
  EXPECT_EQ(map.find("\"threat-east\""), std::string::npos) << "the layer holds only what the scenario adds";
  // The layer on the base is the scenario's map: the base's features less `hidden`, plus the layer's.
  {
    const auto layer = nlohmann::json::parse(map);
    const auto whole = nlohmann::json::parse(geo::to_geojson(scenario_map(cfg, corpus_scenario(cfg, 0))));
    std::set<std::string> ids, want;
    const std::set<std::string> hidden(layer["hidden"].begin(), layer["hidden"].end());
    for (const auto& f : cfg.geo_map->features)
      if (!hidden.contains(f.id)) ids.insert(f.id);
    for (const auto& f : layer["features"]) ids.insert(f["id"].get<std::string>());
    for (const auto& f : whole["features"])
      if (f["properties"]["kind"] != "road") want.insert(f["id"].get<std::string>());
    EXPECT_EQ(ids, want);
  }
  const auto moves = io::CsvTable::read(tmp / "run/geo_moves.csv");
  EXPECT_GT(moves.size(), 0U);
  EXPECT_NE(testing::read_file(tmp / "run/run_metadata.json").find(cfg.geo_map_sha256), std::string::npos);
  // A bad map is refused at config time, naming the key and the feature.
  testing::write_file(tmp / "bad.geojson", R"({"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[0,0]},"properties":{"kind":"asset"},"id":"a"}]})");
  std::string bad = cfg_text;
  bad.replace(bad.find("map.geojson"), 11, "bad.geojson");
  try {
    (void)parse_experiment_config(bad, tmp / "t.yaml", tmp.path().string());
    ADD_FAILURE() << "a bad map was accepted";
  } catch (const ConfigError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("terrain.geo.geojson"), std::string::npos) << w;
    EXPECT_NE(w.find("feature 0, property 'side'"), std::string::npos) << w;
    EXPECT_EQ(w.find('\n'), std::string::npos) << w;
  }
}

}  // namespace
}  // namespace advplan
