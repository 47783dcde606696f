// The external policies' model usage of a run: its cost under llm.prices and the one-line summary.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "advplan/run/config.hpp"
#include "advplan/run/runner.hpp"

namespace advplan {

std::optional<double> cost_usd(const ModelUsage& u, const LlmConfig& llm) {
  const auto it = llm.prices.find(u.model);
  if (it == llm.prices.end()) return std::nullopt;
  const TokenPrice& p = it->second;
  const std::uint64_t cached = std::min(u.cached_tokens, u.prompt_tokens);
  const std::uint64_t written = std::min(u.cache_write_tokens, u.prompt_tokens - cached);
  const std::uint64_t uncached = u.prompt_tokens - cached - written;
  const double full = (static_cast<double>(uncached) * p.input_per_mtok +
                       static_cast<double>(cached) * p.input_cached_per_mtok.value_or(p.input_per_mtok) +
                       static_cast<double>(written) * p.cache_write_per_mtok.value_or(p.input_per_mtok) +
                       static_cast<double>(u.completion_tokens) * p.output_per_mtok) /
                      1e6;
  return u.batch ? full * llm.batch_discount : full;
}

namespace {

/// "; 40% of prompt tokens read from the provider's cache, saving $0.0012" (the saving against pricing them as
/// uncached input); "" when no call reported a cached token.
std::string cached_share(const std::vector<ModelUsage>& usage, const LlmConfig& llm) {
  std::uint64_t prompt = 0, cached = 0;
  double saved = 0;
  bool priced = true;
  for (const ModelUsage& u : usage) {
    prompt += u.prompt_tokens;
    cached += u.cached_tokens;
    ModelUsage uncached = u;
    uncached.cached_tokens = uncached.cache_write_tokens = 0;
    const auto with = cost_usd(u, llm), without = cost_usd(uncached, llm);
    if (with && without) saved += *without - *with;
    else if (u.cached_tokens > 0) priced = false;
  }
  if (cached == 0 || prompt == 0) return "";
  const double share = 100.0 * static_cast<double>(cached) / static_cast<double>(prompt);
  return priced ? fmt::format("; {:.0f}% of prompt tokens read from the provider's cache, saving ${:.4f}", share, saved)
                : fmt::format("; {:.0f}% of prompt tokens read from the provider's cache", share);
}

}  // namespace

std::string usage_summary(const std::vector<ModelUsage>& usage, const LlmConfig& llm) {
  if (usage.empty()) return "";
  std::uint64_t calls = 0, prompt = 0, completion = 0;
  double total = 0;
  std::string per, unpriced;
  for (const ModelUsage& u : usage) {
    calls += u.calls;
    prompt += u.prompt_tokens;
    completion += u.completion_tokens;
    per += fmt::format("{}{} {} {}", per.empty() ? "" : ", ", u.role, u.policy, u.calls);
    if (const auto c = cost_usd(u, llm)) total += *c;
    else if (u.model.empty()) continue;  // an exec: program: no model, no price
    else if (unpriced.find("'" + u.model + "'") == std::string::npos)
      unpriced += fmt::format("{}'{}'", unpriced.empty() ? "" : ", ", u.model);
  }
  const std::string cost = unpriced.empty() ? fmt::format("${:.4f} under llm.prices", total)
                                            : fmt::format("cost unknown (no llm.prices entry for {})", unpriced);
  return fmt::format("model calls: {} ({}); {} prompt + {} completion tokens; {}{}", calls, per, prompt, completion, cost,
                     cached_share(usage, llm));
}

}  // namespace advplan
