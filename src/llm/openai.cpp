#include <fmt/format.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/llm/providers.hpp"
#include "transport.hpp"

namespace advplan {
using nlohmann::json;

namespace {

using llm_detail::excerpt;
using llm_detail::token_count;


/// The reply's "model" and "system_fingerprint", joined by a space, each cut to 80 characters.
std::string served_by(const json& j, const std::string& secret) {
  std::string out;
  for (const char* k : {"model", "system_fingerprint"}) {
    const std::string v = untrusted::string_member(j, k);
    if (v.empty()) continue;
    if (!out.empty()) out += ' ';
    out += untrusted::excerpt(untrusted::redact(v, secret), 80);
  }
  return out;
}

/// The sentence of an error status: the body's error.message when there is one, else an excerpt; a context overflow
/// is named, and never retried.
llm_detail::ErrorReading read_error(int status, const std::string& body, const std::string& secret) {
  llm_detail::ErrorReading e;
  e.message = excerpt(body, secret);
  if (llm_detail::says_context_overflow(body)) {
    e.kind = ErrorKind::context_overflow;
    e.message += "; the prompt and max_tokens exceed the model's context: on a local server give -c at least "
                 "slots x (prompt + max_tokens) tokens, and set llm.generation.max_tokens (docs/LLM.md)";
    return e;
  }
  e.retry = status == 429 || (status >= 500 && status <= 599);
  return e;
}

}  // namespace

void read_success_body(const std::string& body, const std::string& secret, Completion& out) {
  json j;
  if (const std::string err = untrusted::parse_json_bounded(body, j); !err.empty() || !j.is_object()) {
    out.error = err.find("deeper") != std::string::npos ? "response " + err
                                                        : "response is not a JSON object: " + excerpt(body, secret);
    return;
  }
  out.served_by = served_by(j, secret);
  if (const auto u = j.find("usage"); u != j.end()) {
    out.prompt_tokens = token_count(*u, "prompt_tokens");
    out.completion_tokens = token_count(*u, "completion_tokens");
    if (u->is_object()) {
      if (const auto d = u->find("prompt_tokens_details"); d != u->end()) out.cached_tokens = token_count(*d, "cached_tokens");
      if (const auto d = u->find("completion_tokens_details"); d != u->end())
        out.reasoning_tokens = token_count(*d, "reasoning_tokens");
    }
  }
  const json* content = nullptr;
  if (const auto ch = j.find("choices");
      ch != j.end() && ch->is_array() && !ch->empty() && (*ch)[0].is_object())
    if (const auto m = (*ch)[0].find("message"); m != (*ch)[0].end() && m->is_object())
      if (const auto c = m->find("content"); c != m->end() && c->is_string()) content = &*c;
  if (!content) {
    const auto e = j.find("error");
    out.error = e != j.end() && e->is_object() && e->contains("message") && (*e)["message"].is_string()
                    ? "server error: " + excerpt((*e)["message"].get<std::string>(), secret)
                    : "response has no choices[0].message.content: " + excerpt(body, secret);
    return;
  }
  // The key never travels further than the transport: a server echoing it into the content gets it redacted
  // before the text reaches the parser, the validator's messages or any trace.
  out.text = untrusted::redact(content->get<std::string>(), secret);
  if (const auto f = (*j.find("choices"))[0].find("finish_reason"); f != (*j.find("choices"))[0].end() && f->is_string())
    out.finish_reason = excerpt(f->get<std::string>(), secret);
  out.ok = true;
}

OpenAiCompatibleClient::OpenAiCompatibleClient(const LlmSettings& s)
    : OpenAiCompatibleClient(s.endpoint, s.model, s.api_key, s.timeout_s, s.max_retries, s.backoff_s) {
  set_max_connections(s.max_connections);
  key_env_ = s.key_env;
}

void OpenAiCompatibleClient::set_max_connections(int n) { llm_detail::set_http_connection_limit(n); }

Completion parse_chat_completion_body(const std::string& body, const std::string& secret) {
  Completion out;
  read_success_body(body, secret, out);
  return out;
}


OpenAiCompatibleClient::OpenAiCompatibleClient(std::string endpoint, std::string model, std::string api_key,
                                               double timeout_s, int max_retries, double backoff_s)
    : model_(std::move(model)),
      api_key_(std::move(api_key)),
      timeout_s_(timeout_s),
      max_retries_(max_retries),
      backoff_s_(backoff_s) {
  const auto url = llm_detail::parse_endpoint(endpoint, "chat/completions");
  if (!url)
    throw PolicyError(
        fmt::format("LLM endpoint '{}' is not an http:// or https:// base URL without query", endpoint));
  if (!(timeout_s > 0))
    throw PolicyError(
        fmt::format("llm.timeout_s must be greater than 0, while a value of {} was given", timeout_s));
  if (max_retries < 0)
    throw PolicyError(
        fmt::format("llm.max_retries must be at least 0, while a value of {} was given", max_retries));
  if (!(backoff_s >= 0))
    throw PolicyError(
        fmt::format("llm.backoff_s must be at least 0, while a value of {} was given", backoff_s));
  origin_ = url->origin;
  path_ = url->path;
  // The HTTP module is loaded here, so that a missing libadvplan_http.so fails before any work, as a policy error,
  // rather than in the middle of a run.
  llm_detail::load_http_module(endpoint);
}

namespace {
/// The chat-completions `response_format` of a structured request (docs/LLM.md "Structured output"), or nullopt.
std::optional<json> response_format(const CompletionRequest& req) {
  if (req.structured == StructuredOutput::off) return std::nullopt;
  if (req.structured == StructuredOutput::json_object || req.output_schema.empty())
    return json{{"type", "json_object"}};
  json schema = json::parse(req.output_schema, nullptr, false);
  if (schema.is_discarded()) return json{{"type", "json_object"}};
  return json{{"type", "json_schema"},
              {"json_schema", {{"name", req.schema_name}, {"strict", req.strict_schema}, {"schema", std::move(schema)}}}};
}
}  // namespace

std::string chat_request_body(const CompletionRequest& req, const std::string& model) {
  json body = {{"messages", json::array()}, {"temperature", req.temperature}};
  if (req.send_seed) body["seed"] = req.seed;
  if (req.top_p) body["top_p"] = *req.top_p;
  if (req.max_tokens) body["max_tokens"] = *req.max_tokens;
  if (!req.stop.empty()) body["stop"] = req.stop;
  if (!req.extra_json.empty()) {
    // Checked when the config was read: an object, whose keys are none of the fields set here.
    const json extra = json::parse(req.extra_json, nullptr, false);
    if (extra.is_object())
      for (const auto& [k, v] : extra.items()) body[k] = v;
  }
  if (auto rf = response_format(req)) body["response_format"] = std::move(*rf);
  if (!model.empty()) body["model"] = model;
  for (const auto& m : req.messages) body["messages"].push_back({{"role", m.role}, {"content", m.content}});
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

Completion OpenAiCompatibleClient::complete(const CompletionRequest& req) const {
  llm_detail::Exchange ex;
  ex.origin = origin_;
  ex.path = path_;
  if (!api_key_.empty()) ex.headers.emplace_back("Authorization", "Bearer " + api_key_);
  ex.secret = api_key_;
  ex.key_env = key_env_;
  ex.timeout_s = timeout_s_;
  ex.max_retries = max_retries_;
  ex.backoff_s = backoff_s_;
  ex.max_body = max_response_bytes_;
  ex.read_success = &read_success_body;
  ex.read_error = &read_error;
  Completion out = llm_detail::exchange(ex, chat_request_body(req, model_));
  out.model = model_;
  return out;
}

}  // namespace advplan
