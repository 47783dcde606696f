// The sweeps' speed targets (docs/METRICS.md "Parameter sweeps", "Attribution"): a 21-point λ sweep of
// constraint@8 over the paper corpus in one run against the same 21 points as 21 separate runs (target: the sweep
// at least 5x cheaper in CPU), and the paper run with the attribution study (32 combinations per scenario) against
// it without (target: under 10x). CPU is the process's, at one thread.
// The budget extrapolation (docs/METRICS.md "Budget extrapolation", docs/DECISIONS.md): the plain algorithms
// (src/stats/tail_fit_reference.hpp, src/sweeps/extrapolation_reference.hpp) against the fast ones on a fit the size
// of the paper subset's: 150 scenarios of 16 draws (8 exceedances each), E[M_k] at the file's nine ks, and k* with
// 2000 resamples.
// Search RED against sampling (docs/RESULTS.md "Search RED against best-of-k sampling"): one response of search@N and
// of greedy@N to the seed plan of each of the paper's 150 scenarios, at N = 4, 16, 64 evaluations, one thread.
// Run: advplan_bench_sweeps --benchmark_min_time=1 (docs/RESULTS.md has the search rows)
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <tbb/global_control.h>

#include "advplan/council/search_red.hpp"
#include "advplan/pipeline/standard_run.hpp"
#include "advplan/run/scenario_lookup.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/sweeps/extrapolation.hpp"
#include "stats/tail_fit_reference.hpp"
#include "sweeps/extrapolation_reference.hpp"

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

/// 150 scenarios of 16 draws on [0, 1] (bounded tails of varied shape, one draw in eight invalid on average), BLUE
/// qualities about the paper's, fitted with the default rule (penalised GPD on 8 exceedances).
std::vector<std::vector<double>> subset_draws() {
  std::mt19937_64 g(150);
  auto uniform = [&] { return static_cast<double>(g() >> 11) * 0x1p-53; };
  std::vector<std::vector<double>> out(150);
  for (auto& d : out) {
    const double c = 0.5 + 2 * uniform();
    for (int i = 0; i < 16; ++i)
      if (uniform() > 0.125) d.push_back(0.7 * (1 - std::pow(1 - uniform(), c)) + 0.1 * uniform());
  }
  return out;
}

ExtrapolationFit subset_fit() {
  ExtrapolationFit fit;
  std::mt19937_64 g(7);
  for (const auto& d : subset_draws()) {
    ScenarioTail t;
    t.blue_quality = 0.35 + 0.1 * static_cast<double>(g() >> 11) * 0x1p-53;
    t.drawn = 16;
    t.valid = d.size();
    t.model = fit_tail(d, 16);
    fit.scenarios.push_back(std::move(t));
  }
  return fit;
}

const double kKs[] = {1, 2, 4, 8, 16, 32, 64, 256};

// The tail fits of the 150 scenarios (arg 0: plain, 1: fast).
void BM_ExtrapolationFit(benchmark::State& state) {
  std::vector<std::vector<double>> ys;
  for (auto d : subset_draws()) {
    std::sort(d.begin(), d.end());
    const std::size_t m = tail_exceedances(d.size());
    std::vector<double> y;
    for (std::size_t i = d.size() - m; i < d.size(); ++i) y.push_back(d[i] - d[d.size() - m - 1]);
    ys.push_back(std::move(y));
  }
  for (auto _ : state)
    for (const auto& y : ys)
      benchmark::DoNotOptimize(state.range(0) ? fit_gpd_penalised(y, 1.0) : reference::fit_gpd_penalised(y, 1.0));
}
BENCHMARK(BM_ExtrapolationFit)->Arg(0)->Arg(1)->ArgName("fast")->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

// E[M_k] at the file's eight finite ks for the 150 scenarios (plain: each from scratch; fast: one curve each).
void BM_ExtrapolationExpectedMax(benchmark::State& state) {
  const ExtrapolationFit fit = subset_fit();
  for (auto _ : state)
    for (const auto& t : fit.scenarios) {
      if (state.range(0)) {
        const ExpectedMaxCurve curve(t.model);
        for (double k : kKs) benchmark::DoNotOptimize(curve(k));
      } else {
        for (double k : kKs) benchmark::DoNotOptimize(reference::expected_max(t.model, k));
      }
    }
}
BENCHMARK(BM_ExtrapolationExpectedMax)->Arg(0)->Arg(1)->ArgName("fast")->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

// k* and its 2000 replicates at levels 0.45 (k* near the paper subset's) and 0.40 (far along the grid).
void BM_ExtrapolationKStar(benchmark::State& state) {
  const ExtrapolationFit fit = subset_fit();
  BootstrapSettings bs;
  bs.resamples = 2000;
  bs.seed = 7;
  const double level = state.range(1) / 100.0;
  for (auto _ : state)
    benchmark::DoNotOptimize(state.range(0) ? search_k_star(fit, bs, level) : reference::scanned_k_star(fit, bs, level));
}
BENCHMARK(BM_ExtrapolationKStar)->Args({0, 45})->Args({1, 45})->Args({0, 40})->Args({1, 40})->ArgNames({"fast", "level"})
    ->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

// One response per paper scenario: search@N (search = 1) or greedy@N (search = 0), N = evaluations.
void BM_SearchAgainstGreedy(benchmark::State& state) {
  tbb::global_control one(tbb::global_control::max_allowed_parallelism, 1);
  const ExperimentConfig cfg = default_experiment_config();
  const PolicyContext ctx = policy_context(cfg);
  std::vector<Scenario> scenarios;
  for (const auto& t : cfg.template_ids)
    for (std::uint64_t seed = cfg.seed_from; seed <= cfg.seed_to; ++seed)
      scenarios.push_back(find_scenario(cfg, t + "-" + std::to_string(seed)));
  const auto n = static_cast<int>(state.range(1));
  const auto policy = make_red_policy((state.range(0) ? "search@" : "greedy@") + std::to_string(n), ctx);
  for (auto _ : state)
    for (const Scenario& sc : scenarios) {
      const RedRequest req = red_request(sc, sc.blue_seed_plans.front(), ctx, "baseline");
      benchmark::DoNotOptimize(policy->respond(req));
    }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(scenarios.size()));
}
BENCHMARK(BM_SearchAgainstGreedy)->ArgsProduct({{0, 1}, {4, 16, 64}})->ArgNames({"search", "N"})
    ->Unit(benchmark::kMillisecond)->MeasureProcessCPUTime();

}  // namespace

BENCHMARK_MAIN();
