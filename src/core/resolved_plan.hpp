#pragma once
// One pass of asset lookups for a RED candidate (library internal; docs/DECISIONS.md "Speed"). Validation resolves
// every action's asset by id; the layout and the raw capability looked the same ids up again. score_red_plan keeps
// validation's answers and hands them on (src/metrics/resolved_layout.hpp takes them). Each function gives what its
// public counterpart gives.
#include <optional>

#include "advplan/core/plan.hpp"
#include "advplan/core/scenario.hpp"

namespace advplan::detail {

/// validate_plan's fast acceptance check (true means validate_plan finds nothing); when it accepts, assets[i] is
/// sc.find_asset(plan.actions[i].asset) for every action. `assets` holds plan.actions.size() entries.
bool accepts_resolving(const Plan& plan, const Scenario& sc, std::optional<Side> expected_side, const Asset** assets);

}  // namespace advplan::detail
