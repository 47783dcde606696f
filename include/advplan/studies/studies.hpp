#pragma once
// The rubric-sensitivity, framing-sensitivity and component studies (docs/METRICS.md "Rubric validators" and "Framing"). Each names the
// conditions it compares in the config (StudiesConfig).
#include <string>
#include <utility>
#include <vector>

#include "advplan/io/csv.hpp"
#include "advplan/stats/statistics.hpp"
#include "advplan/run/runner.hpp"

namespace advplan {

/// Runs the studies the config enables; returns files as ("studies/<name>.csv", content).
/// `rubric_records` holds the records the scenario evaluation collected.
std::vector<std::pair<std::string, std::string>> run_studies(const RunPlan& plan, const io::CsvTable& per_scenario,
                                                             const io::CsvTable& rubric_records,
                                                             const io::CsvTable* council_trace,
                                                             const BootstrapSettings& bs);

/// studies/rubric_sensitivity.csv from studies/rubric_records.csv: pairwise agreement of the three validators
/// (per scenario 1 - mean |v_a - v_b| over its records), their mean, and each validator's mean absolute
/// deviation from the base rubric, each with a bootstrap interval over scenarios.
io::CsvTable rubric_sensitivity_table(const io::CsvTable& records, const BootstrapSettings& bs);

/// studies/components.csv from per_scenario.csv and council_trace.csv (when present), comparing the conditions
/// `studies` names.
io::CsvTable components_table(const io::CsvTable& per_scenario, const io::CsvTable* council_trace,
                              const StudiesConfig& studies, const BootstrapSettings& bs);

struct FramingOutcome {
  std::vector<double> blue_quality, advantage;  ///< per scenario, corpus order
};
/// `blue`'s plan quality and its advantage against `red` for the corpus generated under (mode, framing); NaN
/// where `blue` makes no plan.
FramingOutcome framing_outcome(const RunPlan& plan, FramingMode mode, Framing framing, const BluePolicy& blue,
                               const RedPolicy& red);

}  // namespace advplan
