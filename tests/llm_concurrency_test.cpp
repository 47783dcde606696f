// Live-model requests in flight independent of --threads (docs/LLM.md "Concurrency"): the real binary against a
// chat-completions server in the test process that takes 100 ms per reply and counts how many requests it holds at
// once. Not a timing test: it checks the concurrency the server saw, and that the bytes do not depend on it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "advplan/policy/llm_contract.hpp"
#include "test_fixtures.hpp"

namespace advplan {
namespace {

using nlohmann::json;
using testing::shell_quote;

/// Answers every chat completion with the offline client's plan for the same messages, after `delay_ms`.
class SlowChatServer {
 public:
  explicit SlowChatServer(int delay_ms) : delay_ms_(delay_ms) {
    svr_.new_task_queue = [] { return new httplib::ThreadPool(64); };
    svr_.Post(R"(.*/chat/completions)", [this](const httplib::Request& q, httplib::Response& r) {
      const int now = ++in_flight_;
      int seen = max_in_flight_.load();
      while (now > seen && !max_in_flight_.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms_));
      CompletionRequest req;
      const json body = json::parse(q.body, nullptr, false);
      for (const auto& m : body.value("messages", json::array()))
        req.messages.push_back({m.value("role", ""), m.value("content", "")});
      const Completion c = OfflineCompletionClient().complete(req);
      r.set_content(json{{"choices", {{{"message", {{"role", "assistant"}, {"content", c.text}}}}}}}.dump(),
                    "application/json");
      ++served_;
      --in_flight_;
    });
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    while (!svr_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~SlowChatServer() {
    svr_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int max_in_flight() const { return max_in_flight_.load(); }
  int served() const { return served_.load(); }
  void reset() { max_in_flight_ = 0, served_ = 0; }

 private:
  int delay_ms_;
  httplib::Server svr_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<int> in_flight_{0}, max_in_flight_{0}, served_{0};
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
