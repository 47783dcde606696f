#include "advplan/run/geo_eval.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "advplan/run/config.hpp"
#include "advplan/geo/map.hpp"
#include "advplan/geo/tools.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/io/sha256.hpp"
#include "advplan/core/error.hpp"
#include "advplan/geo/user_map.hpp"

namespace advplan {
namespace {
using J = nlohmann::json;

/// The plan's own route or travel_time call for (asset, target), if it has one.
const ToolCall* plan_route_call(const Plan& p, const std::string& asset, const geo::Feature& target) {
  for (const auto& c : p.tool_calls) {
    if (c.name != "route" && c.name != "travel_time") continue;
    J a = J::parse(c.arguments_json, nullptr, false);
    if (!a.is_object() || !a.contains("from") || !a.contains("to") || !a["from"].is_string() || !a["to"].is_string()) continue;
    const std::string to = a["to"].get<std::string>();
    if (a["from"].get<std::string>() == asset && (to == target.id || to == target.name)) return &c;
  }
  return nullptr;
}

double share(double part, double whole) { return whole > 0 ? std::min(1.0, part / whole) : 0.0; }

}  // namespace

GeoPlanEffect geo_plan_effect(const geo::GeoMap& m, const Plan& p, Side side) {
  GeoPlanEffect g;
  const std::string opp(to_string(other(side)));
  const auto& surface = m.rule.surface_domains;
  std::vector<const ToolCall*> used;
  double exposure = 0, delay = 0;
  for (const auto& a : p.actions) {
    if (a.category != Category::movement) continue;
    const geo::Feature* asset = m.find(a.asset);
    if (asset == nullptr || asset->kind != "asset" ||
        std::find(surface.begin(), surface.end(), asset->domain) == surface.end())
      continue;  // air, cyber and space movements do not use the network
    GeoMove mv{a.id, a.asset, a.target, "route (bound)", "", -1, -1, -1, ""};
    const geo::Feature* target = m.find(a.target);
    if (target == nullptr || !target->point || target->node < 0) {
      mv.status = "unbound";
      mv.reason = "the target is not a place or asset on the map";
      g.moves.push_back(mv);
      continue;
    }
    std::string args = J{{"from", asset->id}, {"to", target->id}, {"avoid", {opp}}}.dump();
    if (const ToolCall* c = plan_route_call(p, asset->id, *target)) {
      used.push_back(c);
      mv.tool = c->name + " (plan)";
      J pa = J::parse(c->arguments_json, nullptr, false);
      pa.erase("speed_kmh");  // the move runs at the asset's speed
      args = pa.dump();
    }
    const geo::ToolResult r = geo::call_tool(m, "route", args);
    if (!r.ok) {
      mv.status = "failed";
      mv.reason = r.error;
      g.moves.push_back(mv);
      continue;
    }
    J res = J::parse(r.json);
    const double speed = geo::travel_speed(m, *asset);
    if (!res["feasible"].get<bool>()) {
      // No route avoids the threats: the move goes through them, on the shortest route with nothing avoided.
      mv.status = "infeasible";
      mv.reason = "no route avoids the threat zones";
      res = J::parse(geo::call_tool(m, "route", J{{"from", asset->id}, {"to", target->id}}.dump()).json);
      ++g.infeasible;
    } else {
      mv.status = "ok";
    }
    if (res["feasible"].get<bool>()) {
      mv.length_km = res["length_km"].get<double>();
      mv.hours = mv.length_km / speed;
      mv.exposure = share(res["threat_km"][opp].get<double>(), mv.length_km);
    } else {
      mv.length_km = mv.hours = mv.exposure = -1;  // unreachable even through the threats
    }
    ++g.bound;
    exposure += std::max(0.0, mv.exposure < 0 ? 1.0 : mv.exposure);
    delay += mv.hours < 0 ? 1.0 : std::min(1.0, mv.hours / m.rule.time_window_h);
    g.moves.push_back(mv);
  }
  // The plan's other map tool calls are executed and recorded; calls to tools that are not map tools are not
  // the map's business.
  for (const auto& c : p.tool_calls) {
    if (geo::find_tool(c.name) == nullptr || std::find(used.begin(), used.end(), &c) != used.end()) continue;
    const geo::ToolResult r = geo::call_tool(m, c.name, c.arguments_json);
    g.moves.push_back({"", "", "", c.name, r.ok ? "ok" : "failed", -1, -1, -1, r.ok ? "" : r.error});
  }
  if (g.bound > 0) {
    g.mean_exposure = exposure / g.bound;
    g.mean_delay = delay / g.bound;
  }
  g.readiness = 1.0 - 0.3 * g.mean_delay;
  return g;
}

PlanOnMap plan_on_map(const geo::GeoMap& m, const GeoPlanEffect& g) {
  PlanOnMap out;
  out.time_window_h = m.rule.time_window_h;
  for (const GeoMove& mv : g.moves)
    if (!mv.action_id.empty() && (mv.status == "ok" || mv.status == "infeasible"))
      out.moves.push_back({mv.action_id, mv.asset, mv.target, mv.hours, mv.hours < 0 ? 0.0 : std::max(0.0, mv.exposure)});
  return out;
}

QualityParts apply_geo(const QualityParts& q, const GeoPlanEffect& g, const QualityWeights& w) {
  QualityParts out = q;
  const double f = g.bound > 0 ? static_cast<double>(g.infeasible) / g.bound : 0.0;
  out.e = q.e * (1 - 0.5 * f);
  out.r = q.r + 0.5 * g.mean_exposure * (1 - q.r);
  out.q = q.q + w.effectiveness * (out.e - q.e) - w.risk * (out.r - q.r);
  return out;
}

void append_geo_rows(std::vector<std::vector<std::string>>& rows, const std::string& scenario_id,
                     const std::string& condition, Side side, const std::string& plan_id, const GeoPlanEffect& g) {
  auto num = [](double v) { return v < 0 ? std::string() : io::fmt_real(v); };
  for (const auto& m : g.moves)
    rows.push_back({scenario_id, condition, std::string(to_string(side)), plan_id, m.action_id, m.asset, m.target, m.tool,
                    m.status, num(m.length_km), num(m.hours), num(m.exposure), m.reason});
}

void write_run_maps(const ExperimentConfig& cfg, const std::string& run_dir) {
  const std::filesystem::path dir = std::filesystem::path(run_dir) / "maps";
  std::filesystem::create_directories(dir);
  if (!cfg.geo_map) {
    for (std::size_t i = 0; i < corpus_size(cfg); ++i) {
      const Scenario sc = corpus_scenario(cfg, i);
      io::write_file_atomic((dir / (sc.id + ".geojson")).string(), geo::to_geojson(scenario_map(cfg, sc)));
    }
    return;
  }
  // A user's map: its file once, as the run read it (maps/_shared/<sha256>.geojson, at most the user-map limit),
  // and per scenario only what the scenario puts on it (docs/GEO.md "A run on the map"): a map of a million
  // positions written out per scenario would be 8 times its size again for every scenario.
  const std::string text = io::read_text_file(cfg.geo_map_path, geo::kMaxUserMapBytes);
  if (io::sha256_hex(text) != cfg.geo_map_sha256)
    throw ConfigError(fmt::format("{}: changed while the run used it (its sha256 is no longer the run key's "
                                  "geo_map_sha256); run again",
                                  cfg.geo_map_path));
  const std::string ref = "_shared/" + cfg.geo_map_sha256 + ".geojson";
  std::filesystem::create_directories(dir / "_shared");
  io::write_file_atomic((dir / ref).string(), text);
  for (std::size_t i = 0; i < corpus_size(cfg); ++i) {
    const Scenario sc = corpus_scenario(cfg, i);
    io::write_file_atomic((dir / (sc.id + ".geojson")).string(),
                          geo::to_geojson_layer(scenario_map(cfg, sc), *cfg.geo_map, ref));
  }
}

}  // namespace advplan
