#include "advplan/run/config.hpp"
#include "advplan/run/sandbox_setting.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "advplan/core/untrusted.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/embedded_files.hpp"
#include "advplan/io/sha256.hpp"
#include "advplan/geo/user_map.hpp"
#include "advplan/io/yaml_reader.hpp"
#include "advplan/policy/completion_cache.hpp"
#include "advplan/run/sweep_points.hpp"
#include "sweep_reader.hpp"

namespace advplan {
using io::YamlReader;
namespace fs = std::filesystem;

std::string_view to_string(FramingMode m) { return m == FramingMode::metadata ? "metadata" : "applied"; }

namespace {

constexpr const char* kBuiltinConfig = "configs/experiments/paper.yaml";

void read_templates(ExperimentConfig& cfg, const YamlReader& corpus, const std::string& base_dir) {
  const auto ids = corpus.at("templates");
  cfg.template_ids = ids.as_strings();
  if (cfg.template_ids.empty()) ids.fail("must name at least one template");
  for (std::size_t i = 0; i < cfg.template_ids.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (cfg.template_ids[i] == cfg.template_ids[j])
        ids.fail(fmt::format("template '{}' is listed twice (every scenario would run twice); list it once",
                             untrusted::excerpt(cfg.template_ids[i], 80)));
  // Without template_dir the built-in templates serve, wherever the config is; with it, the templates are files in
  // that folder, relative to the config's own folder.
  const bool from_files = !base_dir.empty() && corpus.has("template_dir");
  const std::string dir = from_files ? corpus.get_string("template_dir", "") : std::string();
  for (std::size_t i = 0; i < cfg.template_ids.size(); ++i) {
    const std::string& id = cfg.template_ids[i];
    std::string text, source;
    if (!from_files) {
      source = io::embedded_template_path(id);
      auto emb = io::embedded_file(source);
      if (!emb) {
        std::string builtin;
        for (const auto& b : io::embedded_template_ids()) builtin += (builtin.empty() ? "" : ", ") + b;
        ids.at(i).fail(fmt::format("template '{}' is not built in (built-in: {})", id, builtin));
      }
      text = std::string(*emb);
      source = "<built-in>/" + source;
    } else {
      const fs::path p = fs::path(base_dir) / dir / (id + ".yaml");
      source = p.lexically_normal().string();
      std::error_code ec;  // a path from the config: too long or unreadable is bad input, not an internal error
      const bool there = fs::is_regular_file(p, ec);
      if (ec && ec != std::errc::no_such_file_or_directory)
        ids.at(i).fail(fmt::format("template '{}': cannot read {} ({})", id, untrusted::excerpt(source, 200), ec.message()));
      if (!there)
        ids.at(i).fail(fmt::format("template '{}' not found: no file {} (corpus.template_dir '{}' is relative to the "
                                   "config's folder {}; leave template_dir out to use the built-in templates)",
                                   id, untrusted::excerpt(source, 200), untrusted::excerpt(dir, 100),
                                   untrusted::excerpt(fs::path(base_dir).lexically_normal().string(), 200)));
      text = io::read_text_file(source, io::kMaxDocumentBytes);
    }
    ScenarioTemplate t = parse_template(text, source);
    if (t.id != id) ids.at(i).fail(fmt::format("template file {} declares id '{}', not '{}'", source, t.id, id));
    cfg.templates.push_back(std::move(t));
    cfg.template_texts.emplace_back(source, std::move(text));
  }
}

void read_corpus(ExperimentConfig& cfg, const YamlReader& root, const std::string& base_dir) {
  const auto corpus = root.at("corpus");
  corpus.require_only({"templates", "seeds", "template_dir"});
  const auto seeds = corpus.at("seeds");
  seeds.require_sequence();
  if (seeds.size() != 2) seeds.fail("expected [first, last]");
  cfg.seed_from = static_cast<std::uint64_t>(seeds.at(0).as_int_in(0, INT64_MAX));
  cfg.seed_to = static_cast<std::uint64_t>(seeds.at(1).as_int_in(0, INT64_MAX));
  if (cfg.seed_from > cfg.seed_to) seeds.fail("first seed is greater than last seed");
  read_templates(cfg, corpus, base_dir);
  // Joint bound: each key's own range allows corpora that cannot be run in any reasonable time. Runs stream
  // (memory does not grow with the corpus), so the bound is on time: 10^7 scenarios is days on one machine.
  constexpr std::uint64_t kMaxScenarios = 10000000;
  const std::uint64_t n_seeds = cfg.seed_to - cfg.seed_from + 1;
  const std::uint64_t n_templates = std::max<std::uint64_t>(1, cfg.templates.size());
  if (n_seeds > kMaxScenarios || n_seeds * n_templates > kMaxScenarios)
    seeds.fail(fmt::format("[{}, {}] gives {} seeds x {} templates; at most {} scenarios fit in one run",
                           cfg.seed_from, cfg.seed_to, n_seeds, n_templates, kMaxScenarios));
}

void read_quality_weights(ExperimentConfig& cfg, const YamlReader& qw) {
  qw.require_only({"effectiveness", "cost", "risk"});
  cfg.quality.effectiveness = qw.at("effectiveness").as_double_in(0, 1);
  cfg.quality.cost = qw.at("cost").as_double_in(0, 1);
  cfg.quality.risk = qw.at("risk").as_double_in(0, 1);
  const double s = cfg.quality.effectiveness + cfg.quality.cost + cfg.quality.risk;
  if (std::abs(s - 1.0) > 1e-9) qw.fail(fmt::format("weights must sum to 1, while they sum to {}", s));
}

std::string read_group(const YamlReader& g) {
  const std::string v = g.as_string();
  for (const char* known : kConditionGroups)
    if (v == known && !is_replay_group(v)) return v;  // made by `sweep:` and the attribution study only
  g.fail(fmt::format("unknown condition group '{}' (accepted: main, sweep, reference, evaluate; sweep points come "
                     "from sweep:)",
                     v));
}

/// `conditions:` entries are a RED spec ("greedy@8", against default_blue) or {label, blue, red, group}.
void read_conditions(ExperimentConfig& cfg, const YamlReader& list) {
  list.require_sequence();
  std::set<std::string> labels;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto item = list.at(i);
    Condition c;
    if (item.is_scalar()) {
      c.blue = cfg.default_blue;
      c.red = item.as_string();
    } else {
      item.require_map();
      item.require_only({"label", "blue", "red", "group"});
      c.blue = item.get_string("blue", cfg.default_blue);
      c.red = item.at("red").as_string();
      if (item.has("group")) c.group = read_group(item.at("group"));
    }
    if (c.red.empty()) item.fail("the RED policy is empty");
    if (c.blue.empty()) item.fail("the BLUE policy is empty");
    c.label = item.is_map() && item.has("label") ? item.at("label").as_string()
                                                 : default_condition_label(cfg, c.blue, c.red);
    if (c.label.empty()) item.fail("the condition label is empty");
    if (!labels.insert(c.label).second) item.fail(fmt::format("condition label '{}' is used twice", c.label));
    cfg.conditions.push_back(std::move(c));
  }
}

/// `matrix: {blue: [...], red: [...]}` appends every BLUE x RED pairing as a condition "BLUE vs RED" (group
/// main), BLUE-major, after the listed conditions (docs/CONFIG.md "Matrix").
void read_matrix(ExperimentConfig& cfg, const YamlReader& mx) {
  mx.require_map();
  mx.require_only({"blue", "red"});
  auto specs = [](const YamlReader& list) {
    list.require_sequence();
    if (list.size() == 0) list.fail("the list is empty");
    std::vector<std::string> out;
    std::set<std::string> seen;
    for (std::size_t i = 0; i < list.size(); ++i) {
      std::string v = list.at(i).as_string();
      if (v.empty()) list.at(i).fail("the policy is empty");
      if (!seen.insert(v).second) list.at(i).fail(fmt::format("policy '{}' is listed twice", v));
      out.push_back(std::move(v));
    }
    return out;
  };
  const auto blues = specs(mx.at("blue"));
  const auto reds = specs(mx.at("red"));
  std::set<std::string> labels;
  for (const auto& c : cfg.conditions) labels.insert(c.label);
  for (const auto& b : blues)
    for (const auto& r : reds) {
      Condition c{b + " vs " + r, b, r, "main"};
      if (!labels.insert(c.label).second)
        mx.fail(fmt::format("the matrix condition '{}' has the label of another condition", c.label));
      cfg.conditions.push_back(std::move(c));
    }
}

/// `budget_sweep.attackers`: a non-empty list of distinct RED policy names without '@' or ':' (each is played as
/// <name>@k; a name that is not a registered @k policy fails when the run's policies are made).
void read_budget_attackers(ExperimentConfig& cfg, const YamlReader& list) {
  list.require_sequence();
  if (list.size() == 0) list.fail("the list of attackers is empty (the default is [greedy])");
  cfg.budget_attackers.clear();
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string name = list.at(i).as_string();
    if (name.empty() || name.find_first_of("@: ") != std::string::npos)
      list.at(i).fail(fmt::format("an attacker is a RED policy name such as greedy or search, played as NAME@k; "
                                "'{}' is not one",
                                untrusted::excerpt(name, 60)));
    if (std::find(cfg.budget_attackers.begin(), cfg.budget_attackers.end(), name) != cfg.budget_attackers.end())
      list.at(i).fail(fmt::format("the attacker '{}' is listed twice", name));
    cfg.budget_attackers.push_back(name);
  }
}

/// `budget_sweep:` is [k, ...] (against default_blue) or {blue, ks: [k, ...], attackers: [name, ...]}.
void read_budget_sweep(ExperimentConfig& cfg, const YamlReader& bs) {
  YamlReader ks = bs;
  cfg.budget_blue = cfg.default_blue;
  if (bs.is_map()) {
    bs.require_only({"blue", "ks", "attackers"});
    cfg.budget_blue = bs.get_string("blue", cfg.default_blue);
    if (bs.has("attackers")) read_budget_attackers(cfg, bs.at("attackers"));
    ks = bs.at("ks");
  }
  ks.require_sequence();
  for (std::size_t i = 0; i < ks.size(); ++i) {
    const auto k = ks.at(i).as_int();
    if (k < 1) ks.at(i).fail(fmt::format("k must be at least 1 (accepted: integers 1..1024), while {} was given", k));
    if (k > 1024) ks.at(i).fail(fmt::format("k must be at most 1024, while {} was given", k));
    cfg.budget_ks.push_back(static_cast<int>(k));
  }
}

void read_policy_params(ExperimentConfig& cfg, const YamlReader& pol) {
  for (const auto& name : pol.keys()) {
    const auto params = pol.at(name);
    for (const auto& key : params.keys())
      if (key == "replans")  // docs/POLICIES.md "6. Replanning": true or false
        cfg.policy_params[name][key] = params.at(key).as_bool() ? 1.0 : 0.0;
      else if (key != "generation")
        cfg.policy_params[name][key] = params.at(key).as_double();  // generation is read with llm:
  }
}

/// The deepest llm.generation.extra is read: room for a JSON Schema under response_format.json_schema.schema (the
/// plan schema and the judge's reply schema take about 10 levels there), bounded all the same.
constexpr int kMaxExtraDepth = 32;

/// A YAML value as JSON, for llm.generation.extra: plain scalars that read as a boolean, an integer or a number
/// become one, null and ~ become null, anything quoted stays a string. At most kMaxExtraDepth levels deep.
nlohmann::json yaml_json(const YamlReader& y, int depth = 0) {
  if (depth > kMaxExtraDepth) y.fail(fmt::format("nested deeper than {} levels", kMaxExtraDepth));
  const YAML::Node& n = y.node();
  if (n.IsMap()) {
    nlohmann::json o = nlohmann::json::object();
    for (const auto& k : y.keys()) o[k] = yaml_json(y.at(k), depth + 1);
    return o;
  }
  if (n.IsSequence()) {
    nlohmann::json a = nlohmann::json::array();
    for (std::size_t i = 0; i < y.size(); ++i) a.push_back(yaml_json(y.at(i), depth + 1));
    return a;
  }
  if (n.IsNull()) return nullptr;
  const std::string s = n.Scalar();
  if (n.Tag() == "!") return s;  // quoted
  if (s == "true" || s == "false") return s == "true";
  if (s == "null" || s == "~") return nullptr;
  const nlohmann::json num = nlohmann::json::parse(s, nullptr, false);
  return num.is_number() ? num : nlohmann::json(s);
}

/// llm.structured_output / generation.structured_output: auto, json_schema, json_object or off.
StructuredOutput read_structured_output(const YamlReader& y) {
  const std::string m = y.as_string();
  if (m == "off") return StructuredOutput::off;
  if (m == "json_object") return StructuredOutput::json_object;
  if (m == "json_schema") return StructuredOutput::json_schema;
  if (m == "auto") return StructuredOutput::automatic;
  y.fail(fmt::format("'{}' is not auto, json_schema, json_object or off", untrusted::excerpt(m, 40)));
}

/// llm.generation or policies.<name>.generation (docs/LLM.md "Generation settings"), each field written
/// replacing `base`'s.
GenerationSettings read_generation(const YamlReader& g, GenerationSettings base) {
  g.require_map();
  g.require_only({"temperature", "top_p", "max_tokens", "stop", "seed_mode", "extra", "structured_output",
                  "strict_schema"});
  if (g.has("temperature")) base.temperature = g.at("temperature").as_double_in(0, 2);
  if (g.has("top_p")) base.top_p = g.at("top_p").as_double_in(0, 1);
  if (g.has("max_tokens")) base.max_tokens = static_cast<int>(g.at("max_tokens").as_int_in(1, 1 << 20));
  if (g.has("stop")) {
    base.stop = g.at("stop").as_strings();
    if (base.stop.size() > 16) g.at("stop").fail("at most 16 stop sequences");
  }
  if (g.has("seed_mode")) {
    const std::string m = g.at("seed_mode").as_string();
    if (m != "keyed" && m != "none") g.at("seed_mode").fail(fmt::format("'{}' is not keyed or none", m));
    base.send_seed = m == "keyed";
  }
  if (g.has("extra")) {
    const auto e = g.at("extra");
    e.require_map();
    const nlohmann::json extra = yaml_json(e);
    for (const char* k : {"messages", "model", "temperature", "seed", "top_p", "max_tokens", "stop"})
      if (extra.contains(k))
        e.fail(fmt::format("'{}' is set by advplan; use the generation field of that name, or leave it out", k));
    base.extra_json = extra.empty() ? std::string() : extra.dump();
    if (base.extra_json.size() > 64 * 1024) e.fail("larger than 64 KiB as JSON");
  }
  if (g.has("structured_output")) base.structured_output = read_structured_output(g.at("structured_output"));
  if (g.has("strict_schema")) base.strict_schema = g.at("strict_schema").as_bool();
  // One source for response_format: advplan's schemas (structured_output) or the user's own (extra), not both.
  if (base.structured_output != StructuredOutput::off && base.extra_json.find("\"response_format\"") != std::string::npos &&
      nlohmann::json::parse(base.extra_json).contains("response_format"))
    g.fail("sets structured_output and extra.response_format; keep one (docs/LLM.md \"Structured output\")");
  return base;
}

SimConfig read_simulator(const YamlReader& s) {
  SimConfig sim;
  s.require_only({"replications", "break_point", "time_limit", "dt", "noise", "step_noise", "model", "engagement"});
  if (s.has("model")) {
    sim.model = s.at("model").as_string();
    if (sim.model != "lanchester" && sim.model != "engagement")
      s.at("model").fail(fmt::format("'{}' is no simulator model (accepted: lanchester, engagement)",
                                     untrusted::excerpt(sim.model, 40)));
  }
  if (s.has("engagement")) {
    const YamlReader e = s.at("engagement");
    e.require_only({"support", "durations", "effect_steps", "replan_calls"});
    if (sim.model != "engagement") e.fail("is read only with model: engagement");
    if (e.has("support")) sim.engagement.support = e.at("support").as_bool();
    if (e.has("durations")) sim.engagement.durations = e.at("durations").as_double_in(0, 100);
    if (e.has("effect_steps")) sim.engagement.effect_steps = static_cast<int>(e.at("effect_steps").as_int_in(0, 1000000));
    if (e.has("replan_calls")) sim.engagement.replan_calls = static_cast<int>(e.at("replan_calls").as_int_in(0, 100000));
  }
  if (s.has("replications")) {
    const auto r = s.at("replications").as_int();
    if (r < 1) s.at("replications").fail(fmt::format("R must be at least 1, while {} was given", r));
    if (r > 100000) s.at("replications").fail(fmt::format("R must be at most 100000, while {} was given", r));
    sim.replications = static_cast<int>(r);
  }
  if (s.has("break_point")) sim.break_point = s.at("break_point").as_double_in(0, 0.99);
  if (s.has("time_limit")) sim.time_limit = static_cast<int>(s.at("time_limit").as_int_in(1, 1000000));
  if (s.has("dt")) sim.dt = s.at("dt").as_double_in(1e-4, 1);
  if (s.has("noise")) sim.noise = s.at("noise").as_double_in(0, 2);
  if (s.has("step_noise")) sim.step_noise = s.at("step_noise").as_double_in(0, 2);
  // Joint bound: the simulator draws replications x time_limit noise steps per side for each evaluation.
  constexpr long long kMaxSimSteps = 10000000;
  const long long steps = static_cast<long long>(sim.replications) * sim.time_limit;
  if (steps > kMaxSimSteps)
    s.fail(fmt::format("replications x time_limit is {} x {} = {}; at most {} fit in memory per evaluation",
                       sim.replications, sim.time_limit, steps, kMaxSimSteps));
  return sim;
}

BootstrapConfig read_bootstrap(const YamlReader& b) {
  BootstrapConfig bs;
  b.require_only({"resamples", "seed"});
  if (b.has("resamples")) bs.resamples = static_cast<int>(b.at("resamples").as_int_in(1, 1000000));
  if (b.has("seed")) bs.seed = static_cast<std::uint64_t>(b.at("seed").as_int_in(0, INT64_MAX));
  return bs;
}

FramingMode read_framing_mode(const YamlReader& f) {
  const auto v = f.as_string();
  if (v == "metadata") return FramingMode::metadata;
  if (v == "applied") return FramingMode::applied;
  f.fail(fmt::format("unknown framing mode '{}' (accepted: metadata, applied)", v));
}

CouncilConfig read_council(const YamlReader& c) {
  CouncilConfig council;
  c.require_only({"red", "shortlist", "weights", "propose", "revise"});
  council.red = c.get_string("red", council.red);
  council.propose = c.get_bool("propose", council.propose);
  council.revise = c.get_bool("revise", council.revise);
  if (c.has("shortlist")) council.shortlist = static_cast<int>(c.at("shortlist").as_int_in(1, 5));
  if (c.has("weights")) {
    const auto w = c.at("weights");
    w.require_only({"quality", "coherence", "diversity", "pressure"});
    for (const auto& [key, field] : {std::pair{"quality", &CouncilConfig::w_quality},
                                     std::pair{"coherence", &CouncilConfig::w_coherence},
                                     std::pair{"diversity", &CouncilConfig::w_diversity},
                                     std::pair{"pressure", &CouncilConfig::w_pressure}})
      if (w.has(key)) council.*field = w.at(key).as_double_in(0, 1);
  }
  return council;
}

/// A study is `true`/`false`, or a map naming the conditions it compares (which also turns it on).
bool study_enabled(const YamlReader& s) { return s.is_map() || s.as_bool(); }

Side read_side(const YamlReader& s) {
  const std::string v = s.as_string();
  if (v == "blue") return Side::Blue;
  if (v == "red") return Side::Red;
  s.fail(fmt::format("unknown side '{}' (accepted: blue, red)", v));
}

/// A pair [a, b] of condition labels.
std::pair<std::string, std::string> read_pair(const YamlReader& p) {
  p.require_sequence();
  if (p.size() != 2) p.fail("expected [condition, condition]");
  return {p.at(0).as_string(), p.at(1).as_string()};
}

StudiesConfig read_studies(const YamlReader& s) {
  StudiesConfig st;
  s.require_only({"rubric", "framing", "components", "attribution"});
  if (s.has("rubric")) {
    const auto r = s.at("rubric");
    st.rubric = study_enabled(r);
    if (r.is_map()) {
      r.require_only({"records"});
      const auto recs = r.at("records");
      recs.require_sequence();
      st.rubric_records.clear();
      for (std::size_t i = 0; i < recs.size(); ++i) {
        const auto x = recs.at(i);
        x.require_only({"kind", "condition", "side"});
        st.rubric_records.push_back({x.at("kind").as_string(), x.at("condition").as_string(), read_side(x.at("side"))});
      }
    }
  }
  if (s.has("framing")) {
    const auto f = s.at("framing");
    st.framing = study_enabled(f);
    if (f.is_map()) {
      f.require_only({"blue", "red"});
      st.framing_blue = f.get_string("blue", st.framing_blue);
      st.framing_red = f.get_string("red", st.framing_red);
    }
  }
  if (s.has("components")) {
    const auto c = s.at("components");
    st.components = study_enabled(c);
    if (c.is_map()) {
      c.require_only({"response_search", "selector", "llm_contract", "council"});
      if (c.has("response_search")) std::tie(st.best_of_k, st.single) = read_pair(c.at("response_search"));
      if (c.has("selector")) std::tie(st.greedy, st.constraint) = read_pair(c.at("selector"));
      st.llm_contract = c.get_string("llm_contract", st.llm_contract);
      if (c.has("council")) std::tie(st.council, st.council_baseline) = read_pair(c.at("council"));
    }
  }
  if (s.has("attribution")) {
    const auto a = s.at("attribution");
    st.attribution = study_enabled(a);
    if (a.is_map()) {
      a.require_only({"parts", "k"});
      if (a.has("parts")) {
        const auto parts = a.at("parts");
        st.attribution_parts = parts.as_strings();
        if (st.attribution_parts.empty() || st.attribution_parts.size() > 5) parts.fail("name 1 to 5 parts");
        std::set<std::string> seen;
        for (const auto& p : st.attribution_parts) {
          if (std::find_if(std::begin(kAttributionParts), std::end(kAttributionParts),
                           [&](const char* k) { return p == k; }) == std::end(kAttributionParts))
            parts.fail(fmt::format("'{}' is not a part (accepted: response_search, selector, council_proposal, "
                                   "council_revision, simulator_noise)",
                                   untrusted::excerpt(p, 40)));
          if (!seen.insert(p).second) parts.fail(fmt::format("'{}' is named twice", p));
        }
      }
      if (a.has("k")) st.attribution_k = static_cast<int>(a.at("k").as_int_in(2, 1024));
    }
  }
  return st;
}

ExecConfig read_exec(const YamlReader& e) {
  ExecConfig exec;
  e.require_only({"timeout_s", "max_response_bytes", "max_restarts", "workers"});
  if (e.has("workers")) exec.workers = static_cast<int>(e.at("workers").as_int_in(1, 64));
  if (e.has("timeout_s")) exec.timeout_s = e.at("timeout_s").as_double_in(0.01, 3600);
  if (e.has("max_response_bytes"))
    exec.max_response_bytes = static_cast<std::size_t>(e.at("max_response_bytes").as_int_in(64, 1 << 30));
  if (e.has("max_restarts")) exec.max_restarts = static_cast<int>(e.at("max_restarts").as_int_in(0, 1000));
  return exec;
}

/// `sandbox: true|false` or `sandbox: {cpu_seconds, memory_mb, open_files, processes, network, read_only}`
/// (docs/CONFIG.md "sandbox"); nullopt for false. Only the settings: the command resolves bubblewrap.
std::optional<SandboxSettings> read_sandbox(const YamlReader& s) {
  if (s.is_scalar()) {
    if (!s.as_bool()) return std::nullopt;
    return SandboxSettings{};
  }
  if (!s.is_map()) s.fail("sandbox must be true, false or a mapping {cpu_seconds, memory_mb, open_files, processes, "
                          "network, read_only}");
  s.require_only({"cpu_seconds", "memory_mb", "open_files", "processes", "network", "read_only"});
  SandboxSettings st;
  if (s.has("cpu_seconds")) st.cpu_seconds = static_cast<int>(s.at("cpu_seconds").as_int_in(1, 86400));
  if (s.has("memory_mb")) st.memory_mb = static_cast<int>(s.at("memory_mb").as_int_in(16, 1 << 20));
  if (s.has("open_files")) st.open_files = static_cast<int>(s.at("open_files").as_int_in(16, 65536));
  if (s.has("processes")) st.processes = static_cast<int>(s.at("processes").as_int_in(2, 4096));
  const auto list = [&](const char* key, bool path) {
    const YamlReader l = s.at(key);
    l.require_sequence();
    if (l.size() > 16) l.fail("name at most 16 entries");
    std::vector<std::string> out = l.as_strings();
    for (const auto& v : out) {
      if (v.empty() || v.size() > 1024 || v.find_first_of(" \t\r\n") != std::string::npos)
        l.fail(fmt::format("'{}' is empty, longer than 1024 characters or holds white space",
                           untrusted::excerpt(v, 80)));
      if (path && v.front() != '/') l.fail(fmt::format("'{}' is not an absolute path", untrusted::excerpt(v, 80)));
    }
    return out;
  };
  if (s.has("network")) st.network = list("network", false);
  if (s.has("read_only")) st.read_only = list("read_only", true);
  return st;
}

/// llm.prices: {MODEL: {input_per_mtok, output_per_mtok, input_cached_per_mtok, cache_write_per_mtok}}, US dollars
/// per million tokens (docs/LLM.md "Costs and limits").
std::map<std::string, TokenPrice> read_prices(const YamlReader& p) {
  p.require_map();
  std::map<std::string, TokenPrice> out;
  for (const auto& model : p.keys()) {
    const auto m = p.at(model);
    m.require_map();
    m.require_only({"input_per_mtok", "output_per_mtok", "input_cached_per_mtok", "cache_write_per_mtok"});
    TokenPrice price;
    if (m.has("input_per_mtok")) price.input_per_mtok = m.at("input_per_mtok").as_double_in(0, 1e6);
    if (m.has("output_per_mtok")) price.output_per_mtok = m.at("output_per_mtok").as_double_in(0, 1e6);
    if (m.has("input_cached_per_mtok")) price.input_cached_per_mtok = m.at("input_cached_per_mtok").as_double_in(0, 1e6);
    if (m.has("cache_write_per_mtok")) price.cache_write_per_mtok = m.at("cache_write_per_mtok").as_double_in(0, 1e6);
    out[model] = price;
  }
  return out;
}

/// llm.provider: openai or anthropic.
LlmProvider read_provider(const YamlReader& y) {
  const std::string v = y.as_string();
  if (v == "openai") return LlmProvider::openai;
  if (v == "anthropic") return LlmProvider::anthropic;
  y.fail(fmt::format("provider must be openai or anthropic, while '{}' was given", untrusted::excerpt(v, 40)));
}

/// What the Messages API refuses or advplan sets itself, checked once the provider is known (docs/LLM.md "Anthropic").
void check_anthropic_generation(const YamlReader& l, const GenerationSettings& g) {
  if (g.temperature > 1) l.fail(fmt::format("provider anthropic takes a temperature of at most 1, while {} was given", g.temperature));
  if (g.extra_json.empty()) return;
  const nlohmann::json extra = nlohmann::json::parse(g.extra_json);
  for (const char* k : {"system", "tools", "tool_choice", "stop_sequences", "response_format"})
    if (extra.contains(k))
      l.fail(fmt::format("generation.extra sets '{}', which provider anthropic either refuses or advplan sets itself", k));
}

LlmConfig read_llm(const YamlReader& l) {
  LlmConfig llm;
  if (l.has("api_key"))
    l.at("api_key").fail("never put an API key in a config; name its environment variable in llm.api_key_env");
  l.require_only({"provider", "anthropic_version", "endpoint", "model", "api_key_env", "timeout_s", "max_retries",
                  "backoff_s", "max_repairs", "cache_dir", "max_connections", "generation", "prices",
                  "structured_output", "batch_discount", "mode"});
  auto optional_string = [&](const char* key) {
    return l.node()[key].IsDefined() && !l.node()[key].IsNull() ? l.at(key).as_string() : std::string();
  };
  if (l.has("provider")) llm.provider = read_provider(l.at("provider"));
  llm.anthropic_version = l.get_string("anthropic_version", llm.anthropic_version);
  if (llm.anthropic_version.empty() || llm.anthropic_version.size() > 40 ||
      llm.anthropic_version.find_first_of(" \t\r\n") != std::string::npos)
    l.at("anthropic_version").fail("anthropic_version must be a version string such as 2023-06-01");
  llm.endpoint = optional_string("endpoint");
  llm.model = optional_string("model");
  llm.api_key_env = l.get_string("api_key_env", llm.api_key_env);
  if (l.has("timeout_s")) llm.timeout_s = l.at("timeout_s").as_double_in(0.01, 3600);
  if (l.has("max_retries")) llm.max_retries = static_cast<int>(l.at("max_retries").as_int_in(0, 100));
  if (l.has("backoff_s")) llm.backoff_s = l.at("backoff_s").as_double_in(0, 600);
  if (l.has("max_repairs")) llm.max_repairs = static_cast<int>(l.at("max_repairs").as_int_in(0, 10));
  llm.cache_dir = optional_string("cache_dir");
  if (l.has("max_connections")) llm.max_connections = static_cast<int>(l.at("max_connections").as_int_in(1, 1024));
  // llm.structured_output is llm.generation.structured_output's short form; generation's own field wins.
  if (l.has("structured_output")) llm.generation.structured_output = read_structured_output(l.at("structured_output"));
  if (l.has("generation")) llm.generation = read_generation(l.at("generation"), llm.generation);
  if (llm.provider == LlmProvider::anthropic) check_anthropic_generation(l, llm.generation);
  if (l.has("prices")) llm.prices = read_prices(l.at("prices"));
  if (l.has("batch_discount")) llm.batch_discount = l.at("batch_discount").as_double_in(0, 1);
  if (l.has("mode")) {
    const std::string m = l.at("mode").as_string();
    if (m != "online" && m != "batch")
      l.at("mode").fail(fmt::format("mode must be online or batch, while '{}' was given", untrusted::excerpt(m, 40)));
    llm.batch = m == "batch";
  }
  return llm;
}

/// rubric: {judges: [...], mean_over: templates|scenarios, judge_retries: N} (docs/CONFIG.md "rubric").
RubricConfig read_rubric(const YamlReader& r) {
  RubricConfig rc;
  if (!r.node().IsMap()) r.fail("rubric must be a mapping {judges, mean_over, judge_retries}");
  r.require_only({"judges", "mean_over", "judge_retries"});
  if (r.has("judges")) {
    const auto j = r.at("judges");
    if (!j.node().IsSequence()) j.fail("rubric.judges must be a list of judge specs (llm_judge:MODEL, llm_judge_offline)");
    for (std::size_t i = 0; i < j.node().size(); ++i) {
      const std::string spec = j.at(i).as_string();
      if (auto why = judge_spec_error(spec)) j.at(i).fail(*why);
      if (std::find(rc.judges.begin(), rc.judges.end(), spec) != rc.judges.end())
        j.at(i).fail(fmt::format("judge '{}' is listed twice", spec));
      rc.judges.push_back(spec);
    }
  }
  if (r.has("mean_over")) {
    const std::string m = r.at("mean_over").as_string();
    if (m != "templates" && m != "scenarios")
      r.at("mean_over").fail(fmt::format("mean_over must be templates or scenarios, while '{}' was given", m));
    rc.mean_over = m;
  }
  if (r.has("judge_retries")) rc.judge_retries = static_cast<int>(r.at("judge_retries").as_int_in(0, 10));
  return rc;
}

}  // namespace

std::string default_condition_label(const ExperimentConfig& cfg, const std::string& blue, const std::string& red) {
  return blue == cfg.default_blue ? red : blue + " vs " + red;
}

ExperimentConfig parse_experiment_config(const std::string& text, const std::string& file, const std::string& base_dir) {
  const YamlReader root(io::parse_yaml(text, file), file);
  if (!root.node().IsMap()) root.fail("an experiment config must be a YAML mapping");
  root.require_only({"name", "seed", "corpus", "quality_weights", "default_blue", "conditions", "budget_sweep",
                     "policies", "simulator", "bootstrap", "framing_mode", "council", "studies", "exec", "llm", "traces",
                     "matrix", "rubric", "terrain", "samples", "sweep", "sandbox"});
  ExperimentConfig cfg;
  cfg.source = file;
  cfg.text = text;
  cfg.name = root.get_string("name", "experiment");
  if (root.has("seed")) cfg.seed = static_cast<std::uint64_t>(root.at("seed").as_int_in(0, INT64_MAX));
  read_corpus(cfg, root, base_dir);
  if (root.has("quality_weights")) read_quality_weights(cfg, root.at("quality_weights"));
  cfg.default_blue = root.get_string("default_blue", cfg.default_blue);
  if (cfg.default_blue.empty()) root.at("default_blue").fail("the default BLUE policy is empty");
  if (root.has("conditions")) read_conditions(cfg, root.at("conditions"));
  if (root.has("matrix")) read_matrix(cfg, root.at("matrix"));
  cfg.budget_blue = cfg.default_blue;
  if (root.has("budget_sweep")) read_budget_sweep(cfg, root.at("budget_sweep"));
  if (root.has("policies")) read_policy_params(cfg, root.at("policies"));
  if (root.has("simulator")) cfg.sim = read_simulator(root.at("simulator"));
  if (root.has("bootstrap")) cfg.bootstrap = read_bootstrap(root.at("bootstrap"));
  if (root.has("framing_mode")) cfg.framing_mode = read_framing_mode(root.at("framing_mode"));
  if (root.has("council")) cfg.council = read_council(root.at("council"));
  if (root.has("studies")) cfg.studies = read_studies(root.at("studies"));
  if (root.has("exec")) cfg.exec = read_exec(root.at("exec"));
  if (root.has("sandbox")) read_sandbox(root.at("sandbox"));  // checked here; read by config_sandbox()
  if (root.has("llm")) cfg.llm = read_llm(root.at("llm"));
  if (auto& w = cfg.exec.withheld_env; std::find(w.begin(), w.end(), cfg.llm.api_key_env) == w.end())
    w.push_back(cfg.llm.api_key_env);  // the key's variable, besides the default name
  if (root.has("policies"))  // a policy's own generation settings, over llm.generation
    for (const auto& name : root.at("policies").keys())
      if (root.at("policies").at(name).has("generation"))
        cfg.llm.policy_generation[name] =
            read_generation(root.at("policies").at(name).at("generation"), cfg.llm.generation);
  if (root.has("rubric")) cfg.rubric = read_rubric(root.at("rubric"));
  if (root.has("terrain")) {  // docs/GEO.md: `terrain: geo` puts every scenario on a generated map
    const YamlReader terrain = root.at("terrain");
    if (terrain.is_map()) {  // `terrain: {geo: {geojson: FILE}}`: on the user's map (docs/GEO.md "Bring your own map")
      terrain.require_only({"geo"});
      const YamlReader g = terrain.at("geo");
      g.require_only({"geojson"});
      const std::string file = g.at("geojson").as_string();
      if (file.empty()) g.at("geojson").fail("is empty");
      const fs::path p = fs::path(file).is_absolute() || base_dir.empty() ? fs::path(file) : fs::path(base_dir) / file;
      cfg.geo_map_path = p.lexically_normal().string();
      try {
        // One read: the hash in the run key is of the bytes the map was made from.
        cfg.geo_map = std::make_shared<const geo::GeoMap>(geo::read_user_map(cfg.geo_map_path, &cfg.geo_map_sha256));
      } catch (const ConfigError& e) {
        g.at("geojson").fail(e.what());
      }
      cfg.terrain_geo = true;
    } else {
      const std::string t = root.get_string("terrain", "templates");
      if (t != "templates" && t != "geo") root.at("terrain").fail(fmt::format("'{}' is not templates or geo", t));
      cfg.terrain_geo = t == "geo";
    }
  }
  if (root.has("samples")) {
    cfg.samples = static_cast<int>(root.at("samples").as_int_in(1, kMaxSamples));
    // geo_moves.csv has no sample column (docs/DECISIONS.md "Samples").
    if (cfg.samples > 1 && cfg.terrain_geo)
      root.at("samples").fail("samples above 1 are not supported with terrain: geo (geo_moves.csv has no sample column)");
    if (cfg.samples > 1 && cfg.sim.model == "engagement")
      root.at("samples").fail("samples above 1 are not supported with simulator model engagement (engagements.csv "
                              "has no sample column)");
  }
  if (root.has("traces")) {
    const auto t = root.at("traces");
    t.require_only({"candidate_plans", "transcripts", "plans"});
    if (t.has("plans")) cfg.plans = t.at("plans").as_bool();
    cfg.candidate_plans = t.get_bool("candidate_plans", cfg.candidate_plans);
    if (t.has("transcripts")) {
      const std::string m = t.get_string("transcripts", "all");
      const auto mode = parse_transcripts_mode(m);
      if (!mode) t.at("transcripts").fail(fmt::format("'{}' is not none, errors or all", m));
      cfg.transcripts = *mode;
    }
  }
  if (root.has("sweep")) detail::read_sweep(cfg, root.at("sweep"));  // after what a point's values default to
  return cfg;
}

std::optional<SandboxSettings> config_sandbox(const ExperimentConfig& cfg) {
  const YamlReader root(io::parse_yaml(cfg.text, cfg.source), cfg.source);
  if (!root.node().IsMap() || !root.has("sandbox")) return std::nullopt;
  return read_sandbox(root.at("sandbox"));
}

std::optional<std::string> judge_spec_error(const std::string& spec) {
  if (spec == "llm_judge_offline" || spec == "llm_judge" || (spec.rfind("llm_judge:", 0) == 0 && spec.size() > 10))
    return std::nullopt;
  return fmt::format("'{}' is not a judge spec: use llm_judge:MODEL, llm_judge or llm_judge_offline (the rule judges "
                     "are always there)",
                     untrusted::excerpt(spec, 80));
}

std::optional<TranscriptsMode> parse_transcripts_mode(std::string_view s) {
  if (s == "none") return TranscriptsMode::none;
  if (s == "errors") return TranscriptsMode::errors;
  if (s == "all") return TranscriptsMode::all;
  return std::nullopt;
}

const char* to_string(TranscriptsMode m) {
  return m == TranscriptsMode::none ? "none" : m == TranscriptsMode::errors ? "errors" : "all";
}

std::vector<Condition> run_conditions(const ExperimentConfig& cfg) {
  std::vector<Condition> out = cfg.conditions;
  std::set<std::pair<std::string, std::string>> pairs;
  std::set<std::string> labels;
  for (const auto& c : out) {
    pairs.emplace(c.blue, c.red);
    labels.insert(c.label);
  }
  for (const std::string& family : cfg.budget_attackers)
    for (int k : cfg.budget_ks) {
      const std::string red = fmt::format("{}@{}", family, k);
      if (!pairs.emplace(cfg.budget_blue, red).second) continue;
      Condition c{default_condition_label(cfg, cfg.budget_blue, red), cfg.budget_blue, red, "sweep"};
      if (!labels.insert(c.label).second)
        throw ConfigError(fmt::format("{}: budget_sweep: the sweep condition '{}' has the label of another condition",
                                      cfg.source, c.label));
      out.push_back(std::move(c));
    }
  for (Condition& c : sweep_point_conditions(cfg)) {
    if (!labels.insert(c.label).second)
      throw ConfigError(fmt::format("{}: sweep: the point '{}' has the label of another condition", cfg.source, c.label));
    out.push_back(std::move(c));
  }
  for (Condition& c : attribution_conditions(cfg)) {
    if (!labels.insert(c.label).second)
      throw ConfigError(fmt::format("{}: studies.attribution: the combination '{}' has the label of another condition",
                                    cfg.source, c.label));
    out.push_back(std::move(c));
  }
  return out;
}

PolicyContext policy_context(const ExperimentConfig& cfg) {
  PolicyContext ctx;
  ctx.run_seed = cfg.seed;
  ctx.quality = cfg.quality;
  ctx.source = cfg.source;
  ctx.policy_params = cfg.policy_params;
  for (const auto& t : cfg.templates) ctx.shapes[t.id] = TemplateShape{t.seed_plans, t.branch_kinds};
  ctx.set(cfg.exec);
  ctx.set(cfg.llm);
  if (!cfg.llm.cache_dir.empty()) ctx.set(std::make_shared<CompletionCache>(cfg.llm.cache_dir));
  if (cfg.llm.batch) ctx.set(std::make_shared<BatchWave>());  // docs/LLM.md "Batch"
  ctx.set(cfg.council);
  ctx.set(cfg.sim);
  return ctx;
}

ExperimentConfig load_experiment_config(const std::string& path) {
  std::error_code ec;
  const bool there = fs::is_regular_file(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw IoError(fmt::format("{}: config file cannot be read ({})", untrusted::excerpt(path, 200), ec.message()));
  if (!there && fs::exists(path, ec))
    throw IoError(fmt::format("{}: is not a regular file, so it is not read as a config", untrusted::excerpt(path, 200)));
  if (!there) throw IoError(fmt::format("{}: config file not found", untrusted::excerpt(path, 200)));
  const std::string text = io::read_text_file(path, io::kMaxDocumentBytes);
  std::string base = fs::path(path).parent_path().string();
  if (base.empty()) base = ".";
  return parse_experiment_config(text, path, base);
}

ExperimentConfig default_experiment_config() {
  auto text = io::embedded_file(kBuiltinConfig);
  return parse_experiment_config(std::string(*text), std::string("<built-in>/") + kBuiltinConfig, "");
}

std::size_t corpus_size(const ExperimentConfig& cfg) {
  return cfg.templates.size() * static_cast<std::size_t>(cfg.seed_to - cfg.seed_from + 1);
}

Scenario corpus_scenario(const ExperimentConfig& cfg, std::size_t i) {
  const auto per_template = static_cast<std::size_t>(cfg.seed_to - cfg.seed_from + 1);
  return generate_scenario(cfg.templates.at(i / per_template), cfg.seed_from + i % per_template,
                           GeneratorOptions{cfg.framing_mode, std::nullopt});
}

geo::GeoMap scenario_map(const ExperimentConfig& cfg, const Scenario& sc) {
  return cfg.geo_map ? geo::overlay_scenario(sc, *cfg.geo_map) : geo::generate_map(sc);
}

std::vector<Scenario> generate_corpus(const ExperimentConfig& cfg, std::optional<Framing> framing_override) {
  std::vector<Scenario> out;
  GeneratorOptions opts{cfg.framing_mode, framing_override};
  for (const auto& t : cfg.templates)
    for (std::uint64_t s = cfg.seed_from; s <= cfg.seed_to; ++s) out.push_back(generate_scenario(t, s, opts));
  return out;
}

}  // namespace advplan
