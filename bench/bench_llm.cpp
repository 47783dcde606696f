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
  for (auto _ : state) {
    opts.observers = standard_observers(opts.studies);
    (void)run_experiment(plan, opts);
    digest = io::sha256_hex(file_text(dir / "per_scenario.csv"));
  }
  fs::remove_all(dir);
  static std::string first;
  if (first.empty()) first = digest;
  if (digest != first) state.SkipWithError("per_scenario.csv differs from the first connection count's");
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  state.counters["requests"] = 200;
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
