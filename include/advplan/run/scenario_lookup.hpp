#pragma once
// Find one scenario of a config's corpus by id without generating the rest.
#include <string>

#include "advplan/core/scenario.hpp"
#include "advplan/run/config.hpp"

namespace advplan {

/// "urban-100" -> the scenario; throws ConfigError naming the id and the corpus range when it is not in it.
Scenario find_scenario(const ExperimentConfig& cfg, const std::string& id);

}  // namespace advplan
