// `advplan view`'s target (docs/REPORT.md "Serving a large run"): a 100,000-scenario streamed run (one condition,
// `single` against the seed plan, 5 replications) is indexed once, then its first page is served: index.html, the
// script and libraries, the overview, the first page of rows and the first scenario. Target: the first page under
// 2 s, and the server's memory (peak RSS above the start) far below the run's traces. The run is made once under
// $TMPDIR and reused (about two minutes on two cores the first time).
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "advplan/pipeline/standard_run.hpp"
#include "advplan/report/report.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/runner.hpp"

namespace {
using namespace advplan;
namespace fs = std::filesystem;

constexpr const char* kConfig =
    "name: view-bench\nseed: 3\ncorpus: {templates: [urban, maritime, mixed, air-defense, humanitarian], seeds: [1, "
    "20000]}\nconditions: [single]\nsimulator: {replications: 5}\nbootstrap: {resamples: 20}\n"
    "studies: {rubric: false, framing: false, components: false}\n";

long peak_rss_kib() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  return -1;
}

const ExperimentConfig& config() {
  static const ExperimentConfig cfg = parse_experiment_config(kConfig, "view-bench.yaml", "");
  return cfg;
}

/// The 100,000-scenario run, made once.
const std::string& big_run() {
  static const std::string dir = [] {
    const fs::path d = fs::temp_directory_path() / "advplan-bench-view-100k";
    if (!fs::exists(d / "MANIFEST")) {
      const RunPlan plan = prepare_run(config(), run_conditions(config()));
      RunOptions opts;
      opts.out_dir = d.string();
      opts.force = true;
      opts.progress = false;
      opts.summary = "streaming";
      opts.studies = false;
      opts.observers = standard_observers(false);
      (void)run_experiment(plan, opts);
    }
    return d.string();
  }();
  return dir;
}

void BM_ViewFirstPage(benchmark::State& state) {
  const std::string& dir = big_run();
  std::uintmax_t traces = 0;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file()) traces += e.file_size();
  std::size_t bytes = 0;
  const long before = peak_rss_kib();
  double index_s = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const report::ViewSite site(report::ReportRun{dir, &config()});
    index_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (const char* path : {"/", "/app.js", "/style.css", "/vendor/d3.min.js", "/vendor/leaflet.js", "/data/overview.js",
                             "/data/rows/0.js", "/data/s/0.js"})
      bytes += site.get(path)->body.size();
    if (site.scenarios() != 100000) state.SkipWithError("the run does not have 100,000 scenarios");
  }
  state.counters["index_s"] = index_s;
  state.counters["page_bytes"] = static_cast<double>(bytes);
  state.counters["traces_mib"] = static_cast<double>(traces) / (1 << 20);
  state.counters["rss_rise_mib"] = static_cast<double>(peak_rss_kib() - before) / 1024.0;
}
BENCHMARK(BM_ViewFirstPage)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

/// A later page alone, once the index is built: what each click costs.
void BM_ViewLaterPage(benchmark::State& state) {
  const report::ViewSite site(report::ReportRun{big_run(), &config()});
  std::size_t p = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(site.get("/data/rows/" + std::to_string(p % 500) + ".js"));
    benchmark::DoNotOptimize(site.get("/data/s/" + std::to_string((p * 7919) % 100000) + ".js"));
    ++p;
  }
}
BENCHMARK(BM_ViewLaterPage)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
