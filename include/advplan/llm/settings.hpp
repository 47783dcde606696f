#pragma once
// The settings of live language models (config key `llm`, docs/CONFIG.md and docs/LLM.md): the provider, the
// endpoint, generation settings, structured output, prices. Plain data, read by run/config.cpp.
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace advplan {

/// What a request to a live model carries besides its messages (`llm.generation`, docs/LLM.md "Generation
/// settings"). Unset fields are not sent, so the server's defaults apply.
/// What a live request asks the provider to constrain its reply to (llm.structured_output, docs/LLM.md
/// "Structured output"): nothing (off), any JSON object (json_object), or the reply's JSON Schema (json_schema;
/// auto is json_schema for the providers that take one).
enum class StructuredOutput { off, json_object, json_schema, automatic };

struct GenerationSettings {
  double temperature = 0.0;
  std::optional<double> top_p;
  std::optional<int> max_tokens;
  std::vector<std::string> stop;
  bool send_seed = true;   ///< seed_mode: `keyed` sends the request's keyed seed, `none` sends no seed
  std::string extra_json;  ///< extra: a JSON object whose fields are copied into the body unchanged ("": none)
  StructuredOutput structured_output = StructuredOutput::off;
  bool strict_schema = false;  ///< send OpenAI's strict subset with strict: true (docs/LLM.md "Structured output")
  bool operator==(const GenerationSettings&) const = default;
};

/// A model's price (`llm.prices.<MODEL>`), in US dollars per million tokens (docs/LLM.md "Costs and limits").
/// Input tokens read from the provider's prompt cache cost input_cached_per_mtok, and tokens written to it
/// cache_write_per_mtok; either, when not given, costs input_per_mtok.
struct TokenPrice {
  double input_per_mtok = 0;
  double output_per_mtok = 0;
  std::optional<double> input_cached_per_mtok;
  std::optional<double> cache_write_per_mtok;
};

/// The protocol a live model speaks (llm.provider, docs/LLM.md "Providers"): OpenAI's chat completions (also
/// llama.cpp's, vLLM's and most local servers'), or Anthropic's Messages API.
enum class LlmProvider { openai, anthropic };

struct LlmConfig {
  LlmProvider provider = LlmProvider::openai;
  std::string anthropic_version = "2023-06-01";  ///< llm.anthropic_version: the anthropic-version header
  std::string endpoint;  ///< base URL, e.g. http://127.0.0.1:8080; env ADVPLAN_LLM_ENDPOINT overrides
  std::string model;     ///< env ADVPLAN_LLM_MODEL overrides
  std::string api_key_env = "ADVPLAN_LLM_API_KEY";  ///< the key itself is never stored in the config
  double timeout_s = 30.0;
  int max_retries = 3;
  double backoff_s = 0.5;
  int max_repairs = 1;  ///< re-prompts after an unparseable completion
  std::string cache_dir;  ///< completion cache directory (llm.cache_dir or --llm-cache); empty: no cache
  /// Requests in flight at once (llm.max_connections or --max-connections), independent of --threads: a scenario
  /// task waiting on a reply gives its thread to another scenario (docs/LLM.md "Concurrency").
  int max_connections = 16;
  GenerationSettings generation;  ///< llm.generation: every live model's requests
  std::map<std::string, TokenPrice> prices;  ///< llm.prices, by model name (docs/LLM.md "Costs and limits")
  double batch_discount = 0.5;  ///< llm.batch_discount: the share of the price a batch call costs
  /// llm.mode: batch (or --batch): the run's live calls go through the provider's batch API in waves (docs/LLM.md
  /// "Batch"); online (false) asks each call at once.
  bool batch = false;
  /// policies.<name>.generation: a policy's own settings (`llm` for BLUE llm:MODEL, `llm_live`), each field
  /// written there replacing llm.generation's
  std::map<std::string, GenerationSettings> policy_generation;
  /// The settings of policy `name`: its own when it has them, else llm.generation.
  const GenerationSettings& generation_for(const std::string& name) const {
    const auto it = policy_generation.find(name);
    return it == policy_generation.end() ? generation : it->second;
  }
};

}  // namespace advplan
