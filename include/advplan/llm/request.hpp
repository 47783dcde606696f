#pragma once
// One provider-neutral request to a language model and its reply (docs/LLM.md "Providers"): what the contract,
// the judges and the quiz agent ask, whichever provider carries it (llm/providers.hpp), and what the completion
// cache keys on and stores.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "advplan/llm/settings.hpp"

namespace advplan {

struct ChatMessage {
  std::string role;  ///< system, user, assistant
  std::string content;
};

/// Where the part of a prompt that is shared across conditions and samples ends (docs/LLM.md "Prompt caching"):
/// messages[0, message) whole and the first `chars` bytes of messages[message]. A provider with explicit cache
/// marks (Anthropic's cache_control) marks it; the others cache prefixes on their own. {0, 0}: no hint.
struct CacheHint {
  std::size_t message = 0;
  std::size_t chars = 0;
  bool operator==(const CacheHint&) const = default;
};

struct CompletionRequest {
  std::vector<ChatMessage> messages;
  double temperature = 0.0;
  std::uint64_t seed = 0;
  std::optional<double> top_p;     ///< sent only when set (llm.generation)
  std::optional<int> max_tokens;   ///< sent only when set (Anthropic requires one: 4096 when unset)
  std::vector<std::string> stop;   ///< sent only when not empty
  bool send_seed = true;           ///< false: no "seed" field (seed_mode: none; Anthropic never takes one)
  std::string extra_json;          ///< a JSON object whose fields join the body unchanged ("": none)
  StructuredOutput structured = StructuredOutput::off;  ///< what the reply is constrained to (apply_generation)
  bool strict_schema = false;      ///< json_schema: OpenAI's strict subset with strict: true
  std::string schema_name;         ///< json_schema: the schema's name for the provider (e.g. advplan_plan)
  std::string output_schema;       ///< json_schema: the reply's JSON Schema as text ("": none; attach_*_schema)
  CacheHint cache;                 ///< the shared prefix (a hint: not part of the completion cache's key)
};

/// Why a call failed (Completion::error_kind), for retries and for the summary.
enum class ErrorKind {
  none,
  transport,         ///< refused connection, reset, TLS, a malformed response head
  timeout,           ///< no complete response within llm.timeout_s
  http,              ///< an HTTP error status (its sentence names it)
  context_overflow,  ///< the prompt and max_tokens do not fit the model's (or the server's slot's) context
  bad_reply,         ///< a 2xx body that is not the provider's reply (not JSON, no content, too big, compressed)
  deferred,          ///< not asked yet: the request waits in a batch (advplan run --batch)
};
/// "transport", "timeout", "http", "context_overflow", "bad_reply", "deferred" ("" for none).
const char* to_string(ErrorKind k);

struct Completion {
  bool ok = false;        ///< false: transport failure (error holds why)
  std::string text;       ///< the completion text (a forced tool's input, as JSON text, for Anthropic)
  std::string error;
  ErrorKind error_kind = ErrorKind::none;
  int prompt_tokens = -1;      ///< every input token, cached or not; -1 when the server did not report it
  int completion_tokens = -1;  ///< -1 when the server did not report it
  int cached_tokens = -1;       ///< input tokens read from the provider's prompt cache; -1: not reported
  int cache_write_tokens = -1;  ///< input tokens written to it (Anthropic); -1: not reported
  int reasoning_tokens = -1;    ///< output tokens spent on hidden reasoning (OpenAI); -1: not reported
  int http_retries = 0;        ///< retries after 429 / 5xx inside the client
  bool batch = false;          ///< answered through a provider's batch API (priced at llm.batch_discount)
  /// What the server says answered: its reply's "model", and OpenAI's "system_fingerprint" (llama.cpp's build),
  /// joined by a space; "" when it says nothing. Tells runs answered by different builds or models apart.
  std::string served_by;
  std::string finish_reason;   ///< the provider's own word ("stop", "length", "end_turn", "max_tokens", ...)
  std::string cache_key;       ///< the completion cache's key of the request, when a cache stood in front
  std::string model;           ///< the model asked (llm.model or llm:MODEL; empty for exec: and offline), for llm.prices
};

/// A model behind some transport. Implementations must be callable concurrently (thread_safety constant).
class CompletionClient {
 public:
  virtual ~CompletionClient() = default;
  virtual Completion complete(const CompletionRequest& req) const = 0;
  virtual std::string name() const = 0;
};

}  // namespace advplan
