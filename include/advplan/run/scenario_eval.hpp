#pragma once
// Evaluation of one scenario under every condition of a run: the rows it contributes to each trace file.
// Pure in (scenario, run plan): no shared state, so scenarios run in parallel and rows are collected by index.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "advplan/core/plan.hpp"
#include "advplan/core/scenario.hpp"
#include "advplan/metrics/coherence.hpp"
#include "advplan/run/runner.hpp"

namespace advplan {

using Row = std::vector<std::string>;

struct ScenarioOutcome {
  Row scenario_row;
  std::vector<Row> per_scenario;
  std::vector<Row> candidates;
  std::vector<std::string> candidate_plans;  ///< lines of candidate_plans.jsonl (when cfg.candidate_plans)
  std::vector<std::string> transcripts;      ///< lines of transcripts.jsonl (external policies' calls)
  std::vector<ModelUsage> usage;             ///< the external policies' calls, whatever traces.transcripts says
  std::vector<std::string> plans;            ///< lines of plans.jsonl (when the run writes it: records_plans)
  TraceRows extra;  ///< rows of the BLUE policies' extra trace files (PolicyInfo::traces), by file name
  std::size_t failed_rows = 0;
  bool produced_plan = false;  ///< some condition's BLUE policy produced a plan

  // What the run's observers read of the scenario (RunObserver::scenario); none of it is a trace.
  /// The plan each distinct BLUE policy made (nullopt: it failed), in the order the conditions first name them.
  std::vector<std::pair<std::string, std::optional<Plan>>> blue_plans;
  /// What one condition played.
  struct Played {
    const Condition* condition = nullptr;
    std::optional<CoherenceParts> blue_parts;  ///< the BLUE plan's coherence parts, when it made one
    std::optional<CoherenceParts> red_parts;   ///< the selected RED plan's, when the condition was played
    /// (BLUE plan quality q_B, BLUE advantage) when the condition was played to the end.
    std::optional<std::pair<double, double>> quality_advantage;
  };
  std::vector<Played> played;  ///< one per condition, in the run's order
};

ScenarioOutcome evaluate_scenario(const Scenario& sc, const RunPlan& plan);
/// The lines of plans.jsonl that evaluate_scenario writes for `sc` with traces.plans on, made again without playing
/// the wargame: each BLUE policy's plan from its stream, then each condition's RED response to it. The run's own
/// lines when its policies are all built in (deterministic from the streams): the report's plans for a run that
/// kept none (docs/REPORT.md).
std::vector<std::string> replay_plans(const Scenario& sc, const RunPlan& plan);

/// Whether some BLUE or RED policy of the run is external (PolicyInfo::external).
bool has_external_policy(const RunPlan& plan);
/// Whether the run writes plans.jsonl: traces.plans when set, else has_external_policy.
bool records_plans(const RunPlan& plan);

}  // namespace advplan
