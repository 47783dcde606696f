#pragma once
// What the providers (openai.cpp, anthropic.cpp) share: the endpoint's URL, the HTTP module behind it, the
// attempt loop with its retries and backoff, and the bounded readers of a body. Internal to src/llm.
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "advplan/llm/request.hpp"

namespace advplan::llm_detail {

struct ParsedUrl {
  std::string origin;  ///< scheme://host[:port]
  std::string path;    ///< the provider's path under the base
};
/// "http://h:1" + "chat/completions" -> {"http://h:1", "/v1/chat/completions"}; a base that already ends in /v1
/// gets no second one; "http://h/proxy" -> {"http://h", "/proxy/v1/<leaf>"}. Nullopt for anything but an http://
/// or https:// URL without query, fragment or user info.
std::optional<ParsedUrl> parse_endpoint(std::string_view url, std::string_view leaf);

/// At most 200 characters of a response body, on one line, valid UTF-8, without the key ("(empty body)" if empty).
std::string excerpt(const std::string& body, const std::string& secret);

/// A reported token count: a non-negative integer, saturated at INT_MAX; -1 when absent, negative or not an
/// integer (a count the server got wrong is treated as not reported). `usage` may be anything.
int token_count(const nlohmann::json& usage, const char* key);

/// How a provider reads a response that is not a 2xx.
struct ErrorReading {
  std::string message;  ///< the sentence after "HTTP <status>: "
  ErrorKind kind = ErrorKind::http;
  bool retry = false;   ///< worth another attempt (rate limits, overload, server errors other than overflow)
};
using ReadSuccess = void (*)(const std::string& body, const std::string& secret, Completion& out);
using ReadError = ErrorReading (*)(int status, const std::string& body, const std::string& secret);

/// One endpoint and how to talk to it: the provider fills it once.
struct Exchange {
  std::string origin, path;
  std::vector<std::pair<std::string, std::string>> headers;  ///< besides Accept and Accept-Encoding
  std::string secret;   ///< the key, redacted from everything that leaves
  std::string key_env;  ///< named when the key is refused
  double timeout_s = 30;
  int max_retries = 3;
  double backoff_s = 0.5;
  std::size_t max_body = 4u << 20;
  ReadSuccess read_success = nullptr;
  ReadError read_error = nullptr;
};

/// POSTs `payload` (JSON) with up to max_retries retries after backoff_s * 2^attempt seconds, or the server's
/// Retry-After (capped at 30 s). 401 and 403 throw StopRunError. Never returns the key in any field.
Completion exchange(const Exchange& ex, const std::string& payload);

/// A request other than a completion (a batch's file, creation, status or results): the status and body of a 2xx
/// (the key redacted), else error, one sentence. Retried and stopped as exchange.
struct Fetched {
  int status = 0;
  std::string body;
  std::string error;
};
Fetched fetch(const Exchange& ex, const std::string& path, const std::string& payload, bool get,
              const std::string& content_type = "application/json");

/// Loads the HTTP module (so that a missing libadvplan_http.so fails before any work) and sets its connection limit.
void load_http_module(std::string_view endpoint);
void set_http_connection_limit(int n);

/// Whether an error body says the context is exceeded (llama.cpp's exceed_context_size_error or "context size has
/// been exceeded", OpenAI's context_length_exceeded, Anthropic's "prompt is too long"). Case-insensitive.
bool says_context_overflow(std::string_view body);

}  // namespace advplan::llm_detail
