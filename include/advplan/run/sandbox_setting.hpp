#pragma once
// The config's `sandbox:` setting (docs/CONFIG.md "sandbox"), checked when the config is read and read back from
// its text by the commands that start external programs (src/cli/run_flags.cpp, prepare_sandbox).
#include <optional>

#include "advplan/io/sandbox.hpp"
#include "advplan/run/config.hpp"

namespace advplan {

/// The settings of `cfg`'s `sandbox:` key (`true` gives the defaults), or nullopt when it has none or `false`.
/// Throws ConfigError naming the file and the field for a bad value.
std::optional<SandboxSettings> config_sandbox(const ExperimentConfig& cfg);

}  // namespace advplan
