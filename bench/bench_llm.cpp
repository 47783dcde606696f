// The live-model throughput target (docs/LLM.md "Concurrency"): 200 llm_live requests against a chat-completions
// server in this process that answers each after 100 ms, at --threads 2 and 1, 8 and 32 connections. Target: 32
// connections at least 10x faster in wall time than 1; the traces are the same bytes at every count (checked here,
// and by tests/policy/llm_concurrency_test.cpp); peak RSS does not grow with the connection count.
#include <benchmark/benchmark.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "advplan/io/sha256.hpp"
#include "advplan/pipeline/standard_run.hpp"
#include "advplan/policy/llm_contract.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/runner.hpp"
#include "support/chat_server.hpp"

namespace {

using namespace advplan;
namespace fs = std::filesystem;
using nlohmann::json;

/// Answers every chat completion with the offline client's plan for the same messages, after 100 ms.
testing::LoopbackServer& slow_server() {
  static testing::LoopbackServer server(
      [](const httplib::Request& q, httplib::Response& r) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        const CompletionRequest req = testing::chat_request(json::parse(q.body, nullptr, false));
        r.set_content(testing::chat_reply(OfflineCompletionClient().complete(req).text).dump(), "application/json");
      },
      64);
  return server;
}

/// The resident-set high-water mark of this process in KiB (VmHWM), or -1 when /proc does not tell.
long peak_rss_kib() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  return -1;
}
/// Resets the high-water mark to the current resident set (Linux: "5" to /proc/self/clear_refs), so each
/// connection count's peak is its own; false when the kernel does not allow it.
bool reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  return static_cast<bool>(out.flush());
}

std::string file_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void BM_LlmLiveThroughput(benchmark::State& state) {
  ::setenv("ADVPLAN_LLM_ENDPOINT", slow_server().url().c_str(), 1);
  ExperimentConfig cfg = parse_experiment_config(
      "name: llm-bench\nseed: 5\ncorpus: {templates: [urban, maritime], seeds: [1, 100]}\nconditions: [llm_live]\n"
      "simulator: {replications: 10}\nbootstrap: {resamples: 20}\n"
      "studies: {rubric: false, framing: false, components: false}\nllm: {timeout_s: 60, max_retries: 0}\n",
      "llm-bench.yaml", "");
  cfg.llm.max_connections = static_cast<int>(state.range(0));
  const RunPlan plan = prepare_run(cfg, run_conditions(cfg));
  const fs::path dir = fs::temp_directory_path() / ("advplan-bench-llm-" + std::to_string(::getpid()));
  RunOptions opts;
  opts.out_dir = dir.string();
  opts.progress = false;
  opts.force = true;
  opts.threads = 2;
  opts.studies = false;
  std::string digest;
  const bool reset = reset_peak_rss();
  const long before = peak_rss_kib();
  double seconds = 0;
  for (auto _ : state) {
    opts.observers = standard_observers(opts.studies);
    const auto t0 = std::chrono::steady_clock::now();
    (void)run_experiment(plan, opts);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    digest = io::sha256_hex(file_text(dir / "per_scenario.csv"));
  }
  // The target: 32 connections at least 10x faster in wall time than 1 (the first count run).
  static double one_connection_seconds = 0;
  if (state.range(0) == 1) one_connection_seconds = seconds;
  if (state.range(0) == 32 && one_connection_seconds > 0) {
    state.counters["speedup_over_1"] = one_connection_seconds / seconds;
    if (one_connection_seconds < 10 * seconds) state.SkipWithError("32 connections are not 10x faster than 1");
  }
  fs::remove_all(dir);
  static std::string first;
  if (first.empty()) first = digest;
  if (digest != first) state.SkipWithError("per_scenario.csv differs from the first connection count's");
  state.counters["requests"] = 200;
  // This connection count's own peak, above the resident set it started from: the replies in flight and the
  // transfers' buffers. Target: it does not grow with the connection count beyond the replies in flight, so the
  // growth over the first count's must stay under 1 MiB per extra connection (a reply here is about 3 KiB; the
  // client caps one at 4 MiB).
  const long peak = peak_rss_kib();
  if (reset && before >= 0 && peak >= 0) {
    const double rise_mib = static_cast<double>(peak - before) / 1024.0;
    state.counters["peak_rss_rise_mib"] = rise_mib;
    static double first_rise = -1;
    static long first_connections = 0;
    if (first_rise < 0) {
      first_rise = rise_mib;
      first_connections = state.range(0);
    } else if (rise_mib - first_rise > static_cast<double>(state.range(0) - first_connections)) {
      state.SkipWithError("peak RSS grew by more than 1 MiB per extra connection over the first count's");
    }
  }
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  state.counters["peak_rss_mib"] = static_cast<double>(ru.ru_maxrss) / 1024.0;
}
BENCHMARK(BM_LlmLiveThroughput)
    ->Arg(1)
    ->Arg(8)
    ->Arg(32)
    ->ArgName("max_connections")
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
