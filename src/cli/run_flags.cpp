// Options shared by `advplan run` and `advplan evaluate` for the run directory.
#include <fmt/format.h>

#include "commands.hpp"
#include "advplan/core/error.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/sandbox.hpp"
#include "advplan/run/sandbox_setting.hpp"
#include "advplan/core/untrusted.hpp"
#include <nlohmann/json.hpp>

#include <filesystem>

namespace advplan::cli {

void RunDirFlags::add_to(CLI::App* cmd) {
  auto* f = cmd->add_flag("--force", force, "clear a non-empty --out directory first");
  cmd->add_flag("--resume", resume, "continue the interrupted run in --out from its last complete scenario")->excludes(f);
  cmd->add_option("--checkpoint-every", checkpoint,
                  "scenarios between resumable checkpoints (default: a checkpoint every 200 ms)");
  cmd->add_option("--progress", progress, "auto (a redrawn line on a terminal, plain lines otherwise), tty, plain or none")
      ->capture_default_str();
  cmd->add_option("--progress-interval", interval, "seconds between plain progress lines")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--llm-cache", llm_cache,
                  "directory of the content-addressed LLM completion cache (config: llm.cache_dir); a rerun with it "
                  "asks the model nothing it was already asked");
  cmd->add_option("--max-connections", max_connections,
                  "LLM requests in flight at once, independent of --threads (config: llm.max_connections, default 16)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--transcripts", transcripts,
                  "which calls of external policies (llm:, llm_live, exec:) transcripts.jsonl records: none, errors or "
                  "all (config: traces.transcripts, default all)")
      ->check(CLI::IsMember({"none", "errors", "all"}));
  cmd->add_option("--max-tokens", max_tokens,
                  "stop, resumably, once the external policies' calls took more tokens (prompt + completion) than this")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-cost", max_cost,
                  "stop, resumably, once the external policies' calls cost more US dollars than this under llm.prices")
      ->check(CLI::PositiveNumber);
  add_sandbox_flag(cmd, sandbox);
  cmd->add_flag("--batch", batch,
                "send the live models' calls through the provider's batch API, in waves, at its discount; the run stops "
                "after each wave and the same command with --resume polls the provider and continues it (config: llm.mode: batch; docs/LLM.md \"Batch\")");
  cmd->add_option("--batch-export", batch_export,
                  "with --batch semantics, write each wave's requests to DIR in the provider's batch input format instead "
                  "of submitting them; the same command with --resume --batch-results FILE continues the run");
  cmd->add_option("--batch-results", batch_results,
                  "with --batch --resume: results files of the waiting wave, in the provider's batch output format");
}

void add_sandbox_flag(CLI::App* cmd, bool& flag) {
  cmd->add_flag("--sandbox", flag,
                "start every external program (exec:, replanning, quiz agents, PSRO oracles) in a bubblewrap sandbox: "
                "no network, a read-only file system, limits (config: sandbox; docs/POLICIES.md \"The sandbox\")");
}

void prepare_sandbox(const ExperimentConfig& cfg, bool flag) {
  std::optional<SandboxSettings> settings = config_sandbox(cfg);
  if (flag && !settings) settings = SandboxSettings{};
  if (settings) set_process_sandbox(resolve_sandbox(*settings));
}

void RunDirFlags::apply(ExperimentConfig& cfg) const {
  prepare_sandbox(cfg, sandbox);
  if (!llm_cache.empty()) cfg.llm.cache_dir = llm_cache;
  if (max_connections > 0) cfg.llm.max_connections = max_connections;
  if (!transcripts.empty()) cfg.transcripts = *parse_transcripts_mode(transcripts);
  if (batch || !batch_export.empty() || !batch_results.empty()) cfg.llm.batch = true;
  if (cfg.llm.batch && cfg.llm.cache_dir.empty())
    throw ConfigError("--batch needs a completion cache to keep the batch's answers in: set llm.cache_dir or give "
                      "--llm-cache DIR");
}

void RunDirFlags::apply(RunOptions& opts) const {
  opts.force = force;
  opts.resume = resume;
  opts.checkpoint_every = checkpoint;
  opts.progress_mode = progress;
  opts.progress_interval_s = interval;
  opts.max_tokens = max_tokens;
  opts.max_cost_usd = max_cost;
}

int all_failed_status(const RunSummary& s, const std::string& out_dir) {
  if (s.rows == 0 || s.failed_rows != s.rows) return 0;
  fmt::print(stderr, "advplan: every row failed (first reason: {}); the reasons are in {}/per_scenario.csv\n",
             s.first_failure, out_dir);
  return 1;
}

ExperimentConfig recorded_config(const std::string& config_text, const std::string& source,
                                 const std::string& config_path) {
  if (!config_path.empty()) return load_experiment_config(config_path);
  if (source.rfind("<built-in>/", 0) == 0) return default_experiment_config();
  const std::string base = std::filesystem::path(source).parent_path().string();
  return parse_experiment_config(config_text, source, base.empty() ? "." : base);
}

/// The config a run ran, from its run_metadata.json (bounded); a run whose config no longer parses (a template
/// gone) is reported without its scenarios' assets, with a warning.
std::optional<ExperimentConfig> run_config_or_warn(const std::string& dir) {
  namespace fs = std::filesystem;
  const std::string path = io::run_metadata_path(dir);
  if (io::path_type(dir) != fs::file_type::directory) throw IoError(fmt::format("{}: not a run directory", dir));
  const nlohmann::json meta = io::read_run_metadata(dir);
  if (!meta.contains("config_text") || !meta["config_text"].is_string())
    throw CsvError(fmt::format("{}: config_text: missing or not a text, so the run's config is unknown", path));
  try {
    return recorded_config(meta["config_text"].get<std::string>(), untrusted::string_member(meta, "config_source"), "");
  } catch (const Error& e) {
    fmt::print(stderr, "advplan: warning: {}: the run's config does not load ({}); its scenarios are shown without "
               "their assets\n", untrusted::excerpt(dir, 200), untrusted::excerpt(e.what(), 300));
    return std::nullopt;
  }
}


}  // namespace advplan::cli
