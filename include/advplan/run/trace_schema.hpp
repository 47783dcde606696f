#pragma once
// The columns of the run's own trace files, in one place (docs/TRACES.md describes each; a policy's or an
// analysis's files have their columns with it: PolicyInfo::traces, studies/studies.hpp). Writers and readers both use
// these lists, so a reader rejects a file whose columns are not the expected ones.
#include <string>
#include <vector>

namespace advplan::schema {

const std::vector<std::string>& scenarios();
const std::vector<std::string>& per_scenario();
const std::vector<std::string>& candidates();
const std::vector<std::string>& bootstrap_summary();
const std::vector<std::string>& budget_curve();
const std::vector<std::string>& terrain_summary();
/// geo_moves.csv (terrain: geo): one row per movement bound to a route or map tool call, per condition and side.
const std::vector<std::string>& geo_moves();

/// Metrics of per_scenario.csv summarised with bootstrap intervals in bootstrap_summary.csv.
const std::vector<std::string>& summarised_metrics();

}  // namespace advplan::schema
