#pragma once
// scenario_from_text's simdjson reader (library internal, src/core/scenario_text.cpp), for the test that checks
// which texts it takes.
#include <optional>
#include <string_view>

#include "advplan/core/scenario.hpp"

namespace advplan::detail {

/// The scenario, when the reader takes the text in full; nullopt when the nlohmann path must decide.
std::optional<Scenario> scenario_from_text_fast(std::string_view text);

}  // namespace advplan::detail
