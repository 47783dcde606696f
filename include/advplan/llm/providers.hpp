#pragma once
// Live models behind their providers (docs/LLM.md "Providers"): OpenAI's chat completions (also llama.cpp's,
// vLLM's and most local servers') and Anthropic's Messages API. Each turns the neutral request (llm/request.hpp)
// into its body, and its reply into the neutral Completion; the transport they share (src/llm/transport.cpp)
// carries it through the HTTP module (libcurl), with the retries, bounds and key redaction of docs/LLM.md.
#include <memory>
#include <string>
#include <string_view>

#include "advplan/llm/request.hpp"
#include "advplan/llm/settings.hpp"
#include "advplan/llm/suspension.hpp"

namespace advplan {

/// The resolved settings of a live model. Holds the API key: never serialise, log or print an LlmSettings
/// as a whole (run_metadata.json records llm.api_key_env, the variable's name, and nothing else about the
/// key).
struct LlmSettings {
  LlmProvider provider = LlmProvider::openai;
  std::string anthropic_version = "2023-06-01";
  std::string endpoint;  ///< base URL, e.g. http://127.0.0.1:8080 or https://host/v1
  std::string model;     ///< may be empty: then the request carries no "model" field
  std::string api_key;   ///< may be empty: then no Authorization header is sent
  std::string key_env;   ///< the name of the variable the key is read from (llm.api_key_env), for messages
  double timeout_s = 30.0;
  int max_retries = 3;
  double backoff_s = 0.5;
  int max_repairs = 1;
  int max_connections = 16;  ///< requests in flight at once, across every client of the process
};

/// Applies the environment to `cfg`: ADVPLAN_LLM_ENDPOINT overrides llm.endpoint; the model is
/// `model_override` when not empty, else ADVPLAN_LLM_MODEL, else llm.model; the key is read from the variable
/// named by llm.api_key_env. `who` names the policy in errors ("llm:gpt-x", "llm_live").
/// Throws PolicyError "<who>: no endpoint: set llm.endpoint in the config or ADVPLAN_LLM_ENDPOINT" when no
/// endpoint is given, and PolicyError when the endpoint is not an http:// or https:// URL.
LlmSettings resolve_llm_settings(const LlmConfig& cfg, std::string_view model_override,
                                 std::string_view who = "llm");

/// The chat-completions request body: {"messages", "temperature"} and, when set, "seed", "top_p", "max_tokens",
/// "stop", the fields of `extra_json`, and "model" when `model` is not empty.
std::string chat_request_body(const CompletionRequest& req, const std::string& model);

/// Reads a 2xx chat-completions body: text (choices[0].message.content, the key redacted), token counts (with
/// usage.prompt_tokens_details.cached_tokens and completion_tokens_details.reasoning_tokens) and ok; or error, one
/// sentence. Bounded (untrusted::kMaxJsonDepth), never throws. `secret` is the key to redact.
Completion parse_chat_completion_body(const std::string& body, const std::string& secret);
/// The same, filling `out` in place (the client's path).
void read_success_body(const std::string& body, const std::string& secret, Completion& out);

/// POSTs {"model","messages","temperature","seed"} to <base>/v1/chat/completions (or <base>/chat/completions
/// when the base already ends in /v1) and returns choices[0].message.content with the usage token counts.
/// Each attempt has a total deadline of timeout_s seconds (connection, request and the whole response, however
/// slowly the server sends it), a body cap of kMaxResponseBytes, and asks for an uncompressed body: a body
/// with a Content-Encoding other than identity is refused. The API key is redacted from the completion text
/// and from every error before they leave the client.
/// 429, 5xx (but a context overflow) and transport errors (refused connection, timeout) are retried up to
/// max_retries times after
/// backoff_s * 2^attempt seconds, or after the server's Retry-After seconds (capped at 30 s) when it sends
/// one; other HTTP errors are returned at once. A context overflow (llama.cpp's 500 "Context size has been exceeded",
/// OpenAI's context_length_exceeded) is never retried: it is ErrorKind::context_overflow, whose sentence says how
/// to size the server's context. Failures come back as Completion{ok = false, error = one
/// sentence}: "HTTP 404: <body excerpt of at most 200 characters>". HTTP 401 and 403 (the key is missing or
/// refused) throw StopRunError instead: every further request would fail the same way, so the command stops, with
/// one sentence naming the endpoint and the variable that holds the key. The key never appears in an error. Thread
/// safety: constant. Inside a TBB task (a scenario of a run) each attempt is carried by the HTTP module's I/O thread
/// (libcurl multi) and the task is suspended until the reply arrives, so its thread serves other scenarios
/// meanwhile; elsewhere the call blocks. Either way the reply is the same.
class OpenAiCompatibleClient final : public CompletionClient {
 public:
  /// Throws PolicyError when `endpoint` is not an http:// or https:// URL, or timeout_s <= 0, max_retries <
  /// 0, backoff_s < 0.
  OpenAiCompatibleClient(std::string endpoint, std::string model, std::string api_key, double timeout_s,
                         int max_retries, double backoff_s);
  /// Also sets the process's connection limit to s.max_connections (set_max_connections).
  explicit OpenAiCompatibleClient(const LlmSettings& s);

  /// The most requests in flight at once in this process (at least 1; 16 until set). A 429 halves the current
  /// limit for a while; successes raise it back.
  static void set_max_connections(int n);

  Completion complete(const CompletionRequest& req) const override;
  /// "openai:<model>"
  std::string name() const override { return "openai:" + model_; }

  /// scheme://host[:port], e.g. "http://127.0.0.1:8080".
  const std::string& origin() const { return origin_; }
  /// The request path, e.g. "/v1/chat/completions".
  const std::string& path() const { return path_; }
  const std::string& model() const { return model_; }
  /// The variable the key was read from, named when the endpoint refuses the key ("" : none configured).
  void set_key_env(std::string name) { key_env_ = std::move(name); }
  /// The largest response body accepted (kMaxResponseBytes unless set; for tests).
  void set_max_response_bytes(std::size_t n) { max_response_bytes_ = n; }

  /// A body longer than this is a failure ("response body exceeds N bytes"); it is read no further.
  static constexpr std::size_t kMaxResponseBytes = 4u << 20;

 private:
  std::string origin_, path_, model_, api_key_, key_env_;
  std::size_t max_response_bytes_ = kMaxResponseBytes;
  double timeout_s_;
  int max_retries_;
  double backoff_s_;
};

/// The Messages API request body (docs/LLM.md "Anthropic"): "model", "max_tokens" (4096 when unset), the
/// system messages joined as the top-level "system", the rest as "messages" with text content blocks;
/// "temperature", "top_p", "stop_sequences" when set, never "seed"; with structured output a forced tool
/// (tools + tool_choice) whose input_schema is the reply's schema; with a cache hint, cache_control marks on the
/// last system block and on the shared part of the hinted message; the fields of `extra_json`.
std::string messages_request_body(const CompletionRequest& req, const std::string& model);

/// Reads a 2xx Messages body: the text blocks joined (or the forced tool's input as JSON text), stop_reason, and
/// usage: prompt_tokens = input_tokens + cache_read_input_tokens + cache_creation_input_tokens (every input token,
/// as OpenAI counts them), cached_tokens = cache_read_input_tokens, cache_write_tokens =
/// cache_creation_input_tokens. Bounded, never throws.
Completion parse_messages_body(const std::string& body, const std::string& secret);

/// A model behind Anthropic's Messages API (<base>/v1/messages): x-api-key and anthropic-version headers; 429
/// (with retry-after), 500 and 529 overloaded_error are retried as OpenAiCompatibleClient retries; other errors
/// are returned with the error's type and message; 401 and 403 stop the run.
class AnthropicClient final : public CompletionClient {
 public:
  /// Throws PolicyError as OpenAiCompatibleClient does. Also sets the process's connection limit.
  explicit AnthropicClient(const LlmSettings& s);
  Completion complete(const CompletionRequest& req) const override;
  /// "anthropic:<model>"
  std::string name() const override { return "anthropic:" + model_; }
  const std::string& origin() const { return origin_; }
  const std::string& path() const { return path_; }

 private:
  std::string origin_, path_, model_, api_key_, key_env_, version_;
  double timeout_s_;
  int max_retries_;
  double backoff_s_;
};

/// The client of `s.provider`: OpenAiCompatibleClient or AnthropicClient. `key_of_endpoint` receives origin + path,
/// what the completion cache keys on.
std::unique_ptr<CompletionClient> make_provider_client(const LlmSettings& s, std::string* key_of_endpoint = nullptr);

}  // namespace advplan
