#pragma once
// One function per `advplan` subcommand; each returns the process exit status and reports errors on stderr as
// one sentence.
#include <CLI/CLI.hpp>

#include "advplan/run/runner.hpp"
#include <functional>
#include <set>
#include <optional>
#include <string>

namespace advplan::cli {

/// The run-directory options `run` and `evaluate` share: --force, --resume, --checkpoint-every, --progress and
/// --progress-interval (src/cli/run_flags.cpp).
struct RunDirFlags {
  bool force = false, resume = false;
  std::size_t checkpoint = 0;
  std::string progress = "auto";
  double interval = 10.0;
  std::string llm_cache;  ///< --llm-cache DIR: the completion cache of every LLM call (overrides llm.cache_dir)
  int max_connections = 0;  ///< --max-connections N (overrides llm.max_connections); 0: the config's
  std::string transcripts;  ///< --transcripts none|errors|all (overrides traces.transcripts); empty: the config's
  std::uint64_t max_tokens = 0;  ///< --max-tokens N; 0: no limit
  double max_cost = 0;           ///< --max-cost USD; 0: no limit
  bool sandbox = false;          ///< --sandbox: every external program in a bubblewrap sandbox (config: sandbox)
  bool batch = false;            ///< --batch: the live calls go through the provider's batch API (llm.mode: batch)
  std::string batch_export;      ///< --batch-export DIR: write the wave's input files there instead of submitting
  std::vector<std::string> batch_results;  ///< --batch-results FILE...: a waiting wave's results, in the provider's format
  /// Registers the options on `cmd`; the object must outlive the parse.
  void add_to(CLI::App* cmd);
  /// Copies them into a run's options.
  void apply(RunOptions& opts) const;
  /// Copies the settings that live in the config (--llm-cache) into it, and makes the sandbox ready
  /// (prepare_sandbox).
  void apply(ExperimentConfig& cfg) const;
};

/// The --sandbox flag of the commands that start external programs (run, evaluate, psro, quiz).
void add_sandbox_flag(CLI::App* cmd, bool& flag);
/// --sandbox (or the config's `sandbox:`) made ready: bubblewrap found, its version read and a sandbox tried
/// (resolve_sandbox). Throws ConfigError with one sentence when it cannot run here: nothing starts unsandboxed.
void prepare_sandbox(const ExperimentConfig& cfg, bool flag);

/// The config a run ran, from its run_metadata.json `config_text` and `config_source`: `config_path` when given
/// (re-read from disk), the built-in config when the source is `<built-in>/...`, else the recorded text with its
/// templates resolved next to the recorded source.
ExperimentConfig recorded_config(const std::string& config_text, const std::string& source,
                                 const std::string& config_path);

/// The config of the run in `dir` (run_metadata.json, bounded), for the commands that show a run; a config that no
/// longer loads (a template gone) is nullopt, with a warning. Throws IoError / CsvError naming the file when the
/// metadata is missing or malformed.
std::optional<ExperimentConfig> run_config_or_warn(const std::string& dir);

/// The exit status of a finished run: 1, with a sentence naming the first reason, when every row failed; else 0.
int all_failed_status(const RunSummary& s, const std::string& out_dir);

/// The exit status of a run that waits for its batch wave (EX_TEMPFAIL: try again later).
inline constexpr int kBatchWaitingStatus = 75;
/// Remembers the command line, for the sentence that says how to continue a batch run.
void set_command_line(int argc, char** argv);
/// Before a batch run resumes: stores the waiting wave's answers in the completion cache, from `results` files or by
/// polling the provider (the config's endpoint and key). kBatchWaitingStatus when a batch is still running (the run is
/// not started); -1 to go on with the run.
int continue_batch(const RunPlan& plan, const RunOptions& opts, const std::vector<std::string>& results);
/// run_experiment in batch mode: first the waiting wave's answers (continue_batch), then the run; a run that waits
/// (again) goes through finish_batch_wave. Returns the exit status when the command ends here (75), else nullopt with
/// `s` filled.
std::optional<int> run_with_batches(const RunPlan& plan, const RunOptions& opts, const RunDirFlags& flags, RunSummary& s);
/// A run stopped with BatchWaiting: writes the wave's input files and state into RUN/.advplan-work/batch/, submits
/// them (or copies them to `export_dir`), prints what the run waits for, and returns kBatchWaitingStatus.
int finish_batch_wave(const RunPlan& plan, const RunOptions& opts, const std::string& export_dir, const BatchWaiting& e);

/// Registers a subcommand on `app`; `run` is set to the action to execute when it is chosen.
using Action = std::function<int()>;
void add_scenarios_command(CLI::App& app, Action& run);
void add_validate_command(CLI::App& app, Action& run);
void add_run_command(CLI::App& app, Action& run);
void add_tables_command(CLI::App& app, Action& run);
void add_evaluate_command(CLI::App& app, Action& run);
void add_list_command(CLI::App& app, Action& run);
void add_merge_command(CLI::App& app, Action& run);
void add_leaderboard_command(CLI::App& app, Action& run);
void add_design_command(CLI::App& app, Action& run);  ///< design RUN_DIR: variance components and the cheapest (n, K, R)
void add_rubric_command(CLI::App& app, Action& run);
void add_frontier_command(CLI::App& app, Action& run);
void add_metagame_command(CLI::App& app, Action& run);
void add_psro_command(CLI::App& app, Action& run);  ///< psro CONFIG: best responses to the exact equilibrium
void add_schema_command(CLI::App& app, Action& run);
void add_batch_command(CLI::App& app, Action& run);  ///< batch poll|ingest RUN: a batch run's next wave  ///< schema NAME: the JSON Schemas of what models write
void add_geo_commands(CLI::App& app, Action& run);  ///< map, tool, questions, quiz
void add_check_command(CLI::App& app, Action& run);
void add_report_command(CLI::App& app, Action& run);  ///< report RUN_DIR: the static site (docs/REPORT.md)
void add_view_command(CLI::App& app, Action& run);    ///< view RUN_DIR: the same pages served from 127.0.0.1  ///< check RUN_DIR: the MANIFEST check
void add_play_command(CLI::App& app, Action& run);  ///< play CONFIG --side S --out DIR: a person in one seat (docs/PLAY.md)

}  // namespace advplan::cli
