#pragma once
// (template, seed) -> Scenario, deterministic (docs/ARCHITECTURE.md "Data model"). Framing handling (metadata vs applied) is in
// framing.hpp; the generator always stores the sampled framing and, under FramingMode::applied, applies it.
#include <cstdint>

#include "advplan/core/scenario.hpp"
#include "advplan/scenario/scenario_template.hpp"

namespace advplan {

enum class FramingMode { metadata, applied };

struct GeneratorOptions {
  FramingMode framing_mode = FramingMode::metadata;
  std::optional<Framing> framing_override;  ///< force this framing (framing-sensitivity study)
};

/// Deterministic in (template data, seed, options). Throws ConfigError when the template cannot support a plan
/// (e.g. no BLUE asset can perform any required category).
Scenario generate_scenario(const ScenarioTemplate& tpl, std::uint64_t seed, const GeneratorOptions& opts = {});

}  // namespace advplan
