#pragma once
// The experiment config (configs/experiments/*.yaml, keys in docs/CONFIG.md). Read strictly: unknown keys,
// wrong types and out-of-range values are one-sentence ConfigErrors naming the file and key.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "advplan/council/council_config.hpp"
#include "advplan/geo/map.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/policy/policy_context.hpp"
#include "advplan/policy/policy_settings.hpp"
#include "advplan/scenario/generator.hpp"
#include "advplan/scenario/scenario_template.hpp"
#include "advplan/sim/sim_config.hpp"

namespace advplan {

/// A sweep point's value of one swept setting (docs/CONFIG.md "sweep"): a config path such as
/// "policies.constraint.lambda", "simulator.noise" or "k", and the value it takes at the point.
struct Setting {
  std::string path;
  double value = 0;
  bool operator==(const Setting&) const = default;
};

/// One (BLUE planning policy, RED response policy) pairing: a row of per_scenario.csv per scenario. In a config,
/// `conditions:` lists these, either as a RED spec (against `default_blue`) or as {label, blue, red, group}.
struct Condition {
  std::string label;           ///< "greedy@8", "council", "exec:... vs greedy@8"
  std::string blue;            ///< BLUE policy spec ("seed", "council", "exec:...", "llm:MODEL", any registered)
  std::string red;             ///< RED policy spec ("greedy@8")
  std::string group = "main";  ///< main (Table 3), sweep (Table 4 only), reference, evaluate; grid (a sweep point) and attribution (is_replay_group)
  /// A sweep point's settings over the config's (group grid), in the sweep's parameter order; empty otherwise.
  /// The point plays on the same keyed streams as its base condition (common random numbers).
  std::vector<Setting> settings;
};

/// The condition groups a config or a command may use.
inline constexpr const char* kConditionGroups[] = {"main", "sweep", "reference", "evaluate", "grid", "attribution"};
/// Whether a group's conditions replay a listed condition under other settings (a sweep point, an attribution
/// combination): they are left out of Tables 3-5, the budget curve and the meta-game.
inline bool is_replay_group(std::string_view group) { return group == "grid" || group == "attribution"; }

/// `sweep:` (docs/CONFIG.md "sweep"): one condition per point of a grid (or a list of points) over any of the
/// sweepable settings, all on the swept condition's scenarios and streams.
struct SweepConfig {
  std::string condition;                    ///< the label of the swept condition (a listed condition)
  std::vector<std::string> params;          ///< the swept paths, in config order
  std::vector<std::vector<double>> points;  ///< each point's values, aligned with params, in grid order
  std::size_t reference = 0;                ///< the index of the reference point in `points`
  bool empty() const { return params.empty(); }
};

struct BootstrapConfig {
  int resamples = 2000;  ///< B
  std::uint64_t seed = 7;
};

/// A record of the rubric-sensitivity study: the `side` plan of condition `condition`, under the name `kind`.
struct RubricRecordSource {
  std::string kind;
  std::string condition;
  Side side = Side::Blue;
};

/// The studies, each naming the conditions it compares (docs/CONFIG.md `studies`).
struct StudiesConfig {
  bool rubric = true, framing = true, components = true;
  std::vector<RubricRecordSource> rubric_records{{"seed_blue", "single", Side::Blue},
                                                 {"sampled_red", "single", Side::Red},
                                                 {"llm_red", "llm_offline", Side::Red},
                                                 {"council_blue", "council", Side::Blue}};
  std::string framing_blue = "seed", framing_red = "greedy@8";  ///< the pairing the framing study replays
  /// Component diagnostics: best-of-k against one sample; greedy against constraint-aware selection on the same
  /// candidates; the LLM contract; the council against a baseline with the same RED policy.
  std::string best_of_k = "greedy@8", single = "single";
  std::string greedy = "greedy@8", constraint = "constraint@8";
  std::string llm_contract = "llm_offline";
  std::string council = "council", council_baseline = "greedy@8";
  /// The attribution study (docs/METRICS.md "Attribution"): the 2^m on/off combinations of `attribution_parts`
  /// (each one of kAttributionParts; the parts not listed stay on), each a condition of group attribution, RED
  /// searching attribution_k candidates when response_search is on.
  bool attribution = false;
  std::vector<std::string> attribution_parts{"response_search", "selector", "council_proposal", "council_revision",
                                             "simulator_noise"};
  int attribution_k = 8;
};

/// The parts the attribution study can switch, in their canonical order.
inline constexpr const char* kAttributionParts[] = {"response_search", "selector", "council_proposal",
                                                    "council_revision", "simulator_noise"};

/// The rubric layer's settings (`rubric:` in a config; docs/CONFIG.md, docs/RUBRIC.md).
struct RubricConfig {
  /// Judges besides the rule judges, in order: "llm_judge:MODEL" (a live model), "llm_judge_offline".
  std::vector<std::string> judges;
  std::string mean_over = "templates";  ///< a policy's score: mean over templates (MA-Bench) or scenarios
  int judge_retries = 2;                ///< re-asks of an LLM judge after a malformed reply or unknown item ids
};

/// The most samples a config may ask (`samples`).
inline constexpr int kMaxSamples = 64;

/// Which calls of the external policies a run records in transcripts.jsonl (docs/TRACES.md).
enum class TranscriptsMode {
  none,    ///< no file
  errors,  ///< the calls whose reply was an error or not accepted, and every call of a response that failed
  all,
};
/// "none", "errors" or "all"; nullopt for anything else.
std::optional<TranscriptsMode> parse_transcripts_mode(std::string_view s);
/// Why `spec` is not an LLM judge spec of rubric.judges (llm_judge:MODEL, llm_judge, llm_judge_offline), or nullopt.
std::optional<std::string> judge_spec_error(const std::string& spec);
const char* to_string(TranscriptsMode m);

struct ExperimentConfig {
  std::string name = "paper";
  std::string source;  ///< the file it was read from, or "<built-in>/configs/experiments/paper.yaml"
  std::string text;    ///< the YAML text as read (hashed into run_metadata.json)
  std::uint64_t seed = 20240601;
  std::vector<std::string> template_ids;
  std::uint64_t seed_from = 100, seed_to = 129;
  QualityWeights quality;
  std::string default_blue = "seed";    ///< the BLUE policy of conditions given as a RED spec, and of the sweep
  std::vector<Condition> conditions;    ///< in config order; labels are unique
  std::vector<int> budget_ks;           ///< greedy@k sweep against budget_blue
  /// The attacker families swept over budget_ks (`budget_sweep.attackers`): each plays <family>@k; greedy alone by
  /// default. search@N spends N plan evaluations as greedy@k spends k (docs/POLICIES.md "Search RED").
  std::vector<std::string> budget_attackers{"greedy"};
  std::string budget_blue = "seed";
  SweepConfig sweep;                    ///< `sweep:`; empty when absent
  std::map<std::string, std::map<std::string, double>> policy_params;  ///< policies.<name>.<param>
  SimConfig sim;
  BootstrapConfig bootstrap;
  FramingMode framing_mode = FramingMode::metadata;
  CouncilConfig council;
  StudiesConfig studies;
  ExecConfig exec;
  LlmConfig llm;
  RubricConfig rubric;
  /// samples: N independent responses per (scenario, condition), each from its own keyed streams
  /// (sample_stream); 1 keeps every trace as it was (no `sample` column). docs/CONFIG.md "samples".
  int samples = 1;
  bool terrain_geo = false;  ///< `terrain: geo`: maps, route-bound movements, geo_moves.csv (docs/GEO.md)
  /// `terrain: {geo: {geojson: FILE}}`: every scenario on the user's map (geo::overlay_scenario) instead of a
  /// generated one; the file's path as resolved, its SHA-256 (in the run key) and the map read from it.
  std::string geo_map_path, geo_map_sha256;
  std::shared_ptr<const geo::GeoMap> geo_map;
  bool candidate_plans = false;  ///< traces.candidate_plans: also write candidate_plans.jsonl (docs/TRACES.md)
  /// traces.transcripts: which calls of the external policies (PolicyInfo::external) transcripts.jsonl records
  TranscriptsMode transcripts = TranscriptsMode::all;
  /// traces.plans: write plans.jsonl, every BLUE plan and every selected RED plan (docs/TRACES.md); unset: only
  /// when the run has an external policy, whose plans could not be made again
  std::optional<bool> plans;
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

/// The number of scenarios of the corpus (templates x seeds), and scenario i of it in corpus order (template-major,
/// as generate_corpus), generated alone.
std::size_t corpus_size(const ExperimentConfig& cfg);
Scenario corpus_scenario(const ExperimentConfig& cfg, std::size_t i);
/// A scenario's map under the config: on the user's map (`terrain: {geo: {geojson: FILE}}`) or generated.
geo::GeoMap scenario_map(const ExperimentConfig& cfg, const Scenario& sc);

/// The run's conditions: cfg.conditions, then the budget sweep (budget_blue against <family>@k, group sweep, for each
/// family of budget_attackers in order, then each k) for every pairing no listed condition already covers, then the sweep's points (group grid).
std::vector<Condition> run_conditions(const ExperimentConfig& cfg);

/// The label of a (blue, red) pairing when the config does not give one: the RED spec when blue is the config's
/// default BLUE policy, else "BLUE vs RED".
std::string default_condition_label(const ExperimentConfig& cfg, const std::string& blue, const std::string& red);

/// What policy factories receive from this config: run seed, quality weights, template shapes, policies.*
/// parameters, and the exec, llm and council settings.
PolicyContext policy_context(const ExperimentConfig& cfg);

}  // namespace advplan
