// `advplan run [CONFIG] --out DIR [--threads N] [--force | --resume]`
#include <fmt/format.h>

#include "advplan/experiment/runner.hpp"
#include "commands.hpp"

namespace advplan::cli {

void add_run_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("run", "Run an experiment and write the run directory");
  auto config = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto threads = std::make_shared<int>(0);
  auto force = std::make_shared<bool>(false);
  auto resume = std::make_shared<bool>(false);
  auto checkpoint = std::make_shared<std::size_t>(0);
  cmd->add_option("CONFIG", *config, "experiment config (default: the built-in configs/experiments/paper.yaml)");
  cmd->add_option("--out", *out, "run directory to write (must be new or empty)")->required();
  cmd->add_option("--threads", *threads, "worker threads (default: all cores)")->check(CLI::Range(1, 1024));
  auto* f = cmd->add_flag("--force", *force, "clear a non-empty --out directory first");
  cmd->add_flag("--resume", *resume, "continue the interrupted run in --out from its last complete scenario")
      ->excludes(f);
  cmd->add_option("--checkpoint-every", *checkpoint,
                  "scenarios between resumable checkpoints (default: a checkpoint every 200 ms)");
  cmd->callback([&run, config, out, threads, force, resume, checkpoint] {
    run = [config, out, threads, force, resume, checkpoint] {
      const ExperimentConfig cfg = config->empty() ? default_experiment_config() : load_experiment_config(*config);
      const RunPlan plan = prepare_run(cfg, run_conditions(cfg));
      RunOptions opts;
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
