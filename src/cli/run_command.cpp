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
  auto candidate_plans = std::make_shared<bool>(false);
  cmd->add_option("CONFIG", *config, "experiment config (default: the built-in configs/experiments/paper.yaml)");
  cmd->add_option("--out", *out, "run directory to write")->required();
  cmd->add_option("--threads", *threads, "worker threads (default: all cores)")->check(CLI::Range(1, 1024));
  cmd->add_flag("--candidate-plans", *candidate_plans,
                "also write candidate_plans.jsonl, every RED candidate plan (config: traces.candidate_plans)");
  cmd->callback([&run, config, out, threads, candidate_plans] {
    run = [config, out, threads, candidate_plans] {
      ExperimentConfig cfg = config->empty() ? default_experiment_config() : load_experiment_config(*config);
      if (*candidate_plans) cfg.candidate_plans = true;
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
