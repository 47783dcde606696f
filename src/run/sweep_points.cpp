#include "advplan/run/sweep_points.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/policy/blue_policy.hpp"
#include "advplan/policy/red_policy.hpp"
#include "sweep_reader.hpp"

namespace advplan {
namespace {

/// A sweepable setting with a fixed path: its range and whether it takes integers (the ranges are the config
/// reader's, docs/CONFIG.md).
struct Known {
  const char* path;
  double lo, hi;
  bool integer;
};
constexpr Known kKnown[] = {
    {"k", 1, 1024, true},
    {"simulator.replications", 1, 100000, true},
    {"simulator.break_point", 0, 0.99, false},
    {"simulator.time_limit", 1, 1000000, true},
    {"simulator.dt", 1e-4, 1, false},
    {"simulator.noise", 0, 2, false},
    {"simulator.step_noise", 0, 2, false},
    {"council.weights.quality", 0, 1, false},
    {"council.weights.coherence", 0, 1, false},
    {"council.weights.diversity", 0, 1, false},
    {"council.weights.pressure", 0, 1, false},
    {"council.shortlist", 1, 5, true},
    {"council.propose", 0, 1, true},
    {"council.revise", 0, 1, true},
    {"llm.generation.temperature", 0, 2, false},
    {"llm.generation.top_p", 0, 1, false},
    {"llm.generation.max_tokens", 1, 1 << 20, true},
};

const Known* known(std::string_view path) {
  for (const Known& k : kKnown)
    if (path == k.path) return &k;
  return nullptr;
}

/// policies.<name>.<param>: the policy's name and parameter, or nullopt for another path.
std::optional<std::pair<std::string, std::string>> policy_param(std::string_view path) {
  if (path.rfind("policies.", 0) != 0) return std::nullopt;
  const std::string_view rest = path.substr(9);
  const std::size_t dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == rest.size()) return std::nullopt;
  const std::string_view name = rest.substr(0, dot), param = rest.substr(dot + 1);
  if (param.find('.') != std::string_view::npos || param == "generation") return std::nullopt;
  return std::pair{std::string(name), std::string(param)};
}

std::string spec_name(const std::string& spec) { return spec.substr(0, spec.find_first_of("@:")); }

std::string accepted_paths() {
  std::string out = "policies.<name>.<param>";
  for (const Known& k : kKnown) out += std::string(", ") + k.path;
  return out;
}

/// A registered policy's info, or nullptr (a plug-in not loaded yet).
const PolicyInfo* red_info(const std::string& spec) {
  const std::string n = spec_name(spec);
  return RedRegistry::instance().contains(n) ? &RedRegistry::instance().info(n, "RED") : nullptr;
}
const PolicyInfo* blue_info(const std::string& spec) {
  const std::string n = spec_name(spec);
  return BlueRegistry::instance().contains(n) ? &BlueRegistry::instance().info(n, "BLUE") : nullptr;
}

}  // namespace

std::optional<double> config_value(const ExperimentConfig& cfg, const Condition& base, const std::string& path) {
  if (path == "k") {
    const PolicySpec s = parse_policy_spec(base.red);
    if (s.k) return *s.k;
    if (const PolicyInfo* i = red_info(base.red)) return i->default_k;
    return std::nullopt;
  }
  if (const auto pp = policy_param(path)) {
    if (auto it = cfg.policy_params.find(pp->first); it != cfg.policy_params.end())
      if (auto jt = it->second.find(pp->second); jt != it->second.end()) return jt->second;
    for (const std::string* spec : {&base.red, &base.blue}) {
      if (spec_name(*spec) != pp->first) continue;
      const PolicyInfo* i = spec == &base.red ? red_info(*spec) : blue_info(*spec);
      if (i)
        for (const ParamSpec& p : i->params)
          if (p.name == pp->second) return p.default_value;
    }
    return std::nullopt;
  }
  const SimConfig& s = cfg.sim;
  const CouncilConfig& c = cfg.council;
  const GenerationSettings& g = cfg.llm.generation;
  if (path == "simulator.replications") return s.replications;
  if (path == "simulator.break_point") return s.break_point;
  if (path == "simulator.time_limit") return s.time_limit;
  if (path == "simulator.dt") return s.dt;
  if (path == "simulator.noise") return s.noise;
  if (path == "simulator.step_noise") return s.step_noise;
  if (path == "council.weights.quality") return c.w_quality;
  if (path == "council.weights.coherence") return c.w_coherence;
  if (path == "council.weights.diversity") return c.w_diversity;
  if (path == "council.weights.pressure") return c.w_pressure;
  if (path == "council.shortlist") return c.shortlist;
  if (path == "council.propose") return c.propose ? 1 : 0;
  if (path == "council.revise") return c.revise ? 1 : 0;
  if (path == "llm.generation.temperature") return g.temperature;
  if (path == "llm.generation.top_p" && g.top_p) return *g.top_p;
  if (path == "llm.generation.max_tokens" && g.max_tokens) return *g.max_tokens;
  return std::nullopt;
}

namespace {

void apply(ExperimentConfig& cfg, const Setting& s) {
  const double v = s.value;
  // Checked again here: a point's settings may come back from a run's metadata (advplan merge).
  const Known* k = known(s.path);
  if (!std::isfinite(v) || (k && (v < k->lo || v > k->hi || (k->integer && v != std::floor(v)))))
    throw ConfigError(fmt::format("{}: sweep: {} = {} is outside what the setting takes", cfg.source,
                                  untrusted::excerpt(s.path, 80), v));
  const auto i = [&] { return static_cast<int>(v); };
  if (s.path == "k") return;  // in the point's RED spec
  if (const auto pp = policy_param(s.path)) {
    cfg.policy_params[pp->first][pp->second] = v;
    return;
  }
  auto generation = [&](auto&& set) {
    set(cfg.llm.generation);
    for (auto& [name, g] : cfg.llm.policy_generation) set(g);  // a policy's own settings, too
  };
  if (s.path == "simulator.replications") cfg.sim.replications = i();
  else if (s.path == "simulator.break_point") cfg.sim.break_point = v;
  else if (s.path == "simulator.time_limit") cfg.sim.time_limit = i();
  else if (s.path == "simulator.dt") cfg.sim.dt = v;
  else if (s.path == "simulator.noise") cfg.sim.noise = v;
  else if (s.path == "simulator.step_noise") cfg.sim.step_noise = v;
  else if (s.path == "council.weights.quality") cfg.council.w_quality = v;
  else if (s.path == "council.weights.coherence") cfg.council.w_coherence = v;
  else if (s.path == "council.weights.diversity") cfg.council.w_diversity = v;
  else if (s.path == "council.weights.pressure") cfg.council.w_pressure = v;
  else if (s.path == "council.shortlist") cfg.council.shortlist = i();
  else if (s.path == "council.propose") cfg.council.propose = v != 0;
  else if (s.path == "council.revise") cfg.council.revise = v != 0;
  else if (s.path == "llm.generation.temperature") generation([&](GenerationSettings& g) { g.temperature = v; });
  else if (s.path == "llm.generation.top_p") generation([&](GenerationSettings& g) { g.top_p = v; });
  else if (s.path == "llm.generation.max_tokens") generation([&](GenerationSettings& g) { g.max_tokens = i(); });
  else throw ConfigError(fmt::format("{}: sweep: '{}' is not a sweepable setting", cfg.source, s.path));
}

/// One value of a setting, checked against its range.
double read_value(const io::YamlReader& y, const std::string& path) {
  // The council's switches are booleans in the config: true and false read as 1 and 0 here too.
  if ((path == "council.propose" || path == "council.revise") && y.is_scalar() &&
      (y.node().Scalar() == "true" || y.node().Scalar() == "false"))
    return y.as_bool() ? 1 : 0;
  const double v = y.as_double();
  if (!std::isfinite(v)) y.fail(fmt::format("{} must be a finite number", path));
  if (const Known* k = known(path)) {
    if (v < k->lo || v > k->hi) y.fail(fmt::format("{} must be in [{}, {}], while {} was given", path, k->lo, k->hi, v));
    if (k->integer && v != std::floor(v)) y.fail(fmt::format("{} takes integers, while {} was given", path, v));
  }
  return v;
}

/// A list of values: [v, ...], or [first, second, ..., last] for first, first + step, ... up to last (step =
/// second - first), each rounded to 12 significant digits so that 0.1 steps read as 0.1, 0.2, 0.3.
std::vector<double> read_values(const io::YamlReader& list, const std::string& path) {
  list.require_sequence();
  const std::size_t n = list.size();
  if (n == 0) list.fail("no values to sweep");
  auto is_ellipsis = [&](std::size_t i) { return list.at(i).is_scalar() && list.at(i).node().Scalar() == "..."; };
  std::vector<double> out;
  if (n == 4 && is_ellipsis(2)) {
    const double a = read_value(list.at(0), path), b = read_value(list.at(1), path), z = read_value(list.at(3), path);
    const double step = b - a, span = (z - a) / step;
    if (step == 0)
      list.fail(fmt::format("[{}, {}, ..., {}] is not a range: the second value must differ from the first", a, b, z));
    if (!std::isfinite(step))
      list.fail(fmt::format("[{}, {}, ..., {}] is not a range: the step from the first value to the second is not a "
                            "finite number", a, b, z));
    if (!(span >= 1))  // a span of -inf (a tiny step the wrong way) lies before the second, too
      list.fail(fmt::format("[{}, {}, ..., {}] is not a range: the last value must lie beyond the second", a, b, z));
    // A span of +inf is a step too small to be divided into (z - a) at all: it is too small in the same way.
    if (span > static_cast<double>(kMaxSweepPoints))
      list.fail(fmt::format("[{}, {}, ..., {}]: the step {} is too small: the range would have more than {} values, "
                            "the most a sweep range may have", a, b, z, step, kMaxSweepPoints));
    const auto steps = static_cast<std::size_t>(std::llround(span));
    if (std::abs(span - static_cast<double>(steps)) > 1e-6)
      list.fail(fmt::format("[{}, {}, ..., {}]: the last value is not the first plus a whole number of steps of {}", a, b,
                            z, step));
    for (std::size_t i = 0; i < steps; ++i)
      out.push_back(std::stod(fmt::format("{:.12g}", a + static_cast<double>(i) * step)));
    out.push_back(z);
    const Known* k = known(path);
    if (k && k->integer)
      for (double v : out)
        if (v != std::floor(v)) list.fail(fmt::format("{} takes integers, while the range gives {}", path, v));
    return out;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (is_ellipsis(i)) list.at(i).fail("'...' stands third of four values: [first, second, ..., last]");
    out.push_back(read_value(list.at(i), path));
  }
  return out;
}

void check_path(const io::YamlReader& y, const std::string& path) {
  if (!known(path) && !policy_param(path))
    y.fail(fmt::format("'{}' is not a sweepable setting (accepted: {})", untrusted::excerpt(path, 80), accepted_paths()));
}

}  // namespace

std::string setting_name(std::string_view path) {
  const std::size_t dot = path.rfind('.');
  return std::string(dot == std::string_view::npos ? path : path.substr(dot + 1));
}

std::string setting_value_text(double v) { return fmt::format("{}", v); }

std::string settings_text(const std::vector<Setting>& settings) {
  std::string out;
  for (const Setting& s : settings)
    out += fmt::format("{}{}={}", out.empty() ? "" : ", ", setting_name(s.path), setting_value_text(s.value));
  return out;
}

SettingReach setting_reach(std::string_view path, const Condition& c, const std::string& source) {
  SettingReach r;
  if (path == "k") {
    const PolicyInfo* i = red_info(c.red);
    r.red = i ? i->samples_k : c.red.find('@') != std::string::npos;
  } else if (const auto pp = policy_param(path)) {
    r.red = spec_name(c.red) == pp->first;
    r.blue = spec_name(c.blue) == pp->first;
  } else if (path.rfind("simulator.", 0) == 0 && known(path)) {
    r.sim = true;
  } else if (path.rfind("council.", 0) == 0 && known(path)) {
    r.blue = spec_name(c.blue) == "council";
  } else if (path.rfind("llm.generation.", 0) == 0 && known(path)) {
    // An unregistered policy (a plug-in not loaded yet) may be a live model's: it is given the point's settings.
    const PolicyInfo *ri = red_info(c.red), *bi = blue_info(c.blue);
    r.red = !ri || ri->external;
    r.blue = !bi || bi->external;
  } else {
    throw ConfigError(fmt::format("{}: sweep: '{}' is not a sweepable setting (accepted: {})", source,
                                  untrusted::excerpt(path, 80), accepted_paths()));
  }
  return r;
}

ExperimentConfig with_settings(const ExperimentConfig& cfg, const std::vector<Setting>& settings) {
  ExperimentConfig out = cfg;
  for (const Setting& s : settings) apply(out, s);
  constexpr long long kMaxSimSteps = 10000000;  // the simulator section's joint bound (docs/CONFIG.md)
  if (static_cast<long long>(out.sim.replications) * out.sim.time_limit > kMaxSimSteps)
    throw ConfigError(fmt::format("{}: sweep: the point [{}] asks for replications x time_limit = {} x {}, more than {}",
                                  cfg.source, settings_text(settings), out.sim.replications, out.sim.time_limit,
                                  kMaxSimSteps));
  return out;
}

std::vector<Condition> sweep_point_conditions(const ExperimentConfig& cfg) {
  std::vector<Condition> out;
  if (cfg.sweep.empty()) return out;
  const auto base = std::find_if(cfg.conditions.begin(), cfg.conditions.end(),
                                 [&](const Condition& c) { return c.label == cfg.sweep.condition; });
  if (base == cfg.conditions.end())
    throw ConfigError(fmt::format("{}: sweep: condition: no condition is labelled '{}'", cfg.source, cfg.sweep.condition));
  for (const auto& values : cfg.sweep.points) {
    Condition c = *base;
    c.group = "grid";
    for (std::size_t p = 0; p < cfg.sweep.params.size(); ++p) {
      c.settings.push_back({cfg.sweep.params[p], values[p]});
      if (cfg.sweep.params[p] == "k")
        c.red = fmt::format("{}@{}", spec_name(base->red), static_cast<int>(values[p]));
    }
    c.label = fmt::format("{} [{}]", base->label, settings_text(c.settings));
    out.push_back(std::move(c));
  }
  return out;
}

std::string attribution_part_name(std::string_view part) {
  if (part == "response_search") return "search";
  if (part == "council_proposal") return "proposal";
  if (part == "council_revision") return "revision";
  if (part == "simulator_noise") return "noise";
  return std::string(part);
}

std::vector<Condition> attribution_conditions(const ExperimentConfig& cfg) {
  std::vector<Condition> out;
  const StudiesConfig& st = cfg.studies;
  if (!st.attribution) return out;
  const std::vector<std::string>& parts = st.attribution_parts;
  const std::size_t m = parts.size();
  for (std::size_t mask = 0; mask < (std::size_t{1} << m); ++mask) {
    auto on = [&](const char* part) {
      for (std::size_t i = 0; i < m; ++i)
        if (parts[i] == part) return (mask >> i & 1) != 0;
      return true;  // not listed: held on
    };
    Condition c;
    c.group = "attribution";
    c.blue = "council";
    c.red = fmt::format("{}@{}", on("selector") ? "constraint" : "greedy", on("response_search") ? st.attribution_k : 1);
    c.settings = {{"council.propose", on("council_proposal") ? 1.0 : 0.0},
                  {"council.revise", on("council_revision") ? 1.0 : 0.0},
                  {"simulator.noise", on("simulator_noise") ? cfg.sim.noise : 0.0},
                  {"simulator.step_noise", on("simulator_noise") ? cfg.sim.step_noise : 0.0}};
    std::string label;
    for (std::size_t i = 0; i < m; ++i)
      label += fmt::format("{}{}={}", i ? ", " : "", attribution_part_name(parts[i]), mask >> i & 1);
    c.label = "attribution [" + label + "]";
    out.push_back(std::move(c));
  }
  return out;
}

namespace detail {

void read_sweep(ExperimentConfig& cfg, const io::YamlReader& y) {
  y.require_map();
  SweepConfig sw;
  const bool has_grid = y.has("grid"), has_points = y.has("points");
  if (has_grid && has_points) y.fail("give grid or points, not both");
  if (has_grid) y.require_only({"condition", "reference", "grid"});
  if (has_points) y.require_only({"condition", "reference", "points"});
  if (has_points) {
    const io::YamlReader pts = y.at("points");
    pts.require_sequence();
    if (pts.size() == 0) pts.fail("no points to sweep");
    if (pts.size() > kMaxSweepPoints) pts.fail(fmt::format("{} points, more than the limit of {}", pts.size(), kMaxSweepPoints));
    for (std::size_t i = 0; i < pts.size(); ++i) {
      const io::YamlReader pt = pts.at(i);
      pt.require_map();
      const std::vector<std::string> keys = pt.keys();
      if (i == 0) {
        for (const auto& k : keys) check_path(pt, k);
        sw.params = keys;
      } else if (std::set<std::string>(keys.begin(), keys.end()) != std::set<std::string>(sw.params.begin(), sw.params.end())) {
        pt.fail("every point sets the same settings as the first");
      }
      std::vector<double> v;
      for (const auto& p : sw.params) v.push_back(read_value(pt.at(p), p));
      sw.points.push_back(std::move(v));
    }
  } else {
    const io::YamlReader grid = has_grid ? y.at("grid") : y;
    grid.require_map();
    std::vector<std::vector<double>> axes;
    for (const auto& k : grid.keys()) {
      if (!has_grid && (k == "condition" || k == "reference")) continue;
      check_path(grid, k);
      sw.params.push_back(k);
      axes.push_back(read_values(grid.at(k), k));
    }
    std::size_t total = 1;
    for (const auto& a : axes) {
      if (total > kMaxSweepPoints / a.size())
        grid.fail(fmt::format("the grid has more than {} points", kMaxSweepPoints));
      total *= a.size();
    }
    if (!axes.empty())
      for (std::size_t i = 0; i < total; ++i) {  // grid order: the first setting varies slowest
        std::vector<double> v(axes.size());
        std::size_t rest = i;
        for (std::size_t a = axes.size(); a-- > 0;) {
          v[a] = axes[a][rest % axes[a].size()];
          rest /= axes[a].size();
        }
        sw.points.push_back(std::move(v));
      }
  }
  if (sw.params.empty()) y.fail("no setting to sweep");
  if (sw.params.size() > kMaxSweepParams)
    y.fail(fmt::format("{} swept settings, more than the limit of {}", sw.params.size(), kMaxSweepParams));
  {
    std::set<std::vector<double>> seen;
    for (const auto& p : sw.points)
      if (!seen.insert(p).second) {
        std::vector<Setting> s;
        for (std::size_t i = 0; i < p.size(); ++i) s.push_back({sw.params[i], p[i]});
        y.fail(fmt::format("the point [{}] is given twice", settings_text(s)));
      }
  }
  // The swept condition: the one named, or the first whose policies or wargame every setting reaches.
  auto reaches_all = [&](const Condition& c) {
    for (const auto& p : sw.params)
      if (!setting_reach(p, c, cfg.source).any()) return false;
    return true;
  };
  const Condition* base = nullptr;
  if (y.has("condition")) {
    const std::string label = y.at("condition").as_string();
    for (const auto& c : cfg.conditions)
      if (c.label == label) base = &c;
    if (!base) y.at("condition").fail(fmt::format("no listed condition is labelled '{}'", untrusted::excerpt(label, 80)));
  } else {
    for (const auto& c : cfg.conditions)
      if (!base && reaches_all(c)) base = &c;
    if (!base) y.fail("no listed condition has a policy or wargame that every swept setting reaches; name one with condition:");
  }
  for (const auto& p : sw.params)
    if (!setting_reach(p, *base, cfg.source).any())
      y.fail(fmt::format("{} reaches neither the RED policy {} nor the BLUE policy {} of condition '{}'", p, base->red,
                         base->blue, base->label));
  sw.condition = base->label;
  // The reference point: the one given, else the point at the config's own values, else the first.
  if (y.has("reference")) {
    const io::YamlReader ref = y.at("reference");
    ref.require_map();
    std::vector<double> v;
    for (const auto& p : sw.params) v.push_back(read_value(ref.at(p), p));
    if (ref.keys().size() != sw.params.size()) ref.fail("the reference sets exactly the swept settings");
    const auto it = std::find(sw.points.begin(), sw.points.end(), v);
    if (it == sw.points.end()) ref.fail("the reference is not one of the sweep's points");
    sw.reference = static_cast<std::size_t>(it - sw.points.begin());
  } else {
    std::vector<double> v;
    for (const auto& p : sw.params)
      if (const auto c = config_value(cfg, *base, p)) v.push_back(*c);
    const auto it = v.size() == sw.params.size() ? std::find(sw.points.begin(), sw.points.end(), v) : sw.points.end();
    sw.reference = it == sw.points.end() ? 0 : static_cast<std::size_t>(it - sw.points.begin());
  }
  cfg.sweep = std::move(sw);
}

}  // namespace detail
}  // namespace advplan
