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
namespace fs = std::filesystem;
using io::CsvTable;

namespace {
/// The registry name of a spec: "greedy@8" -> greedy, "exec:cmd" -> exec.
std::string parse_policy_spec_name(const std::string& spec) { return spec.substr(0, spec.find_first_of("@:")); }
}  // namespace

namespace {

/// The scenarios the run generated, kept for the observers that read the whole corpus (wants_corpus), so that
/// they do not generate it again. Filled from the scenario tasks (distinct indices); complete() generates what a
/// resumed run did not evaluate itself.
class KeptCorpus {
 public:
  explicit KeptCorpus(std::size_t total) : scenarios_(total), kept_(total, 0) {}
  void put(std::size_t index, Scenario sc) {
    scenarios_[index] = std::move(sc);
    kept_[index] = 1;
  }
  /// The whole corpus of `cfg`, in corpus order (call from one thread, after the scenarios).
  const std::vector<Scenario>& complete(const ExperimentConfig& cfg) {
    if (scenarios_.size() != corpus_size(cfg)) throw Error("the kept corpus is not this config's");
    tbb::parallel_for(std::size_t{0}, scenarios_.size(), [&](std::size_t i) {
      if (!kept_[i]) scenarios_[i] = corpus_scenario(cfg, i);
    });
    std::fill(kept_.begin(), kept_.end(), 1);
    return scenarios_;
  }

 private:
  std::vector<Scenario> scenarios_;
  std::vector<unsigned char> kept_;
};

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

std::optional<double> cost_usd(const ModelUsage& u, const LlmConfig& llm) {
  const auto it = llm.prices.find(u.model);
  if (it == llm.prices.end()) return std::nullopt;
  const TokenPrice& p = it->second;
  const std::uint64_t cached = std::min(u.cached_tokens, u.prompt_tokens);
  const std::uint64_t written = std::min(u.cache_write_tokens, u.prompt_tokens - cached);
  const std::uint64_t uncached = u.prompt_tokens - cached - written;
  const double full = (static_cast<double>(uncached) * p.input_per_mtok +
                       static_cast<double>(cached) * p.input_cached_per_mtok.value_or(p.input_per_mtok) +
                       static_cast<double>(written) * p.cache_write_per_mtok.value_or(p.input_per_mtok) +
                       static_cast<double>(u.completion_tokens) * p.output_per_mtok) /
                      1e6;
  return u.batch ? full * llm.batch_discount : full;
}

namespace {

/// "; 40% of prompt tokens read from the provider's cache, saving $0.0012" (the saving against pricing them as
/// uncached input); "" when no call reported a cached token.
std::string cached_share(const std::vector<ModelUsage>& usage, const LlmConfig& llm) {
  std::uint64_t prompt = 0, cached = 0;
  double saved = 0;
  bool priced = true;
  for (const ModelUsage& u : usage) {
    prompt += u.prompt_tokens;
    cached += u.cached_tokens;
    ModelUsage uncached = u;
    uncached.cached_tokens = uncached.cache_write_tokens = 0;
    const auto with = cost_usd(u, llm), without = cost_usd(uncached, llm);
    if (with && without) saved += *without - *with;
    else if (u.cached_tokens > 0) priced = false;
  }
  if (cached == 0 || prompt == 0) return "";
  const double share = 100.0 * static_cast<double>(cached) / static_cast<double>(prompt);
  return priced ? fmt::format("; {:.0f}% of prompt tokens read from the provider's cache, saving ${:.4f}", share, saved)
                : fmt::format("; {:.0f}% of prompt tokens read from the provider's cache", share);
}

}  // namespace

std::string usage_summary(const std::vector<ModelUsage>& usage, const LlmConfig& llm) {
  if (usage.empty()) return "";
  std::uint64_t calls = 0, prompt = 0, completion = 0;
  double total = 0;
  std::string per, unpriced;
  for (const ModelUsage& u : usage) {
    calls += u.calls;
    prompt += u.prompt_tokens;
    completion += u.completion_tokens;
    per += fmt::format("{}{} {} {}", per.empty() ? "" : ", ", u.role, u.policy, u.calls);
    if (const auto c = cost_usd(u, llm)) total += *c;
    else if (u.model.empty()) continue;  // an exec: program: no model, no price
    else if (unpriced.find("'" + u.model + "'") == std::string::npos)
      unpriced += fmt::format("{}'{}'", unpriced.empty() ? "" : ", ", u.model);
  }
  const std::string cost = unpriced.empty() ? fmt::format("${:.4f} under llm.prices", total)
                                            : fmt::format("cost unknown (no llm.prices entry for {})", unpriced);
  return fmt::format("model calls: {} ({}); {} prompt + {} completion tokens; {}{}", calls, per, prompt, completion, cost,
                     cached_share(usage, llm));
}

namespace {

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

}  // namespace

namespace {

constexpr const char* kWork = ".advplan-work";
constexpr const char* kJournal = "journal";
constexpr const char* kKey = "run_key";

void write_all(int fd, const std::string& data, const std::string& path) {
  const char* p = data.data();
  std::size_t n = data.size();
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) throw IoError(fmt::format("{}: write failed ({})", path, std::strerror(errno)));
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

/// One trace file streamed into the work directory: rows are buffered and appended in scenario order.
struct Stream {
  std::string name;     ///< final path relative to the run directory
  std::string work;     ///< path in the work directory
  std::vector<std::string> header;
  int fd = -1;
  std::uint64_t size = 0;  ///< bytes on disk after the last flush
  std::uint64_t header_bytes = 0;
  bool jsonl = false;     ///< candidate_plans.jsonl: JSON lines, no header
  bool optional = false;  ///< not written when it has no rows (extra trace files, observers' traces)
  bool shard_only = false;  ///< an observer's trace: kept under its name by a shard, handed to finish() otherwise
  std::uint64_t rows = 0;  ///< rows on disk after the last flush
  io::Sha256 sha;          ///< of the bytes on disk, header included (each journal entry records it)
  std::string buf;
  std::uint64_t buf_rows = 0;
};

/// What identifies a run for --resume: a resumed run must be the same run.
/// total * i / n without overflow (a shard count near 2^64 once wrapped the product).
__extension__ typedef unsigned __int128 u128;  // GCC and clang; __extension__ keeps -Wpedantic quiet
std::size_t shard_bound(std::size_t total, std::size_t i, std::size_t n) {
  return static_cast<std::size_t>(static_cast<u128>(total) * i / n);
}

/// The id of scenario i of the corpus order (generate_corpus: templates in order, seeds ascending).
std::string corpus_id(const ExperimentConfig& cfg, std::size_t i) {
  const auto per_template = static_cast<std::size_t>(cfg.seed_to - cfg.seed_from + 1);
  return fmt::format("{}-{}", cfg.templates.at(i / per_template).id, cfg.seed_from + i % per_template);
}

constexpr const char* kTranscriptsFile = "transcripts.jsonl";

/// Whether the run writes transcripts.jsonl: some policy of it is external and traces.transcripts is not none.
bool records_transcripts(const RunPlan& plan) {
  return plan.cfg->transcripts != TranscriptsMode::none && has_external_policy(plan);
}

std::vector<std::pair<std::string, std::string>> run_key(const RunPlan& plan, std::size_t total, std::size_t shards) {
  const ExperimentConfig& cfg = *plan.cfg;
  std::string conds;
  for (const auto& c : plan.conditions) {
    conds += c.label + "|" + c.blue + "|" + c.red + "|" + c.group;
    // A sweep point's settings, so that a merge refuses shards whose recorded settings were changed (conditions
    // without settings hash as before).
    for (const Setting& s : c.settings) conds += fmt::format("|{}={:.17g}", s.path, s.value);
    conds += "\n";
  }
  std::string tpls;
  for (const auto& [src, text] : cfg.template_texts) tpls += io::sha256_hex(text) + "\n";
  // Loaded plug-ins by content: a shard whose policies came from a plug-in never mixes with one that had none.
  std::vector<std::string> plugin_sums;
  for (const auto& p : io::loaded_plugins()) plugin_sums.push_back(p.sha256);
  std::sort(plugin_sums.begin(), plugin_sums.end());
  std::string plugins;
  for (const auto& s : plugin_sums) plugins += s + "\n";
  // The most specific fields first, so an error names the seed rather than the config hash that it changes.
  std::vector<std::pair<std::string, std::string>> key{{"program_version", std::string(version_string())},
          {"program_commit", std::string(git_commit())},
          {"plugins_sha256", plugin_sums.empty() ? std::string("none") : io::sha256_hex(plugins)},
          {"seed", std::to_string(cfg.seed)},
          {"scenarios", std::to_string(total)},
          {"shards", std::to_string(shards)},
          {"conditions_sha256", io::sha256_hex(conds)},
          {"templates_sha256", io::sha256_hex(tpls)},
          {"config_sha256", io::sha256_hex(cfg.text)},
          {"candidate_plans", cfg.candidate_plans ? "true" : "false"},
          {"transcripts", records_transcripts(plan) ? to_string(cfg.transcripts) : "none"},
          {"plans", records_plans(plan) ? "true" : "false"}};
  // A user's map (terrain: {geo: {geojson: FILE}}) is part of what the run is, but not of the config's text.
  if (!cfg.geo_map_sha256.empty()) key.emplace_back("geo_map_sha256", cfg.geo_map_sha256);
  // A sandboxed run is resumed and merged only with sandboxed parts, so that its record stays true (a run without a
  // sandbox keeps the key it had).
  if (process_sandbox()) key.emplace_back("sandbox", "bwrap");
  // The plan sets the conditions replay, by content (like the map): a resume or a merge never plays an edited one.
  for (auto& field : detail::plan_set_key_fields(plan.conditions)) key.push_back(std::move(field));
  return key;
}

std::string key_text(const std::vector<std::pair<std::string, std::string>>& key) {
  std::string t;
  for (const auto& [k, v] : key) t += k + "=" + v + "\n";
  return t;
}

/// One journal entry: "<done> <rows> <failed> <with_plan>", then "<bytes> <rows> <sha256>" per stream (the
/// sha256 of the file's first <bytes> bytes).
struct JournalEntry {
  std::size_t done = 0, rows = 0, failed = 0, with_plan = 0;
  struct File {
    std::uint64_t bytes = 0, rows = 0;
    std::string sha256;
  };
  std::vector<File> files;  ///< per stream
  std::size_t end = 0;      ///< offset just past the entry's line in the journal
};

/// Every well-formed entry of the journal, in order. A torn last line (kill -9 mid-write) and malformed lines are
/// skipped; entries whose counts go backwards are skipped too (each entry covers at least its predecessor).
std::vector<JournalEntry> journal_entries(const std::string& text, std::size_t nfiles) {
  std::vector<JournalEntry> out;
  std::size_t pos = 0;
  while (true) {
    const auto nl = text.find('\n', pos);
    if (nl == std::string::npos) break;
    std::istringstream ls(text.substr(pos, nl - pos));
    pos = nl + 1;
    JournalEntry e;
    e.end = pos;
    if (!(ls >> e.done >> e.rows >> e.failed >> e.with_plan)) continue;
    bool ok = true;
    for (std::size_t i = 0; i < nfiles && ok; ++i) {
      JournalEntry::File f;
      ok = static_cast<bool>(ls >> f.bytes >> f.rows >> f.sha256) && f.sha256.size() == 64 &&
           f.sha256.find_first_not_of("0123456789abcdef") == std::string::npos;
      e.files.push_back(std::move(f));
    }
    std::string extra;
    if (!ok || (ls >> extra)) continue;
    if (!out.empty()) {
      bool backwards = e.done < out.back().done;
      for (std::size_t i = 0; i < nfiles; ++i) backwards = backwards || e.files[i].bytes < out.back().files[i].bytes;
      if (backwards) continue;
    }
    out.push_back(std::move(e));
  }
  return out;
}

/// Whether each entry's files match `path`: its first bytes hash to the recorded sha256. One pass over the file;
/// `ok[j]` is cleared for entry j when they do not (or the file is shorter).
void verify_journal_file(const std::string& path, const std::vector<JournalEntry>& entries, std::size_t stream,
                         std::vector<bool>& ok) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    std::fill(ok.begin(), ok.end(), false);
    return;
  }
  io::Sha256 sha;
  std::uint64_t fed = 0;
  std::vector<char> buf(1 << 16);
  bool eof = false;
  for (std::size_t j = 0; j < entries.size(); ++j) {
    const std::uint64_t want = entries[j].files[stream].bytes;
    while (fed < want && !eof) {
      const auto n = ::read(fd, buf.data(), static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), want - fed)));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        eof = true;
        break;
      }
      sha.update(std::string_view(buf.data(), static_cast<std::size_t>(n)));
      fed += static_cast<std::uint64_t>(n);
    }
    if (fed != want || sha.hex() != entries[j].files[stream].sha256) ok[j] = false;
  }
  ::close(fd);
}

/// Removes temporary files an interrupted atomic write left behind (".<name>.tmp-XXXXXX").
void remove_stale_temporaries(const std::string& dir) {
  std::vector<fs::path> stale;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    const std::string n = it->path().filename().string();
    if (it->is_directory() && n == kWork) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_directory() && n.size() > 1 && n[0] == '.' && n.find(".tmp-") != std::string::npos) stale.push_back(it->path());
  }
  for (const auto& p : stale) fs::remove(p);
}


/// The streamed files, in a fixed order: scenarios, per_scenario, candidates, the BLUE policies' extra trace
/// files (in the order the conditions first name them), geo_moves, candidate_plans, then each observer's traces.
std::string header_text(const Stream& st) {
  std::string h;
  if (!st.jsonl) io::append_csv_row(h, st.header);
  return h;
}

/// Where make_streams put the streams that are not the fixed three.
struct StreamLayout {
  std::vector<std::string> extra_names;  ///< the extra trace files (and geo_moves), streams 3, 4, ...
  std::size_t candidate_plans = SIZE_MAX;  ///< candidate_plans.jsonl's stream, when written
  std::size_t transcripts = SIZE_MAX;      ///< transcripts.jsonl's stream, when written
  std::size_t plans = SIZE_MAX;            ///< plans.jsonl's stream, when written
  std::vector<std::size_t> observer_first;  ///< per observer, its first trace's stream
};

std::vector<Stream> make_streams(const RunPlan& plan, const RunObservers& observers, const fs::path& work,
                                 StreamLayout& layout) {
  std::vector<std::string>& extra_names = layout.extra_names;
  std::vector<Stream> streams;
  auto add_stream = [&](const std::string& name, const std::vector<std::string>& header, const std::string& work_name,
                        bool optional = false, bool jsonl = false) {
    Stream st;
    st.name = name;
    st.work = (work / work_name).string();
    st.header = header;
    st.jsonl = jsonl;
    st.optional = optional;
    st.header_bytes = header_text(st).size();
    streams.push_back(std::move(st));
  };
  add_stream("scenarios.csv", schema::scenarios(), "scenarios.csv");
  const bool sampled = plan.cfg->samples > 1;
  add_stream("per_scenario.csv", schema::per_scenario(sampled), "per_scenario.csv");
  add_stream("candidates.csv", schema::candidates(sampled), "candidates.csv");
  for (const auto& c : plan.conditions)
    for (const auto& f : plan.blue(c).info().traces)
      if (std::find(extra_names.begin(), extra_names.end(), f.name) == extra_names.end()) {
        extra_names.push_back(f.name);
        add_stream(f.name, f.header, f.name, true);
      }
  if (std::any_of(plan.sims.begin(), plan.sims.end(), [](const SimConfig& s) { return s.model == "engagement"; })) {
    // The engagement wargame's traces (docs/TRACES.md "engagements.csv"), written like extra trace files.
    for (const auto& [name, header] : {std::pair{kEngagementsFile, &schema::engagements()},
                                       std::pair{kReplicationsFile, &schema::replications()}}) {
      extra_names.push_back(name);
      add_stream(name, *header, name, true);
    }
    if (std::any_of(plan.conditions.begin(), plan.conditions.end(),
                    [&](const Condition& c) { return plan.blue(c).replans() || plan.red(c).replans(); })) {
      extra_names.push_back(kReplansFile);  // docs/TRACES.md "replans.csv"
      add_stream(kReplansFile, schema::replans(), kReplansFile, true);
    }
  }
  if (plan.cfg->terrain_geo) {  // the moves on the map (docs/GEO.md), written like an extra trace file
    extra_names.push_back(kGeoMovesFile);
    add_stream(kGeoMovesFile, schema::geo_moves(), kGeoMovesFile, true);
  }
  if (plan.cfg->candidate_plans) {
    layout.candidate_plans = streams.size();
    add_stream("candidate_plans.jsonl", {}, "candidate_plans.jsonl", false, true);
  }
  if (records_transcripts(plan)) {
    layout.transcripts = streams.size();
    add_stream(kTranscriptsFile, {}, kTranscriptsFile, false, true);
  }
  if (records_plans(plan)) {
    layout.plans = streams.size();
    add_stream("plans.jsonl", {}, "plans.jsonl", false, true);
  }
  for (const auto& obs : observers) {
    layout.observer_first.push_back(streams.size());
    for (const auto& t : obs->traces(plan)) {
      add_stream(t.name, t.header, t.name, true);
      streams.back().shard_only = true;
    }
  }
  return streams;
}

/// Records the wall time since the previous phase (or since t0) as phase `name`.
void mark_phase(RunSummary& s, const char* name, std::chrono::steady_clock::time_point t0) {
  double before = 0;
  for (const auto& [n, secs] : s.phase_seconds) before += secs;
  const double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.phase_seconds.emplace_back(name, now - before);
}

/// MANIFEST, then run_metadata.json, then the work directory goes (its journal first: from then on the run is
/// complete, and a half-removed work directory is cleared by --resume).
RunSummary seal_run(const RunPlan& plan, const RunOptions& opts, RunSummary summary, int threads,
                    std::chrono::steady_clock::time_point t0, const std::vector<std::pair<std::string, std::string>>& key) {
  const fs::path dir(opts.out_dir), work = dir / kWork;
  const std::string manifest = io::write_manifest(opts.out_dir);
  mark_phase(summary, "manifest", t0);
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  io::write_file_atomic((dir / io::kMetadataFile).string(),
                        metadata_json(plan, opts, summary, threads, io::sha256_hex(manifest), key));
  fs::remove(work / kJournal);
  fs::remove_all(work);
  return summary;
}

/// Every scenario is on disk in the work directory: moves the traces into place and writes what derives from
/// them.
RunSummary finish_run(const RunPlan& plan, const RunOptions& opts, std::vector<Stream>& streams,
                      const StreamLayout& layout, KeptCorpus* corpus, RunSummary summary, int threads,
                      std::chrono::steady_clock::time_point t0, const std::vector<std::pair<std::string, std::string>>& key) {
  mark_phase(summary, "scenarios", t0);
  const ExperimentConfig& cfg = *plan.cfg;
  const fs::path dir(opts.out_dir);
  // Every scenario is on disk: move the traces into place (an extra trace file without rows is not written).
  // A shard keeps the observers' traces too (the merge hands them on) and stops there: the summaries and the
  // observers' files are corpus-level.
  const bool shard = opts.shard_count > 0;
  for (std::size_t i = 0; i < streams.size(); ++i) {
    const Stream& st = streams[i];
    if ((st.shard_only && !shard) || !fs::exists(st.work)) continue;
    if (st.optional && st.size == st.header_bytes) continue;
    if (std::rename(st.work.c_str(), (dir / st.name).c_str()) != 0)
      throw IoError(fmt::format("{}: cannot move into place ({})", (dir / st.name).string(), std::strerror(errno)));
  }

  if (cfg.terrain_geo && !shard) write_run_maps(cfg, opts.out_dir);  // maps/<scenario>.geojson (docs/GEO.md)
  if (shard) return seal_run(plan, opts, summary, threads, t0, key);

  const BootstrapSettings bs{cfg.bootstrap.resamples, cfg.bootstrap.seed};
  // A run of several samples averages them within each scenario first, which the streamed summaries do not.
  if (cfg.samples == 1 && (opts.summary == "streaming" ||
                           (opts.summary == "auto" && summary.rows - summary.failed_rows > kStreamingSummaryRows))) {
    // At scale: one pass over per_scenario.csv, memory independent of the corpus (docs/RESULTS.md).
    const StreamedSummaries ss = stream_summaries((dir / "per_scenario.csv").string(), bs);
    summary.first_failure = ss.first_failure;
    summary.streamed_summaries = true;
    io::write_files(opts.out_dir, {{"bootstrap_summary.csv", ss.bootstrap_summary},
                               {"budget_curve.csv", ss.budget_curve},
                               {"terrain_summary.csv", ss.terrain_summary}});
    if (opts.before_manifest) opts.before_manifest(opts.out_dir);
    return seal_run(plan, opts, summary, threads, t0, key);
  }

  // Everything derived is computed from the written CSVs, through the same functions `advplan tables` uses.
  RunTraces run;
  run.dir = opts.out_dir;
  run.scenarios = CsvTable::read((dir / "scenarios.csv").string(), schema::scenarios());
  run.per_scenario = CsvTable::read((dir / "per_scenario.csv").string(), schema::per_scenario(cfg.samples > 1));
  // A run of several samples: every summary and observer reads the samples' means (sample_means).
  if (cfg.samples > 1) run.per_scenario = sample_means(run.per_scenario);
  const CsvTable& per = run.per_scenario;
  {
    const auto cs = per.col("status"), cr = per.col("failure_reason");
    for (const auto& r : per.rows())
      if (r[cs] != "ok") {
        summary.first_failure = r[cr];
        break;
      }
  }
  std::vector<std::pair<std::string, std::string>> files;
  const CsvTable boot = bootstrap_summary_table(per, bs);
  files.emplace_back("bootstrap_summary.csv", boot.to_string());
  {
    CsvTable storage;
    const CsvTable& ok = ok_rows(per, storage);
    const SummaryIntervals iv(boot, ok, bs);
    files.emplace_back("budget_curve.csv", budget_curve_table(ok, iv).to_string());
    files.emplace_back("terrain_summary.csv", terrain_summary_table(ok, iv).to_string());
  }
  io::write_files(opts.out_dir, files);
  run.bootstrap_summary = boot;
  mark_phase(summary, "summaries", t0);
  // A run in which every row failed keeps its rows and reasons, but has nothing for the analyses to derive.
  if (summary.rows > summary.failed_rows) {
    const std::vector<Scenario>* whole = corpus ? &corpus->complete(cfg) : nullptr;
    for (std::size_t o = 0; o < opts.observers.size(); ++o) {
      RunObserver& obs = *opts.observers[o];
      RunArtifacts a{plan, run, bs, {}, whole};
      const auto traces = obs.traces(plan);
      for (std::size_t t = 0; t < traces.size(); ++t)
        a.traces.push_back(CsvTable::read(streams[layout.observer_first[o] + t].work, traces[t].header));
      io::write_files(opts.out_dir, obs.finish(a));
      mark_phase(summary, obs.name().c_str(), t0);
    }
  }
  if (opts.before_manifest) opts.before_manifest(opts.out_dir);
  return seal_run(plan, opts, summary, threads, t0, key);
}

}  // namespace

namespace {

using RunKey = std::vector<std::pair<std::string, std::string>>;

/// The options no run may start with, refused before any work.
void check_run_options(const RunOptions& opts) {
  if (opts.force && opts.resume) throw ConfigError("run: use at most one of --force and --resume");
  (void)parse_progress_mode(opts.progress_mode);  // a bad --progress fails before any work
  if (opts.summary != "auto" && opts.summary != "bootstrap" && opts.summary != "streaming")
    throw ConfigError(fmt::format("--summary {}: accepted values are auto, bootstrap and streaming", opts.summary));
  if (opts.shard_count > 0 && opts.shard_index >= opts.shard_count)
    throw ConfigError(fmt::format("--shard {}/{}: the shard index must be below the shard count (0 to {})",
                                  opts.shard_index, opts.shard_count, opts.shard_count - 1));
}

/// The journal of the work directory: one line per checkpoint, written after the rows it counts.
struct Journal {
  std::string path;
  int fd = -1;

  /// "done rows failed with_plan" and each stream's "bytes rows sha256".
  static std::string line(std::size_t done, const RunSummary& summary, const std::vector<Stream>& streams) {
    std::string line =
        fmt::format("{} {} {} {}", done, summary.rows, summary.failed_rows, summary.scenarios_with_blue_plan);
    for (const Stream& st : streams) line += fmt::format(" {} {} {}", st.size, st.rows, st.sha.hex());
    return line + '\n';
  }

  /// Writes the streams' buffered rows, syncs them, then appends and syncs the journal line that counts them.
  void flush(std::vector<Stream>& streams, std::size_t done, const RunSummary& summary) const {
    for (Stream& st : streams) {
      if (st.buf.empty()) continue;
      write_all(st.fd, st.buf, st.work);
      st.sha.update(st.buf);
      st.size += st.buf.size();
      st.rows += st.buf_rows;
      st.buf.clear();
      st.buf_rows = 0;
      // On disk before the journal says so: after a power loss the journal never claims rows the files lost.
      if (::fdatasync(st.fd) != 0 && errno != EINVAL)
        throw IoError(fmt::format("{}: cannot sync ({})", st.work, std::strerror(errno)));
    }
    // The journal line is written after the rows it counts: a kill between the two loses only rows that the
    // resumed run truncates and writes again. Each entry carries every file's length and sha256, which a resume
    // checks before it trusts the entry.
    write_all(fd, line(done, summary, streams), path);
    if (::fdatasync(fd) != 0 && errno != EINVAL)
      throw IoError(fmt::format("{}: cannot sync ({})", path, std::strerror(errno)));
  }

  /// Closes the journal and the streams' files; a failed close of a stream is a failed write.
  void close(std::vector<Stream>& streams) {
    ::close(fd);
    fd = -1;
    for (Stream& st : streams)
      if (st.fd >= 0) {
        if (::close(st.fd) != 0) throw IoError(fmt::format("{}: write failed ({})", st.work, std::strerror(errno)));
        st.fd = -1;
      }
  }
};

/// The summary of the complete run in `dir` when it is this run (its recorded key compared field by field), or
/// nullopt when `dir` holds no complete run.
std::optional<RunSummary> complete_run(const fs::path& dir, const fs::path& work, const RunKey& key, std::size_t count) {
  if (!fs::exists(dir / io::kManifestFile) || !fs::exists(dir / io::kMetadataFile)) return std::nullopt;
  const std::string meta_path = (dir / io::kMetadataFile).string();
  const auto meta = nlohmann::json::parse(io::read_text_file(meta_path, io::kMaxDocumentBytes), nullptr, false);
  const nlohmann::json* recorded =
      meta.is_object() && meta.contains("run_key") && meta["run_key"].is_object() ? &meta["run_key"] : nullptr;
  for (const auto& [k, v] : key) {
    const std::string was = recorded && recorded->contains(k) && (*recorded)[k].is_string()
                                ? (*recorded)[k].get<std::string>()
                                : std::string();
    if (was != v) detail::refuse_plan_set_change(meta_path, "complete", k, was, v);
    if (was != v)
      throw ConfigError(fmt::format("{}: --resume: the complete run here has a different {} ({}, now {}); resume "
                                    "only the run it is, or pass --force to start over",
                                    meta_path, k, was.empty() ? "none" : untrusted::excerpt(was, 80), v));
  }
  // "Already complete" only while it still is: its files as its MANIFEST lists them, and that MANIFEST the one its
  // metadata recorded (a PSRO replays its complete runs through here).
  io::verify_run_directory(dir.string());
  const std::string manifest = (dir / io::kManifestFile).string();
  if (untrusted::string_member(meta, "manifest_sha256") != io::sha256_file(manifest))
    throw CsvError(fmt::format("{}: does not match the manifest_sha256 recorded in {}; --resume continues only the run "
                               "it recorded (pass --force to start over)",
                               manifest, meta_path));
  // A kill may have left the work directory half removed.
  fs::remove_all(work);
  RunSummary summary;
  if (meta.is_object()) {
    summary.rows = untrusted::count_member(meta, "rows");
    summary.failed_rows = untrusted::count_member(meta, "failed_rows");
    summary.scenarios_with_blue_plan = untrusted::count_member(meta, "scenarios_with_blue_plan");
  }
  summary.scenarios = count;
  summary.resumed_from = count;
  summary.already_complete = true;
  return summary;
}

/// Refuses an interrupted run whose recorded key differs from this run's in any field.
void check_interrupted_key(const fs::path& work, const RunKey& key) {
  const std::string recorded = io::read_text_file((work / kKey).string(), io::kMaxDocumentBytes);
  std::istringstream in(recorded);
  std::map<std::string, std::string> was;
  for (std::string line; std::getline(in, line);)
    if (auto eq = line.find('='); eq != std::string::npos) was[line.substr(0, eq)] = line.substr(eq + 1);
  for (const auto& [k, v] : key) {
    if (was[k] != v) detail::refuse_plan_set_change((work / kKey).string(), "interrupted", k, was[k], v);
    if (was[k] != v)
      throw ConfigError(fmt::format("{}: --resume: the interrupted run has a different {} ({}, now {}); resume it "
                                    "with its own config, or pass --force to start over",
                                    (work / kKey).string(), k, was[k].empty() ? "none" : was[k], v));
  }
}

/// The latest journal entry that the files bear out: each file's first bytes hash to what the entry recorded, and
/// the scenario and row counts agree with the rows (a power loss can leave a file shorter than its journal, or
/// zero-filled; a forged "all done" line does not match the rows). The journal is cut back to it.
JournalEntry verified_journal_entry(const fs::path& dir, const std::string& journal_path,
                                    const std::vector<Stream>& streams, std::size_t count) {
  const std::string journal_text = io::read_text_file(journal_path, io::kMaxListBytes);
  const std::vector<JournalEntry> entries = journal_entries(journal_text, streams.size());
  if (entries.empty()) throw IoError(fmt::format("{}: no complete entry; pass --force to start over", journal_path));
  std::vector<bool> ok(entries.size(), true);
  for (std::size_t i = 0; i < streams.size(); ++i) {
    const Stream& st = streams[i];
    const bool moved =
        !st.name.empty() && !fs::exists(fs::symlink_status(st.work)) && fs::exists(fs::symlink_status(dir / st.name));
    verify_journal_file(moved ? (dir / st.name).string() : st.work, entries, i, ok);
  }
  for (std::size_t j = 0; j < entries.size(); ++j) {
    const JournalEntry& e = entries[j];
    // stream 0 is scenarios.csv (one row per scenario), stream 1 per_scenario.csv (every row)
    if (e.files.size() < 2 || e.files[0].rows != e.done || e.files[1].rows != e.rows || e.done > count ||
        e.failed > e.rows || e.with_plan > e.done)
      ok[j] = false;
  }
  std::size_t pick = entries.size();
  for (std::size_t j = entries.size(); j-- > 0;)
    if (ok[j]) {
      pick = j;
      break;
    }
  if (pick == entries.size())
    throw IoError(fmt::format("{}: no entry matches the trace files beside it (they were cut short or changed after "
                              "it was written); pass --force to start over",
                              journal_path));
  const JournalEntry& entry = entries[pick];
  if (pick + 1 < entries.size())
    fmt::print(stderr,
               "advplan: {}: the last {} journal entr{} do not match the trace files (a crash or power loss cut "
               "them short); resuming from scenario {} of {}\n",
               journal_path, entries.size() - 1 - pick, entries.size() - 1 - pick == 1 ? "y does" : "ies do",
               entry.done, count);
  // The journal is cut back to that entry, so the next entry starts on a line of its own after it.
  if (::truncate(journal_path.c_str(), static_cast<off_t>(entry.end)) != 0)
    throw IoError(fmt::format("{}: cannot truncate ({})", journal_path, std::strerror(errno)));
  return entry;
}

/// Reopens each stream's work file cut back to `entry`, with its running digest over the bytes kept.
void reopen_streams(std::vector<Stream>& streams, const JournalEntry& entry, bool all_done) {
  for (std::size_t i = 0; i < streams.size(); ++i) {
    Stream& st = streams[i];
    st.size = entry.files[i].bytes;
    st.rows = entry.files[i].rows;
    const bool moved = all_done && !st.name.empty() && !fs::exists(st.work);
    if (moved) continue;  // finalisation had already moved it into place
    st.fd = ::open(st.work.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (st.fd < 0) throw IoError(fmt::format("{}: cannot reopen ({})", st.work, std::strerror(errno)));
    if (::ftruncate(st.fd, static_cast<off_t>(st.size)) != 0)
      throw IoError(fmt::format("{}: cannot truncate to its last complete scenario ({})", st.work, std::strerror(errno)));
    // The running digest again, over the bytes kept (verified above).
    std::vector<char> b(1 << 16);
    for (std::uint64_t at = 0; at < st.size;) {
      const auto n = ::pread(st.fd, b.data(), static_cast<std::size_t>(std::min<std::uint64_t>(b.size(), st.size - at)),
                             static_cast<off_t>(at));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw IoError(fmt::format("{}: cannot read back ({})", st.work, std::strerror(errno)));
      st.sha.update(std::string_view(b.data(), static_cast<std::size_t>(n)));
      at += static_cast<std::uint64_t>(n);
    }
    if (::lseek(st.fd, 0, SEEK_END) < 0) throw IoError(fmt::format("{}: cannot seek ({})", st.work, std::strerror(errno)));
  }
}

/// Creates the work directory under a fresh random name (mkdtemp) with the key, the headers and journal entry 0,
/// then renames it into place, so .advplan-work is always resumable. Returns the journal's descriptor.
int create_work_directory(const fs::path& dir, const fs::path& work, const RunKey& key, std::vector<Stream>& streams,
                          const std::string& journal_path, const RunSummary& summary) {
  std::string tmpl = (dir / (std::string(kWork) + "-XXXXXX")).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  if (::mkdtemp(name.data()) == nullptr)
    throw IoError(fmt::format("{}: cannot create the work directory ({})", work.string(), std::strerror(errno)));
  const fs::path staging(name.data());
  io::write_file_atomic((staging / kKey).string(), key_text(key));
  for (Stream& st : streams) {
    const std::string p = (staging / fs::path(st.work).filename()).string();
    st.fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (st.fd < 0) throw IoError(fmt::format("{}: cannot create ({})", p, std::strerror(errno)));
    const std::string h = header_text(st);
    write_all(st.fd, h, st.work);
    st.sha.update(h);
    st.size = h.size();
    st.header_bytes = h.size();
  }
  const std::string jp = (staging / kJournal).string();
  const int fd = ::open(jp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw IoError(fmt::format("{}: cannot create ({})", jp, std::strerror(errno)));
  write_all(fd, Journal::line(0, summary, streams), journal_path);
  // Headers and the first entry on disk before the directory becomes the run's work directory.
  for (Stream& st : streams) (void)::fdatasync(st.fd);
  (void)::fdatasync(fd);
  if (std::rename(staging.c_str(), work.c_str()) != 0)
    throw IoError(fmt::format("{}: cannot create the work directory ({})", work.string(), std::strerror(errno)));
  return fd;
}

/// A scenario's rows rendered as CSV text per stream (in the parallel stage, so the in-order stage only appends
/// text: append_csv_row writes a row the same wherever it is called).
struct Rendered {
  std::shared_ptr<ScenarioOutcome> o;
  std::vector<std::string> text;    // per stream
  std::vector<std::uint64_t> rows;  // per stream
};

/// Corpus scenario `c`: generated, evaluated, shown to the observers (before it is kept or dropped; their rows
/// follow the traces'), and rendered.
std::shared_ptr<Rendered> evaluate_and_render(const RunPlan& plan, const RunOptions& opts, const StreamLayout& layout,
                                              std::size_t nstreams, std::size_t c, std::optional<KeptCorpus>& corpus) {
  const ExperimentConfig& cfg = *plan.cfg;
  const std::size_t per_template = cfg.seed_to - cfg.seed_from + 1;
  Scenario sc = generate_scenario(cfg.templates[c / per_template], cfg.seed_from + c % per_template,
                                  GeneratorOptions{cfg.framing_mode, std::nullopt});
  auto r = std::make_shared<Rendered>();
  r->o = std::make_shared<ScenarioOutcome>(evaluate_scenario(sc, plan));
  r->text.resize(nstreams);
  r->rows.assign(nstreams, 0);
  const ScenarioOutcome& o = *r->o;
  auto add = [&](std::size_t s, const std::vector<std::string>& row) {
    io::append_csv_row(r->text[s], row);
    ++r->rows[s];
  };
  add(0, o.scenario_row);
  for (const auto& row : o.per_scenario) add(1, row);
  for (const auto& row : o.candidates) add(2, row);
  for (std::size_t e = 0; e < layout.extra_names.size(); ++e)
    if (auto it = o.extra.find(layout.extra_names[e]); it != o.extra.end())
      for (const auto& row : it->second) add(3 + e, row);
  auto add_lines = [&](std::size_t s, const std::vector<std::string>& lines) {
    if (s == SIZE_MAX) return;
    for (const auto& line : lines) {
      r->text[s] += line;
      r->text[s] += '\n';
      ++r->rows[s];
    }
  };
  add_lines(layout.candidate_plans, o.candidate_plans);
  add_lines(layout.transcripts, o.transcripts);
  add_lines(layout.plans, o.plans);
  std::vector<std::vector<TraceRow>> observer_rows;
  for (std::size_t k = 0; k < opts.observers.size(); ++k) {
    const std::size_t first = layout.observer_first[k];
    const std::size_t n = (k + 1 < opts.observers.size() ? layout.observer_first[k + 1] : nstreams) - first;
    observer_rows.assign(n, {});
    opts.observers[k]->scenario(c, sc, o, observer_rows);
    for (std::size_t t = 0; t < n; ++t)
      for (const auto& row : observer_rows[t]) add(first + t, row);
  }
  if (corpus) corpus->put(c, std::move(sc));
  return r;
}

/// The limit `usage` is past (--max-tokens, --max-cost), as a phrase for the stop message; "" when none.
std::string limit_passed(const std::vector<ModelUsage>& usage, const RunOptions& opts, const LlmConfig& llm) {
  std::uint64_t tokens = 0;
  double cost = 0;
  for (const ModelUsage& u : usage) {
    tokens += u.prompt_tokens + u.completion_tokens;
    cost += cost_usd(u, llm).value_or(0.0);
  }
  if (opts.max_tokens > 0 && tokens > opts.max_tokens)
    return fmt::format("--max-tokens {} ({} tokens spent)", opts.max_tokens, tokens);
  if (opts.max_cost_usd > 0 && cost > opts.max_cost_usd)
    return fmt::format("--max-cost {} (${:.4f} spent under llm.prices)", opts.max_cost_usd, cost);
  return "";
}

/// How many scenarios may be in flight or waiting for their turn to be written. With a live model (a policy whose
/// server decides), a scenario waiting on a reply gives its thread to another (the client suspends its task), so
/// the window holds enough scenarios to keep llm.max_connections requests in flight; the order of the rows is that
/// of the corpus all the same.
std::size_t pipeline_tokens(const RunPlan& plan, int threads) {
  bool live = false;
  for (const auto& [name, p] : plan.blues) live = live || !p->info().reproducible;
  for (const auto& [name, p] : plan.reds) live = live || !p->info().reproducible;
  return std::max(static_cast<std::size_t>(threads) * 4,
                  live ? 2 * static_cast<std::size_t>(std::max(1, plan.cfg->llm.max_connections)) : 0);
}

/// Scenarios [start, count) of this process's slice (corpus indices lo + i), evaluated in parallel and appended
/// in corpus order, with a checkpoint (flush and journal entry) at least every 200 ms or 4 MiB, or every
/// opts.checkpoint_every scenarios. Throws RunInterrupted when a stop was asked for.
void evaluate_scenarios(const RunPlan& plan, const RunOptions& opts, const StreamLayout& layout,
                        std::vector<Stream>& streams, Journal& journal, std::size_t lo, std::size_t start,
                        std::size_t count, int threads, std::optional<KeptCorpus>& corpus, RunSummary& summary) {
  Progress progress("advplan", count, opts.progress ? parse_progress_mode(opts.progress_mode) : ProgressMode::none,
                    start, opts.progress_interval_s);
  const auto& per_header = schema::per_scenario(plan.cfg->samples > 1);
  const auto col = [&](const char* name) {
    return static_cast<std::size_t>(std::find(per_header.begin(), per_header.end(), name) - per_header.begin());
  };
  const std::size_t c_status = col("status"), c_reason = col("failure_reason"), c_scenario = col("scenario_id"),
                    c_condition = col("condition");
  std::size_t next = start, done = start;
  auto last_flush = std::chrono::steady_clock::now();
  // Set in the in-order stage once the scenarios kept have spent past --max-tokens or --max-cost: no scenario is
  // started or kept after that one.
  std::atomic<bool> limited{false};
  std::string limit;
  // The scenario tasks may be suspended while a live model answers (OpenAiCompatibleClient), so that the threads
  // serve other scenarios meanwhile.
  const AsyncRequestsScope async_requests;
  auto source = [&](tbb::flow_control& fc) -> std::size_t {
    if (next >= count || run_interrupt_requested() || limited.load()) {
      fc.stop();
      return 0;
    }
    return next++;
  };
  auto evaluate = [&](std::size_t i) { return evaluate_and_render(plan, opts, layout, streams.size(), lo + i, corpus); };
  // Batch mode: set in the in-order stage at the first scenario with a call that waits in the batch wave. No scenario is
  // kept from then on, but every one is still played up to its calls, so that the wave holds them all.
  bool waiting = false;
  auto keep = [&](std::shared_ptr<Rendered> r) {
    // Once a stop is asked for, nothing more is kept: a scenario in flight may hold the failure of a policy that
    // saw the interrupt. Its rows are computed again by the resume.
    if (run_interrupt_requested() || limited.load()) return;
    waiting = waiting || std::any_of(r->o->usage.begin(), r->o->usage.end(), [](const ModelUsage& u) { return u.deferred > 0; });
    if (waiting) return;
    for (std::size_t s = 0; s < streams.size(); ++s) {
      streams[s].buf += r->text[s];
      streams[s].buf_rows += r->rows[s];
    }
    const ScenarioOutcome& o = *r->o;
    summary.rows += o.per_scenario.size();
    summary.failed_rows += o.failed_rows;
    summary.scenarios_with_blue_plan += o.produced_plan ? 1 : 0;
    ++done;
    if (!o.usage.empty()) {
      for (const ModelUsage& u : o.usage) add_usage(summary.usage, u);
      limit = limit_passed(summary.usage, opts, plan.cfg->llm);
      if (!limit.empty()) limited = true;
    }
    for (const auto& row : o.per_scenario)
      if (row[c_status] != "ok") progress.failure(row[c_scenario], row[c_condition], row[c_reason]);
    progress.scenario_done(o.failed_rows);
    std::size_t bytes = 0;
    for (const Stream& st : streams) bytes += st.buf.size();
    const auto now = std::chrono::steady_clock::now();
    const bool due = opts.checkpoint_every > 0 ? (done - start) % opts.checkpoint_every == 0
                                               : now - last_flush > std::chrono::milliseconds(200);
    if (bytes > (4u << 20) || due || limited.load()) {
      journal.flush(streams, done, summary);
      last_flush = now;
    }
  };
  tbb::parallel_pipeline(
      pipeline_tokens(plan, threads),
      tbb::make_filter<void, std::size_t>(tbb::filter_mode::serial_in_order, source) &
          tbb::make_filter<std::size_t, std::shared_ptr<Rendered>>(tbb::filter_mode::parallel, evaluate) &
          tbb::make_filter<std::shared_ptr<Rendered>, void>(tbb::filter_mode::serial_in_order, keep));
  journal.flush(streams, done, summary);
  if (run_interrupt_requested()) {
    ::close(journal.fd);
    journal.fd = -1;
    for (Stream& st : streams) {
      if (st.fd >= 0) ::close(st.fd);
      st.fd = -1;
    }
    throw RunInterrupted(fmt::format("{}: interrupted after {} of {} scenarios; the run is kept as it was, and "
                                     "`advplan run ... --resume` (Python: resume=True) continues it",
                                     opts.out_dir, done, count));
  }
  if (waiting) {
    journal.close(streams);
    throw BatchWaiting(fmt::format("{}: {} of {} scenarios are done; the others wait for the answers of the run's batch "
                                   "wave", opts.out_dir, done, count));
  }
  if (limited.load() && done < count) {
    journal.close(streams);
    throw RunLimitReached(fmt::format("{}: stopped at {} after {} of {} scenarios; the run is kept, and `--resume` "
                                      "with a higher limit (or none) continues it",
                                      opts.out_dir, limit, done, count));
  }
}

}  // namespace

RunSummary run_experiment(const RunPlan& plan, const RunOptions& opts) {
  const auto t0 = std::chrono::steady_clock::now();
  const ExperimentConfig& cfg = *plan.cfg;
  check_run_options(opts);
  if (cfg.samples > 1 && opts.summary == "streaming")
    throw ConfigError(fmt::format("{}: samples: {} needs the bootstrap summaries (the streamed ones do not average "
                                  "the samples within a scenario): drop --summary streaming",
                                  cfg.source, cfg.samples));
  const io::DirMode mode = opts.resume ? io::DirMode::resume : opts.force ? io::DirMode::force : io::DirMode::fresh;
  // Held until the run returns: no second run or merge writes into this directory meanwhile.
  const io::PreparedDirectory prepared = io::prepare_run_directory(opts.out_dir, mode, {cfg.source});
  const int threads = opts.threads > 0 ? opts.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));

  const fs::path dir(opts.out_dir), work = dir / kWork;
  const std::size_t per_template = cfg.seed_to >= cfg.seed_from ? cfg.seed_to - cfg.seed_from + 1 : 0;
  const std::size_t total = cfg.templates.size() * per_template;
  RunKey key = run_key(plan, total, opts.shard_count);
  // The resume check also compares the shard; a merge compares every field but this one.
  key.emplace_back("shard_index", std::to_string(opts.shard_index));
  // This process's slice of the corpus: a contiguous block, so shards merge by concatenation in shard order.
  const std::size_t lo = opts.shard_count > 0 ? shard_bound(total, opts.shard_index, opts.shard_count) : 0;
  const std::size_t hi = opts.shard_count > 0 ? shard_bound(total, opts.shard_index + 1, opts.shard_count) : total;

  StreamLayout layout;
  std::vector<Stream> streams = make_streams(plan, opts.observers, work, layout);

  // State an observer keeps from the scenarios reaches its finish() only when this process runs the whole corpus
  // with its summaries in memory; only then is the corpus kept, so memory stays independent of the corpus at scale.
  const bool in_memory = opts.summary == "bootstrap" || plan.cfg->samples > 1 ||
                         (opts.summary == "auto" && total * plan.conditions.size() <= kStreamingSummaryRows);
  const RunScope scope{total, opts.shard_count == 0 && in_memory};
  bool wants_corpus = false;
  for (const auto& obs : opts.observers) {
    obs->begin(plan, scope);
    wants_corpus = wants_corpus || obs->wants_corpus();
  }
  std::optional<KeptCorpus> corpus;
  if (scope.whole_run_here && wants_corpus) corpus.emplace(total);

  RunSummary summary;
  const std::size_t count = hi - lo;  // scenarios of this process
  summary.scenarios = count;
  std::size_t start = 0;
  Journal journal{(work / kJournal).string()};
  bool resuming = false;
  if (prepared.had_files) {
    // Work directories of a run killed before its first journal entry hold nothing to keep.
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().filename().string().rfind(std::string(kWork) + "-", 0) == 0) fs::remove_all(e.path());
    resuming = fs::exists(work / kJournal);
    // Complete: but only this run is "already complete", so its recorded key is compared field by field first.
    if (!resuming)
      if (auto complete = complete_run(dir, work, key, count)) return *complete;
    if (!resuming && fs::directory_iterator(dir) != fs::directory_iterator())
      throw IoError(fmt::format("{}: --resume: no interrupted advplan run here ({} is missing)", opts.out_dir,
                                journal.path));
  }
  if (resuming) {
    // The interrupted run must be the same run.
    check_interrupted_key(work, key);
    const JournalEntry entry = verified_journal_entry(dir, journal.path, streams, count);
    start = entry.done;
    summary.resumed_from = start;
    summary.rows = entry.rows;
    summary.failed_rows = entry.failed;
    summary.scenarios_with_blue_plan = entry.with_plan;
    remove_stale_temporaries(opts.out_dir);
    reopen_streams(streams, entry, start == count);
    journal.fd = ::open(journal.path.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (journal.fd < 0) throw IoError(fmt::format("{}: cannot open ({})", journal.path, std::strerror(errno)));
  } else {
    journal.fd = create_work_directory(dir, work, key, streams, journal.path, summary);
  }

  // Batch mode: the wave is open only while the scenarios are played; the judges after them are asked online.
  const auto wave = batch_wave_of(plan.ctx);
  if (wave) wave->open();
  try {
    if (start < count) evaluate_scenarios(plan, opts, layout, streams, journal, lo, start, count, threads, corpus, summary);
  } catch (...) {
    if (wave) wave->close();
    throw;
  }
  if (wave) wave->close();
  journal.close(streams);

  return finish_run(plan, opts, streams, layout, corpus ? &*corpus : nullptr, summary, threads, t0, key);
}

std::vector<std::pair<std::string, std::string>> run_identity(const RunPlan& plan, std::size_t shard_count) {
  const ExperimentConfig& cfg = *plan.cfg;
  const std::size_t per_template = cfg.seed_to >= cfg.seed_from ? cfg.seed_to - cfg.seed_from + 1 : 0;
  return run_key(plan, cfg.templates.size() * per_template, shard_count);
}

RunSummary merge_shards(const RunPlan& plan, const std::vector<std::string>& shard_dirs, const RunOptions& opts) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> inputs = shard_dirs;
  inputs.push_back(plan.cfg->source);
  const io::PreparedDirectory prepared =
      io::prepare_run_directory(opts.out_dir, opts.force ? io::DirMode::force : io::DirMode::fresh, inputs);
  const int threads = opts.threads > 0 ? opts.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
  const fs::path dir(opts.out_dir), work = dir / kWork;
  if (::mkdir(work.c_str(), 0755) != 0)
    throw IoError(fmt::format("{}: cannot create the work directory ({})", work.string(), std::strerror(errno)));
  // The shards' order is their index in run_metadata.json, which the MANIFEST does not cover: each shard's
  // scenarios.csv (which it does) must hold exactly its slice of the corpus order, so swapped indices are refused.
  {
    const std::size_t total = corpus_size(*plan.cfg), n = shard_dirs.size();
    for (std::size_t k = 0; k < n; ++k) {
      const std::string path = (fs::path(shard_dirs[k]) / "scenarios.csv").string();
      const io::CsvTable t = io::CsvTable::read(path, schema::scenarios());
      const std::size_t lo = shard_bound(total, k, n), hi = shard_bound(total, k + 1, n);
      if (t.size() != hi - lo)
        throw CsvError(fmt::format("{}: {} scenarios, while shard {}/{} of this corpus has {}; the shard's index in its "
                                   "run_metadata.json does not match its rows",
                                   path, t.size(), k, n, hi - lo));
      const std::size_t cid = t.col("scenario_id");
      for (std::size_t i = 0; i < t.size(); ++i)
        if (t.rows()[i][cid] != corpus_id(*plan.cfg, lo + i))
          throw CsvError(fmt::format("{}: line {}: scenario {}, while shard {}/{} of this corpus has {} there; the "
                                     "shard's index in its run_metadata.json does not match its rows",
                                     path, i + 2, untrusted::excerpt(t.rows()[i][cid], 60), k, n,
                                     corpus_id(*plan.cfg, lo + i)));
    }
  }
  StreamLayout layout;
  std::vector<Stream> streams = make_streams(plan, opts.observers, work, layout);
  // The merge evaluates no scenario: the observers keep nothing, and the corpus is theirs to generate.
  for (const auto& obs : opts.observers) obs->begin(plan, RunScope{corpus_size(*plan.cfg), false});
  RunSummary summary;
  for (std::size_t i = 0; i < streams.size(); ++i) {
    Stream& st = streams[i];
    const std::string& shard_name = st.name;
    st.fd = ::open(st.work.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (st.fd < 0) throw IoError(fmt::format("{}: cannot create ({})", st.work, std::strerror(errno)));
    const std::string h = header_text(st);
    write_all(st.fd, h, st.work);
    st.size = h.size();
    // Each shard's rows after its header line, in shard order: the contiguous blocks make the corpus order.
    for (const auto& sd : shard_dirs) {
      const std::string path = (fs::path(sd) / shard_name).string();
      if (!fs::exists(path)) continue;  // an optional file the shard had no rows for
      const std::string text = io::read_text_file(path);
      if (text.compare(0, h.size(), h) != 0)
        throw CsvError(fmt::format("{}: line 1: the header is not the one this run writes", path));
      write_all(st.fd, text.substr(h.size()), st.work);
      st.size += text.size() - h.size();
    }
    ::close(st.fd);
    st.fd = -1;
  }
  for (const auto& sd : shard_dirs) {
    const auto meta = nlohmann::json::parse(io::read_text_file((fs::path(sd) / io::kMetadataFile).string(), io::kMaxDocumentBytes), nullptr, false);
    summary.scenarios += untrusted::count_member(meta, "scenarios");
    summary.rows += untrusted::count_member(meta, "rows");
    summary.failed_rows += untrusted::count_member(meta, "failed_rows");
    summary.scenarios_with_blue_plan += untrusted::count_member(meta, "scenarios_with_blue_plan");
  }
  RunOptions merged = opts;
  merged.shard_count = 0;
  merged.shard_index = 0;
  auto key = run_identity(plan, 0);
  key.emplace_back("shard_index", "0");
  return finish_run(plan, merged, streams, layout, nullptr, summary, threads, t0, key);
}

}  // namespace advplan
