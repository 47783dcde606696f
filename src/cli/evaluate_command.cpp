// `advplan evaluate --blue POLICY [--red LIST] [--config C] --out DIR [--workers N] [--threads N]`
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "advplan/pipeline/standard_run.hpp"
#include "advplan/core/error.hpp"
#include "advplan/tables/tables.hpp"
#include "advplan/evaluation/evaluation.hpp"
#include "advplan/evaluation/stopping.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/run/summaries.hpp"
#include "advplan/stats/text_table.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/stats/statistics.hpp"
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

/// `--stop-when-decided [--block B] [--futility δ]` as given on the command line.
struct StopFlags {
  bool on = false;
  std::size_t block = 10;
  double futility = 0;
  CLI::Option* block_opt = nullptr;
  CLI::Option* futility_opt = nullptr;
};

void add_stop_flags(CLI::App* cmd, StopFlags& f) {
  cmd->add_flag("--stop-when-decided", f.on,
                "play the corpus in blocks and stop once the anytime-valid verdicts are decided (docs/METRICS.md "
                "\"Anytime-valid stopping\")");
  f.block_opt = cmd->add_option("--block", f.block, "with --stop-when-decided: scenarios between looks")
                    ->capture_default_str();
  f.futility_opt = cmd->add_option("--futility", f.futility,
                                   "with --stop-when-decided: also stop when every undecided difference lies within "
                                   "±DELTA (0 < DELTA < 1)");
}

/// The k of `--budget` ("1,2,4"), each in 1..1024.
std::vector<int> budget_ks(const std::string& list) {
  std::vector<int> out;
  for (const auto& k : split_list(list)) {
    int v = 0;
    const auto [p, ec] = std::from_chars(k.data(), k.data() + k.size(), v);
    if (ec != std::errc() || p != k.data() + k.size() || v < 1 || v > 1024)
      throw ConfigError(fmt::format("evaluate: --budget: '{}' is not a k in 1..1024", k));
    out.push_back(v);
  }
  return out;
}

/// The stopping rule of the flags, checked against the rest of the run; nullopt without --stop-when-decided.
std::optional<StoppingRule> stopping_rule(const StopFlags& f, const ExperimentConfig& cfg, const RunDirFlags& dir) {
  if (!f.on) {
    if (f.block_opt->count() > 0 || f.futility_opt->count() > 0)
      throw ConfigError("evaluate: --block and --futility belong to --stop-when-decided, which was not given");
    return std::nullopt;
  }
  if (f.block < 1 || f.block > 1000000)
    throw ConfigError(fmt::format("evaluate: --block {}: a look needs a block of 1 to 1000000 scenarios", f.block));
  if (f.futility_opt->count() > 0 && !(f.futility > 0 && f.futility < 1))
    throw ConfigError(fmt::format("evaluate: --futility {}: the margin must lie strictly between 0 and 1 (the "
                                  "differences lie in [-1, 1])",
                                  f.futility));
  if (cfg.samples > 1)
    throw ConfigError(fmt::format("{}: samples: {}: --stop-when-decided looks at one row per scenario; run it "
                                  "with samples: 1",
                                  cfg.source, cfg.samples));
  if (cfg.llm.batch || dir.batch || !dir.batch_export.empty())
    throw ConfigError("evaluate: --stop-when-decided needs each scenario's rows as it is played, which a batch wave "
                      "defers: drop --batch (or llm.mode: batch)");
  return StoppingRule{f.block, f.futility, 0.05};
}

/// spec.stopping and spec.corpus from the flags; a stopping run needs a comparison to decide.
void set_stopping(const StopFlags& f, const ExperimentConfig& cfg, const RunDirFlags& dir, EvaluateSpec& spec) {
  spec.stopping = stopping_rule(f, cfg, dir);
  spec.corpus = corpus_size(cfg);
  if (spec.stopping && sequential_family(spec).empty())
    throw ConfigError("evaluate: --stop-when-decided needs a reference policy to compare with (drop "
                      "--no-reference, or name one with --reference)");
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
  auto fail_on = std::make_shared<double>(-1.0);
  auto budget = std::make_shared<std::string>("1,2,4,8,16");
  auto rerun = std::make_shared<std::size_t>(5);
  auto candidate_plans = std::make_shared<bool>(false);
  auto power = std::make_shared<double>(0.8);
  auto cluster = std::make_shared<std::string>();
  auto dir_flags = std::make_shared<RunDirFlags>();
  auto stop = std::make_shared<StopFlags>();
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
  cmd->add_option("--budget", *budget, "comma-separated k of the greedy@k robustness sweep (empty: none)")
      ->capture_default_str();
  cmd->add_option("--rerun", *rerun, "scenarios re-evaluated for the reproducibility check (0: skip)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--fail-on", *fail_on,
                  "exit with status 1 when the policy's failed rows are more than this share of its rows (0..1)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_flag("--candidate-plans", *candidate_plans,
                "also write candidate_plans.jsonl, every RED candidate plan (config: traces.candidate_plans)");
  cmd->add_option("--power", *power,
                  "power at which each verdict's minimum detectable effect is stated (docs/METRICS.md)")
      ->capture_default_str()
      ->check(CLI::Range(0.5, 0.99));
  cmd->add_option("--cluster", *cluster,
                  "template: also template-clustered intervals of each verdict (CR2, wild cluster bootstrap)")
      ->check(CLI::IsMember({"template"}));
  add_stop_flags(cmd, *stop);
  dir_flags->add_to(cmd);
  cmd->callback([&run, blue, reds, config, out, workers, threads, no_refs, refs, fail_on, budget, rerun,
                 candidate_plans, power, cluster, dir_flags, stop] {
    run = [blue, reds, config, out, workers, threads, no_refs, refs, fail_on, budget, rerun, candidate_plans, power,
           cluster, dir_flags, stop] {
      ExperimentConfig cfg = config->empty() ? default_experiment_config() : load_experiment_config(*config);
      if (!cfg.sweep.empty())
        throw ConfigError(fmt::format("{}: sweep: evaluate does not run a config's sweep points (it plays the policy "
                                      "under test against the RED baselines); run the sweep with advplan run",
                                      cfg.source));
      if (*workers > 0) cfg.exec.workers = *workers;
      if (*candidate_plans) cfg.candidate_plans = true;
      dir_flags->apply(cfg);
      EvaluateSpec spec;
      spec.blue = *blue;
      spec.power = *power;
      spec.cluster_by_template = *cluster == "template";
      spec.reds = split_list(*reds);
      if (spec.reds.empty()) throw ConfigError("evaluate: --red names no RED baseline");
      spec.references.clear();
      if (!*no_refs) spec.references = split_list(*refs);
      spec.budget_ks = budget_ks(*budget);
      set_stopping(*stop, cfg, *dir_flags, spec);
      const RunPlan plan = prepare_run(cfg, evaluate_conditions(spec));  // bad policies fail here, before any work
      RunOptions opts;
      opts.out_dir = *out;
      opts.threads = *threads;
      opts.studies = false;
      // No studies, but the rubric layer: the plans of the policy under test are graded (docs/RUBRIC.md).
      opts.command = "evaluate";
      dir_flags->apply(opts);
      if (spec.stopping) stop_when_decided(spec, opts);
      opts.observers = standard_observers(opts.studies, true,
                                          opts.progress ? parse_progress_mode(opts.progress_mode) : ProgressMode::none);
      const BootstrapSettings bs{cfg.bootstrap.resamples, cfg.bootstrap.seed};
      io::CsvTable per;
      std::string md;
      // The report is part of the run: written before the MANIFEST, from the written traces.
      opts.before_manifest = [&](const std::string& dir) {
        const auto files = evaluation_report_of_run(plan, dir, *rerun, spec, bs);
        io::write_files(dir, files);
        md = files.front().second;
        per = io::CsvTable::read((fs::path(dir) / "per_scenario.csv").string());
      };
      RunSummary s;
      if (const auto ended = run_with_batches(plan, opts, *dir_flags, s)) return *ended;
      std::size_t policy_failures = 0, policy_rows = 0;
      for (std::size_t i = 0; i < per.size(); ++i) {
        if (per.at(i, "blue_policy") != *blue) continue;
        ++policy_rows;
        if (per.at(i, "status") != "ok") ++policy_failures;
      }
      fmt::print("{}", md);
      fmt::print(stderr, "advplan: evaluated {} on {} scenarios in {:.2f}s: {} failure(s); wrote {}\n", *blue,
                 s.scenarios, s.seconds, policy_failures, *out);
      if (s.stopped)
        fmt::print(stderr, "advplan: stopped when decided after {} of {} scenarios (summary.md \"Stopping\")\n",
                   s.scenarios, spec.corpus);
      if (const std::string u = usage_summary(s.usage, cfg.llm); !u.empty()) fmt::print(stderr, "advplan: {}\n", u);
      if (s.scenarios_with_blue_plan == 0) {
        fmt::print(stderr, "advplan: {} produced no plan on any scenario\n", *blue);
        return 1;
      }
      if (*fail_on >= 0 && policy_rows > 0 &&
          static_cast<double>(policy_failures) > *fail_on * static_cast<double>(policy_rows)) {
        fmt::print(stderr, "advplan: {} failed on {} of {} rows, more than --fail-on {} allows\n", *blue,
                   policy_failures, policy_rows, *fail_on);
        return 1;
      }
      return 0;
    };
  });
}

}  // namespace advplan::cli
