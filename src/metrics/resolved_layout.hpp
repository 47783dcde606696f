#pragma once
// The layout and the raw capability from assets already resolved (library internal; src/core/resolved_plan.hpp).
#include <vector>

#include "advplan/core/plan.hpp"
#include "advplan/core/scenario.hpp"
#include "advplan/metrics/plan_layout.hpp"

namespace advplan::detail {

/// layout_plan_into with each action's asset given (assets[i] for plan.actions[i]) instead of looked up. The plan
/// must be valid (as accepts_resolving or a sampled plan valid by construction has it): its ids are then unique,
/// and an action is looked for first where a sampled plan keeps it.
void layout_resolved_into(const Plan& plan, const Asset* const* assets, std::vector<PlacedAction>& out);

/// raw_capability(plan, sc) from the layout of a plan that places every action (every valid plan does): the same
/// distinct assets, summed in the same id order.
double raw_capability_of_layout(const std::vector<PlacedAction>& layout);

}  // namespace advplan::detail
