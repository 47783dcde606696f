// The geospatial layer (docs/GEO.md): the map generator, GeoJSON structure (RFC 7946), geometry against
// closed forms, route against a separately written Dijkstra, the tools' failures, the questions' reference
// answers recomputed independently, and the quiz protocol.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <numbers>
#include <queue>
#include <regex>
#include <set>

#include "advplan/core/error.hpp"
#include "advplan/core/random.hpp"
#include "advplan/run/config.hpp"
#include "advplan/geo/geometry.hpp"
#include "advplan/geo/map.hpp"
#include "advplan/geo/network.hpp"
#include "advplan/geo/questions.hpp"
#include "advplan/geo/quiz.hpp"
#include "advplan/geo/tools.hpp"

namespace {
using namespace advplan;
using namespace advplan::geo;
using json = nlohmann::json;

const ExperimentConfig& paper() {
  static const ExperimentConfig cfg = default_experiment_config();
  return cfg;
}

// ---- independent reference implementations (not the library's) ----

double ref_shoelace(const std::vector<Point>& r) {
  double s = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    const auto& a = r[i];
    const auto& b = r[(i + 1) % r.size()];
    s += (b.x - a.x) * (b.y + a.y);
  }
  return -s / 2;  // trapezoid formula: positive for counterclockwise rings
}

/// Winding number (not the library's even-odd rule); boundary points count as inside.
bool ref_inside(const std::vector<Point>& r, Point q) {
  int wn = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    const Point a = r[i], b = r[(i + 1) % r.size()];
    const double c = (b.x - a.x) * (q.y - a.y) - (q.x - a.x) * (b.y - a.y);
    if (std::abs(c) < 1e-12 && std::min(a.x, b.x) - 1e-12 <= q.x && q.x <= std::max(a.x, b.x) + 1e-12 &&
        std::min(a.y, b.y) - 1e-12 <= q.y && q.y <= std::max(a.y, b.y) + 1e-12)
      return true;
    if (a.y <= q.y) {
      if (b.y > q.y && c > 0) ++wn;
    } else if (b.y <= q.y && c < 0) {
      --wn;
    }
  }
  return wn != 0;
}

int orient(Point a, Point b, Point c) {
  const double v = (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x);
  return v > 1e-12 ? 1 : v < -1e-12 ? -1 : 0;
}
bool ref_seg_cross(Point a, Point b, Point c, Point d) {
  auto on = [](Point p, Point q, Point r) {
    return std::min(p.x, q.x) - 1e-12 <= r.x && r.x <= std::max(p.x, q.x) + 1e-12 && std::min(p.y, q.y) - 1e-12 <= r.y &&
           r.y <= std::max(p.y, q.y) + 1e-12;
  };
  const int o1 = orient(a, b, c), o2 = orient(a, b, d), o3 = orient(c, d, a), o4 = orient(c, d, b);
  if (o1 != o2 && o3 != o4) return true;
  return (o1 == 0 && on(a, b, c)) || (o2 == 0 && on(a, b, d)) || (o3 == 0 && on(c, d, a)) || (o4 == 0 && on(c, d, b));
}
bool ref_edge_blocked(Point a, Point b, const std::vector<Polygon>& zones) {
  for (const auto& z : zones) {
    if (ref_inside(z.ring, a) || ref_inside(z.ring, b)) return true;
    for (std::size_t i = 0; i < z.ring.size(); ++i)
      if (ref_seg_cross(a, b, z.ring[i], z.ring[(i + 1) % z.ring.size()])) return true;
  }
  return false;
}

/// Plain Dijkstra over an edge list, every edge tested against every polygon (no grid, no memo): the oracle.
double ref_dijkstra(const RoadNetwork& net, int s, int t, const std::vector<Polygon>& zones) {
  const std::size_t n = net.num_nodes();
  std::vector<std::vector<std::pair<int, double>>> adj(n);
  for (const auto& e : net.edges()) {
    if (ref_edge_blocked(net.node(e.u), net.node(e.v), zones)) continue;
    adj[static_cast<std::size_t>(e.u)].push_back({e.v, e.length});
    adj[static_cast<std::size_t>(e.v)].push_back({e.u, e.length});
  }
  std::vector<double> d(n, std::numeric_limits<double>::infinity());
  using Item = std::pair<double, int>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> pq;
  d[static_cast<std::size_t>(s)] = 0;
  pq.push({0, s});
  while (!pq.empty()) {
    auto [du, u] = pq.top();
    pq.pop();
    if (du > d[static_cast<std::size_t>(u)]) continue;
    for (auto [v, w] : adj[static_cast<std::size_t>(u)])
      if (du + w < d[static_cast<std::size_t>(v)]) {
        d[static_cast<std::size_t>(v)] = du + w;
        pq.push({du + w, v});
      }
  }
  return d[static_cast<std::size_t>(t)];
}

/// Breadth-first search in the pruned graph: the proof that a question is unsolvable.
bool ref_connected(const RoadNetwork& net, int s, int t, const std::vector<Polygon>& zones) {
  return std::isfinite(ref_dijkstra(net, s, t, zones));
}

json tool(const GeoMap& m, const std::string& name, const json& args) {
  const auto r = call_tool(m, name, args.dump());
  EXPECT_TRUE(r.ok) << name << " " << args.dump() << ": " << r.error;
  return r.ok ? json::parse(r.json) : json();
}

// ---- geometry against closed forms ----

TEST(GeoGeometry, AreaAndDistanceMatchClosedForms) {
  EXPECT_DOUBLE_EQ(area(Polygon{{{0, 0}, {4, 0}, {4, 3}, {0, 3}}}), 12.0);
  EXPECT_DOUBLE_EQ(area(Polygon{{{0, 0}, {4, 0}, {0, 3}}}), 6.0);
  EXPECT_DOUBLE_EQ(distance({0, 0}, {3, 4}), 5.0);
  // Regular n-gon of circumradius R: (n/2) R^2 sin(2 pi / n); tends to pi R^2.
  for (int n : {3, 6, 64, 1000}) {
    Polygon p;
    for (int k = 0; k < n; ++k) p.ring.push_back({7 * std::cos(2 * std::numbers::pi * k / n), 7 * std::sin(2 * std::numbers::pi * k / n)});
    EXPECT_NEAR(area(p), n / 2.0 * 49 * std::sin(2 * std::numbers::pi / n), 1e-9 * 49 * n);
    EXPECT_GT(signed_area(p), 0);  // counterclockwise
  }
  const Polygon sq{{{0, 0}, {2, 0}, {2, 2}, {0, 2}}};
  EXPECT_DOUBLE_EQ(length_inside(sq, {-1, 1}, {3, 1}), 2.0);
  EXPECT_NEAR(length_inside(sq, {-1, -1}, {3, 3}), 2 * std::sqrt(2.0), 1e-12);
  EXPECT_DOUBLE_EQ(length_inside(sq, {3, 0}, {3, 5}), 0.0);
  EXPECT_TRUE(contains(sq, {1, 1}));
  EXPECT_TRUE(contains(sq, {2, 1}));  // boundary
  EXPECT_FALSE(contains(sq, {2.1, 1}));
  EXPECT_TRUE(segment_intersects(sq, {-1, 1}, {3, 1}));
  EXPECT_FALSE(segment_intersects(sq, {-1, 3}, {3, 3}));
  const Point c = centroid(Polygon{{{0, 0}, {4, 0}, {4, 2}, {0, 2}}});
  EXPECT_DOUBLE_EQ(c.x, 2.0);
  EXPECT_DOUBLE_EQ(c.y, 1.0);
}

TEST(GeoGeometry, ProjectionAgreesWithHaversineOnAMapScale) {
  const Projection p{23.5, 41.2};
  for (Point q : {Point{10, 0}, Point{0, 10}, Point{60, 60}, Point{-30, 45}}) {
    const auto [lon, lat] = p.to_lonlat(q);
    const Point back = p.from_lonlat(lon, lat);
    EXPECT_NEAR(back.x, q.x, 1e-9);
    EXPECT_NEAR(back.y, q.y, 1e-9);
    // Planar distances on the local projection stay within 0.5% of the great circle over a map's extent.
    const double planar = distance({0, 0}, q), great = haversine_km(23.5, 41.2, lon, lat);
    EXPECT_NEAR(planar, great, 0.005 * great) << q.x << "," << q.y;
  }
  // One degree of latitude: R * pi / 180.
  EXPECT_NEAR(haversine_km(0, 0, 0, 1), kEarthRadiusKm * std::numbers::pi / 180, 1e-9);
}

// ---- maps and GeoJSON ----

void expect_position(const json& pos, const std::string& where) {
  ASSERT_TRUE(pos.is_array()) << where;
  ASSERT_EQ(pos.size(), 2u) << where;  // [lon, lat]
  ASSERT_TRUE(pos[0].is_number() && pos[1].is_number()) << where;
  EXPECT_GE(pos[0].get<double>(), -180.0) << where;
  EXPECT_LE(pos[0].get<double>(), 180.0) << where;
  EXPECT_GE(pos[1].get<double>(), -90.0) << where;
  EXPECT_LE(pos[1].get<double>(), 90.0) << where;
}

/// RFC 7946's structural rules for what the map writes: FeatureCollection of Features (type, geometry,
/// properties), Point / LineString / Polygon coordinates as [lon, lat] positions, linear rings closed with at
/// least four positions, exterior rings counterclockwise (right-hand rule), no "crs" member.
std::vector<std::string> rfc7946_problems(const std::string& text) {
  std::vector<std::string> bad;
  const json j = json::parse(text);
  if (j.value("type", "") != "FeatureCollection") bad.push_back("not a FeatureCollection");
  if (j.contains("crs")) bad.push_back("crs member");
  if (!j.contains("features") || !j["features"].is_array()) return {"no features array"};
  for (const auto& f : j["features"]) {
    const std::string id = f.contains("id") ? f["id"].dump() : "?";
    if (f.value("type", "") != "Feature") bad.push_back(id + ": not a Feature");
    if (!f.contains("properties") || !(f["properties"].is_object() || f["properties"].is_null())) bad.push_back(id + ": properties");
    if (!f.contains("geometry") || !f["geometry"].is_object()) {
      bad.push_back(id + ": geometry");
      continue;
    }
    if (f.contains("id") && !f["id"].is_string() && !f["id"].is_number()) bad.push_back(id + ": id type");
    const auto& g = f["geometry"];
    const std::string t = g.value("type", "");
    const auto& c = g["coordinates"];
    if (t == "Point") {
      if (!c.is_array() || c.size() != 2) bad.push_back(id + ": Point position");
    } else if (t == "LineString") {
      if (!c.is_array() || c.size() < 2) bad.push_back(id + ": LineString needs two positions");
    } else if (t == "Polygon") {
      if (!c.is_array() || c.empty()) {
        bad.push_back(id + ": Polygon rings");
        continue;
      }
      for (std::size_t r = 0; r < c.size(); ++r) {
        const auto& ring = c[r];
        if (!ring.is_array() || ring.size() < 4) {
          bad.push_back(id + ": ring with fewer than four positions");
          continue;
        }
        if (ring.front() != ring.back()) bad.push_back(id + ": ring not closed");
        std::vector<Point> pts;
        for (std::size_t i = 0; i + 1 < ring.size(); ++i) pts.push_back({ring[i][0].get<double>(), ring[i][1].get<double>()});
        const double a = ref_shoelace(pts);
        if (r == 0 && !(a > 0)) bad.push_back(id + ": exterior ring not counterclockwise");
        if (r > 0 && !(a < 0)) bad.push_back(id + ": hole not clockwise");
      }
    } else {
      bad.push_back(id + ": unexpected geometry " + t);
    }
  }
  return bad;
}

TEST(GeoMap, GeoJsonFollowsRfc7946ForEveryTemplate) {
  const auto& cfg = paper();
  for (std::size_t i = 0; i < corpus_size(cfg); i += 7) {
    const Scenario sc = corpus_scenario(cfg, i);
    const std::string text = to_geojson(generate_map(sc));
    const auto bad = rfc7946_problems(text);
    EXPECT_TRUE(bad.empty()) << sc.id << ": " << bad.front();
    const json j = json::parse(text);
    for (const auto& f : j["features"]) {
      const auto& c = f["geometry"]["coordinates"];
      if (f["geometry"]["type"] == "Point") expect_position(c, sc.id);
      if (f["geometry"]["type"] == "Polygon")
        for (const auto& p : c[0]) expect_position(p, sc.id);
    }
  }
}

TEST(GeoMap, TheRfcCheckCatchesBrokenGeoJson) {
  const std::string good = R"({"type":"FeatureCollection","features":[{"type":"Feature","properties":{},"geometry":
    {"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}}]})";
  EXPECT_TRUE(rfc7946_problems(good).empty());
  const std::string clockwise = R"({"type":"FeatureCollection","features":[{"type":"Feature","properties":{},"geometry":
    {"type":"Polygon","coordinates":[[[0,0],[0,1],[1,1],[1,0],[0,0]]]}}]})";
  EXPECT_FALSE(rfc7946_problems(clockwise).empty());
  const std::string open = R"({"type":"FeatureCollection","features":[{"type":"Feature","properties":{},"geometry":
    {"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}}]})";
  EXPECT_FALSE(rfc7946_problems(open).empty());
}

TEST(GeoMap, IsDeterministicAndLaysOutEveryPlaceAndAsset) {
  const auto& cfg = paper();
  for (std::size_t i = 0; i < corpus_size(cfg); i += 30) {
    const Scenario sc = corpus_scenario(cfg, i);
    const GeoMap a = generate_map(sc), b = generate_map(sc);
    EXPECT_EQ(to_geojson(a), to_geojson(b));
    EXPECT_EQ(a.of_kind("place").size(), sc.places.size());
    EXPECT_EQ(a.of_kind("asset").size(), sc.assets.size());
    EXPECT_GE(a.of_kind("threat", "RED").size(), 1u);
    EXPECT_GE(a.net.num_edges(), a.net.num_nodes() - 1);  // the spanning tree keeps it connected
    for (const auto* f : a.of_kind("asset")) EXPECT_GE(f->node, 0);
    for (const auto& e : a.net.edges()) EXPECT_GE(e.length, distance(a.net.node(e.u), a.net.node(e.v)));
    // Connected: every node reaches node 0 with nothing avoided.
    for (std::size_t v = 0; v < a.net.num_nodes(); v += 9) EXPECT_TRUE(a.net.shortest_path(0, static_cast<int>(v)).found);
  }
  // Different scenarios get different maps.
  EXPECT_NE(to_geojson(generate_map(corpus_scenario(cfg, 0))), to_geojson(generate_map(corpus_scenario(cfg, 1))));
}

TEST(GeoMap, LayoutRulesAreDataReadStrictly) {
  const auto& rules = layout_rules();
  EXPECT_EQ(rules.for_template("maritime", "sea").network, "sea-lane");
  EXPECT_EQ(rules.for_template("urban", "land").name, "land");
  EXPECT_EQ(rules.for_template("mixed", "joint").name, "joint");
  EXPECT_EQ(rules.for_template("unlisted", "air").name, "air");      // by domain
  EXPECT_EQ(rules.for_template("unlisted", "space").name, "land");   // the default
  EXPECT_EQ(generate_map(corpus_scenario(paper(), 30)).rule.network, "sea-lane");  // maritime-100
  const std::string good = "default: a\nrules:\n  a: {network: road, extent_km: 10, grid: 3, keep_edge: .5, diagonal: 0, "
                           "speed_kmh: 10, threats: {RED: 1, BLUE: 1}, obstacles: 0, threat_radius: [.1, .2], "
                           "time_window_h: 1, surface_domains: [land], origin: [0, 0]}\n";
  EXPECT_EQ(parse_layout_rules(good, "l.yaml").rules.size(), 1u);
  for (const auto& [text, key] : std::vector<std::pair<std::string, std::string>>{
           {good + "templates: {urban: b}\n", "templates.urban"},
           {good + "colour: red\n", "colour"},
           {"default: b\n" + good.substr(11), "default"},
           {[&] { auto t = good; t.replace(t.find("grid: 3"), 7, "grid: 0"); return t; }(), "rules.a.grid"},
           {[&] { auto t = good; t.replace(t.find("network: road"), 13, "network: rail"); return t; }(), "rules.a.network"},
       }) {
    try {
      (void)parse_layout_rules(text, "l.yaml");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      const std::string w = e.what();
      EXPECT_NE(w.find("l.yaml"), std::string::npos) << w;
      EXPECT_NE(w.find(key), std::string::npos) << key << ": " << w;
      EXPECT_EQ(w.find('\n'), std::string::npos) << w;
    }
  }
}

// ---- route against the oracle ----

void check_routes(const RoadNetwork& net, const std::vector<Polygon>& zones, Rng& rng, int pairs) {
  int found = 0, blocked = 0;
  for (int k = 0; k < pairs; ++k) {
    const int s = static_cast<int>(rng.pick_index(net.num_nodes())), t = static_cast<int>(rng.pick_index(net.num_nodes()));
    const auto r = net.shortest_path(s, t, zones);
    const double ref = ref_dijkstra(net, s, t, zones);
    ASSERT_EQ(r.found, std::isfinite(ref)) << s << "->" << t;
    if (!r.found) {
      ++blocked;
      continue;
    }
    ++found;
    ASSERT_NEAR(r.length, ref, 1e-9 * std::max(1.0, ref)) << s << "->" << t;
    // The path is a real path of that length that meets no avoided polygon.
    double len = 0;
    ASSERT_EQ(r.nodes.front(), s);
    ASSERT_EQ(r.nodes.back(), t);
    for (std::size_t i = 0; i + 1 < r.nodes.size(); ++i) {
      double best = std::numeric_limits<double>::infinity();
      for (const auto& e : net.edges())
        if ((e.u == r.nodes[i] && e.v == r.nodes[i + 1]) || (e.v == r.nodes[i] && e.u == r.nodes[i + 1])) best = std::min(best, e.length);
      ASSERT_TRUE(std::isfinite(best));
      len += best;
      ASSERT_FALSE(ref_edge_blocked(net.node(r.nodes[i]), net.node(r.nodes[i + 1]), zones));
    }
    ASSERT_NEAR(len, r.length, 1e-9 * std::max(1.0, len));
  }
  if (!zones.empty()) {
    EXPECT_GT(blocked + found, 0);
  }
}

TEST(GeoRoute, MatchesAPlainDijkstraOnAThousandPairsWithAndWithoutExclusions) {
  const auto& cfg = paper();
  Rng rng(20240601);
  for (std::size_t i : {0u, 35u, 70u, 100u, 140u}) {
    const GeoMap m = generate_map(corpus_scenario(cfg, i));
    std::vector<Polygon> zones = m.threats_of("RED");
    check_routes(m.net, {}, rng, 100);
    check_routes(m.net, zones, rng, 100);
  }
  // A larger random graph with many polygons.
  RoadNetwork big;
  for (int i = 0; i < 600; ++i) big.add_node({rng.uniform(0, 100), rng.uniform(0, 100)});
  for (int i = 0; i < 2400; ++i) {
    const int u = static_cast<int>(rng.pick_index(600)), v = static_cast<int>(rng.pick_index(600));
    if (u != v) big.add_edge(u, v, distance(big.node(u), big.node(v)) * rng.uniform(1.0, 1.3));
  }
  std::vector<Polygon> zones;
  for (int k = 0; k < 12; ++k) {
    const Point c{rng.uniform(0, 100), rng.uniform(0, 100)};
    Polygon p;
    for (int j = 0; j < 7; ++j) p.ring.push_back({c.x + 6 * std::cos(j * 2 * std::numbers::pi / 7), c.y + 6 * std::sin(j * 2 * std::numbers::pi / 7)});
    zones.push_back(p);
  }
  check_routes(big, {}, rng, 250);
  check_routes(big, zones, rng, 250);
}

TEST(GeoRoute, BlockedEdgesAgreeWithTheBruteForceTest) {
  const GeoMap m = generate_map(corpus_scenario(paper(), 3));
  const auto zones = m.threats_of("RED");
  const auto blocked = m.net.blocked_edges(zones);
  int n = 0;
  for (std::size_t i = 0; i < blocked.size(); ++i) {
    const auto& e = m.net.edges()[i];
    EXPECT_EQ(blocked[i], ref_edge_blocked(m.net.node(e.u), m.net.node(e.v), zones)) << i;
    n += blocked[i] ? 1 : 0;
  }
  EXPECT_GT(n, 0);
}

// ---- tools ----

TEST(GeoTools, ComputeWhatTheGeometrySays) {
  const GeoMap m = generate_map(corpus_scenario(paper(), 0));
  const auto* p = m.of_kind("place")[0];
  const auto* a = m.of_kind("asset", "BLUE")[0];
  const auto* z = m.of_kind("threat", "RED")[0];
  EXPECT_NEAR(tool(m, "distance", {{"from", a->id}, {"to", p->id}})["km"].get<double>(), distance(*a->point, *p->point), 1e-3);
  EXPECT_NEAR(tool(m, "area", {{"id", z->id}})["km2"].get<double>(), ref_shoelace(z->polygon->ring), 1e-3);
  EXPECT_NEAR(tool(m, "area", {{"id", "ao"}})["km2"].get<double>(), m.rule.extent_km * m.rule.extent_km, 1e-6);
  const json r = tool(m, "route", {{"from", a->id}, {"to", p->id}});
  ASSERT_TRUE(r["feasible"].get<bool>());
  EXPECT_NEAR(r["length_km"].get<double>(), ref_dijkstra(m.net, a->node, p->node, {}), 1e-3);
  const json t = tool(m, "travel_time", {{"from", a->id}, {"to", p->id}});
  EXPECT_NEAR(t["hours"].get<double>(), r["length_km"].get<double>() / (m.rule.speed_kmh * std::max(0.1, a->mobility)), 2e-3);
  EXPECT_EQ(tool(m, "within", {{"point", p->id}, {"area", "ao"}})["within"].get<bool>(), true);
  EXPECT_EQ(tool(m, "list_features", {{"kind", "place"}})["features"].size(), m.of_kind("place").size());
  EXPECT_EQ(tool(m, "feature", {{"id", p->name}})["id"], p->id);  // by name too
  EXPECT_EQ(tool(m, "order", json::object())["objective_place"], "place-1");
  // Line of sight through an obstacle's centre is blocked.
  const auto* o = m.of_kind("obstacle")[0];
  const Point oc = centroid(*o->polygon);
  bool any_blocked = false;
  for (const auto* f : m.features.empty() ? std::vector<const Feature*>{} : m.of_kind("place")) {
    const json los = tool(m, "line_of_sight", {{"from", f->id}, {"to", o->id}});
    any_blocked = any_blocked || !los["clear"].get<bool>();
    (void)oc;
  }
  EXPECT_TRUE(any_blocked);  // a line ending at the obstacle's centroid meets it
}

TEST(GeoTools, AMalformedCallIsARecordedFailureWithOneSentence) {
  const GeoMap m = generate_map(corpus_scenario(paper(), 0));
  const std::vector<std::pair<std::string, std::string>> bad{
      {"route", "{not json"},
      {"route", "[1,2]"},
      {"teleport", "{}"},
      {"route", R"({"from":"b-inf-1"})"},
      {"route", R"({"from":"b-inf-1","to":"nowhere"})"},
      {"route", R"({"from":"b-inf-1","to":5})"},
      {"route", R"({"from":"b-inf-1","to":"place-1","avoid":"RED"})"},
      {"route", R"({"from":"b-inf-1","to":"place-1","avoid":["ao"]})"},
      {"route", R"({"from":"b-inf-1","to":"place-1","via":"x"})"},
      {"route", R"({"from":"threat-red-1","to":"place-1"})"},
      {"area", R"({"id":"place-1"})"},
      {"route", std::string(5000, ' ')},
      {"travel_time", R"({"from":"b-inf-1","to":"place-1","speed_kmh":-3})"},
      {"list_features", R"({"kind":"volcano"})"},
      {"route", "{\"from\":" + std::string(100, '[') + std::string(100, ']') + "}"},
  };
  for (const auto& [name, args] : bad) {
    ToolResult r;
    ASSERT_NO_THROW(r = call_tool(m, name, args)) << args;
    EXPECT_FALSE(r.ok) << name << " " << args;
    EXPECT_FALSE(r.error.empty());
    EXPECT_EQ(r.error.find('\n'), std::string::npos) << r.error;
  }
  EXPECT_NE(call_tool(m, "route", R"({"from":"b-inf-1","to":"nowhere"})").error.find("nowhere"), std::string::npos);
  EXPECT_NE(call_tool(m, "route", R"({"from":"b-inf-1","to":5})").error.find("'to'"), std::string::npos);
}

TEST(GeoTools, RegistryListsEveryToolWithASchema) {
  const json specs = json::parse(tool_specs_json());
  std::set<std::string> names;
  for (const auto& s : specs) {
    names.insert(s["name"].get<std::string>());
    EXPECT_EQ(s["parameters"]["type"], "object");
  }
  for (const char* n : {"list_features", "feature", "distance", "area", "route", "travel_time", "within", "line_of_sight"})
    EXPECT_TRUE(names.contains(n)) << n;
}

// ---- questions ----

TEST(GeoQuestions, EveryReferenceAnswerIsRecomputedIndependently) {
  const auto& cfg = paper();
  std::set<int> tiers, cats;
  int unsolvable = 0, total = 0;
  for (std::size_t i = 0; i < corpus_size(cfg); ++i) {
    const GeoMap m = generate_map(corpus_scenario(cfg, i));
    const auto red = m.threats_of("RED");
    for (const auto& q : generate_questions(m)) {
      ++total;
      tiers.insert(q.tier);
      for (int c : q.categories) cats.insert(c);
      SCOPED_TRACE(q.id);
      auto P = [&](const char* k) { return m.find(q.params.at(k)); };
      auto speed = [&](const Feature* f) { return m.rule.speed_kmh * std::max(0.1, f->mobility); };
      auto num = [&](double v) {
        ASSERT_FALSE(q.unsolvable);
        EXPECT_NEAR(std::stod(q.answer), v, q.tolerance / 2) << q.answer;
      };
      if (q.kind == "sector") {
        const Point p = *P("place")->point;
        EXPECT_EQ(q.answer, p.y <= m.rule.extent_km / 2 ? "blue sector" : "red sector");
      } else if (q.kind == "area") {
        num(ref_shoelace(P("zone")->polygon->ring));
      } else if (q.kind == "distance") {
        num(std::hypot(P("asset")->point->x - P("place")->point->x, P("asset")->point->y - P("place")->point->y));
      } else if (q.kind == "nearest_place") {
        const Feature* a = P("asset");
        const Feature* best = nullptr;
        for (const auto* p : m.of_kind("place"))
          if (!best || std::hypot(a->point->x - p->point->x, a->point->y - p->point->y) <
                           std::hypot(a->point->x - best->point->x, a->point->y - best->point->y))
            best = p;
        EXPECT_EQ(q.answer, best->name);
      } else if (q.kind == "line_of_sight") {
        bool clear = true;
        for (const auto* o : m.of_kind("obstacle"))
          if (ref_edge_blocked(*P("from")->point, *P("to")->point, {*o->polygon})) clear = false;
        EXPECT_EQ(q.answer, clear ? "yes" : "no");
      } else if (q.kind == "nearest_threat") {
        // Centroid by the decomposition into triangles from the first vertex (not the library's formula).
        auto centre = [](const std::vector<Point>& r) {
          double ax = 0, ay = 0, at = 0;
          for (std::size_t k = 1; k + 1 < r.size(); ++k) {
            const double t = ((r[k].x - r[0].x) * (r[k + 1].y - r[0].y) - (r[k + 1].x - r[0].x) * (r[k].y - r[0].y)) / 2;
            ax += t * (r[0].x + r[k].x + r[k + 1].x) / 3;
            ay += t * (r[0].y + r[k].y + r[k + 1].y) / 3;
            at += t;
          }
          return Point{ax / at, ay / at};
        };
        const Point p = *P("place")->point;
        std::string best;
        double bd = 1e300;
        for (const auto* z : m.of_kind("threat", "RED")) {
          const Point c = centre(z->polygon->ring);
          if (const double d = std::hypot(c.x - p.x, c.y - p.y); d < bd) {
            bd = d;
            best = z->id;
          }
        }
        EXPECT_EQ(q.answer, best);
        EXPECT_NE(q.question.find("(B) "), std::string::npos);
      } else if (q.kind == "places_in_threats") {
        int n = 0;
        for (const auto* p : m.of_kind("place")) {
          bool in = false;
          for (const auto& z : red) in = in || ref_inside(z.ring, *p->point);
          n += in;
        }
        EXPECT_EQ(q.answer, std::to_string(n));
      } else if (q.kind == "route_length") {
        const double d = ref_dijkstra(m.net, P("asset")->node, P("place")->node, red);
        if (std::isfinite(d)) {
          num(d);
        } else {
          EXPECT_TRUE(q.unsolvable);
        }
        if (q.unsolvable) {
          EXPECT_FALSE(ref_connected(m.net, P("asset")->node, P("place")->node, red));
        }
      } else if (q.kind == "order_reach") {
        EXPECT_EQ(q.params.at("place"), m.objective_place);
        const double d = ref_dijkstra(m.net, P("asset")->node, P("place")->node, red);
        const double h = d / speed(P("asset"));
        if (std::isfinite(d) && h <= m.rule.time_window_h + 1e-3) {
          num(h);
        } else {
          EXPECT_TRUE(q.unsolvable);
        }
        if (q.unsolvable) {
          EXPECT_TRUE(!ref_connected(m.net, P("asset")->node, P("place")->node, red) || h > m.rule.time_window_h - 1e-3);
        }
      } else if (q.kind == "first_to_reach") {
        const Feature* target = P("place");
        double best = std::numeric_limits<double>::infinity();
        std::string who;
        for (const auto* a : m.of_kind("asset", "BLUE")) {
          if (std::find(m.rule.surface_domains.begin(), m.rule.surface_domains.end(), a->domain) == m.rule.surface_domains.end()) continue;
          const double h = ref_dijkstra(m.net, a->node, target->node, red) / speed(a);
          if (h < best) {
            best = h;
            who = a->id;
          }
        }
        if (who.empty()) {
          EXPECT_TRUE(q.unsolvable);
        } else {
          EXPECT_EQ(q.answer, who);
        }
      } else if (q.kind == "deadline") {
        const double d = ref_dijkstra(m.net, P("asset")->node, P("place")->node, red);
        const double h = d / speed(P("asset")), deadline = std::stod(q.params.at("deadline_h"));
        if (q.unsolvable) {
          // Unsolvable: no route in the pruned graph, or the route takes longer than the deadline.
          EXPECT_TRUE(!std::isfinite(d) || h > deadline);
        } else {
          ASSERT_TRUE(std::isfinite(d));
          EXPECT_LE(h, deadline);
          num(h);
        }
      } else {
        ADD_FAILURE() << "unknown kind " << q.kind;
      }
      unsolvable += q.unsolvable ? 1 : 0;
      // The line round-trips.
      const Question back = question_from_json(question_to_json(q), "test");
      EXPECT_EQ(back.answer, q.answer);
      EXPECT_EQ(back.categories, q.categories);
    }
  }
  EXPECT_EQ(tiers, (std::set<int>{1, 2, 3}));
  EXPECT_EQ(cats, (std::set<int>{1, 2, 3, 4, 5, 6, 7}));
  EXPECT_GT(unsolvable, total / 20);
  EXPECT_LT(unsolvable, total / 2);
}

// ---- quiz ----

// The modes on questions without options (files written before `options`): strict needs equality after
// normalisation for text, containment is Mil-SCORE's rule. tests/geo/quiz_grading_test.cpp covers the options.
TEST(GeoQuiz, NormalisationAndComparison) {
  Question num;
  num.format = "numeric";
  num.answer = "12.500";
  num.tolerance = numeric_tolerance(12.5);
  for (auto grade : {grade_strict, grade_containment}) {
    EXPECT_TRUE(grade(num, "12.5 km"));
    EXPECT_TRUE(grade(num, "about 12.6"));
    EXPECT_FALSE(grade(num, "13"));
    EXPECT_FALSE(grade(num, "unsolvable"));
  }
  Question un = num;
  un.answer = "unsolvable";
  un.unsolvable = true;
  EXPECT_TRUE(grade_strict(un, "Unsolvable."));
  EXPECT_FALSE(grade_strict(un, "12.5"));
  EXPECT_FALSE(grade_strict(un, "maybe unsolvable, or 12.5"));
  EXPECT_TRUE(grade_containment(un, "maybe unsolvable, or 12.5"));
  Question text;
  text.format = "text";
  text.answer = "market district";
  EXPECT_TRUE(grade_strict(text, "Market-District"));
  EXPECT_FALSE(grade_strict(text, "The Market-District")) << "no options: strict needs equality";
  EXPECT_TRUE(grade_containment(text, "The Market-District"));
  EXPECT_FALSE(grade_containment(text, "old town"));
  Question yn;
  yn.format = "boolean";
  yn.answer = "no";
  EXPECT_TRUE(grade_strict(yn, "No"));
  EXPECT_FALSE(grade_strict(yn, "not sure"));
  EXPECT_TRUE(grade_containment(yn, "not sure")) << "Mil-SCORE's containment: 'notsure' contains 'no'";
  Question mc;
  mc.format = "choice";
  mc.answer = "threat-red-2";
  EXPECT_TRUE(grade_strict(mc, "Threat-Red-2"));
  EXPECT_FALSE(grade_strict(mc, "threat-red-2 or threat-red-1"));
  EXPECT_EQ(boxed("so \\boxed{a{b}c} done"), std::optional<std::string>("a{b}c"));
  EXPECT_EQ(boxed("no box"), std::nullopt);
  const auto [lo, hi] = wilson(8, 10);
  EXPECT_NEAR(lo, 0.4902, 1e-4);  // Wilson 95% for 8/10
  EXPECT_NEAR(hi, 0.9433, 1e-4);
}

// The hand-written number scan is the pattern it replaced, match for match: compared with std::regex (trusted test
// strings here; never untrusted text in the program) on every short string over a small alphabet and on random
// longer ones. A 30,000-digit answer or reference, which overflowed std::regex's recursion, is graded.
TEST(GeoQuiz, TheNumberScanIsThePatternItReplaced) {
  const std::regex re(R"([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)");
  auto expect_same = [&](const std::string& t) {
    std::smatch m;
    const auto mine = first_number_text(t);
    if (!std::regex_search(t, m, re)) {
      EXPECT_FALSE(mine) << "'" << t << "'";
      return;
    }
    ASSERT_TRUE(mine) << "'" << t << "'";
    EXPECT_EQ(*mine, m.str()) << "'" << t << "'";
    EXPECT_EQ(mine->data() - t.data(), m.position(0)) << "'" << t << "'";
  };
  const std::string alphabet = "1.-+eEx";
  std::size_t n = 0;
  for (std::size_t len = 0; len <= 6; ++len) {
    std::vector<std::size_t> idx(len, 0);
    while (true) {
      std::string t;
      for (auto k : idx) t += alphabet[k];
      expect_same(t);
      ++n;
      std::size_t p = 0;
      while (p < len && ++idx[p] == alphabet.size()) idx[p++] = 0;
      if (p == len) break;
    }
  }
  EXPECT_GT(n, 100000u);
  Rng rng(11);
  const std::string wide = "0123456789.+-eE xa";
  for (int k = 0; k < 5000; ++k) {
    std::string t;
    for (auto c = rng.uniform_int(0, 40); c > 0; --c) t += wide[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(wide.size()) - 1))];
    expect_same(t);
  }
  const std::string digits(30000, '7');
  Question q;
  q.format = "numeric";
  q.answer = digits;
  q.tolerance = 0.01;
  for (auto grade : {grade_strict, grade_containment}) {
    q.answer = digits;
    EXPECT_FALSE(grade(q, "\\boxed{12}"));
    EXPECT_FALSE(grade(q, digits)) << "a number that overflows to inf is within no tolerance, even of itself";
    q.answer = "12";
    EXPECT_TRUE(grade(q, std::string(30000, '.') + "\\boxed{12}"));
    EXPECT_FALSE(grade(q, "\\boxed{" + digits + "}"));
    EXPECT_TRUE(grade(q, "about 12.004 km"));
  }
  EXPECT_EQ(count_numbers(std::string(30000, '-') + "1"), 1u);
  EXPECT_EQ(count_numbers(digits + " " + digits), 2u);
}

TEST(GeoQuiz, TheScriptedAgentScoresByTheRules) {
  const auto& cfg = paper();
  std::vector<GeoMap> maps;
  std::vector<Question> qs;
  for (std::size_t i : {0u, 31u, 62u, 93u, 124u}) {
    maps.push_back(generate_map(corpus_scenario(cfg, i)));
    for (auto& q : generate_questions(maps.back())) qs.push_back(q);
  }
  auto map_of = [&](const Question& q) -> const GeoMap& {
    for (const auto& m : maps)
      if (m.scenario_id == q.scenario) return m;
    throw std::logic_error("no map");
  };
  auto run_all = [&](const std::string& mode) {
    auto agent = make_scripted_agent(qs, mode);
    std::vector<QuizOutcome> out;
    for (const auto& q : qs) out.push_back(run_question(map_of(q), q, *agent, 10));
    return out;
  };
  const auto oracle = run_all("oracle");
  for (const auto& o : oracle) {
    EXPECT_TRUE(o.correct) << o.id << ": " << o.reason;
    EXPECT_LE(o.steps, 10);
  }
  const auto rows = summarise(oracle);
  EXPECT_EQ(rows[0].group, "overall");
  EXPECT_EQ(rows[0].correct, rows[0].n);
  for (const auto& [mode, reason] : std::vector<std::pair<std::string, std::string>>{
           {"verbose", "budget of 10 steps exhausted"},
           {"badcall", "tool error: "},
           {"garbage", "protocol: the reply is not a JSON object"}}) {
    for (const auto& o : run_all(mode)) {
      EXPECT_FALSE(o.correct) << mode << " " << o.id;
      EXPECT_TRUE(o.reason.starts_with(reason)) << mode << ": " << o.reason;
    }
  }
  for (const auto& o : oracle) EXPECT_TRUE(o.boxed) << o.id;
  int wrong_correct = 0;
  for (const auto& o : run_all("wrong")) wrong_correct += o.correct;
  EXPECT_LT(wrong_correct, static_cast<int>(qs.size()) / 10);
}

}  // namespace
