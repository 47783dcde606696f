// Anthropic's Messages API (docs/LLM.md "Anthropic"), written from its published reference: POST /v1/messages with
// x-api-key and anthropic-version; a top-level system; a required max_tokens; content blocks; stop_reason; usage
// with cache_creation_input_tokens and cache_read_input_tokens; errors as {"type":"error","error":{type,message}},
// 529 overloaded_error among them.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/llm/providers.hpp"
#include "transport.hpp"

namespace advplan {
using nlohmann::json;

namespace {

using llm_detail::excerpt;
using llm_detail::token_count;

constexpr int kDefaultMaxTokens = 4096;  // the Messages API requires max_tokens; llm.generation.max_tokens overrides

/// A text block; the API refuses an empty one, so an empty text (an empty earlier reply in a re-prompt) is sent as
/// "(empty)".
json text_block(std::string text, bool cached) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) text = "(empty)";
  json b = {{"type", "text"}, {"text", std::move(text)}};
  if (cached) b["cache_control"] = {{"type", "ephemeral"}};
  return b;
}

/// The system messages, joined, as one block; marked for the cache when a hint covers them.
json system_blocks(const CompletionRequest& req, bool cached) {
  std::string system;
  for (const auto& m : req.messages)
    if (m.role == "system") system += (system.empty() ? "" : "\n\n") + m.content;
  if (system.empty()) return json();
  return json::array({text_block(std::move(system), cached)});
}

/// The user and assistant turns, each as text blocks; the hinted message split at the end of its shared part, which
/// carries the cache mark.
json message_turns(const CompletionRequest& req) {
  json turns = json::array();
  for (std::size_t i = 0; i < req.messages.size(); ++i) {
    const ChatMessage& m = req.messages[i];
    if (m.role == "system") continue;
    json content = json::array();
    if (i == req.cache.message && req.cache.chars > 0 && req.cache.chars < m.content.size()) {
      content.push_back(text_block(m.content.substr(0, req.cache.chars), true));
      content.push_back(text_block(m.content.substr(req.cache.chars), false));
    } else {
      content.push_back(text_block(m.content, i == req.cache.message && req.cache.chars >= m.content.size() &&
                                                  req.cache.chars > 0));
    }
    turns.push_back({{"role", m.role == "assistant" ? "assistant" : "user"}, {"content", std::move(content)}});
  }
  return turns;
}

/// A forced tool whose input is the reply (structured output): json_schema gives the schema, json_object any object.
void add_forced_tool(json& body, const CompletionRequest& req) {
  if (req.structured == StructuredOutput::off) return;
  json schema = req.output_schema.empty() ? json(json::value_t::discarded) : json::parse(req.output_schema, nullptr, false);
  if (req.structured == StructuredOutput::json_object || schema.is_discarded()) schema = {{"type", "object"}};
  const std::string name = req.schema_name.empty() ? "reply" : req.schema_name;
  body["tools"] = json::array({{{"name", name},
                                {"description", "Give the reply as this tool's input."},
                                {"input_schema", std::move(schema)}}});
  body["tool_choice"] = {{"type", "tool"}, {"name", name}};
}

/// Error bodies: {"type":"error","error":{"type","message"}}. 429, 500 and 529 are retried; a prompt that is too
/// long is a context overflow.
llm_detail::ErrorReading read_error(int status, const std::string& body, const std::string& secret) {
  llm_detail::ErrorReading e;
  json j;
  std::string type, message;
  if (untrusted::parse_json_bounded(body, j).empty() && j.is_object())
    if (const auto err = j.find("error"); err != j.end() && err->is_object()) {
      type = untrusted::string_member(*err, "type");
      message = untrusted::string_member(*err, "message");
    }
  e.message = type.empty() ? excerpt(body, secret) : excerpt(type + ": " + message, secret);
  if (llm_detail::says_context_overflow(body)) {
    e.kind = ErrorKind::context_overflow;
    e.message += "; the prompt and max_tokens exceed the model's context (docs/LLM.md)";
    return e;
  }
  e.retry = status == 429 || status == 529 || (status >= 500 && status <= 599) || type == "overloaded_error";
  return e;
}

void read_usage(const json& u, Completion& out) {
  const int input = token_count(u, "input_tokens");
  out.completion_tokens = token_count(u, "output_tokens");
  out.cached_tokens = token_count(u, "cache_read_input_tokens");
  out.cache_write_tokens = token_count(u, "cache_creation_input_tokens");
  if (input < 0) return;
  long long all = input;
  if (out.cached_tokens > 0) all += out.cached_tokens;
  if (out.cache_write_tokens > 0) all += out.cache_write_tokens;
  out.prompt_tokens = static_cast<int>(std::min<long long>(all, std::numeric_limits<int>::max()));
}

void read_success(const std::string& body, const std::string& secret, Completion& out) {
  json j;
  if (const std::string err = untrusted::parse_json_bounded(body, j); !err.empty() || !j.is_object()) {
    out.error = err.find("deeper") != std::string::npos ? "response " + err
                                                        : "response is not a JSON object: " + excerpt(body, secret);
    return;
  }
  if (const auto u = j.find("usage"); u != j.end()) read_usage(*u, out);
  out.served_by = untrusted::excerpt(untrusted::redact(untrusted::string_member(j, "model"), secret), 80);
  const auto content = j.find("content");
  if (content == j.end() || !content->is_array()) {
    out.error = "response has no content blocks: " + excerpt(body, secret);
    return;
  }
  std::string text;
  bool tool = false;
  for (const json& b : *content) {
    if (!b.is_object()) continue;
    const std::string type = untrusted::string_member(b, "type");
    if (type == "tool_use" && b.contains("input") && !tool) {
      text = b["input"].dump(-1, ' ', false, json::error_handler_t::replace);
      tool = true;
    } else if (type == "text" && !tool) {
      text += untrusted::string_member(b, "text");
    }
  }
  out.text = untrusted::redact(text, secret);
  out.finish_reason = excerpt(untrusted::string_member(j, "stop_reason"), secret);
  if (out.finish_reason == "(empty body)") out.finish_reason.clear();
  out.ok = true;
}

}  // namespace

std::string messages_request_body(const CompletionRequest& req, const std::string& model) {
  json body = json::object();
  body["model"] = model;
  body["max_tokens"] = req.max_tokens.value_or(kDefaultMaxTokens);
  // The system prompt is shared by every call of a role: marked whenever a hint is given.
  const bool hinted = req.cache.chars > 0 || req.cache.message > 0;
  if (json system = system_blocks(req, hinted); !system.is_null()) body["system"] = std::move(system);
  body["messages"] = message_turns(req);
  body["temperature"] = req.temperature;
  if (req.top_p) body["top_p"] = *req.top_p;
  if (!req.stop.empty()) body["stop_sequences"] = req.stop;
  add_forced_tool(body, req);
  if (!req.extra_json.empty()) {
    // Checked when the config was read: an object, whose keys are none of the fields set here (check_anthropic_generation).
    const json extra = json::parse(req.extra_json, nullptr, false);
    if (extra.is_object())
      for (const auto& [k, v] : extra.items()) body[k] = v;
  }
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

Completion parse_messages_body(const std::string& body, const std::string& secret) {
  Completion out;
  read_success(body, secret, out);
  return out;
}

AnthropicClient::AnthropicClient(const LlmSettings& s)
    : model_(s.model),
      api_key_(s.api_key),
      key_env_(s.key_env),
      version_(s.anthropic_version),
      timeout_s_(s.timeout_s),
      max_retries_(s.max_retries),
      backoff_s_(s.backoff_s) {
  const auto url = llm_detail::parse_endpoint(s.endpoint, "messages");
  if (!url)
    throw PolicyError(fmt::format("LLM endpoint '{}' is not an http:// or https:// base URL without query", s.endpoint));
  if (model_.empty()) throw PolicyError("llm.provider anthropic needs a model: set llm.model or use llm:MODEL");
  if (!(timeout_s_ > 0)) throw PolicyError(fmt::format("llm.timeout_s must be greater than 0, while {} was given", timeout_s_));
  origin_ = url->origin;
  path_ = url->path;
  llm_detail::load_http_module(s.endpoint);
  llm_detail::set_http_connection_limit(s.max_connections);
}

Completion AnthropicClient::complete(const CompletionRequest& req) const {
  llm_detail::Exchange ex;
  ex.origin = origin_;
  ex.path = path_;
  if (!api_key_.empty()) ex.headers.emplace_back("x-api-key", api_key_);
  ex.headers.emplace_back("anthropic-version", version_);
  ex.secret = api_key_;
  ex.key_env = key_env_;
  ex.timeout_s = timeout_s_;
  ex.max_retries = max_retries_;
  ex.backoff_s = backoff_s_;
  ex.read_success = &read_success;
  ex.read_error = &read_error;
  Completion out = llm_detail::exchange(ex, messages_request_body(req, model_));
  out.model = model_;
  return out;
}


}  // namespace advplan
