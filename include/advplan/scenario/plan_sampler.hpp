#pragma once
// Samples a plan for one side from a scenario: chain, conditional branches and role assignments. Used for the
// BLUE seed plans and for RED response candidates, so both come from the same distributions. Actions are
// drawn and added with the plan operations of plan_ops.hpp.
#include <string>

#include "advplan/core/plan.hpp"
#include "advplan/core/random.hpp"
#include "advplan/core/scenario.hpp"
#include "advplan/scenario/scenario_template.hpp"

namespace advplan {

struct SampleOptions {
  PlanShape shape;
  std::vector<BranchKind> branch_kinds;
  /// Per-plan log-normal jitter of the category weights; larger values give more varied plans.
  double weight_jitter = 0.35;
  /// Multiplies each category's weight (RED candidates lean towards what the BLUE plan leaves uncovered).
  std::array<double, kNumCategories> category_bias{1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
};

/// A valid plan for `side` (validate_plan returns no violation) drawn from `rng`.
Plan sample_plan(const Scenario& scenario, Side side, Rng& rng, const SampleOptions& opts, const std::string& plan_id);

}  // namespace advplan
