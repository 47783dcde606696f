#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numbers>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "advplan/core/random.hpp"
#include "advplan/core/error.hpp"
#include "advplan/geo/map.hpp"
#include "advplan/geo/user_map.hpp"
#include "core/det_math.hpp"

namespace advplan::geo {
namespace {

/// A star-shaped polygon around c: n vertices at increasing angles (so counterclockwise and simple).
Polygon blob(Rng& rng, Point c, double r, int n) {
  Polygon p;
  const double phase = rng.uniform(0, 2 * std::numbers::pi / n);
  for (int k = 0; k < n; ++k) {
    const double a = phase + 2 * std::numbers::pi * k / n;
    const double rr = r * rng.uniform(0.75, 1.15);
    p.ring.push_back({c.x + rr * det::cos(a), c.y + rr * det::sin(a)});
  }
  return p;
}

Polygon rect(double x0, double y0, double x1, double y1) { return Polygon{{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}}; }

/// Nodes whose y lies in [lo, hi] (shares of the extent); all nodes when none does.
std::vector<int> nodes_in_band(const RoadNetwork& net, double E, double lo, double hi) {
  std::vector<int> out;
  for (std::size_t i = 0; i < net.num_nodes(); ++i) {
    const double y = net.node(static_cast<int>(i)).y / E;
    if (y >= lo && y <= hi) out.push_back(static_cast<int>(i));
  }
  if (out.empty())
    for (std::size_t i = 0; i < net.num_nodes(); ++i) out.push_back(static_cast<int>(i));
  return out;
}

void build_network(RoadNetwork& net, const LayoutRule& rule, Rng& rng) {
  const int n = rule.grid;
  const double E = rule.extent_km, cell = E / n;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      net.add_node({(i + 0.5) * cell + rng.uniform(-0.3, 0.3) * cell, (j + 0.5) * cell + rng.uniform(-0.3, 0.3) * cell});
  auto id = [n](int i, int j) { return j * n + i; };
  // A random spanning tree (depth-first over the 4-neighbourhood) keeps the network connected.
  std::vector<std::vector<char>> tree(static_cast<std::size_t>(n * n), std::vector<char>(4, 0));  // E, N, W, S
  std::vector<char> seen(static_cast<std::size_t>(n * n), 0);
  std::vector<int> stack{0};
  seen[0] = 1;
  const int di[4] = {1, 0, -1, 0}, dj[4] = {0, 1, 0, -1};
  while (!stack.empty()) {
    const int v = stack.back();
    const int vi = v % n, vj = v / n;
    std::vector<int> dirs;
    for (int d = 0; d < 4; ++d) {
      const int wi = vi + di[d], wj = vj + dj[d];
      if (wi >= 0 && wj >= 0 && wi < n && wj < n && !seen[static_cast<std::size_t>(id(wi, wj))]) dirs.push_back(d);
    }
    if (dirs.empty()) {
      stack.pop_back();
      continue;
    }
    const int d = dirs[rng.pick_index(dirs.size())];
    const int w = id(vi + di[d], vj + dj[d]);
    tree[static_cast<std::size_t>(v)][static_cast<std::size_t>(d)] = 1;
    tree[static_cast<std::size_t>(w)][static_cast<std::size_t>((d + 2) % 4)] = 1;
    seen[static_cast<std::size_t>(w)] = 1;
    stack.push_back(w);
  }
  auto link = [&](int a, int b) {
    const double straight = distance(net.node(a), net.node(b));
    net.add_edge(a, b, straight * (1 + 0.1 * rng.uniform()));  // winding: never shorter than the straight line
  };
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const int v = id(i, j);
      if (i + 1 < n && (tree[static_cast<std::size_t>(v)][0] || rng.bernoulli(rule.keep_edge))) link(v, id(i + 1, j));
      if (j + 1 < n && (tree[static_cast<std::size_t>(v)][1] || rng.bernoulli(rule.keep_edge))) link(v, id(i, j + 1));
      if (i + 1 < n && j + 1 < n && rng.bernoulli(rule.diagonal)) {
        if (rng.bernoulli(0.5)) link(v, id(i + 1, j + 1));
        else link(id(i + 1, j), id(i, j + 1));
      }
    }
}

/// A free feature id: `stem` itself, else stem-2, stem-3, ...
std::string free_id(const GeoMap& m, const std::string& stem) {
  if (!m.find(stem)) return stem;
  for (int k = 2;; ++k)
    if (const std::string id = fmt::format("{}-{}", stem, k); !m.find(id)) return id;
}

/// The scenario's places (on distinct nodes of the forward two thirds of the area) and assets (BLUE in the rear
/// band, RED in the far band), drawn from `pos_rng`; on a user's map (`base`), a place the map names and an asset
/// the map has keep the map's position, and draw nothing.
void place_scenario(GeoMap& m, const Scenario& sc, Rng& pos_rng, const GeoMap* base) {
  const double E = m.rule.extent_km;
  std::vector<int> forward = nodes_in_band(m.net, E, 0.35, 1.0);
  for (std::size_t i = forward.size(); i > 1; --i) std::swap(forward[i - 1], forward[pos_rng.pick_index(i)]);
  for (std::size_t i = 0; i < sc.places.size(); ++i) {
    const Feature* given = nullptr;
    if (base)
      for (const auto& f : base->features)
        if (f.kind == "place" && f.name == sc.places[i]) given = &f;
    if (given) {
      m.features.push_back(*given);
    } else {
      const int node = forward[i % forward.size()];
      const std::string id = base ? free_id(m, fmt::format("place-{}", i + 1)) : fmt::format("place-{}", i + 1);
      m.features.push_back({id, sc.places[i], "place", "", m.net.node(node), std::nullopt, node, "", 1});
    }
    if (i == 0) m.objective_place = m.features.back().id;
  }
  const std::vector<int> blue_nodes = nodes_in_band(m.net, E, 0.0, 0.3), red_nodes = nodes_in_band(m.net, E, 0.7, 1.0);
  for (const auto& a : sc.assets) {
    const Feature* given = base ? base->find(a.id) : nullptr;
    if (given && given->kind == "asset") {
      Feature f = *given;
      f.name = a.type, f.side = std::string(to_string(a.side)), f.domain = a.domain, f.mobility = a.mobility;
      m.features.push_back(std::move(f));
      continue;
    }
    const auto& pool = a.side == Side::Blue ? blue_nodes : red_nodes;
    const int node = pool[pos_rng.pick_index(pool.size())];
    m.features.push_back({a.id, a.type, "asset", std::string(to_string(a.side)), m.net.node(node), std::nullopt, node,
                          a.domain, a.mobility});
  }
  m.blue_order = fmt::format("{}. Time window: {:g} hours.", sc.blue_objective, m.rule.time_window_h);
}

}  // namespace

GeoMap generate_map(const Scenario& sc) {
  GeoMap m;
  m.scenario_id = sc.id;
  m.rule = layout_rules().for_template(sc.template_id, sc.domain);
  m.proj = {m.rule.lon0, m.rule.lat0};
  const double E = m.rule.extent_km;
  Rng rng = Rng::keyed(sc.seed, sc.template_id, "geo");
  Rng net_rng = rng.child("network"), zone_rng = rng.child("zones"), pos_rng = rng.child("positions");
  build_network(m.net, m.rule, net_rng);

  m.features.push_back({"ao", "area of operations", "boundary", "", std::nullopt, rect(0, 0, E, E), -1, "", 1});
  m.features.push_back({"blue-sector", "blue sector", "boundary", "BLUE", std::nullopt, rect(0, 0, E, E / 2), -1, "", 1});
  m.features.push_back({"red-sector", "red sector", "boundary", "RED", std::nullopt, rect(0, E / 2, E, E), -1, "", 1});

  auto zones = [&](const char* side, int count, double ylo, double yhi) {
    for (int k = 0; k < count; ++k) {
      const Point c{zone_rng.uniform(0.15, 0.85) * E, zone_rng.uniform(ylo, yhi) * E};
      const double r = zone_rng.uniform(m.rule.threat_radius_min, m.rule.threat_radius_max) * E;
      const std::string s = side;
      m.features.push_back({fmt::format("threat-{}-{}", s == "RED" ? "red" : "blue", k + 1),
                            fmt::format("{} threat zone {}", s, k + 1), "threat", s, std::nullopt, blob(zone_rng, c, r, 8),
                            -1, "", 1});
    }
  };
  zones("RED", m.rule.red_threats, 0.35, 0.85);
  zones("BLUE", m.rule.blue_threats, 0.15, 0.5);
  const char* obstacle_name = m.rule.network == "sea-lane" ? "island" : "ridge";
  for (int k = 0; k < m.rule.obstacles; ++k) {
    const Point c{zone_rng.uniform(0.1, 0.9) * E, zone_rng.uniform(0.1, 0.9) * E};
    m.features.push_back({fmt::format("obstacle-{}", k + 1), fmt::format("{} {}", obstacle_name, k + 1), "obstacle", "",
                          std::nullopt, blob(zone_rng, c, zone_rng.uniform(0.04, 0.08) * E, 6), -1, "", 1});
  }

  place_scenario(m, sc, pos_rng, nullptr);
  return m;
}

GeoMap overlay_scenario(const Scenario& sc, const GeoMap& base) {
  if (base.net.num_nodes() == 0)
    throw ConfigError(fmt::format("scenario {}: the user's map has no road or sea-lane, so its places and assets have "
                                  "nowhere to go", sc.id));
  for (const auto& a : sc.assets)
    if (const Feature* f = base.find(a.id); f && f->id == a.id && f->kind != "asset")
      throw ConfigError(fmt::format("scenario {}: asset {} has the id of the user's map's {} feature; rename the map's "
                                    "feature", sc.id, a.id, f->kind));
  GeoMap m;
  m.scenario_id = sc.id;
  m.rule = base.rule;
  m.proj = base.proj;
  m.net = base.net;
  // The map's own features, the scenario's places and assets aside: those are placed below.
  std::vector<const Feature*> kept;
  for (const auto& f : base.features) {
    if (f.kind == "asset" && std::any_of(sc.assets.begin(), sc.assets.end(), [&](const Asset& a) { return a.id == f.id; })) continue;
    if (f.kind == "place" && std::find(sc.places.begin(), sc.places.end(), f.name) != sc.places.end()) continue;
    m.features.push_back(f);
  }
  Rng pos_rng = Rng::keyed(sc.seed, sc.template_id, "geo").child("positions");
  place_scenario(m, sc, pos_rng, &base);
  return m;
}

const Feature* GeoMap::find(std::string_view id_or_name) const {
  for (const auto& f : features)
    if (f.id == id_or_name) return &f;
  for (const auto& f : features)
    if (f.name == id_or_name) return &f;
  return nullptr;
}

std::vector<const Feature*> GeoMap::of_kind(std::string_view kind, std::string_view side) const {
  std::vector<const Feature*> out;
  for (const auto& f : features)
    if (f.kind == kind && (side.empty() || f.side == side)) out.push_back(&f);
  return out;
}

std::vector<Polygon> GeoMap::threats_of(std::string_view side) const {
  std::vector<Polygon> out;
  for (const auto* f : of_kind("threat", side)) out.push_back(*f->polygon);
  return out;
}

Point GeoMap::anchor(const Feature& f) const { return f.point ? *f.point : centroid(*f.polygon); }

namespace {
double r6(double v) { return std::round(v * 1e6) / 1e6; }
nlohmann::ordered_json lonlat(const Projection& p, const Point& q) {
  const auto [lon, lat] = p.to_lonlat(q);
  return nlohmann::ordered_json::array({r6(lon), r6(lat)});
}
}  // namespace

namespace {
using OJ = nlohmann::ordered_json;

OJ feature_json(const GeoMap& m, const Feature& f) {
  OJ props{{"id", f.id}, {"name", f.name}, {"kind", f.kind}};
  if (!f.side.empty()) props["side"] = f.side;
  if (!f.domain.empty()) props["domain"] = f.domain;
  OJ geom;
  if (f.point) {
    geom = {{"type", "Point"}, {"coordinates", lonlat(m.proj, *f.point)}};
  } else {
    OJ ring = OJ::array();
    for (const auto& v : f.polygon->ring) ring.push_back(lonlat(m.proj, v));
    ring.push_back(ring.front());
    geom = {{"type", "Polygon"}, {"coordinates", OJ::array({ring})}};
    props["area_km2"] = std::round(area(*f.polygon) * 1e3) / 1e3;
  }
  return {{"type", "Feature"}, {"id", f.id}, {"geometry", geom}, {"properties", props}};
}

OJ edge_json(const GeoMap& m, std::size_t i) {
  const auto& e = m.net.edges()[i];
  OJ geom{{"type", "LineString"},
          {"coordinates", OJ::array({lonlat(m.proj, m.net.node(e.u)), lonlat(m.proj, m.net.node(e.v))})}};
  OJ props{{"id", fmt::format("edge-{}", i)}, {"kind", m.rule.network}, {"from_node", e.u}, {"to_node", e.v},
           {"length_km", std::round(e.length * 1e3) / 1e3}};
  return {{"type", "Feature"}, {"id", fmt::format("edge-{}", i)}, {"geometry", geom}, {"properties", props}};
}

std::size_t positions_of(const Feature& f) { return f.point ? 1 : f.polygon->ring.size() + 1; }

/// The collection around features written one per line as they are made (never all of them in memory at once).
class Collection {
 public:
  explicit Collection(const std::string& name, const std::string& members = "") {
    out_ = "{\"type\":\"FeatureCollection\",\"name\":" + OJ(name).dump() + members + ",\"features\":[\n";
  }
  void add(const OJ& f) { out_ += (n_++ ? ",\n" : "") + f.dump(); }
  std::string finish() { return std::move(out_) + (n_ ? "\n" : "") + "]}\n"; }

 private:
  std::string out_;
  std::size_t n_ = 0;
};
}  // namespace

std::string to_geojson(const GeoMap& m) {
  // One feature per line: readable, diffable, and still one JSON document.
  Collection c(m.scenario_id);
  for (const auto& f : m.features) c.add(feature_json(m, f));
  for (std::size_t i = 0; i < m.net.edges().size(); ++i) c.add(edge_json(m, i));
  return c.finish();
}

std::string to_geojson_layer(const GeoMap& m, const GeoMap& base, const std::string& base_ref) {
  // The base's features the scenario does not keep as they are (its places and assets placed again), by id.
  std::unordered_map<std::string_view, const Feature*> in_base, in_m;
  for (const auto& f : base.features) in_base.emplace(f.id, &f);
  for (const auto& f : m.features) in_m.emplace(f.id, &f);
  OJ hidden = OJ::array();
  for (const auto& f : base.features)
    if (const auto it = in_m.find(f.id); it == in_m.end() || !(*it->second == f)) hidden.push_back(f.id);
  std::vector<const Feature*> own;
  for (const auto& f : m.features)
    if (const auto it = in_base.find(f.id); it == in_base.end() || !(*it->second == f)) own.push_back(&f);
  Collection c(m.scenario_id, ",\"base\":" + OJ(base_ref).dump() + ",\"hidden\":" + hidden.dump());
  for (const Feature* f : own) c.add(feature_json(m, *f));
  return c.finish();
}

std::string to_geojson_bounded(const GeoMap& m, std::size_t max_positions) {
  std::size_t used = 0, left = 0;
  std::vector<OJ> kept;
  for (const auto& f : m.features) {
    if (left == 0 && used + positions_of(f) <= max_positions) {
      used += positions_of(f);
      kept.push_back(feature_json(m, f));
    } else {
      ++left;
    }
  }
  for (std::size_t i = 0; i < m.net.edges().size(); ++i) {
    if (left == 0 && used + 2 <= max_positions) {
      used += 2;
      kept.push_back(edge_json(m, i));
    } else {
      ++left;
    }
  }
  Collection c(m.scenario_id, ",\"left_out\":" + std::to_string(left));
  for (const auto& f : kept) c.add(f);
  return c.finish();
}

}  // namespace advplan::geo
