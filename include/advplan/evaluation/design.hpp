#pragma once
// `advplan design RUN`: the study design of issue 49 from a pilot run of several samples (docs/METRICS.md "Study
// design", docs/TRACES.md "design/"): the variance components of each paired difference, the pilot's own MDE, and
// the cost-minimal (n, K, R) reaching a target MDE, with alternatives.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "advplan/stats/study_design.hpp"

namespace advplan {

struct DesignSettings {
  double target_mde = 0;  ///< --mde, in the metric's units (> 0)
  double power = 0.8, alpha = 0.05;
  double cpu_price_per_hour = 0.05;  ///< USD per CPU-hour of the simulator
  double scenario_cost = 0;          ///< USD per scenario besides its samples (--scenario-cost)
  double sample_seconds = 0;  ///< CPU seconds of a sample's planning, priced at cpu_price (--sample-seconds)
  std::optional<double> sample_cost;           ///< USD per (scenario, sample), overriding the pilot's llm cost
  std::optional<double> replication_seconds;   ///< CPU seconds per replication, overriding the pilot's measure
  DesignLimits limits;
};

/// What the pilot measured (run_metadata.json and per_scenario.csv).
struct PilotFacts {
  std::size_t scenarios = 0, templates = 0, samples = 0, replications = 0, conditions = 0;
  double llm_cost_usd = 0;         ///< the pilot's model calls, priced by its llm.prices (0 without a model)
  bool llm_priced = true, resumed = false;
  double replication_seconds = 0;  ///< CPU seconds per replication used for the cost (measured or given)
  std::string sample_cost_source, replication_seconds_source;
  DesignCosts costs;
};

/// design/design.csv and design/design.md (relative names) for the pilot run in `run_dir`. Reads the run through
/// the MANIFEST check and run_metadata.json bounded; throws an advplan::Error naming the file and field when the
/// run is not a pilot (no `sample` column, one sample, one replication) or a field is missing or out of range.
std::vector<std::pair<std::string, std::string>> design_files(const std::string& run_dir, const DesignSettings& s);

}  // namespace advplan
