// run_metadata.json as a run writes it (docs/TRACES.md "run_metadata.json").
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
#include "run/run_internal.hpp"

namespace advplan::run_detail {

std::string metadata_json(const RunPlan& plan, const RunOptions& opts, const RunSummary& s, int threads,
                          const std::string& manifest_sha, const std::vector<std::pair<std::string, std::string>>& key) {
  const ExperimentConfig& cfg = *plan.cfg;
  nlohmann::ordered_json j;
  j["program"] = "advplan";
  j["version"] = std::string(version_string());
  j["git_commit"] = std::string(git_commit());
  nlohmann::ordered_json plugins = nlohmann::ordered_json::array();
  for (const auto& p : io::loaded_plugins()) plugins.push_back({{"path", p.path}, {"sha256", p.sha256}});
  j["plugins"] = plugins;
  j["command"] = opts.command;
  // Whether external programs ran in a sandbox, and which (docs/TRACES.md "run_metadata.json").
  const std::optional<SandboxSpec> sandbox = process_sandbox();
  j["sandbox"] = sandbox ? sandbox_json(*sandbox) : nlohmann::ordered_json(false);
  j["config_source"] = cfg.source;
  j["config_sha256"] = io::sha256_hex(cfg.text);
  j["config_text"] = cfg.text;
  nlohmann::ordered_json tpls = nlohmann::ordered_json::array();
  for (const auto& [src, text] : cfg.template_texts) tpls.push_back({{"file", src}, {"sha256", io::sha256_hex(text)}});
  j["templates"] = tpls;
  j["seed"] = cfg.seed;
  j["quality_weights"] = {{"effectiveness", cfg.quality.effectiveness}, {"cost", cfg.quality.cost},
                          {"risk", cfg.quality.risk}};
  j["bootstrap"] = {{"resamples", cfg.bootstrap.resamples}, {"seed", cfg.bootstrap.seed}};
  j["simulator"] = {{"replications", cfg.sim.replications}, {"break_point", cfg.sim.break_point},
                    {"time_limit", cfg.sim.time_limit},     {"dt", cfg.sim.dt},
                    {"noise", cfg.sim.noise},               {"step_noise", cfg.sim.step_noise}};
  if (cfg.sim.model != "lanchester") {  // an engagement run (a Lanchester run's metadata keeps its bytes)
    j["simulator"]["model"] = cfg.sim.model;
    j["simulator"]["engagement"] = {{"support", cfg.sim.engagement.support},
                                    {"durations", cfg.sim.engagement.durations},
                                    {"effect_steps", cfg.sim.engagement.effect_steps},
                                    {"replan_calls", cfg.sim.engagement.replan_calls}};
  }
  j["framing_mode"] = std::string(to_string(cfg.framing_mode));
  nlohmann::ordered_json conds = nlohmann::ordered_json::array();
  for (const auto& c : plan.conditions) {
    nlohmann::ordered_json cj{{"label", c.label}, {"blue", c.blue}, {"red", c.red}, {"group", c.group}};
    if (!c.settings.empty()) {  // a sweep point (docs/TRACES.md "run_metadata.json")
      nlohmann::ordered_json st = nlohmann::ordered_json::object();
      for (const Setting& x : c.settings) st[x.path] = x.value;
      cj["settings"] = st;
    }
    conds.push_back(std::move(cj));
  }
  j["conditions"] = conds;
  if (!cfg.sweep.empty() && std::any_of(plan.conditions.begin(), plan.conditions.end(), [](const Condition& c) {
        return c.group == "grid";
      })) {  // what the sweep's tables are rebuilt from (docs/TRACES.md "run_metadata.json")
    const std::vector<Condition> points = sweep_point_conditions(cfg);
    nlohmann::ordered_json pts = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < points.size(); ++i)
      pts.push_back({{"label", points[i].label}, {"values", cfg.sweep.points[i]}});
    j["sweep"] = {{"condition", cfg.sweep.condition},
                  {"settings", cfg.sweep.params},
                  {"reference", points[cfg.sweep.reference].label},
                  {"points", pts}};
  }
  nlohmann::ordered_json pols = nlohmann::ordered_json::object();
  for (const auto& [spec, p] : plan.reds) pols[spec] = {{"side", "RED"}, {"k", p->k()}, {"params", p->params()}};
  for (const auto& [spec, p] : plan.blues)
    pols[spec] = {{"side", "BLUE"}, {"params", p->params()}, {"run_counters", p->run_counters()}};
  for (const auto& [key, p] : plan.point_reds) pols[key] = {{"side", "RED"}, {"k", p->k()}, {"params", p->params()}};
  for (const auto& [key, p] : plan.point_blues)
    pols[key] = {{"side", "BLUE"}, {"params", p->params()}, {"run_counters", p->run_counters()}};
  j["effective_policies"] = pols;
  j["threads"] = threads;
  j["hardware_concurrency"] = std::thread::hardware_concurrency();
  j["scenarios"] = s.scenarios;
  if (s.stopped) j["stopped_early"] = true;  // evaluate --stop-when-decided: `scenarios` is the prefix played
  j["rows"] = s.rows;
  j["failed_rows"] = s.failed_rows;
  j["resumed_from"] = s.resumed_from;
  j["wall_seconds"] = s.seconds;
  nlohmann::ordered_json phases = nlohmann::ordered_json::object();
  for (const auto& [name, secs] : s.phase_seconds) phases[name] = secs;
  j["phase_seconds"] = phases;
  j["scenarios_with_blue_plan"] = s.scenarios_with_blue_plan;
  if (!s.usage.empty()) {  // the external policies' calls of this invocation (docs/LLM.md "Costs and limits")
    nlohmann::json usage = nlohmann::json::array();
    double total = 0;
    bool priced = true;
    for (const ModelUsage& u : s.usage) {
      const auto cost = cost_usd(u, cfg.llm);
      total += cost.value_or(0.0);
      priced = priced && cost.has_value();
      usage.push_back({{"role", u.role},
                       {"policy", u.policy},
                       {"model", u.model},
                       {"calls", u.calls},
                       {"prompt_tokens", u.prompt_tokens},
                       {"completion_tokens", u.completion_tokens},
                       {"cached_tokens", u.cached_tokens},
                       {"cache_write_tokens", u.cache_write_tokens},
                       {"batch", u.batch},
                       {"cost_usd", cost ? nlohmann::json(*cost) : nlohmann::json()}});
    }
    j["llm_usage"] = std::move(usage);
    j["llm_cost_usd"] = priced ? nlohmann::json(total) : nlohmann::json();
  }
  j["studies"] = opts.studies && !s.streamed_summaries;
  j["summary_method"] = s.streamed_summaries ? "streaming, normal-approximation intervals" : "bootstrap";
  nlohmann::ordered_json k = nlohmann::ordered_json::object();
  for (const auto& [name, value] : key) k[name] = value;
  j["run_key"] = k;
  if (opts.shard_count > 0) j["shard"] = {{"index", opts.shard_index}, {"count", opts.shard_count}};
  if (const auto cache = completion_cache_of(plan.ctx)) {  // docs/LLM.md "Completion cache"
    const auto st = cache->stats();
    j["llm_cache"] = {{"dir", cache->dir()}, {"hits", st.hits}, {"misses", st.misses}, {"corrupt", st.corrupt},
                      {"writes", st.writes}, {"write_errors", st.write_errors}};
  }
  for (const auto& obs : opts.observers)
    for (const auto& [name, value] : obs->metadata(cfg)) j[obs->name()][name] = value;
  j["manifest_sha256"] = manifest_sha;
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace advplan::run_detail
