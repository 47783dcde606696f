#pragma once
// A stand-in for Anthropic's Messages API on 127.0.0.1 (POST /v1/messages), written from the published API
// reference: the x-api-key and anthropic-version headers, a top-level system (string or text blocks), a required
// max_tokens, user/assistant turns of text blocks, cache_control breakpoints (at most 4, type ephemeral), tools with
// a forced tool_choice, and its error shape {"type":"error","error":{"type","message"}} with the reference's statuses
// (400 invalid_request_error, 401 authentication_error, 429 rate_limit_error, 500 api_error, 529 overloaded_error).
//
// Prompt caching is simulated as the reference describes it: the prefix up to a breakpoint (tools, then system, then
// messages) is cached when first seen (cache_creation_input_tokens) and read when seen again (cache_read_input_tokens);
// input_tokens counts the rest. A "token" here is 4 bytes of text, rounded up. The minimum cacheable length of the
// real service is not simulated.
//
// The model name picks the behaviour: "overloaded-once" (529 on the first request of each prompt), "rate-limited"
// (429 with retry-after: 0 once per prompt), "too-long" (400: prompt is too long), "bad-request" (400); any other
// model answers, with a plan written by OfflineCompletionClient from the same messages (as a forced tool's input when
// the request forces one).
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "advplan/policy/llm_contract.hpp"
#include "support/chat_server.hpp"

namespace advplan::testing {

/// A Messages API body's system and turns as a CompletionRequest, as the offline client reads them (the stand-ins'
/// answers are written from it).
inline CompletionRequest messages_request(const nlohmann::json& b) {
  using json = nlohmann::json;
  CompletionRequest req;
  if (b.contains("system"))
    for (const json& s : b["system"].is_string() ? json::array({{{"text", b["system"]}}}) : b["system"])
      req.messages.push_back({"system", s.value("text", "")});
  for (const json& m : b["messages"]) {
    std::string text;
    if (m["content"].is_string()) text = m["content"].get<std::string>();
    else
      for (const json& c : m["content"]) text += c.value("text", "");
    req.messages.push_back({m.value("role", ""), text});
  }
  return req;
}

class MessagesServer {
 public:
  explicit MessagesServer(std::string key = "")
      : key_(std::move(key)),
        server_([this](const httplib::Request& q, httplib::Response& r) { handle(q, r); }, 0, R"(/v1/messages)") {}
  std::string url() const { return server_.url(); }

  /// Every body received, in order.
  std::vector<nlohmann::json> bodies() const {
    std::lock_guard lock(mu_);
    return bodies_;
  }
  std::vector<std::string> versions() const {
    std::lock_guard lock(mu_);
    return versions_;
  }
  long long input_sent() const { return input_sent_; }
  long long cache_read_sent() const { return cache_read_sent_; }
  long long cache_write_sent() const { return cache_write_sent_; }
  long long output_sent() const { return output_sent_; }

 private:
  using json = nlohmann::json;

  static long long tokens(const std::string& text) { return static_cast<long long>((text.size() + 3) / 4); }

  static void error(httplib::Response& r, int status, const std::string& type, const std::string& message) {
    r.status = status;
    r.set_content(json{{"type", "error"}, {"error", {{"type", type}, {"message", message}}}}.dump(), "application/json");
  }

  /// The request's validation error under the reference, or "".
  static std::string invalid(const json& b) {
    if (!b.is_object()) return "body: not a JSON object";
    if (!b.contains("model") || !b["model"].is_string()) return "model: Field required";
    if (!b.contains("max_tokens") || !b["max_tokens"].is_number_integer() || b["max_tokens"].get<long long>() < 1)
      return "max_tokens: Field required";
    if (!b.contains("messages") || !b["messages"].is_array() || b["messages"].empty()) return "messages: Field required";
    for (const char* k : {"seed", "response_format", "n", "stop"})
      if (b.contains(k)) return std::string(k) + ": Extra inputs are not permitted";
    if (b.contains("temperature") && (!b["temperature"].is_number() || b["temperature"].get<double>() < 0 ||
                                      b["temperature"].get<double>() > 1))
      return "temperature: Input should be less than or equal to 1";
    std::string last;
    for (const json& m : b["messages"]) {
      const std::string role = m.value("role", "");
      if (role != "user" && role != "assistant") return "messages: roles must be user or assistant";
      if (last.empty() && role != "user") return "messages: first message must use the \"user\" role";
      if (role == last) return "messages: roles must alternate between \"user\" and \"assistant\"";
      last = role;
    }
    return "";
  }

  /// The text blocks of the cacheable sequence (tools, system, messages), each with whether it carries a breakpoint.
  static std::vector<std::pair<std::string, bool>> blocks(const json& b, std::string& bad) {
    std::vector<std::pair<std::string, bool>> out;
    auto mark = [&](const json& block) {
      if (!block.contains("cache_control")) return false;
      if (block["cache_control"] != json{{"type", "ephemeral"}}) bad = "cache_control: type must be ephemeral";
      return true;
    };
    if (b.contains("tools")) out.emplace_back(b["tools"].dump(), false);
    if (b.contains("system")) {
      if (b["system"].is_string()) out.emplace_back(b["system"].get<std::string>(), false);
      else
        for (const json& s : b["system"]) out.emplace_back(s.value("text", ""), mark(s));
    }
    for (const json& m : b["messages"]) {
      if (m["content"].is_string()) out.emplace_back(m["content"].get<std::string>(), false);
      else
        for (const json& c : m["content"]) out.emplace_back(c.value("text", ""), mark(c));
    }
    return out;
  }

  void handle(const httplib::Request& q, httplib::Response& r) {
    if (!key_.empty() && q.get_header_value("x-api-key") != key_)
      return error(r, 401, "authentication_error", "invalid x-api-key");
    if (q.get_header_value("anthropic-version").empty())
      return error(r, 400, "invalid_request_error", "anthropic-version: header is required");
    const json b = json::parse(q.body, nullptr, false);
    if (const std::string why = invalid(b); !why.empty()) return error(r, 400, "invalid_request_error", why);
    std::string bad;
    const auto seq = blocks(b, bad);
    std::size_t breakpoints = 0;
    for (const auto& [text, marked] : seq) breakpoints += marked;
    if (breakpoints > 4) bad = "A maximum of 4 blocks with cache_control may be provided";
    if (!bad.empty()) return error(r, 400, "invalid_request_error", bad);
    const std::string model = b["model"].get<std::string>();
    {
      std::lock_guard lock(mu_);
      bodies_.push_back(b);
      versions_.push_back(q.get_header_value("anthropic-version"));
      if (model == "too-long") return error(r, 400, "invalid_request_error", "prompt is too long: 250000 tokens > 200000 maximum");
      if (model == "bad-request") return error(r, 400, "invalid_request_error", "max_tokens: too large");
      const std::string once = model + b["messages"].dump();
      if ((model == "overloaded-once" || model == "rate-limited") && failed_once_.insert(once).second) {
        if (model == "rate-limited") r.set_header("retry-after", "0");
        return model == "rate-limited" ? error(r, 429, "rate_limit_error", "Number of request tokens has exceeded your rate limit")
                                       : error(r, 529, "overloaded_error", "Overloaded");
      }
    }
    answer(b, seq, r);
  }

  void answer(const json& b, const std::vector<std::pair<std::string, bool>>& seq, httplib::Response& r) {
    long long total = 0, read = 0, write = 0;
    {
      std::lock_guard lock(mu_);
      std::string prefix;
      long long upto = 0;
      for (const auto& [text, marked] : seq) {
        prefix += text;
        prefix += '\x1f';
        upto += tokens(text);
        if (!marked) continue;
        if (cached_.contains(prefix)) read = upto;
        else {
          cached_.insert(prefix);
          write = upto - read;
        }
      }
      total = upto;
    }
    const CompletionRequest req = messages_request(b);
    const std::string text = OfflineCompletionClient().complete(req).text;
    json content;
    if (b.contains("tool_choice") && b["tool_choice"].value("type", "") == "tool") {
      json input = json::parse(text, nullptr, false);
      if (input.is_discarded()) input = json::object();
      content = json::array({{{"type", "tool_use"}, {"id", "toolu_01"}, {"name", b["tool_choice"]["name"]}, {"input", input}}});
    } else {
      content = json::array({{{"type", "text"}, {"text", text}}});
    }
    const long long output = tokens(text);
    input_sent_ += total - read - write;
    cache_read_sent_ += read;
    cache_write_sent_ += write;
    output_sent_ += output;
    r.set_content(json{{"id", "msg_01"},
                       {"type", "message"},
                       {"role", "assistant"},
                       {"model", b["model"]},
                       {"content", content},
                       {"stop_reason", content[0]["type"] == "tool_use" ? "tool_use" : "end_turn"},
                       {"stop_sequence", nullptr},
                       {"usage",
                        {{"input_tokens", total - read - write},
                         {"output_tokens", output},
                         {"cache_creation_input_tokens", write},
                         {"cache_read_input_tokens", read}}}}
                      .dump(),
                  "application/json");
  }

  std::string key_;
  mutable std::mutex mu_;
  std::vector<json> bodies_;
  std::vector<std::string> versions_;
  std::set<std::string> cached_, failed_once_;
  std::atomic<long long> input_sent_{0}, cache_read_sent_{0}, cache_write_sent_{0}, output_sent_{0};
  LoopbackServer server_;  // last: it stops before the state its handler uses goes
};

}  // namespace advplan::testing
