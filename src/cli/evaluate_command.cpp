// `advplan evaluate --blue POLICY [--red LIST] [--config C] --out DIR [--workers N] [--threads N]`
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "advplan/core/error.hpp"
#include "advplan/experiment/analysis.hpp"
#include "advplan/experiment/runner.hpp"
#include "advplan/experiment/table_format.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/metrics/statistics.hpp"
#include "commands.hpp"

namespace advplan::cli {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string label(const std::string& blue, const std::string& red) { return blue + " vs " + red; }

/// summary.md: per RED baseline, advantage and win rate with intervals for the policy, the seed plan and the
/// council; then the failures.
std::string evaluation_summary(const io::CsvTable& per, const std::string& blue, const std::vector<std::string>& reds,
                               const std::vector<std::string>& references, const BootstrapSettings& bs) {
  TextTable t{"summary", fmt::format("Evaluation of BLUE policy `{}` against the fixed RED baselines", blue),
              {"RED baseline", "BLUE policy", "plans", "failures", "BLUE advantage", "BLUE win rate"}, {}};
  std::vector<std::string> blues{blue};
  for (const auto& r : references)
    if (r != blue) blues.push_back(r);
  for (const auto& red : reds) {
    for (const auto& b : blues) {
      const std::string cond = label(b, red);
      std::vector<double> adv, win;
      std::size_t failures = 0;
      for (std::size_t i = 0; i < per.size(); ++i) {
        if (per.at(i, "condition") != cond) continue;
        if (per.at(i, "status") != "ok") {
          ++failures;
          continue;
        }
        adv.push_back(per.real(i, "advantage"));
        win.push_back(per.real(i, "blue_win_rate"));
      }
      const auto a = bootstrap_mean(adv, bs.resamples, bs.seed, fmt::format("all|{}|advantage", cond));
      const auto w = bootstrap_mean(win, bs.resamples, bs.seed, fmt::format("all|{}|blue_win_rate", cond));
      t.rows.push_back({red, b, std::to_string(adv.size()), std::to_string(failures), interval_cell(a), interval_cell(w)});
    }
  }
  std::string md = t.markdown();
  std::size_t shown = 0, total = 0;
  std::string fails;
  for (std::size_t i = 0; i < per.size(); ++i) {
    if (per.at(i, "status") == "ok" || per.at(i, "blue_policy") != blue) continue;
    ++total;
    if (shown < 50) {
      fails += fmt::format("| {} | {} | {} |\n", per.at(i, "scenario_id"), per.at(i, "red_policy"), per.at(i, "failure_reason"));
      ++shown;
    }
  }
  md += fmt::format("\n**Failures of `{}`: {} row(s)** (per_scenario.csv, columns status and failure_reason)\n", blue, total);
  if (total > 0) md += "\n| Scenario | RED | Reason |\n|---|---|---|\n" + fails;
  if (total > shown) md += fmt::format("\n... and {} more in per_scenario.csv\n", total - shown);
  return md;
}

}  // namespace

void add_evaluate_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("evaluate", "Test a BLUE planning policy against the fixed RED baselines");
  auto blue = std::make_shared<std::string>();
  auto reds = std::make_shared<std::string>("single,greedy@8,constraint@8,llm_offline");
  auto config = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto workers = std::make_shared<int>(0);
  auto threads = std::make_shared<int>(0);
  auto no_refs = std::make_shared<bool>(false);
  auto refs = std::make_shared<std::string>("seed,council");
  auto force = std::make_shared<bool>(false);
  auto resume = std::make_shared<bool>(false);
  auto checkpoint = std::make_shared<std::size_t>(0);
  auto progress = std::make_shared<std::string>("auto");
  auto interval = std::make_shared<double>(10.0);
  cmd->add_option("--blue", *blue, "BLUE policy: a registered name, exec:'COMMAND' or llm:MODEL")->required();
  cmd->add_option("--red", *reds, "comma-separated RED baselines")->capture_default_str();
  cmd->add_option("--config", *config, "experiment config (default: the built-in paper config)");
  cmd->add_option("--out", *out, "run directory to write")->required();
  cmd->add_option("--workers", *workers, "processes for an exec: policy (default: config exec.workers)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--threads", *threads, "worker threads (default: all cores)")->check(CLI::Range(1, 1024));
  cmd->add_option("--reference", *refs, "comma-separated BLUE policies the policy is compared with")
      ->capture_default_str();
  cmd->add_flag("--no-reference", *no_refs, "skip the reference rows");
  auto* f = cmd->add_flag("--force", *force, "clear a non-empty --out directory first");
  cmd->add_flag("--resume", *resume, "continue the interrupted run in --out from its last complete scenario")
      ->excludes(f);
  cmd->add_option("--checkpoint-every", *checkpoint,
                  "scenarios between resumable checkpoints (default: a checkpoint every 200 ms)");
  cmd->add_option("--progress", *progress,
                  "auto (a redrawn line on a terminal, plain lines otherwise), tty, plain or none")
      ->capture_default_str();
  cmd->add_option("--progress-interval", *interval, "seconds between plain progress lines")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->callback([&run, blue, reds, config, out, workers, threads, no_refs, refs, force, resume, checkpoint, progress, interval] {
    run = [blue, reds, config, out, workers, threads, no_refs, refs, force, resume, checkpoint, progress, interval] {
      ExperimentConfig cfg = config->empty() ? default_experiment_config() : load_experiment_config(*config);
      if (*workers > 0) cfg.exec.workers = *workers;
      const auto red_list = split_list(*reds);
      if (red_list.empty()) throw ConfigError("evaluate: --red names no RED baseline");
      std::vector<std::string> references;
      if (!*no_refs) references = split_list(*refs);
      const RunPlan plan = prepare_run(cfg, evaluate_conditions(*blue, red_list, references));  // bad policies fail here, before any work
      RunOptions opts;
      opts.out_dir = *out;
      opts.threads = *threads;
      opts.studies = false;
      opts.command = "evaluate";
      opts.force = *force;
      opts.resume = *resume;
      opts.checkpoint_every = *checkpoint;
      opts.progress_mode = *progress;
      opts.progress_interval_s = *interval;
      const BootstrapSettings bs{cfg.bootstrap.resamples, cfg.bootstrap.seed};
      std::string md;
      io::CsvTable per;
      // summary.md is part of the run: written before the MANIFEST, from the written per_scenario.csv.
      opts.before_manifest = [&](const std::string& dir) {
        per = io::CsvTable::read((fs::path(dir) / "per_scenario.csv").string());
        md = evaluation_summary(per, *blue, red_list, references, bs);
        io::write_file_atomic((fs::path(dir) / "summary.md").string(), md);
      };
      const RunSummary s = run_experiment(plan, opts);
      std::size_t policy_failures = 0;
      for (std::size_t i = 0; i < per.size(); ++i)
        if (per.at(i, "blue_policy") == *blue && per.at(i, "status") != "ok") ++policy_failures;
      fmt::print("{}", md);
      fmt::print(stderr, "advplan: evaluated {} on {} scenarios in {:.2f}s: {} failure(s); wrote {}\n", *blue,
                 s.scenarios, s.seconds, policy_failures, *out);
      if (s.scenarios_with_blue_plan == 0) {
        fmt::print(stderr, "advplan: {} produced no plan on any scenario\n", *blue);
        return 1;
      }
      return 0;
    };
  });
}

}  // namespace advplan::cli
