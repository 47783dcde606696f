// `advplan psro CONFIG [--iterations N] [--epsilon E] [--out DIR] [--payoff advantage|win_rate] [--threads T]
// [--blue-budget N] [--red-k K] [--resamples B] [--force | --resume]`: grows the config's BLUE and RED
// populations by best responses against the exact meta-game equilibrium (docs/METRICS.md "PSRO").
#include <fmt/format.h>

#include <filesystem>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/metagame/psro.hpp"
#include "advplan/run/config.hpp"
#include "commands.hpp"

namespace advplan::cli {

void add_psro_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("psro", "Grow the BLUE and RED populations by best responses to the exact meta-game "
                                         "equilibrium (PSRO)");
  auto config = std::make_shared<std::string>();
  auto opt = std::make_shared<metagame::PsroOptions>();
  auto payoff = std::make_shared<std::string>("advantage");
  auto sandbox = std::make_shared<bool>(false);
  cmd->add_option("CONFIG", *config, "experiment config whose matrix (or conditions) gives the starting populations")
      ->required();
  cmd->add_option("--iterations", opt->iterations, "iterations (default 10)")->check(CLI::Range(1, 1000));
  cmd->add_option("--epsilon", opt->epsilon, "stop once an iteration's exploitability is at most this (default: run every iteration)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--out", opt->out_dir, "output directory (default: runs/<config name>-psro)");
  cmd->add_option("--payoff", *payoff, "advantage (default) or win_rate");
  cmd->add_option("--threads", opt->threads, "worker threads (default: all cores)")->check(CLI::Range(1, 1024));
  cmd->add_option("--blue-budget", opt->blue_budget,
                  "plans the BLUE oracle's local search evaluates per scenario (default 48)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--red-k", opt->red_k, "candidates the RED oracle draws per scenario (default 64)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--blue-oracle", opt->blue_oracle,
                  "local (the built-in local search, default), exec:COMMAND (a program given the scenario and RED's "
                  "mixture as JSON), llm:MODEL (the plan prompt with the mixture appended) or llm_offline");
  cmd->add_option("--red-oracle", opt->red_oracle,
                  "greedy (greedy@K against BLUE's mixture, default), exec:COMMAND, llm:MODEL or llm_offline");
  cmd->add_option("--resamples", opt->resamples, "bootstrap resamples of the exploitability (default 1000)")
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--progress", opt->progress_mode, "auto, tty, plain or none");
  cmd->add_flag("--force", opt->force, "clear an existing PSRO directory first");
  cmd->add_flag("--resume", opt->resume, "continue the interrupted PSRO in --out");
  add_sandbox_flag(cmd, *sandbox);
  cmd->callback([&run, config, opt, payoff, sandbox] {
    run = [config, opt, payoff, sandbox] {
      if (opt->force && opt->resume) throw ConfigError("psro: use one of --force and --resume");
      if (*payoff == "advantage")
        opt->payoff = metagame::Payoff::advantage;
      else if (*payoff == "win_rate")
        opt->payoff = metagame::Payoff::win_rate;
      else
        throw ConfigError(fmt::format("psro: --payoff {}: accepted values are advantage and win_rate",
                                      untrusted::excerpt(*payoff, 40)));
      ExperimentConfig cfg = load_experiment_config(*config);
      prepare_sandbox(cfg, *sandbox);
      if (opt->out_dir.empty()) {
        opt->out_dir = (std::filesystem::path("runs") /
                        untrusted::safe_path_component((cfg.name.empty() ? "run" : cfg.name) + "-psro"))
                           .string();
        fmt::print(stderr, "advplan: writing PSRO to {} (--out names another directory)\n", opt->out_dir);
      }
      const auto rows = metagame::run_psro(cfg, *opt);
      const auto& last = rows.back();
      fmt::print(stderr, "advplan: psro: {} iterations; exploitability {:.4f} {}; wrote {}\n", rows.size(),
                 last.exploitability, metagame::interval_text(last.lo, last.hi), opt->out_dir);
      return 0;
    };
  });
}

}  // namespace advplan::cli
