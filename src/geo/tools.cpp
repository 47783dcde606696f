#include "advplan/geo/tools.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "advplan/core/untrusted.hpp"

namespace advplan::geo {
namespace {
using J = nlohmann::ordered_json;

double r3(double v) { return std::round(v * 1e3) / 1e3; }

struct Failure {
  std::string why;
};

/// Typed access to a validated arguments object.
struct Args {
  const ToolSpec& spec;
  const nlohmann::json& j;
  std::string str(const char* k) const { return j.contains(k) ? j.at(k).get<std::string>() : std::string(); }
  bool has(const char* k) const { return j.contains(k); }
  double num(const char* k, double dflt) const { return j.contains(k) ? j.at(k).get<double>() : dflt; }
  std::vector<std::string> list(const char* k) const {
    std::vector<std::string> out;
    if (j.contains(k))
      for (const auto& x : j.at(k)) out.push_back(x.get<std::string>());
    return out;
  }
};

const Feature& feature_arg(const GeoMap& m, const Args& a, const char* k) {
  const std::string id = a.str(k);
  const Feature* f = m.find(id);
  if (f == nullptr)
    throw Failure{fmt::format("{}: argument '{}' names no feature '{}' (list_features lists them)", a.spec.name, k,
                              untrusted::excerpt(id, 60))};
  return *f;
}

const Feature& point_arg(const GeoMap& m, const Args& a, const char* k) {
  const Feature& f = feature_arg(m, a, k);
  if (!f.point || f.node < 0)
    throw Failure{fmt::format("{}: argument '{}' is {} '{}', not a place or an asset", a.spec.name, k, f.kind, f.id)};
  return f;
}

const Feature& polygon_arg(const GeoMap& m, const Args& a, const char* k) {
  const Feature& f = feature_arg(m, a, k);
  if (!f.polygon)
    throw Failure{fmt::format("{}: argument '{}' is {} '{}', not an area (boundary, threat or obstacle)", a.spec.name, k,
                              f.kind, f.id)};
  return f;
}

std::vector<Polygon> avoid_arg(const GeoMap& m, const Args& a) {
  std::vector<Polygon> out;
  const auto entries = a.list("avoid");
  if (entries.size() > kMaxAvoid)
    throw Failure{fmt::format("{}: argument 'avoid' names {} areas, more than the limit of {}", a.spec.name,
                              entries.size(), kMaxAvoid)};
  for (const auto& e : entries) {
    std::string err;
    const auto fs = resolve_avoid(m, e, err);
    if (!err.empty()) throw Failure{fmt::format("{}: argument 'avoid': {}", a.spec.name, err)};
    for (const auto* f : fs) out.push_back(*f->polygon);
  }
  return out;
}

J lonlat(const GeoMap& m, const Point& p) {
  const auto [lon, lat] = m.proj.to_lonlat(p);
  return J::array({std::round(lon * 1e6) / 1e6, std::round(lat * 1e6) / 1e6});
}

J run_route(const GeoMap& m, const Args& a, bool with_time) {
  const Feature& from = point_arg(m, a, "from");
  const Feature& to = point_arg(m, a, "to");
  const auto avoid = avoid_arg(m, a);
  const auto r = m.net.shortest_path(from.node, to.node, avoid);
  J out{{"from", from.id}, {"to", to.id}, {"feasible", r.found}};
  if (!r.found) {
    out["reason"] = "no route between them avoids the given areas";
    return out;
  }
  out["length_km"] = r3(r.length);
  if (with_time) {
    // The same range as a template's speed_kmh: a speed of 5e-324 km/h once gave "hours": null (infinity).
    if (a.has("speed_kmh") && !(a.num("speed_kmh", 0) >= 0.1 && a.num("speed_kmh", 0) <= 1e4))
      throw Failure{fmt::format("travel_time: argument 'speed_kmh' must be a number from 0.1 to 10000, while {} was given",
                                a.num("speed_kmh", std::nan("")))};
    const double speed = a.has("speed_kmh") ? a.num("speed_kmh", 0) : travel_speed(m, from);
    out["speed_kmh"] = r3(speed);
    out["hours"] = r3(r.length / speed);
    return out;
  }
  J nodes = J::array(), path = J::array();
  for (int v : r.nodes) {
    nodes.push_back(v);
    path.push_back(lonlat(m, m.net.node(v)));
  }
  out["nodes"] = nodes;
  out["path"] = path;
  out["threat_km"] = {{"RED", r3(exposure_km(m, r.nodes, m.threats_of("RED")))},
                      {"BLUE", r3(exposure_km(m, r.nodes, m.threats_of("BLUE")))}};
  return out;
}

J describe(const GeoMap& m, const Feature& f) {
  J out{{"id", f.id}, {"name", f.name}, {"kind", f.kind}};
  if (!f.side.empty()) out["side"] = f.side;
  if (!f.domain.empty()) out["domain"] = f.domain;
  if (f.point) {
    out["geometry"] = "Point";
    out["lonlat"] = lonlat(m, *f.point);
    out["x_km"] = r3(f.point->x);
    out["y_km"] = r3(f.point->y);
  } else {
    out["geometry"] = "Polygon";
    const Point c = centroid(*f.polygon);
    out["centroid_lonlat"] = lonlat(m, c);
    out["area_km2"] = r3(area(*f.polygon));
  }
  return out;
}

J dispatch(const GeoMap& m, const Args& a) {
  const std::string& n = a.spec.name;
  if (n == "list_features") {
    const std::string kind = a.str("kind");
    J list = J::array();
    for (const auto& f : m.features) {
      if (!kind.empty() && f.kind != kind) continue;
      J x{{"id", f.id}, {"name", f.name}, {"kind", f.kind}};
      if (!f.side.empty()) x["side"] = f.side;
      if (!f.domain.empty()) x["domain"] = f.domain;
      list.push_back(x);
    }
    if (!kind.empty() && list.empty() && kind != "place" && kind != "asset" && kind != "boundary" && kind != "threat" &&
        kind != "obstacle")
      throw Failure{fmt::format("list_features: argument 'kind' '{}' is not one of place, asset, boundary, threat, obstacle",
                                untrusted::excerpt(kind, 40))};
    return J{{"features", list}};
  }
  if (n == "feature") return describe(m, feature_arg(m, a, "id"));
  if (n == "distance") {
    const Feature& f = feature_arg(m, a, "from");
    const Feature& t = feature_arg(m, a, "to");
    return J{{"from", f.id}, {"to", t.id}, {"km", r3(distance(m.anchor(f), m.anchor(t)))}};
  }
  if (n == "area") {
    const Feature& f = polygon_arg(m, a, "id");
    return J{{"id", f.id}, {"km2", r3(area(*f.polygon))}};
  }
  if (n == "route") return run_route(m, a, false);
  if (n == "travel_time") return run_route(m, a, true);
  if (n == "within") {
    const Feature& p = feature_arg(m, a, "point");
    if (!p.point) throw Failure{fmt::format("within: argument 'point' is {} '{}', not a place or an asset", p.kind, p.id)};
    const std::string side = a.str("area");
    if (side == "RED" || side == "BLUE") {  // any threat zone of that side
      J inside = J::array();
      for (const auto* z : m.of_kind("threat", side))
        if (contains(*z->polygon, *p.point)) inside.push_back(z->id);
      return J{{"point", p.id}, {"area", side}, {"within", !inside.empty()}, {"inside", inside}};
    }
    const Feature& z = polygon_arg(m, a, "area");
    return J{{"point", p.id}, {"area", z.id}, {"within", contains(*z.polygon, *p.point)}};
  }
  if (n == "line_of_sight") {
    const Feature& f = feature_arg(m, a, "from");
    const Feature& t = feature_arg(m, a, "to");
    J blocked = J::array();
    for (const auto* o : m.of_kind("obstacle"))
      if (segment_intersects(*o->polygon, m.anchor(f), m.anchor(t))) blocked.push_back(o->id);
    return J{{"from", f.id}, {"to", t.id}, {"clear", blocked.empty()}, {"blocked_by", blocked}};
  }
  if (n == "order") {
    return J{{"text", m.blue_order}, {"objective_place", m.objective_place}, {"time_window_h", m.rule.time_window_h}};
  }
  throw Failure{fmt::format("{}: not implemented", n)};
}

std::string type_of(const nlohmann::json& v) {
  if (v.is_string()) return "string";
  if (v.is_number()) return "number";
  if (v.is_array()) return "array";
  if (v.is_boolean()) return "boolean";
  if (v.is_object()) return "object";
  return "null";
}

}  // namespace

const std::vector<ToolSpec>& tool_specs() {
  static const std::vector<ToolSpec> specs{
      {"list_features", "List the map's features (id, name, kind, side, and domain for assets), optionally of one kind.",
       {{"kind", "string", false, "place, asset, boundary, threat or obstacle"}}},
      {"feature", "One feature: kind, side, lon/lat (points) or centroid and area (areas).",
       {{"id", "string", true, "feature id or name"}}},
      {"distance", "Straight-line distance in km between two features (polygon centroids for areas).",
       {{"from", "string", true, "feature id"}, {"to", "string", true, "feature id"}}},
      {"area", "Area in km^2 of a boundary, threat zone or obstacle.", {{"id", "string", true, "area feature id"}}},
      {"route",
       "Shortest network route between two places or assets, skipping every road or lane that meets an avoided area.",
       {{"from", "string", true, "place or asset id"},
        {"to", "string", true, "place or asset id"},
        {"avoid", "string[]", false, "threat or obstacle ids, or RED / BLUE for all threat zones of that side"}}},
      {"travel_time", "Hours to travel the shortest route (asset speed: network speed x mobility).",
       {{"from", "string", true, "place or asset id"},
        {"to", "string", true, "place or asset id"},
        {"avoid", "string[]", false, "as for route"},
        {"speed_kmh", "number", false, "override the speed"}}},
      {"within", "Whether a place or asset lies inside an area.",
       {{"point", "string", true, "place or asset id"}, {"area", "string", true, "area feature id, or RED / BLUE for any threat zone of that side"}}},
      {"line_of_sight", "Whether the straight line between two features crosses an obstacle (ridge or island).",
       {{"from", "string", true, "feature id"}, {"to", "string", true, "feature id"}}},
      {"order", "The BLUE order: its text, the objective place and the time window in hours.", {}},
  };
  return specs;
}

const ToolSpec* find_tool(std::string_view name) {
  for (const auto& s : tool_specs())
    if (s.name == name) return &s;
  return nullptr;
}

std::string tool_specs_json() {
  J arr = J::array();
  for (const auto& s : tool_specs()) {
    J props = J::object(), req = J::array();
    for (const auto& p : s.params) {
      J t = p.type == "string[]" ? J{{"type", "array"}, {"items", {{"type", "string"}}}} : J{{"type", p.type}};
      t["description"] = p.description;
      props[p.name] = t;
      if (p.required) req.push_back(p.name);
    }
    arr.push_back({{"name", s.name},
                   {"description", s.description},
                   {"parameters", {{"type", "object"}, {"properties", props}, {"required", req}, {"additionalProperties", false}}}});
  }
  return arr.dump();
}

std::vector<const Feature*> resolve_avoid(const GeoMap& m, std::string_view entry, std::string& error) {
  if (entry == "RED" || entry == "BLUE") return m.of_kind("threat", entry);
  const Feature* f = m.find(entry);
  if (f == nullptr) {
    error = fmt::format("no area '{}' (list_features lists them)", untrusted::excerpt(entry, 60));
    return {};
  }
  if (!f->polygon || f->kind == "boundary") {
    error = fmt::format("'{}' is a {}, not a threat zone or obstacle", f->id, f->kind);
    return {};
  }
  return {f};
}

double travel_speed(const GeoMap& m, const Feature& from) {
  return from.kind == "asset" ? m.rule.speed_kmh * std::max(0.1, from.mobility) : m.rule.speed_kmh;
}

double exposure_km(const GeoMap& m, const std::vector<int>& nodes, const std::vector<Polygon>& zones) {
  double s = 0;
  for (std::size_t i = 0; i + 1 < nodes.size(); ++i) {
    const Point& a = m.net.node(nodes[i]);
    const Point& b = m.net.node(nodes[i + 1]);
    double in = 0;
    for (const auto& z : zones) in += length_inside(z, a, b);
    s += std::min(in, distance(a, b));
  }
  return s;
}

ToolResult call_tool(const GeoMap& m, std::string_view name, std::string_view args_json) {
  ToolResult res;
  const ToolSpec* spec = find_tool(name);
  if (spec == nullptr) {
    std::string names;
    for (const auto& s : tool_specs()) names += (names.empty() ? "" : ", ") + s.name;
    res.error = fmt::format("unknown tool '{}' (tools: {})", untrusted::excerpt(name, 40), names);
    return res;
  }
  if (args_json.size() > kMaxToolArgsBytes) {
    res.error = fmt::format("{}: arguments are {} bytes, more than the limit of {}", spec->name, args_json.size(),
                            kMaxToolArgsBytes);
    return res;
  }
  nlohmann::json j;
  const std::string_view text = args_json.empty() ? std::string_view("{}") : args_json;
  if (auto err = untrusted::parse_json_bounded(text, j, 8); !err.empty()) {
    res.error = fmt::format("{}: arguments are not valid JSON ({})", spec->name, err);
    return res;
  }
  if (!j.is_object()) {
    res.error = fmt::format("{}: arguments must be a JSON object, not {}", spec->name, type_of(j));
    return res;
  }
  for (const auto& item : j.items()) {
    const std::string& k = item.key();
    const auto& v = item.value();
    const auto it = std::find_if(spec->params.begin(), spec->params.end(), [&](const ToolParam& p) { return p.name == k; });
    if (it == spec->params.end()) {
      res.error = fmt::format("{}: unknown argument '{}'", spec->name, untrusted::excerpt(k, 40));
      return res;
    }
    bool ok = it->type == "string" ? v.is_string() : it->type == "number" ? v.is_number() : v.is_array();
    if (ok && it->type == "string[]")
      for (const auto& x : v) ok = ok && x.is_string();
    if (!ok) {
      res.error = fmt::format("{}: argument '{}' must be {}, not {}", spec->name, k,
                              it->type == "string[]" ? "an array of strings" : "a " + it->type, type_of(v));
      return res;
    }
  }
  for (const auto& p : spec->params)
    if (p.required && !j.contains(p.name)) {
      res.error = fmt::format("{}: missing required argument '{}'", spec->name, p.name);
      return res;
    }
  try {
    res.json = dispatch(m, Args{*spec, j}).dump();
    res.ok = true;
  } catch (const Failure& f) {
    res.error = f.why;
  } catch (const std::exception& e) {
    res.error = fmt::format("{}: {}", spec->name, e.what());
  }
  return res;
}

}  // namespace advplan::geo
