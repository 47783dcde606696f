// The meta-game's speed targets (docs/METRICS.md "Meta-game"): the 8 BLUE x 8 RED matrix run of
// configs/experiments/metagame.yaml on the paper corpus plus `metagame` (< 10 s on 2 cores), and `metagame`
// alone with 1,000 bootstrap resamples (< 2 s). Run: advplan_bench_metagame --benchmark_min_time=1
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>

#include "advplan/pipeline/standard_run.hpp"
#include "advplan/run/config.hpp"
#include "advplan/metagame/metagame.hpp"
#include "advplan/metagame/psro.hpp"
#include "advplan/run/runner.hpp"

namespace {
namespace fs = std::filesystem;
using namespace advplan;

const ExperimentConfig& metagame_config() {
  static const ExperimentConfig cfg = load_experiment_config(ADVPLAN_SOURCE_DIR "/configs/experiments/metagame.yaml");
  return cfg;
}

fs::path bench_dir(const std::string& tag) {
  return fs::temp_directory_path() / ("advplan-bench-" + tag + "-" + std::to_string(::getpid()));
}

/// A matrix run made once, for the metagame-only benchmark.
const std::string& matrix_run() {
  static const std::string dir = [] {
    const ExperimentConfig& cfg = metagame_config();
    RunOptions opts;
    opts.out_dir = bench_dir("matrix").string();
    opts.progress = false;
    opts.observers = standard_observers(opts.studies);
    run_experiment(prepare_run(cfg, run_conditions(cfg)), opts);
    return opts.out_dir;
  }();
  return dir;
}

// Run (150 scenarios x 64 conditions) plus metagame with 1,000 resamples.
void BM_MetagameEndToEnd(benchmark::State& state) {
  const ExperimentConfig& cfg = metagame_config();
  const fs::path dir = bench_dir("e2e");
  RunOptions opts;
  opts.out_dir = dir.string();
  opts.progress = false;
  metagame::MetaGameOptions mo;
  mo.resamples = 1000;
  for (auto _ : state) {
    opts.observers = standard_observers(opts.studies);
    run_experiment(prepare_run(cfg, run_conditions(cfg)), opts);
    const auto data = metagame::read_metagame_data({dir.string()}, metagame::Payoff::advantage);
    benchmark::DoNotOptimize(metagame::write_metagame(data, mo, (dir / "metagame").string()));
  }
  fs::remove_all(dir);
}
BENCHMARK(BM_MetagameEndToEnd)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

// PSRO on the paper corpus (configs/experiments/metagame.yaml, 8 x 8 to 18 x 18): 10 iterations at 2 threads with
// the built-in oracles, 1,000 resamples; state.range(0): 0 advantage, 1 win rate. Target: under 10 minutes.
void BM_PsroPaperCorpus(benchmark::State& state) {
  const ExperimentConfig& cfg = metagame_config();
  const fs::path dir = bench_dir("psro");
  metagame::PsroOptions o;
  o.out_dir = dir.string();
  o.iterations = 10;
  o.threads = 2;
  o.progress_mode = "none";
  o.payoff = state.range(0) == 0 ? metagame::Payoff::advantage : metagame::Payoff::win_rate;
  for (auto _ : state) {
    fs::remove_all(dir);
    const auto rows = metagame::run_psro(cfg, o);
    state.counters["exploitability_first"] = rows.front().exploitability;
    state.counters["exploitability_last"] = rows.back().exploitability;
  }
  fs::remove_all(dir);
}
BENCHMARK(BM_PsroPaperCorpus)->Arg(0)->Arg(1)->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

// `advplan metagame` alone on the matrix run, 1,000 resamples; state.range(0): 0 advantage, 1 win rate.
void BM_MetagameOnly(benchmark::State& state) {
  const std::string& run = matrix_run();
  const auto payoff = state.range(0) == 0 ? metagame::Payoff::advantage : metagame::Payoff::win_rate;
  metagame::MetaGameOptions mo;
  mo.resamples = 1000;
  const fs::path out = bench_dir("only");
  for (auto _ : state) {
    const auto data = metagame::read_metagame_data({run}, payoff);
    benchmark::DoNotOptimize(metagame::write_metagame(data, mo, out.string()));
  }
  fs::remove_all(out);
}
BENCHMARK(BM_MetagameOnly)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

/// A random constant-sum game of n x n win rates (RED's 1 - BLUE's), from a fixed seed.
std::pair<std::vector<double>, std::vector<double>> random_game(std::size_t n) {
  std::mt19937_64 g(12345);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<double> blue(n * n), red(n * n);
  for (std::size_t i = 0; i < n * n; ++i) red[i] = 1 - (blue[i] = u(g));
  return {blue, red};
}

// Sparse alpha-Rank on a random n x n game (n^2 profiles) at alpha = 10, m = 50 (docs/METRICS.md "Sparse
// alpha-Rank"; targets: 100 x 100 under 1 s, 1,000 x 1,000 under 60 s and 2 GiB); counters: residual, edges,
// iterations.
void BM_AlphaRankSparse(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto [blue, red] = random_game(n);
  metagame::SparseAlphaRank ar;
  for (auto _ : state) ar = metagame::alpharank_two_population_sparse(blue, red, n, n, 10.0, 50);
  state.counters["residual"] = ar.residual;
  state.counters["edges"] = static_cast<double>(ar.edges);
  state.counters["iterations"] = static_cast<double>(ar.iterations);
}
BENCHMARK(BM_AlphaRankSparse)->Arg(10)->Arg(20)->Arg(100)->Arg(200)->Unit(benchmark::kMillisecond)->UseRealTime();

// Matrix-free alpha-Rank (docs/METRICS.md "Matrix-free alpha-Rank") on the same games; 1,000 x 1,000 is 10^6
// profiles (target: under 60 s and 2 GiB); counters as the sparse bench, edges being the near pairs kept.
void BM_AlphaRankMatrixFree(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto [blue, red] = random_game(n);
  metagame::SparseAlphaRank r;
  for (auto _ : state) r = metagame::alpharank_two_population_matrix_free(blue, red, n, n, 10.0, 50);
  state.counters["residual"] = r.residual;
  state.counters["edges"] = static_cast<double>(r.edges);
  state.counters["iterations"] = static_cast<double>(r.iterations);
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  state.counters["peak_rss_mib"] = static_cast<double>(u.ru_maxrss) / 1024.0;  // the process's peak so far
}
BENCHMARK(BM_AlphaRankMatrixFree)->Arg(10)->Arg(20)->Arg(100)->Arg(200)->Arg(1000)->Unit(benchmark::kMillisecond)->UseRealTime();

// Today's dense solver where it fits (n x n profiles squared in memory, O(n^6) time), for the ratio.

void BM_AlphaRankDense(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto [blue, red] = random_game(n);
  for (auto _ : state) benchmark::DoNotOptimize(metagame::alpharank_two_population(blue, red, n, n, 10.0, 50));
}
BENCHMARK(BM_AlphaRankDense)->Arg(10)->Arg(20)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
