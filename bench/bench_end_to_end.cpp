// End-to-end throughput of the built-in paper config, plus micro-benchmarks of the hot paths: the wargame
// simulator, RED candidate sampling and scoring one plan. Run: advplan_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "advplan/experiment/config.hpp"
#include "advplan/experiment/runner.hpp"
#include "advplan/metrics/coherence.hpp"
#include "advplan/metrics/plan_layout.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/policy/red_candidate.hpp"
#include "advplan/sim/wargame.hpp"

namespace {
namespace fs = std::filesystem;
using namespace advplan;

const ExperimentConfig& paper_config() {
  static const ExperimentConfig cfg = default_experiment_config();
  return cfg;
}

/// The first scenario of the paper corpus (urban-100) and its template.
struct Fixture {
  Scenario sc;
  const ScenarioTemplate* tpl = nullptr;
};
const Fixture& first_scenario() {
  static const Fixture f = [] {
    Fixture x;
    const auto& cfg = paper_config();
    x.sc = generate_corpus(cfg).front();
    for (const auto& t : cfg.templates)
      if (t.id == x.sc.template_id) x.tpl = &t;
    return x;
  }();
  return f;
}

// The whole paper experiment (150 scenarios, every condition, the studies and the tables) into a temp dir.
void BM_PaperConfig(benchmark::State& state) {
  const ExperimentConfig& cfg = paper_config();
  const RunPlan plan = prepare_run(cfg, run_conditions(cfg));
  const fs::path dir = fs::temp_directory_path() / ("advplan-bench-" + std::to_string(::getpid()));
  RunOptions opts;
  opts.out_dir = dir.string();
  opts.progress = false;
  opts.force = true;  // each iteration replaces the previous run
  std::size_t scenarios = 0;
  double seconds = 0;
  for (auto _ : state) {
    const RunSummary s = run_experiment(plan, opts);
    scenarios += s.scenarios;
    seconds += s.seconds;
  }
  fs::remove_all(dir);
  state.counters["wall_s_per_run"] = seconds / static_cast<double>(state.iterations());
  state.counters["scenarios_per_s"] = benchmark::Counter(static_cast<double>(scenarios), benchmark::Counter::kIsRate);
  state.counters["scenarios"] = static_cast<double>(scenarios) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_PaperConfig)->Unit(benchmark::kMillisecond)->UseRealTime();

// One scenario's wargame: R = 200 replications advanced together.
void BM_Simulate(benchmark::State& state) {
  SimConfig sim = paper_config().sim;
  sim.replications = static_cast<int>(state.range(0));
  const SimNoise noise = draw_noise(20240601, "urban-100", sim);
  const Force blue{3.0, 0.6, 0.55}, red{2.5, 0.5, 0.6};
  for (auto _ : state) benchmark::DoNotOptimize(simulate(blue, red, noise, sim));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Simulate)->Arg(200)->Unit(benchmark::kMicrosecond);

// Drawing and scoring k RED candidates against the seed plan (no cache).
void BM_SampleRedCandidates(benchmark::State& state) {
  const Fixture& f = first_scenario();
  RedRequest req;
  req.scenario = &f.sc;
  req.blue = &f.sc.blue_seed_plans.front();
  req.run_seed = paper_config().seed;
  req.weights = paper_config().quality;
  req.shape = f.tpl->seed_plans;
  req.branch_kinds = f.tpl->branch_kinds;
  const int k = static_cast<int>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(sample_red_candidates(req, k));
  state.SetItemsProcessed(state.iterations() * k);
}
BENCHMARK(BM_SampleRedCandidates)->Arg(16)->Unit(benchmark::kMicrosecond);

// q and D of one plan (the seed BLUE plan of urban-100), sharing one layout as the runner does.
void BM_QualityCoherence(benchmark::State& state) {
  const Fixture& f = first_scenario();
  const Plan& p = f.sc.blue_seed_plans.front();
  for (auto _ : state) {
    const auto layout = layout_plan(p, f.sc);
    benchmark::DoNotOptimize(quality(layout, f.sc, Side::Blue));
    benchmark::DoNotOptimize(coherence(p, layout, f.sc));
  }
}
BENCHMARK(BM_QualityCoherence)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
