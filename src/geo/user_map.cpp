#include "advplan/geo/user_map.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/geo/ring_check.hpp"
#include "advplan/io/sha256.hpp"

namespace advplan::geo {
namespace {

using nlohmann::json;

/// GeoJSON nests a polygon's coordinates four levels deep inside a feature inside the collection.
constexpr std::size_t kMaxDepth = 12;
constexpr std::size_t kMaxIdBytes = 64;

class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(std::size_t i, std::string_view field, const std::string& what) const {
    throw ConfigError(fmt::format("{}: feature {}, {}: {}", source_, i, field, what));
  }

  std::string id_of(const json& f, const json& props, std::size_t i) const {
    std::string id;
    if (f.contains("id") && f["id"].is_string()) id = f["id"].get<std::string>();
    else if (props.contains("id") && props["id"].is_string()) id = props["id"].get<std::string>();
    else if (f.contains("id") && f["id"].is_number_integer()) id = std::to_string(f["id"].get<long long>());
    else fail(i, "id", "missing (a string in the feature's id or in properties.id)");
    if (id.empty() || id.size() > kMaxIdBytes || !std::all_of(id.begin(), id.end(), [](unsigned char c) { return c > 32 && c < 127; }))
      fail(i, "id", fmt::format("'{}' is not 1 to {} printable ASCII characters without spaces", untrusted::excerpt(id, 40), kMaxIdBytes));
    return id;
  }

  std::string text(const json& props, std::size_t i, const char* key, std::size_t max = 256) const {
    const auto it = props.find(key);
    if (it == props.end() || it->is_null()) return "";
    if (!it->is_string()) fail(i, fmt::format("property '{}'", key), "expected a string");
    if (it->get<std::string>().size() > max) fail(i, fmt::format("property '{}'", key), fmt::format("longer than {} bytes", max));
    return it->get<std::string>();
  }

  std::optional<double> number(const json& props, std::size_t i, const char* key, double lo, double hi) const {
    const auto it = props.find(key);
    if (it == props.end() || it->is_null()) return std::nullopt;
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < lo || it->get<double>() > hi)
      fail(i, fmt::format("property '{}'", key), fmt::format("expected a number in [{:g}, {:g}]", lo, hi));
    return it->get<double>();
  }

  std::string side(const json& props, std::size_t i, bool required) const {
    const std::string s = text(props, i, "side");
    if (s.empty() && !required) return "";
    if (s != "BLUE" && s != "RED") fail(i, "property 'side'", fmt::format("expected BLUE or RED, got '{}'", untrusted::excerpt(s, 20)));
    return s;
  }

  /// [lon, lat], checked, counted against the file's vertex bound.
  std::pair<double, double> position(const json& p, std::size_t i) {
    if (!p.is_array() || p.size() < 2 || p.size() > 3 || !p[0].is_number() || !p[1].is_number())
      fail(i, "geometry", "a position is not [longitude, latitude]");
    const double lon = p[0].get<double>(), lat = p[1].get<double>();
    if (!std::isfinite(lon) || !std::isfinite(lat) || lon < -180 || lon > 180 || lat < -90 || lat > 90)
      fail(i, "geometry", fmt::format("the position [{}, {}] is outside longitude -180..180, latitude -90..90",
                                      p[0].dump(), p[1].dump()));
    if (++vertices_ > kMaxUserVertices) fail(i, "geometry", fmt::format("the file has more than {} positions", kMaxUserVertices));
    return {lon, lat};
  }

  std::vector<std::pair<double, double>> positions(const json& a, std::size_t i, std::size_t min, std::size_t max) {
    if (!a.is_array() || a.size() < min) fail(i, "geometry", fmt::format("expected an array of at least {} positions", min));
    if (a.size() > max) fail(i, "geometry", fmt::format("more than {} positions", max));
    std::vector<std::pair<double, double>> out;
    for (const auto& p : a) out.push_back(position(p, i));
    return out;
  }

 private:
  std::string source_;
  std::size_t vertices_ = 0;
};

struct RawFeature {
  std::size_t index = 0;
  std::string id, name, kind, side, domain, geometry;
  double mobility = 1;
  std::vector<std::pair<double, double>> coords;  ///< a point, a line's vertices or a ring (closed: last = first)
};

/// What the features say before they are placed: the features with a geometry and the map-wide settings.
struct RawMap {
  std::vector<RawFeature> raw;
  std::string network_kind, order, objective;
  std::optional<double> speed, window;
  std::set<std::string> sector_sides, ids;
  bool have_ao = false;
};

/// The bounded document: its size, its count of arrays, objects and values before parsing (a parsed value costs tens
/// of bytes however short its text), the parse, and a FeatureCollection of at most kMaxUserFeatures features.
json read_document(const std::string& text, const std::string& source) {
  if (text.size() > kMaxUserMapBytes)
    throw ConfigError(fmt::format("{}: {} bytes, more than the limit of {}", source, text.size(), kMaxUserMapBytes));
  std::size_t arrays = 0, objects = 0, commas = 0;
  for (const char ch : text) {
    arrays += ch == '[';
    objects += ch == '{';
    commas += ch == ',';
  }
  if (arrays > kMaxUserArrays || objects > kMaxUserObjects || commas > kMaxUserValues)
    throw ConfigError(fmt::format("{}: {} arrays, {} objects and {} commas, more than a map within the limits needs "
                                  "({} positions, {} features)", source, arrays, objects, commas, kMaxUserVertices,
                                  kMaxUserFeatures));
  json doc;
  if (const std::string err = untrusted::parse_json_bounded(text, doc, kMaxDepth); !err.empty())
    throw ConfigError(fmt::format("{}: not a GeoJSON document ({})", source, err));
  if (!doc.is_object() || untrusted::string_member(doc, "type") != "FeatureCollection" || !doc.contains("features") || !doc["features"].is_array())
    throw ConfigError(fmt::format("{}: type: the document is not a FeatureCollection with a features array", source));
  if (doc["features"].size() > kMaxUserFeatures)
    throw ConfigError(fmt::format("{}: features: {} features, more than the limit of {}", source, doc["features"].size(), kMaxUserFeatures));
  return doc;
}

/// The order (the one feature without a geometry): its text, objective, speed and time window.
void read_order(Reader& r, const json& props, std::size_t i, RawMap& rm) {
  if (!rm.order.empty()) r.fail(i, "property 'kind'", "a second order");
  rm.order = r.text(props, i, "text", kMaxOrderBytes);
  if (rm.order.empty()) r.fail(i, "property 'text'", "the order has no text");
  rm.objective = r.text(props, i, "objective", kMaxIdBytes);
  rm.speed = r.number(props, i, "speed_kmh", 1e-3, 1e4);
  rm.window = r.number(props, i, "time_window_h", 1e-3, 1e4);
}

void read_point(Reader& r, const json& props, const json& c, std::size_t i, RawFeature& rf) {
  if (rf.kind != "place" && rf.kind != "asset")
    r.fail(i, "property 'kind'", fmt::format("a Point is a place or an asset, not '{}'", untrusted::excerpt(rf.kind, 20)));
  rf.coords.push_back(r.position(c, i));
  rf.side = r.side(props, i, rf.kind == "asset");
  if (rf.kind != "asset") return;
  rf.domain = r.text(props, i, "domain", 32);
  if (rf.domain.empty()) rf.domain = "land";
  rf.mobility = r.number(props, i, "mobility", 0, 1).value_or(1);
}

void read_line(Reader& r, const json& props, const json& c, std::size_t i, RawFeature& rf, RawMap& rm) {
  if (rf.kind != "road" && rf.kind != "sea-lane")
    r.fail(i, "property 'kind'", fmt::format("a LineString is a road or a sea-lane, not '{}'", untrusted::excerpt(rf.kind, 20)));
  if (!rm.network_kind.empty() && rf.kind != rm.network_kind)
    r.fail(i, "property 'kind'", fmt::format("'{}' on a map whose network is '{}' (one network per map)", rf.kind, rm.network_kind));
  rm.network_kind = rf.kind;
  (void)r.number(props, i, "capacity", 0, 1e9);  // documented and checked; routes do not use it
  rf.coords = r.positions(c, i, 2, kMaxRingVertices);
}

void read_polygon(Reader& r, const json& props, const json& c, std::size_t i, RawFeature& rf, RawMap& rm) {
  const std::string& kind = rf.kind;
  if (kind != "threat" && kind != "sector" && kind != "obstacle" && kind != "boundary")
    r.fail(i, "property 'kind'", fmt::format("a Polygon is a threat, sector, obstacle or boundary, not '{}'", untrusted::excerpt(kind, 20)));
  if (!c.is_array() || c.empty()) r.fail(i, "geometry", "a Polygon needs one ring");
  if (c.size() > 1) r.fail(i, "geometry", "polygons with holes are not supported (one ring only)");
  if (c[0].is_array() && c[0].size() < 4)
    r.fail(i, "geometry", fmt::format("the ring has {} positions; a ring needs at least 4 (three corners and the "
                                      "first one again)", c[0].size()));
  rf.coords = r.positions(c[0], i, 4, kMaxRingVertices + 1);
  if (rf.coords.front() != rf.coords.back()) r.fail(i, "geometry", "the ring is not closed (its last position must repeat the first)");
  rf.side = r.side(props, i, kind == "threat" || kind == "sector");
  if (kind == "sector" && !rm.sector_sides.insert(rf.side).second) r.fail(i, "property 'side'", fmt::format("a second {} sector", rf.side));
  if (kind == "boundary") {
    if (rm.have_ao) r.fail(i, "property 'kind'", "a second boundary (the area of operations)");
    rm.have_ao = true;
  }
}

/// The feature's id (sectors and the boundary have theirs), unique and not reserved, and its name.
void name_feature(Reader& r, const json& f, const json& props, std::size_t i, RawFeature& rf, RawMap& rm) {
  const std::string& kind = rf.kind;
  rf.id = kind == "sector" ? (rf.side == "BLUE" ? "blue-sector" : "red-sector") : kind == "boundary" ? "ao" : r.id_of(f, props, i);
  if (kind != "sector" && kind != "boundary" && (rf.id == "ao" || rf.id == "blue-sector" || rf.id == "red-sector"))
    r.fail(i, "id", fmt::format("'{}' is reserved for the {}", rf.id, rf.id == "ao" ? "area of operations" : "sectors"));
  if (!rm.ids.insert(rf.id).second) r.fail(i, "id", fmt::format("'{}' is used by an earlier feature", rf.id));
  rf.name = r.text(props, i, "name");
  if (rf.name.empty()) rf.name = kind == "sector" ? (rf.side == "BLUE" ? "blue sector" : "red sector") : rf.id;
}

/// Feature i: the order, or a feature with a geometry added to rm.raw.
void read_feature(Reader& r, const json& f, std::size_t i, RawMap& rm) {
  if (!f.is_object() || untrusted::string_member(f, "type") != "Feature") r.fail(i, "type", "not a GeoJSON Feature");
  const json props = f.contains("properties") && f["properties"].is_object() ? f["properties"] : json::object();
  const std::string kind = r.text(props, i, "kind");
  if (kind.empty()) r.fail(i, "property 'kind'", "missing");
  const json* geom = f.contains("geometry") && !f["geometry"].is_null() ? &f["geometry"] : nullptr;
  if (!geom) {
    if (kind != "order") r.fail(i, "geometry", fmt::format("missing (only the order has no geometry; kind is '{}')", untrusted::excerpt(kind, 20)));
    return read_order(r, props, i, rm);
  }
  if (!geom->is_object() || !geom->contains("type") || !(*geom)["type"].is_string() || !geom->contains("coordinates"))
    r.fail(i, "geometry", "not a GeoJSON geometry with a type and coordinates");
  const std::string type = (*geom)["type"].get<std::string>();
  const json& c = (*geom)["coordinates"];
  RawFeature rf;
  rf.index = i;
  rf.kind = kind;
  rf.geometry = type;
  if (type == "Point") read_point(r, props, c, i, rf);
  else if (type == "LineString") read_line(r, props, c, i, rf, rm);
  else if (type == "Polygon") read_polygon(r, props, c, i, rf, rm);
  else r.fail(i, "geometry", fmt::format("'{}' is not a Point, LineString or Polygon", untrusted::excerpt(type, 20)));
  name_feature(r, f, props, i, rf, rm);
  rm.raw.push_back(std::move(rf));
}

/// The map's frame: the rule of its network, and the planar projection of its bounding box (whose far corner is
/// returned in `far`).
GeoMap frame_map(const RawMap& rm, const json& doc, const std::string& source, Point& far) {
  GeoMap m;
  m.scenario_id = doc.contains("name") && doc["name"].is_string() ? untrusted::excerpt(doc["name"].get<std::string>(), 64) : "user-map";
  m.rule = layout_rules().for_template("", rm.network_kind == "sea-lane" ? "sea" : "land");
  if (!rm.network_kind.empty()) m.rule.network = rm.network_kind;
  if (rm.speed) m.rule.speed_kmh = *rm.speed;
  if (rm.window) m.rule.time_window_h = *rm.window;
  double lon0 = 180, lat0 = 90, lon1 = -180, lat1 = -90;
  for (const auto& f : rm.raw)
    for (const auto& [lon, lat] : f.coords) {
      lon0 = std::min(lon0, lon), lat0 = std::min(lat0, lat);
      lon1 = std::max(lon1, lon), lat1 = std::max(lat1, lat);
    }
  if (lat0 < -kMaxAbsLatitude || lat1 > kMaxAbsLatitude)
    throw ConfigError(fmt::format("{}: features: latitudes reach {:g}; a planar map needs them within ±{:g} degrees",
                                  source, lat0 < -kMaxAbsLatitude ? lat0 : lat1, kMaxAbsLatitude));
  m.proj = {lon0, lat0, (lat0 + lat1) / 2};
  m.rule.lon0 = lon0;
  m.rule.lat0 = lat0;
  far = m.proj.from_lonlat(lon1, lat1);
  m.rule.extent_km = std::max({far.x, far.y, 1e-3});
  return m;
}

/// The network: one node per distinct road vertex, one edge per segment.
void add_network(GeoMap& m, const RawMap& rm) {
  std::map<std::pair<double, double>, int> node_of;
  for (const auto& f : rm.raw) {
    if (f.geometry != "LineString") continue;
    int prev = -1;
    for (const auto& ll : f.coords) {
      auto [it, fresh] = node_of.emplace(ll, 0);
      if (fresh) it->second = m.net.add_node(m.proj.from_lonlat(ll.first, ll.second));
      if (prev >= 0 && prev != it->second) m.net.add_edge(prev, it->second, distance(m.net.node(prev), m.net.node(it->second)));
      prev = it->second;
    }
  }
}

/// A polygon feature's ring in the plane, counter-clockwise; its problem (Boost.Geometry's check) is an error.
Polygon planar_ring(const GeoMap& m, const RawFeature& f, const std::string& source) {
  Polygon p;
  for (std::size_t k = 0; k + 1 < f.coords.size(); ++k) p.ring.push_back(m.proj.from_lonlat(f.coords[k].first, f.coords[k].second));
  // The projection is affine, so the planar ring is valid exactly when the lon/lat ring is.
  if (const std::string why = ring_problem(p); !why.empty())
    throw ConfigError(fmt::format("{}: feature {} ({} '{}'), geometry: {}", source, f.index, f.kind, f.id, why));
  const double a = signed_area(p);
  if (!(std::abs(a) > 1e-12)) throw ConfigError(fmt::format("{}: feature {}, geometry: the ring has no area", source, f.index));
  if (a < 0) std::reverse(p.ring.begin(), p.ring.end());
  return p;
}

/// The points (on their nearest network nodes) and polygons; the area of operations when the map has none.
void add_features(GeoMap& m, const RawMap& rm, const Point& far, const std::string& source) {
  if (!rm.have_ao)
    m.features.push_back({"ao", "area of operations", "boundary", "", std::nullopt,
                          Polygon{{{0, 0}, {far.x, 0}, {far.x, far.y}, {0, far.y}}}, -1, "", 1});
  std::vector<Point> points;
  for (const auto& f : rm.raw)
    if (f.geometry == "Point") points.push_back(m.proj.from_lonlat(f.coords[0].first, f.coords[0].second));
  const std::vector<int> nodes = nearest_nodes(m.net, points, BBox{0, 0, far.x, far.y});
  std::size_t next_point = 0;
  for (const auto& f : rm.raw) {
    if (f.geometry == "LineString") continue;  // roads are the network
    Feature out{f.id, f.name, f.kind == "sector" ? "boundary" : f.kind, f.side, std::nullopt, std::nullopt, -1, f.domain, f.mobility};
    if (f.geometry == "Point") {
      out.point = points[next_point];
      out.node = nodes[next_point++];
    } else {
      out.polygon = planar_ring(m, f, source);
    }
    m.features.push_back(std::move(out));
  }
}

/// Sectors where the map has none (the southern and northern halves of the area, as generated maps have them), the
/// order and its objective place (else the first place).
void add_sectors_and_order(GeoMap& m, const RawMap& rm, const Point& far, const std::string& source) {
  if (!m.find("blue-sector"))
    m.features.push_back({"blue-sector", "blue sector", "boundary", "BLUE", std::nullopt,
                          Polygon{{{0, 0}, {far.x, 0}, {far.x, far.y / 2}, {0, far.y / 2}}}, -1, "", 1});
  if (!m.find("red-sector"))
    m.features.push_back({"red-sector", "red sector", "boundary", "RED", std::nullopt,
                          Polygon{{{0, far.y / 2}, {far.x, far.y / 2}, {far.x, far.y}, {0, far.y}}}, -1, "", 1});
  m.blue_order = rm.order;
  if (!rm.objective.empty()) {
    const Feature* p = m.find(rm.objective);
    if (!p || p->kind != "place")
      throw ConfigError(fmt::format("{}: the order's property 'objective': '{}' is not a place of the map", source,
                                    untrusted::excerpt(rm.objective, 40)));
    m.objective_place = p->id;
  } else if (const auto places = m.of_kind("place"); !places.empty()) {
    m.objective_place = places.front()->id;
  }
}

}  // namespace

GeoMap parse_user_map(const std::string& text, const std::string& source) {
  const json doc = read_document(text, source);
  const json& features = doc["features"];
  Reader r(source);
  RawMap rm;
  for (std::size_t i = 0; i < features.size(); ++i) read_feature(r, features[i], i, rm);
  if (rm.raw.empty()) throw ConfigError(fmt::format("{}: features: the map has no features with a geometry", source));
  if (rm.network_kind.empty())
    throw ConfigError(fmt::format("{}: features: the map has no road or sea-lane (LineString), so nothing can move on it", source));
  Point far;
  GeoMap m = frame_map(rm, doc, source, far);
  add_network(m, rm);
  add_features(m, rm, far, source);
  add_sectors_and_order(m, rm, far, source);
  return m;
}

std::vector<int> nearest_nodes(const RoadNetwork& net, std::span<const Point> points, const BBox& box) {
  std::vector<int> out(points.size(), -1);
  const std::size_t n = net.num_nodes();
  if (n == 0) return out;
  // A uniform grid of about one node per cell over `box` (which holds every node and point): rings of cells around
  // a point are searched outward until no unseen node can be nearer. Every node in a ring k away is at least
  // (k - 1) cells away, so after ring k an unseen node is at least k cell sides off.
  const int side = std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n)))));
  const double w = std::max(box.x1 - box.x0, 1e-9) / side, h = std::max(box.y1 - box.y0, 1e-9) / side;
  const auto cell = [&](const Point& p) {
    const int cx = std::clamp(static_cast<int>((p.x - box.x0) / w), 0, side - 1);
    const int cy = std::clamp(static_cast<int>((p.y - box.y0) / h), 0, side - 1);
    return std::pair{cx, cy};
  };
  std::vector<std::vector<int>> cells(static_cast<std::size_t>(side) * side);
  for (std::size_t i = 0; i < n; ++i) {
    const auto [cx, cy] = cell(net.node(static_cast<int>(i)));
    cells[static_cast<std::size_t>(cy) * side + cx].push_back(static_cast<int>(i));  // in index order
  }
  const double step = std::min(w, h);
  for (std::size_t q = 0; q < points.size(); ++q) {
    const auto [px, py] = cell(points[q]);
    int best = -1;
    double bd = std::numeric_limits<double>::infinity();
    for (int k = 0; k < side; ++k) {
      if (best >= 0 && bd < (k - 1) * step) break;  // ring k's nodes are at least (k - 1) steps away
      for (int y = py - k; y <= py + k; ++y)
        for (int x = px - k; x <= px + k; ++x) {
          if (x < 0 || y < 0 || x >= side || y >= side || (std::abs(x - px) != k && std::abs(y - py) != k)) continue;
          for (const int i : cells[static_cast<std::size_t>(y) * side + x]) {
            const double d = distance(net.node(i), points[q]);
            if (d < bd || (d == bd && i < best)) bd = d, best = i;  // the lowest index among equals, as nearest_node
          }
        }
    }
    out[q] = best;
  }
  return out;
}

GeoMap read_user_map(const std::string& path, std::string* sha256) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::is_regular_file(st)) throw ConfigError(fmt::format("{}: not a readable regular file", path));
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) throw ConfigError(fmt::format("{}: cannot read ({})", path, ec.message()));
  if (size > kMaxUserMapBytes)
    throw ConfigError(fmt::format("{}: {} bytes, more than the limit of {}", path, size, kMaxUserMapBytes));
  std::ifstream in(path, std::ios::binary);
  std::string text(size, '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (static_cast<std::size_t>(in.gcount()) != size) throw ConfigError(fmt::format("{}: short read", path));
  if (sha256) *sha256 = io::sha256_hex(text);
  return parse_user_map(text, path);
}

}  // namespace advplan::geo
