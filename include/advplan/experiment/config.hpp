#pragma once
// The experiment config (configs/experiments/*.yaml, keys in docs/CONFIG.md). Read strictly: unknown keys,
// wrong types and out-of-range values are one-sentence ConfigErrors naming the file and key.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "advplan/metrics/quality.hpp"
#include "advplan/scenario/generator.hpp"
#include "advplan/scenario/scenario_template.hpp"

namespace advplan {

struct SimConfig {
  int replications = 200;   ///< R
  double break_point = 0.3; ///< a side breaks below this share of its initial strength
  int time_limit = 60;      ///< steps
  double dt = 0.05;         ///< step length
  double noise = 0.15;      ///< per-replication log-normal noise on each side's effectiveness
  double step_noise = 0.1;  ///< per-step noise on attrition
};

struct BootstrapConfig {
  int resamples = 2000;  ///< B
  std::uint64_t seed = 7;
};

struct CouncilConfig {
  std::string red = "greedy@8";
  double w_quality = 0.35, w_coherence = 0.25, w_diversity = 0.15, w_pressure = 0.25;
  int shortlist = 2;
};

struct StudiesConfig {
  bool rubric = true, framing = true, components = true;
};

struct ExecConfig {
  double timeout_s = 10.0;
  std::size_t max_response_bytes = 1 << 20;
  int max_restarts = 3;
  int workers = 1;  ///< processes the policy's requests are spread over (`advplan evaluate --workers N`)
};

struct LlmConfig {
  std::string endpoint;  ///< base URL, e.g. http://127.0.0.1:8080; env ADVPLAN_LLM_ENDPOINT overrides
  std::string model;     ///< env ADVPLAN_LLM_MODEL overrides
  std::string api_key_env = "ADVPLAN_LLM_API_KEY";  ///< the key itself is never stored in the config
  double timeout_s = 30.0;
  int max_retries = 3;
  double backoff_s = 0.5;
  int max_repairs = 1;  ///< re-prompts after an unparseable completion
};

struct ExperimentConfig {
  std::string name = "paper";
  std::string source;  ///< the file it was read from, or "<built-in>/configs/experiments/paper.yaml"
  std::string text;    ///< the YAML text as read (hashed into run_metadata.json)
  std::uint64_t seed = 20240601;
  std::vector<std::string> template_ids;
  std::uint64_t seed_from = 100, seed_to = 129;
  QualityWeights quality;
  std::vector<std::string> conditions;  ///< policy specs: single, greedy@8, constraint@8, llm_offline, council
  std::vector<int> budget_ks;           ///< greedy@k sweep
  std::map<std::string, std::map<std::string, double>> policy_params;  ///< policies.<name>.<param>
  SimConfig sim;
  BootstrapConfig bootstrap;
  FramingMode framing_mode = FramingMode::metadata;
  CouncilConfig council;
  StudiesConfig studies;
  ExecConfig exec;
  LlmConfig llm;
  std::vector<ScenarioTemplate> templates;  ///< loaded, in template_ids order
  std::vector<std::pair<std::string, std::string>> template_texts;  ///< (source, text) for hashing
};

/// Parse config text. `file` names it in errors; templates are resolved relative to `base_dir`, or from the
/// built-in copies when `base_dir` is empty. Throws ConfigError / IoError.
ExperimentConfig parse_experiment_config(const std::string& text, const std::string& file, const std::string& base_dir);
/// Read a config file (templates relative to its directory, per corpus.template_dir).
ExperimentConfig load_experiment_config(const std::string& path);
/// The built-in default: configs/experiments/paper.yaml as compiled into the binary.
ExperimentConfig default_experiment_config();

/// The corpus in a fixed order: for each template (config order), seeds seed_from..seed_to.
/// The framing mode is cfg.framing_mode; `framing_override` forces one framing (framing study).
std::vector<Scenario> generate_corpus(const ExperimentConfig& cfg, std::optional<Framing> framing_override = std::nullopt);

std::string_view to_string(FramingMode m);

}  // namespace advplan
