#pragma once
// A chat-completions server on 127.0.0.1 for the tests (and bench/bench_llm.cpp) of the LLM clients: cpp-httplib
// in a thread of its own, on a free port, with the routes a test gives it; plus the request and reply bodies of
// the OpenAI chat-completions API. The client under test uses libcurl; cpp-httplib is only the stand-in server.
#ifndef CPPHTTPLIB_LISTEN_BACKLOG
#define CPPHTTPLIB_LISTEN_BACKLOG 512  // a backlog of 5 (the default) makes new connections wait for SYN retries
#endif
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "advplan/policy/llm_contract.hpp"

namespace advplan::testing {

class LoopbackServer {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

  /// Serves `handler` on POST `route` (a pattern; .../chat/completions unless given). `workers` > 0 gives the server
  /// a pool of that many threads, for tests that hold many requests in flight at once; 0 keeps cpp-httplib's default.
  explicit LoopbackServer(Handler handler, int workers = 0, const char* route = R"(.*/chat/completions)") {
    svr_.set_keep_alive_timeout(1);
    if (workers > 0) svr_.new_task_queue = [workers] { return new httplib::ThreadPool(workers); };
    svr_.Post(route, std::move(handler));
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    while (!svr_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~LoopbackServer() {
    stopping_ = true;
    svr_.stop();
    thread_.join();
  }
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }
  /// True once the destructor runs: a handler that waits on purpose (a "hang" model) returns early.
  bool stopping() const { return stopping_; }

 private:
  httplib::Server svr_;
  int port_ = 0;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
};

/// The model a chat-completions body names ("" when the body is not a JSON object).
inline std::string requested_model(const nlohmann::json& body) {
  return body.is_object() ? body.value("model", "") : "";
}

/// The messages of a chat-completions body as a CompletionRequest (no messages when the body is not an object).
inline CompletionRequest chat_request(const nlohmann::json& body) {
  CompletionRequest req;
  for (const auto& m : body.is_object() ? body.value("messages", nlohmann::json::array()) : nlohmann::json::array())
    req.messages.push_back({m.value("role", ""), m.value("content", "")});
  return req;
}

/// A chat.completion reply whose one choice says `text`.
inline nlohmann::json chat_reply(const std::string& text) {
  return {{"id", "c1"},
          {"object", "chat.completion"},
          {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}}}}}};
}

}  // namespace advplan::testing
