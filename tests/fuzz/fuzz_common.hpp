#pragma once
// Shared by the libFuzzer targets (tests/fuzz/README.md): a small fixed scenario, built once.
#include <cstddef>
#include <cstdint>
#include <string>

#include "advplan/core/scenario.hpp"
#include "advplan/run/config.hpp"

namespace advplan::fuzz {

/// The paper corpus's urban-100 scenario (generated once per process).
inline const Scenario& scenario() {
  static const Scenario sc = [] {
    const ExperimentConfig cfg = default_experiment_config();
    for (const auto& s : generate_corpus(cfg))
      if (s.id == "urban-100") return s;
    return generate_corpus(cfg).front();
  }();
  return sc;
}

inline std::string text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace advplan::fuzz
