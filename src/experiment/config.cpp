#include "advplan/experiment/config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "advplan/io/embedded_files.hpp"
#include "advplan/io/yaml_reader.hpp"

namespace advplan {
using io::YamlReader;
namespace fs = std::filesystem;

std::string_view to_string(FramingMode m) { return m == FramingMode::metadata ? "metadata" : "applied"; }

namespace {

constexpr const char* kBuiltinConfig = "configs/experiments/paper.yaml";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(fmt::format("{}: cannot read file", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void read_templates(ExperimentConfig& cfg, const YamlReader& corpus, const std::string& base_dir) {
  const auto ids = corpus.at("templates");
  cfg.template_ids = ids.as_strings();
  if (cfg.template_ids.empty()) ids.fail("must name at least one template");
  const std::string dir = corpus.get_string("template_dir", "../templates");
  for (std::size_t i = 0; i < cfg.template_ids.size(); ++i) {
    const std::string& id = cfg.template_ids[i];
    std::string text, source;
    if (base_dir.empty()) {
      source = fmt::format("configs/templates/{}.yaml", id);
      auto emb = io::embedded_file(source);
      if (!emb) ids.at(i).fail(fmt::format("template '{}' is not built in (built-in: urban, maritime, mixed, "
                                          "air-defense, humanitarian)", id));
      text = std::string(*emb);
      source = "<built-in>/" + source;
    } else {
      const fs::path p = fs::path(base_dir) / dir / (id + ".yaml");
      source = p.lexically_normal().string();
      if (!fs::exists(p)) ids.at(i).fail(fmt::format("template '{}' not found: no file {}", id, source));
      text = read_file(source);
    }
    ScenarioTemplate t = parse_template(text, source);
    if (t.id != id) ids.at(i).fail(fmt::format("template file {} declares id '{}', not '{}'", source, t.id, id));
    cfg.templates.push_back(std::move(t));
    cfg.template_texts.emplace_back(source, std::move(text));
  }
}

}  // namespace

ExperimentConfig parse_experiment_config(const std::string& text, const std::string& file, const std::string& base_dir) {
  const YamlReader root(io::parse_yaml(text, file), file);
  if (!root.node().IsMap()) root.fail("an experiment config must be a YAML mapping");
  root.require_only({"name", "seed", "corpus", "quality_weights", "conditions", "budget_sweep", "policies", "simulator",
                     "bootstrap", "framing_mode", "council", "studies", "exec", "llm"});
  ExperimentConfig cfg;
  cfg.source = file;
  cfg.text = text;
  cfg.name = root.get_string("name", "experiment");
  if (root.has("seed")) cfg.seed = static_cast<std::uint64_t>(root.at("seed").as_int_in(0, INT64_MAX));

  const auto corpus = root.at("corpus");
  corpus.require_only({"templates", "seeds", "template_dir"});
  const auto seeds = corpus.at("seeds");
  seeds.require_sequence();
  if (seeds.size() != 2) seeds.fail("expected [first, last]");
  cfg.seed_from = static_cast<std::uint64_t>(seeds.at(0).as_int_in(0, INT64_MAX));
  cfg.seed_to = static_cast<std::uint64_t>(seeds.at(1).as_int_in(0, INT64_MAX));
  if (cfg.seed_from > cfg.seed_to) seeds.fail("first seed is greater than last seed");
  read_templates(cfg, corpus, base_dir);
  // Joint bound: each key's own range allows corpora that cannot fit in memory or time.
  constexpr std::uint64_t kMaxScenarios = 100000;
  const std::uint64_t n_seeds = cfg.seed_to - cfg.seed_from + 1;
  const std::uint64_t n_templates = std::max<std::uint64_t>(1, cfg.templates.size());
  if (n_seeds > kMaxScenarios || n_seeds * n_templates > kMaxScenarios)
    seeds.fail(fmt::format("[{}, {}] gives {} seeds x {} templates; at most {} scenarios fit in one run",
                           cfg.seed_from, cfg.seed_to, n_seeds, n_templates, kMaxScenarios));

  if (root.has("quality_weights")) {
    const auto qw = root.at("quality_weights");
    qw.require_only({"effectiveness", "cost", "risk"});
    cfg.quality.effectiveness = qw.at("effectiveness").as_double_in(0, 1);
    cfg.quality.cost = qw.at("cost").as_double_in(0, 1);
    cfg.quality.risk = qw.at("risk").as_double_in(0, 1);
    const double s = cfg.quality.effectiveness + cfg.quality.cost + cfg.quality.risk;
    if (std::abs(s - 1.0) > 1e-9) qw.fail(fmt::format("weights must sum to 1, while they sum to {}", s));
  }
  if (root.has("conditions")) cfg.conditions = root.at("conditions").as_strings();
  if (root.has("budget_sweep")) {
    const auto bs = root.at("budget_sweep");
    bs.require_sequence();
    for (std::size_t i = 0; i < bs.size(); ++i) {
      const auto k = bs.at(i).as_int();
      if (k < 1) bs.at(i).fail(fmt::format("k must be at least 1 (accepted: integers 1..1024), while {} was given", k));
      if (k > 1024) bs.at(i).fail(fmt::format("k must be at most 1024, while {} was given", k));
      cfg.budget_ks.push_back(static_cast<int>(k));
    }
  }
  if (root.has("policies")) {
    const auto pol = root.at("policies");
    for (const auto& name : pol.keys()) {
      const auto params = pol.at(name);
      for (const auto& key : params.keys()) cfg.policy_params[name][key] = params.at(key).as_double();
    }
  }
  if (root.has("simulator")) {
    const auto s = root.at("simulator");
    s.require_only({"replications", "break_point", "time_limit", "dt", "noise", "step_noise"});
    if (s.has("replications")) {
      const auto r = s.at("replications").as_int();
      if (r < 1) s.at("replications").fail(fmt::format("R must be at least 1, while {} was given", r));
      if (r > 100000) s.at("replications").fail(fmt::format("R must be at most 100000, while {} was given", r));
      cfg.sim.replications = static_cast<int>(r);
    }
    if (s.has("break_point")) cfg.sim.break_point = s.at("break_point").as_double_in(0, 0.99);
    if (s.has("time_limit")) cfg.sim.time_limit = static_cast<int>(s.at("time_limit").as_int_in(1, 1000000));
    if (s.has("dt")) cfg.sim.dt = s.at("dt").as_double_in(1e-4, 1);
    if (s.has("noise")) cfg.sim.noise = s.at("noise").as_double_in(0, 2);
    if (s.has("step_noise")) cfg.sim.step_noise = s.at("step_noise").as_double_in(0, 2);
    // Joint bound: the simulator draws replications x time_limit noise steps per side for each evaluation.
    constexpr long long kMaxSimSteps = 10000000;
    const long long steps = static_cast<long long>(cfg.sim.replications) * cfg.sim.time_limit;
    if (steps > kMaxSimSteps)
      s.fail(fmt::format("replications x time_limit is {} x {} = {}; at most {} fit in memory per evaluation",
                         cfg.sim.replications, cfg.sim.time_limit, steps, kMaxSimSteps));
  }
  if (root.has("bootstrap")) {
    const auto b = root.at("bootstrap");
    b.require_only({"resamples", "seed"});
    if (b.has("resamples")) cfg.bootstrap.resamples = static_cast<int>(b.at("resamples").as_int_in(1, 1000000));
    if (b.has("seed")) cfg.bootstrap.seed = static_cast<std::uint64_t>(b.at("seed").as_int_in(0, INT64_MAX));
  }
  if (root.has("framing_mode")) {
    const auto f = root.at("framing_mode");
    const auto v = f.as_string();
    if (v == "metadata")
      cfg.framing_mode = FramingMode::metadata;
    else if (v == "applied")
      cfg.framing_mode = FramingMode::applied;
    else
      f.fail(fmt::format("unknown framing mode '{}' (accepted: metadata, applied)", v));
  }
  if (root.has("council")) {
    const auto c = root.at("council");
    c.require_only({"red", "shortlist", "weights"});
    cfg.council.red = c.get_string("red", cfg.council.red);
    if (c.has("shortlist")) cfg.council.shortlist = static_cast<int>(c.at("shortlist").as_int_in(1, 5));
    if (c.has("weights")) {
      const auto w = c.at("weights");
      w.require_only({"quality", "coherence", "diversity", "pressure"});
      cfg.council.w_quality = w.get_double("quality", cfg.council.w_quality);
      cfg.council.w_coherence = w.get_double("coherence", cfg.council.w_coherence);
      cfg.council.w_diversity = w.get_double("diversity", cfg.council.w_diversity);
      cfg.council.w_pressure = w.get_double("pressure", cfg.council.w_pressure);
      for (const char* k : {"quality", "coherence", "diversity", "pressure"})
        if (w.has(k)) (void)w.at(k).as_double_in(0, 1);
    }
  }
  if (root.has("studies")) {
    const auto s = root.at("studies");
    s.require_only({"rubric", "framing", "components"});
    cfg.studies.rubric = s.get_bool("rubric", true);
    cfg.studies.framing = s.get_bool("framing", true);
    cfg.studies.components = s.get_bool("components", true);
  }
  if (root.has("exec")) {
    const auto e = root.at("exec");
    e.require_only({"timeout_s", "max_response_bytes", "max_restarts", "workers"});
    if (e.has("workers")) cfg.exec.workers = static_cast<int>(e.at("workers").as_int_in(1, 64));
    if (e.has("timeout_s")) cfg.exec.timeout_s = e.at("timeout_s").as_double_in(0.01, 3600);
    if (e.has("max_response_bytes"))
      cfg.exec.max_response_bytes = static_cast<std::size_t>(e.at("max_response_bytes").as_int_in(64, 1 << 30));
    if (e.has("max_restarts")) cfg.exec.max_restarts = static_cast<int>(e.at("max_restarts").as_int_in(0, 1000));
  }
  if (root.has("llm")) {
    const auto l = root.at("llm");
    if (l.has("api_key"))
      l.at("api_key").fail("never put an API key in a config; name its environment variable in llm.api_key_env");
    l.require_only({"endpoint", "model", "api_key_env", "timeout_s", "max_retries", "backoff_s", "max_repairs"});
    cfg.llm.endpoint = l.node()["endpoint"].IsDefined() && !l.node()["endpoint"].IsNull() ? l.at("endpoint").as_string() : "";
    cfg.llm.model = l.node()["model"].IsDefined() && !l.node()["model"].IsNull() ? l.at("model").as_string() : "";
    cfg.llm.api_key_env = l.get_string("api_key_env", cfg.llm.api_key_env);
    if (l.has("timeout_s")) cfg.llm.timeout_s = l.at("timeout_s").as_double_in(0.01, 3600);
    if (l.has("max_retries")) cfg.llm.max_retries = static_cast<int>(l.at("max_retries").as_int_in(0, 100));
    if (l.has("backoff_s")) cfg.llm.backoff_s = l.at("backoff_s").as_double_in(0, 600);
    if (l.has("max_repairs")) cfg.llm.max_repairs = static_cast<int>(l.at("max_repairs").as_int_in(0, 10));
  }
  return cfg;
}

ExperimentConfig load_experiment_config(const std::string& path) {
  if (!fs::exists(path)) throw IoError(fmt::format("{}: config file not found", path));
  const std::string text = read_file(path);
  std::string base = fs::path(path).parent_path().string();
  if (base.empty()) base = ".";
  return parse_experiment_config(text, path, base);
}

ExperimentConfig default_experiment_config() {
  auto text = io::embedded_file(kBuiltinConfig);
  return parse_experiment_config(std::string(*text), std::string("<built-in>/") + kBuiltinConfig, "");
}

std::vector<Scenario> generate_corpus(const ExperimentConfig& cfg, std::optional<Framing> framing_override) {
  std::vector<Scenario> out;
  GeneratorOptions opts{cfg.framing_mode, framing_override};
  for (const auto& t : cfg.templates)
    for (std::uint64_t s = cfg.seed_from; s <= cfg.seed_to; ++s) out.push_back(generate_scenario(t, s, opts));
  return out;
}

}  // namespace advplan
