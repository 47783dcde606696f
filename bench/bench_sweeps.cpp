// The sweeps' speed targets (docs/METRICS.md "Parameter sweeps", "Attribution"): a 21-point λ sweep of
// constraint@8 over the paper corpus in one run against the same 21 points as 21 separate runs (target: the sweep
// at least 5x cheaper in CPU), and the paper run with the attribution study (32 combinations per scenario) against
// it without (target: under 10x). CPU is the process's, at one thread.
// Run: advplan_bench_sweeps --benchmark_min_time=1
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "advplan/pipeline/standard_run.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/runner.hpp"

namespace {
namespace fs = std::filesystem;
using namespace advplan;

/// The paper config with constraint@8 alone: no budget sweep, no studies.
ExperimentConfig constraint_only() {
  ExperimentConfig cfg = default_experiment_config();
  cfg.conditions = {Condition{"constraint@8", "seed", "constraint@8", "main"}};
  cfg.budget_ks.clear();
  cfg.studies.rubric = cfg.studies.framing = cfg.studies.components = cfg.studies.attribution = false;
  return cfg;
}

double lambda_at(int i) { return i / 20.0; }

void run_once(const ExperimentConfig& cfg, const std::string& tag) {
  const RunPlan plan = prepare_run(cfg, run_conditions(cfg));
  RunOptions opts;
  opts.out_dir = (fs::temp_directory_path() / ("advplan-bench-sweeps-" + tag + "-" + std::to_string(::getpid()))).string();
  opts.progress = false;
  opts.force = true;
  opts.threads = 1;
  opts.studies = cfg.studies.rubric || cfg.studies.framing || cfg.studies.components || cfg.studies.attribution;
  opts.observers = standard_observers(opts.studies);
  (void)run_experiment(plan, opts);
  fs::remove_all(opts.out_dir);
}

// One run: constraint@8 and its 21 λ points (0, 0.05, ..., 1).
void BM_LambdaSweep21(benchmark::State& state) {
  ExperimentConfig cfg = constraint_only();
  cfg.sweep.condition = "constraint@8";
  cfg.sweep.params = {"policies.constraint.lambda"};
  for (int i = 0; i <= 20; ++i) cfg.sweep.points.push_back({lambda_at(i)});
  cfg.sweep.reference = 14;
  for (auto _ : state) run_once(cfg, "sweep");
}
BENCHMARK(BM_LambdaSweep21)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

// The same 21 points as 21 runs of constraint@8, one λ each.
void BM_LambdaSeparate21(benchmark::State& state) {
  for (auto _ : state)
    for (int i = 0; i <= 20; ++i) {
      ExperimentConfig cfg = constraint_only();
      cfg.policy_params["constraint"]["lambda"] = lambda_at(i);
      run_once(cfg, "separate");
    }
}
BENCHMARK(BM_LambdaSeparate21)->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

// The paper run with its attribution study, and without it.
void BM_PaperAttribution(benchmark::State& state) {
  ExperimentConfig cfg = default_experiment_config();
  cfg.studies.attribution = state.range(0) != 0;
  for (auto _ : state) run_once(cfg, "paper");
}
BENCHMARK(BM_PaperAttribution)->Arg(0)->Arg(1)->ArgName("attribution")->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

}  // namespace

BENCHMARK_MAIN();
