// Live-model requests in flight independent of --threads (docs/LLM.md "Concurrency"): the real binary against a
// chat-completions server in the test process that takes 100 ms per reply and counts how many requests it holds at
// once. Not a timing test: it checks the concurrency the server saw, and that the bytes do not depend on it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "advplan/policy/llm_contract.hpp"
#include "support/chat_server.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using nlohmann::json;
using testing::shell_quote;

/// Answers every chat completion with the offline client's plan for the same messages, after `delay_ms`, and counts
/// the requests it holds at once.
class SlowChatServer {
 public:
  explicit SlowChatServer(int delay_ms)
      : server_([this, delay_ms](const httplib::Request& q, httplib::Response& r) { handle(q, r, delay_ms); }, 64) {}
  std::string url() const { return server_.url(); }
  int max_in_flight() const { return max_in_flight_.load(); }
  int served() const { return served_.load(); }
  void reset() { max_in_flight_ = 0, served_ = 0; }

 private:
  void handle(const httplib::Request& q, httplib::Response& r, int delay_ms) {
    const int now = ++in_flight_;
    int seen = max_in_flight_.load();
    while (now > seen && !max_in_flight_.compare_exchange_weak(seen, now)) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    const Completion c = OfflineCompletionClient().complete(testing::chat_request(json::parse(q.body, nullptr, false)));
    r.set_content(testing::chat_reply(c.text).dump(), "application/json");
    ++served_;
    --in_flight_;
  }

  std::atomic<int> in_flight_{0}, max_in_flight_{0}, served_{0};
  testing::LoopbackServer server_;  // last: it stops before the counters go
};

TEST(LlmConcurrency, RequestsInFlightFollowMaxConnectionsNotThreadsAndTheBytesDoNotChange) {
  SlowChatServer server(100);
  testing::TempDir dir("llm-concurrency");
  const std::string cfg = dir / "live.yaml";
  std::ofstream(cfg) << "name: live\nseed: 9\ncorpus: {templates: [urban], seeds: [1, 24]}\nconditions: [llm_live]\n"
                        "simulator: {replications: 10}\nbootstrap: {resamples: 20}\n"
                        "studies: {rubric: false, framing: false, components: false}\n"
                        "llm: {timeout_s: 20, max_retries: 0}\n";
  auto run = [&](int connections) {
    server.reset();
    const std::string out = dir / ("run-" + std::to_string(connections));
    const auto r = testing::run_command("ADVPLAN_LLM_ENDPOINT=" + server.url() + " " + shell_quote(ADVPLAN_BINARY) +
                                            " run " + shell_quote(cfg) + " --out " + shell_quote(out) +
                                            " --threads 2 --progress none --max-connections " +
                                            std::to_string(connections),
                                        dir);
    EXPECT_EQ(r.status, 0) << r.err;
    return out;
  };
  const std::string one = run(1);
  EXPECT_EQ(server.max_in_flight(), 1) << "--max-connections 1 let more requests out at once";
  const int requests = server.served();
  EXPECT_GE(requests, 24);  // a request per scenario, and the rerun check's
  const std::string many = run(12);
  EXPECT_GT(server.max_in_flight(), 2) << "requests in flight stayed at the thread count";
  EXPECT_LE(server.max_in_flight(), 12);
  EXPECT_EQ(server.served(), requests);
  EXPECT_EQ(testing::compare_runs(one, many), "");
}

}  // namespace
}  // namespace advplan
