// Layout rules as data: configs/geo/layouts.yaml (docs/GEO.md "Layout rules"), compiled into the binary.
#include <fmt/format.h>

#include <algorithm>

#include "advplan/core/error.hpp"
#include "advplan/geo/map.hpp"
#include "advplan/io/embedded_files.hpp"
#include "advplan/io/yaml_reader.hpp"

namespace advplan::geo {
namespace {

LayoutRule read_rule(const io::YamlReader& r, const std::string& name) {
  r.require_map();
  r.require_only({"network", "extent_km", "grid", "keep_edge", "diagonal", "speed_kmh", "threats", "obstacles",
                  "threat_radius", "time_window_h", "surface_domains", "origin"});
  LayoutRule x;
  x.name = name;
  x.network = r.at("network").as_string();
  if (x.network != "road" && x.network != "sea-lane") r.at("network").fail("expected road or sea-lane");
  x.extent_km = r.at("extent_km").as_double_in(1, 20000);
  x.grid = static_cast<int>(r.at("grid").as_int_in(2, 300));
  x.keep_edge = r.at("keep_edge").as_double_in(0, 1);
  x.diagonal = r.at("diagonal").as_double_in(0, 1);
  x.speed_kmh = r.at("speed_kmh").as_double_in(0.1, 10000);
  const auto t = r.at("threats");
  t.require_only({"RED", "BLUE"});
  x.red_threats = static_cast<int>(t.at("RED").as_int_in(0, 64));
  x.blue_threats = static_cast<int>(t.at("BLUE").as_int_in(0, 64));
  x.obstacles = static_cast<int>(r.at("obstacles").as_int_in(0, 64));
  const auto rad = r.at("threat_radius");
  if (!rad.is_sequence() || rad.size() != 2) rad.fail("expected [min, max]");
  x.threat_radius_min = rad.at(0).as_double_in(0.001, 0.5);
  x.threat_radius_max = rad.at(1).as_double_in(x.threat_radius_min, 0.5);
  x.time_window_h = r.at("time_window_h").as_double_in(0.01, 1000);
  x.surface_domains = r.at("surface_domains").as_strings();
  const auto o = r.at("origin");
  if (!o.is_sequence() || o.size() != 2) o.fail("expected [lon, lat]");
  x.lon0 = o.at(0).as_double_in(-180, 180);
  x.lat0 = o.at(1).as_double_in(-85, 85);
  return x;
}

}  // namespace

LayoutRules parse_layout_rules(const std::string& yaml_text, const std::string& file) {
  const io::YamlReader root(io::parse_yaml(yaml_text, file), file);
  root.require_map();
  root.require_only({"default", "rules", "templates"});
  LayoutRules out;
  const auto rules = root.at("rules");
  rules.require_map();
  for (const auto& k : rules.keys()) out.rules.push_back(read_rule(rules.at(k), k));
  auto known = [&](const std::string& n) {
    return std::any_of(out.rules.begin(), out.rules.end(), [&](const LayoutRule& r) { return r.name == n; });
  };
  out.default_rule = root.at("default").as_string();
  if (!known(out.default_rule)) root.at("default").fail(fmt::format("no rule named '{}'", out.default_rule));
  if (root.has("templates")) {
    const auto t = root.at("templates");
    t.require_map();
    for (const auto& k : t.keys()) {
      const std::string n = t.at(k).as_string();
      if (!known(n)) t.at(k).fail(fmt::format("no rule named '{}'", n));
      out.templates.emplace_back(k, n);
    }
  }
  return out;
}

const LayoutRule& LayoutRules::for_template(std::string_view template_id, std::string_view domain) const {
  auto named = [&](std::string_view n) -> const LayoutRule* {
    for (const auto& r : rules)
      if (r.name == n) return &r;
    return nullptr;
  };
  for (const auto& [t, n] : templates)
    if (t == template_id) return *named(n);
  if (const LayoutRule* r = named(domain)) return *r;
  return *named(default_rule);
}

const LayoutRules& layout_rules() {
  static const LayoutRules rules = [] {
    constexpr const char* kPath = "configs/geo/layouts.yaml";
    const auto text = io::embedded_file(kPath);
    if (!text) throw ConfigError(fmt::format("{}: not compiled into this binary", kPath));
    return parse_layout_rules(std::string(*text), kPath);
  }();
  return rules;
}

}  // namespace advplan::geo
