#pragma once
// Reading a config's `sweep:` block (docs/CONFIG.md "sweep"); private to run/, called by parse_experiment_config
// after the conditions are read.
#include "advplan/io/yaml_reader.hpp"
#include "advplan/run/config.hpp"

namespace advplan::detail {

/// Fills cfg.sweep from `sweep:`: the swept condition, the parameters, the points and the reference point. Every
/// value is range-checked here; errors are one-sentence ConfigErrors naming the file and key.
void read_sweep(ExperimentConfig& cfg, const io::YamlReader& y);

}  // namespace advplan::detail
