// `advplan run [CONFIG] --out DIR [--threads N] [--force | --resume]`
#include <fmt/format.h>

#include <charconv>
#include <cstdlib>

#include "advplan/core/error.hpp"

#include "advplan/experiment/runner.hpp"
#include "commands.hpp"

namespace advplan::cli {

namespace {

bool parse_count(const std::string& s, std::size_t& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

/// `--shard i/N`, or `--shards N` with the index from SLURM_ARRAY_TASK_ID (less SLURM_ARRAY_TASK_MIN when set).
void set_shard(RunOptions& opts, const std::string& shard, std::size_t shards) {
  if (!shard.empty() && shards > 0) throw ConfigError("run: use one of --shard INDEX/COUNT and --shards COUNT");
  if (!shard.empty()) {
    const auto slash = shard.find('/');
    if (slash == std::string::npos || !parse_count(shard.substr(0, slash), opts.shard_index) ||
        !parse_count(shard.substr(slash + 1), opts.shard_count) || opts.shard_count == 0)
      throw ConfigError(fmt::format("--shard {}: expected INDEX/COUNT with 0 <= INDEX < COUNT, e.g. 0/4", shard));
    return;
  }
  if (shards == 0) return;
  const char* id = std::getenv("SLURM_ARRAY_TASK_ID");
  if (id == nullptr)
    throw ConfigError(fmt::format("--shards {}: SLURM_ARRAY_TASK_ID is not set (not a Slurm array task); give "
                                  "--shard INDEX/{} instead",
                                  shards, shards));
  std::size_t task = 0, min = 0;
  if (!parse_count(id, task)) throw ConfigError(fmt::format("--shards {}: SLURM_ARRAY_TASK_ID '{}' is not a number", shards, id));
  if (const char* m = std::getenv("SLURM_ARRAY_TASK_MIN"); m != nullptr && parse_count(m, min) && min <= task) task -= min;
  opts.shard_index = task;
  opts.shard_count = shards;
}

}  // namespace

void add_run_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("run", "Run an experiment and write the run directory");
  auto config = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto threads = std::make_shared<int>(0);
  auto force = std::make_shared<bool>(false);
  auto resume = std::make_shared<bool>(false);
  auto checkpoint = std::make_shared<std::size_t>(0);
  auto shard = std::make_shared<std::string>();
  auto shards = std::make_shared<std::size_t>(0);
  cmd->add_option("CONFIG", *config, "experiment config (default: the built-in configs/experiments/paper.yaml)");
  cmd->add_option("--out", *out, "run directory to write (must be new or empty)")->required();
  cmd->add_option("--threads", *threads, "worker threads (default: all cores)")->check(CLI::Range(1, 1024));
  auto* f = cmd->add_flag("--force", *force, "clear a non-empty --out directory first");
  cmd->add_flag("--resume", *resume, "continue the interrupted run in --out from its last complete scenario")
      ->excludes(f);
  cmd->add_option("--checkpoint-every", *checkpoint,
                  "scenarios between resumable checkpoints (default: a checkpoint every 200 ms)");
  cmd->add_option("--shard", *shard,
                  "run shard INDEX/COUNT of the corpus (0-based), to be combined with advplan merge");
  cmd->add_option("--shards", *shards, "run one of COUNT shards, the index from SLURM_ARRAY_TASK_ID");
  cmd->callback([&run, config, out, threads, force, resume, checkpoint, shard, shards] {
    run = [config, out, threads, force, resume, checkpoint, shard, shards] {
      RunOptions opts;
      set_shard(opts, *shard, *shards);  // bad shard specs fail before the config is read
      const ExperimentConfig cfg = config->empty() ? default_experiment_config() : load_experiment_config(*config);
      const RunPlan plan = prepare_run(cfg, run_conditions(cfg));
      opts.out_dir = *out;
      opts.threads = *threads;
      opts.force = *force;
      opts.resume = *resume;
      opts.checkpoint_every = *checkpoint;
      const RunSummary s = run_experiment(plan, opts);
      if (s.already_complete) {
        fmt::print(stderr, "advplan: {} is already a complete run; nothing to resume\n", *out);
        return 0;
      }
      fmt::print(stderr, "advplan: {} scenarios, {} rows ({} failed) in {:.2f}s; wrote {}\n", s.scenarios, s.rows,
                 s.failed_rows, s.seconds, *out);
      if (s.rows > 0 && s.failed_rows == s.rows) {
        fmt::print(stderr, "advplan: every row failed (first reason: {}); the reasons are in {}/per_scenario.csv\n",
                   s.first_failure, *out);
        return 1;
      }
      return 0;
    };
  });
}

}  // namespace advplan::cli
