// The run plan (runner.hpp RunPlan): the conditions' policies built and checked, and each sweep point bound to its
// config, context, policies and wargame settings.
#include "advplan/run/runner.hpp"

#include <fmt/format.h>
#include <tbb/global_control.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_pipeline.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <sstream>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <set>
#include <thread>

#include "advplan/core/untrusted.hpp"
#include "advplan/core/error.hpp"
#include "advplan/run/summaries.hpp"
#include "advplan/run/sweep_points.hpp"
#include "advplan/run/observer.hpp"
#include "advplan/run/geo_eval.hpp"
#include "advplan/run/progress.hpp"
#include "advplan/run/scenario_eval.hpp"
#include "advplan/run/stream_summary.hpp"
#include "advplan/run/interrupt.hpp"
#include "advplan/run/trace_schema.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/io/sandbox.hpp"
#include "advplan/io/sha256.hpp"
#include "advplan/io/plugins.hpp"
#include "advplan/policy/completion_cache.hpp"
#include "advplan/llm/providers.hpp"
#include "advplan/scenario/generator.hpp"
#include "advplan/version.hpp"
#include "plan_set_key.hpp"

namespace advplan {

namespace {
/// The registry name of a spec: "greedy@8" -> greedy, "exec:cmd" -> exec.
std::string parse_policy_spec_name(const std::string& spec) { return spec.substr(0, spec.find_first_of("@:")); }
}  // namespace

namespace {

/// policies.constraint.lambda of a config (0.7 when unset), checked.
double constraint_lambda(const ExperimentConfig& cfg) {
  double lambda = 0.7;
  auto it = cfg.policy_params.find("constraint");
  if (it != cfg.policy_params.end() && it->second.contains("lambda")) {
    lambda = it->second.at("lambda");
    if (!(lambda >= 0 && lambda <= 1))
      throw PolicyError(fmt::format("{}: policies.constraint.lambda: lambda must be in [0, 1], while a value of {} was given",
                                    cfg.source, lambda));
  }
  return lambda;
}

/// Every `policies.<name>` section names a registered policy, and its parameters are ones that policy declares, in
/// range, whether or not this run plays it: a misspelt name (`constrant`) or key would otherwise leave the policy it
/// meant at its defaults without a word. (A policy the run builds is checked again as it is built.)
void check_policy_sections(const ExperimentConfig& cfg) {
  const auto& blue = BlueRegistry::instance();
  const auto& red = RedRegistry::instance();
  const auto known = [&](const std::string& name) {
    if (blue.contains(name) || red.contains(name)) return;
    std::set<std::string> names;
    for (const auto& n : blue.names()) names.insert(n);
    for (const auto& n : red.names()) names.insert(n);
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    throw ConfigError(fmt::format("{}: key 'policies.{}': no policy is named '{}' (registered: {})", cfg.source,
                                  untrusted::excerpt(name), untrusted::excerpt(name), list));
  };
  for (const auto& [name, params] : cfg.policy_params) {
    known(name);
    // A name that is both a BLUE and a RED policy (exec) passes when either side declares the key.
    const std::string where = fmt::format("{}: policies.{}", cfg.source, untrusted::excerpt(name));
    std::optional<PolicyError> refused;
    for (const auto* reg_info : {blue.contains(name) ? &blue.info(name, "BLUE") : nullptr,
                                 red.contains(name) ? &red.info(name, "RED") : nullptr}) {
      if (reg_info == nullptr) continue;
      try {
        (void)resolve_params(*reg_info, params, where);
        refused.reset();
        break;
      } catch (const PolicyError& e) {
        if (!refused) refused = e;
      }
    }
    if (refused) throw *refused;
  }
  // Not policies, but their model requests take policies.<name>.generation (docs/LLM.md "Generation settings").
  static const std::set<std::string> kModelUsers{"llm_judge", "quiz"};
  for (const auto& [name, settings] : cfg.llm.policy_generation)
    if (!kModelUsers.contains(name)) known(name);
}

bool same_sim(const SimConfig& a, const SimConfig& b) {
  return a.replications == b.replications && a.break_point == b.break_point && a.time_limit == b.time_limit &&
         a.dt == b.dt && a.noise == b.noise && a.step_noise == b.step_noise && a.model == b.model &&
         a.engagement.support == b.engagement.support && a.engagement.durations == b.engagement.durations &&
         a.engagement.effect_steps == b.engagement.effect_steps && a.engagement.replan_calls == b.engagement.replan_calls;
}

/// RunPlan::bindings: each sweep point's config, context, policies (for the sides its settings reach) and wargame
/// settings; every other condition bound to the run's own.
void bind_conditions(RunPlan& p) {
  const ExperimentConfig& cfg = *p.cfg;
  p.sims = {cfg.sim};
  for (const Condition& c : p.conditions) {
    RunPlan::Binding b;
    b.red_key = c.red;
    b.blue_key = c.blue;
    b.lambda = p.lambda;
    // The settings that reach each side and differ from the config's own values (k is in the RED spec already):
    // a side they do not reach keeps the run's policy object.
    std::vector<Setting> red_s, blue_s;
    bool sim = false;
    for (const Setting& s : c.settings) {
      if (s.path == "k") continue;
      const SettingReach r = setting_reach(s.path, c, cfg.source);
      if (const auto own = config_value(cfg, c, s.path); own && *own == s.value) continue;
      if (r.red) red_s.push_back(s);
      if (r.blue) blue_s.push_back(s);
      sim = sim || r.sim;
    }
    if (!red_s.empty() || !blue_s.empty() || sim) {
      SettingReach reach{!red_s.empty(), !blue_s.empty(), sim};
      auto point_cfg = std::make_unique<ExperimentConfig>(with_settings(cfg, c.settings));
      b.lambda = constraint_lambda(*point_cfg);
      b.point = static_cast<int>(p.point_cfgs.size());
      p.point_ctxs.push_back(std::make_unique<PolicyContext>(policy_context(*point_cfg)));
      if (auto wave = batch_wave_of(p.ctx)) p.point_ctxs.back()->set(std::move(wave));  // one wave for the whole run
      const PolicyContext& ctx = *p.point_ctxs.back();
      try {
        if (reach.red) {
          b.red_key = c.red + " [" + settings_text(red_s) + "]";
          if (!p.point_reds.contains(b.red_key)) p.point_reds.emplace(b.red_key, make_red_policy(c.red, ctx));
        }
        if (reach.blue) {
          b.blue_key = c.blue + " [" + settings_text(blue_s) + "]";
          if (!p.point_blues.contains(b.blue_key)) p.point_blues.emplace(b.blue_key, make_blue_policy(c.blue, ctx));
        }
      } catch (const PolicyError& e) {
        const std::string what = e.what();
        if (what.rfind(cfg.source, 0) == 0) throw;
        throw PolicyError(fmt::format("{}: sweep: the point '{}': {}", cfg.source, c.label, what));
      }
      if (reach.sim) {
        const auto it = std::find_if(p.sims.begin(), p.sims.end(),
                                     [&](const SimConfig& s) { return same_sim(s, point_cfg->sim); });
        b.sim = static_cast<std::size_t>(it - p.sims.begin());
        if (it == p.sims.end()) p.sims.push_back(point_cfg->sim);
      }
      p.point_cfgs.push_back(std::move(point_cfg));
    }
    p.bindings.push_back(std::move(b));
  }
  for (std::size_t a = 0; a < p.bindings.size(); ++a)
    for (std::size_t b = a + 1; b < p.bindings.size() && !p.bindings[a].keep_response; ++b)
      if (!p.conditions[b].settings.empty() && p.bindings[b].red_key == p.bindings[a].red_key &&
          p.bindings[b].blue_key == p.bindings[a].blue_key)
        p.bindings[a].keep_response = true;
  for (const auto& [key, red] : p.point_reds)
    if (red->info().thread_safety == ThreadSafety::none) p.serial.emplace("red:" + key, std::make_unique<std::mutex>());
  for (const auto& [key, blue] : p.point_blues)
    if (blue->info().thread_safety == ThreadSafety::none) p.serial.emplace("blue:" + key, std::make_unique<std::mutex>());
}

}  // namespace

RunPlan prepare_run(const ExperimentConfig& cfg, std::vector<Condition> conditions) {
  RunPlan p;
  p.cfg = &cfg;
  p.ctx = policy_context(cfg);
  p.conditions = std::move(conditions);
  if (p.conditions.empty()) throw ConfigError(fmt::format("{}: conditions: no condition to run", cfg.source));
  check_policy_sections(cfg);
  for (const auto& c : p.conditions) {
    try {
      if (!p.reds.contains(c.red)) p.reds.emplace(c.red, make_red_policy(c.red, p.ctx));
      if (!p.blues.contains(c.blue)) p.blues.emplace(c.blue, make_blue_policy(c.blue, p.ctx));
    } catch (const PolicyError& e) {
      // Parameter errors already name the config and key; unknown names and bad k are named here.
      const std::string what = e.what();
      if (what.rfind(cfg.source, 0) == 0) throw;
      std::string hint;
      const std::string red_name = parse_policy_spec_name(c.red);
      if (!RedRegistry::instance().contains(red_name) && BlueRegistry::instance().contains(red_name))
        hint = fmt::format("; '{}' is a BLUE policy, so name it as one: {{label: {}, blue: {}, red: RED}}", red_name,
                           c.red, c.red);
      throw PolicyError(fmt::format("{}: conditions: {}: {}{}", cfg.source, c.label, what, hint));
    }
  }
  if (cfg.samples > 1)  // its trace rows have no sample column (docs/DECISIONS.md "Samples")
    for (const auto& [spec, blue] : p.blues)
      if (!blue->info().traces.empty())
        throw ConfigError(fmt::format("{}: samples: {} is not supported with BLUE policy {}, which writes its own "
                                      "trace file {} without a sample column",
                                      cfg.source, cfg.samples, spec, blue->info().traces.front().name));
  for (const auto& [spec, red] : p.reds)
    if (red->info().thread_safety == ThreadSafety::none) p.serial.emplace("red:" + spec, std::make_unique<std::mutex>());
  for (const auto& [spec, blue] : p.blues)
    if (blue->info().thread_safety == ThreadSafety::none) p.serial.emplace("blue:" + spec, std::make_unique<std::mutex>());
  p.lambda = constraint_lambda(cfg);
  bind_conditions(p);
  return p;
}

const RunPlan::Binding& RunPlan::binding(const Condition& c) const {
  if (!conditions.empty() && &c >= conditions.data() && &c < conditions.data() + conditions.size() &&
      static_cast<std::size_t>(&c - conditions.data()) < bindings.size())
    return bindings[static_cast<std::size_t>(&c - conditions.data())];
  for (std::size_t i = 0; i < conditions.size() && i < bindings.size(); ++i)
    if (conditions[i].label == c.label) return bindings[i];
  throw std::logic_error(fmt::format("condition '{}' is not one of the run's", c.label));
}

const RedPolicy& RunPlan::red(const Condition& c) const {
  const Binding& b = binding(c);
  if (const auto it = point_reds.find(b.red_key); it != point_reds.end()) return *it->second;
  return *reds.at(b.red_key);
}

const BluePolicy& RunPlan::blue(const Condition& c) const {
  const Binding& b = binding(c);
  if (const auto it = point_blues.find(b.blue_key); it != point_blues.end()) return *it->second;
  return *blues.at(b.blue_key);
}

const PolicyContext& RunPlan::ctx_of(const Condition& c) const {
  const Binding& b = binding(c);
  return b.point < 0 ? ctx : *point_ctxs[static_cast<std::size_t>(b.point)];
}

}  // namespace advplan
