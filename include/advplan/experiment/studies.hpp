#pragma once
// The rubric-sensitivity, framing-sensitivity and component studies (DESIGN.md §3 "Studies").
#include <string>
#include <utility>
#include <vector>

#include "advplan/experiment/analysis.hpp"
#include "advplan/experiment/runner.hpp"

namespace advplan {

/// Runs the studies the config enables; returns files as ("studies/<name>.csv", content).
/// `rubric_records` holds the records the scenario evaluation collected.
std::vector<std::pair<std::string, std::string>> run_studies(const RunPlan& plan, const std::vector<Scenario>& corpus,
                                                             const io::CsvTable& per_scenario,
                                                             const io::CsvTable& rubric_records,
                                                             const BootstrapSettings& bs, const RunOptions& opts);

}  // namespace advplan
