#include "advplan/llm/providers.hpp"

#include <fmt/format.h>

#include <cstdlib>

#include "advplan/core/error.hpp"
#include "transport.hpp"

namespace advplan {

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

}  // namespace

LlmSettings resolve_llm_settings(const LlmConfig& cfg, std::string_view model_override,
                                 std::string_view who) {
  LlmSettings s;
  s.endpoint = env_or("ADVPLAN_LLM_ENDPOINT", cfg.endpoint);
  if (s.endpoint.empty())
    throw PolicyError(
        fmt::format("{}: no endpoint: set llm.endpoint in the config or ADVPLAN_LLM_ENDPOINT", who));
  if (!llm_detail::parse_endpoint(s.endpoint, ""))
    throw PolicyError(fmt::format("{}: endpoint '{}' is not an http:// or https:// base URL without query",
                                  who, s.endpoint));
  s.provider = cfg.provider;
  s.anthropic_version = cfg.anthropic_version;
  s.model = model_override.empty() ? env_or("ADVPLAN_LLM_MODEL", cfg.model) : std::string(model_override);
  s.api_key = cfg.api_key_env.empty() ? "" : env_or(cfg.api_key_env.c_str(), "");
  s.key_env = cfg.api_key_env;
  s.timeout_s = cfg.timeout_s;
  s.max_retries = cfg.max_retries;
  s.backoff_s = cfg.backoff_s;
  s.max_repairs = cfg.max_repairs;
  s.max_connections = cfg.max_connections;
  return s;
}

std::unique_ptr<CompletionClient> make_provider_client(const LlmSettings& s, std::string* key_of_endpoint) {
  if (s.provider == LlmProvider::anthropic) {
    auto c = std::make_unique<AnthropicClient>(s);
    if (key_of_endpoint) *key_of_endpoint = c->origin() + c->path();
    return c;
  }
  auto c = std::make_unique<OpenAiCompatibleClient>(s);
  if (key_of_endpoint) *key_of_endpoint = c->origin() + c->path();
  return c;
}

}  // namespace advplan
