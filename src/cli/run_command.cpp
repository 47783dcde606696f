// `advplan run [CONFIG] --out DIR [--threads N]`
#include <fmt/format.h>

#include "advplan/experiment/runner.hpp"
#include "commands.hpp"

namespace advplan::cli {

void add_run_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("run", "Run an experiment and write the run directory");
  auto config = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto threads = std::make_shared<int>(0);
  cmd->add_option("CONFIG", *config, "experiment config (default: the built-in configs/experiments/paper.yaml)");
  cmd->add_option("--out", *out, "run directory to write")->required();
  cmd->add_option("--threads", *threads, "worker threads (default: all cores)")->check(CLI::Range(1, 1024));
  cmd->callback([&run, config, out, threads] {
    run = [config, out, threads] {
      const ExperimentConfig cfg = config->empty() ? default_experiment_config() : load_experiment_config(*config);
      const RunPlan plan = prepare_run(cfg, run_conditions(cfg));
      RunOptions opts;
      opts.out_dir = *out;
      opts.threads = *threads;
      const RunSummary s = run_experiment(plan, opts);
      fmt::print(stderr, "advplan: {} scenarios, {} rows ({} failed) in {:.2f}s; wrote {}\n", s.scenarios, s.rows,
                 s.failed_rows, s.seconds, *out);
      return 0;
    };
  });
}

}  // namespace advplan::cli
