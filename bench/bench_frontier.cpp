// The Pareto frontier analysis (docs/METRICS.md "Pareto frontier analysis"): `advplan frontier` on the paper run,
// non-dominated sorting of 10^6 random 2-D points, and the per-set operations on a candidate-set-sized input.
// Run: advplan_bench --benchmark_filter=Frontier
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "advplan/pipeline/standard_run.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/core/random.hpp"
#include "advplan/tables/tables.hpp"
#include "advplan/run/config.hpp"
#include "advplan/frontier/frontier_analysis.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/metrics/frontier.hpp"

namespace {
namespace fs = std::filesystem;
using namespace advplan;

PointSet random_points(std::size_t n, std::size_t dim, std::uint64_t seed) {
  Rng rng(seed);
  PointSet p;
  p.dim = dim;
  p.v.resize(n * dim);
  for (double& x : p.v) x = rng.uniform();
  return p;
}

/// The paper run (built-in config), written once into a temporary directory removed at exit.
struct PaperRun {
  fs::path dir;
  PaperRun() {
    dir = fs::temp_directory_path() / ("advplan-bench-frontier-" + std::to_string(::getpid()));
    static const ExperimentConfig cfg = default_experiment_config();
    const RunPlan plan = prepare_run(cfg, run_conditions(cfg));
    RunOptions opts;
    opts.out_dir = dir.string();
    opts.progress = false;
    opts.observers = standard_observers(opts.studies);
    (void)run_experiment(plan, opts);
  }
  ~PaperRun() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};
const PaperRun& paper_run() {
  static const PaperRun r;
  return r;
}

// `advplan frontier RUN_DIR` on the paper run: read the CSVs, analyse every condition, write frontier/.
void BM_FrontierPaperRun(benchmark::State& state) {
  const PaperRun& run = paper_run();
  FrontierOptions opts;
  if (state.range(0) == 4) opts.objectives = parse_frontier_objectives("q,D,pressure,-cost");
  const std::string out = (run.dir / "frontier").string();
  for (auto _ : state) {
    const FrontierInputs in = read_frontier_inputs(run.dir.string());
    io::write_files(out, build_frontier(in, opts));
  }
}
BENCHMARK(BM_FrontierPaperRun)->Arg(2)->Arg(4)->ArgName("objectives")->Unit(benchmark::kMillisecond)->UseRealTime();

// Non-domination ranks of N random points in 2-D: the O(N log N) sweep.
void BM_FrontierSort2D(benchmark::State& state) {
  const PointSet p = random_points(static_cast<std::size_t>(state.range(0)), 2, 11);
  for (auto _ : state) benchmark::DoNotOptimize(nondominated_ranks_2d(p));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_FrontierSort2D)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();

// pagmo2's fast non-dominated sorting on a candidate set of 16 in 4-D, and the exact hypervolume of it.
void BM_FrontierSortPagmo4D(benchmark::State& state) {
  const PointSet p = random_points(static_cast<std::size_t>(state.range(0)), 4, 12);
  for (auto _ : state) benchmark::DoNotOptimize(nondominated_ranks_pagmo(p));
}
BENCHMARK(BM_FrontierSortPagmo4D)->Arg(16)->Unit(benchmark::kMicrosecond);

void BM_FrontierHypervolume(benchmark::State& state) {
  const std::size_t dim = static_cast<std::size_t>(state.range(0));
  const PointSet p = random_points(16, dim, 13);
  const std::vector<double> ref(dim, 1.0);
  for (auto _ : state) benchmark::DoNotOptimize(hypervolume(p, ref));
}
BENCHMARK(BM_FrontierHypervolume)->Arg(2)->Arg(3)->Arg(4)->ArgName("dim")->Unit(benchmark::kMicrosecond);

}  // namespace
