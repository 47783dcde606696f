#pragma once
// Evaluation of one scenario under every condition of a run: the rows it contributes to each trace file.
// Pure in (scenario, run plan): no shared state, so scenarios run in parallel and rows are collected by index.
#include <string>
#include <vector>

#include "advplan/core/scenario.hpp"
#include "advplan/run/runner.hpp"

namespace advplan {

using Row = std::vector<std::string>;

struct ScenarioOutcome {
  Row scenario_row;
  std::vector<Row> per_scenario;
  std::vector<Row> candidates;
  std::vector<std::string> candidate_plans;  ///< lines of candidate_plans.jsonl (when cfg.candidate_plans)
  TraceRows extra;  ///< rows of the BLUE policies' extra trace files (PolicyInfo::traces), by file name
  std::vector<Row> rubric_records;
  std::size_t failed_rows = 0;
  bool produced_plan = false;  ///< some condition's BLUE policy produced a plan
};

ScenarioOutcome evaluate_scenario(const Scenario& sc, const RunPlan& plan);

}  // namespace advplan
