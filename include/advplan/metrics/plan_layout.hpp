#pragma once
// A plan laid out for scoring: each action with its asset, its position along the chain and its expected-value
// weight. Chain actions have weight 1 and position = chain index; an action at step m of option k of a branch at
// chain index i has weight 1/(number of options) and position i + (m+1)/(len+1), so it falls between `at` and
// the rejoin step. Computed once per plan and shared by q and D.
#include <vector>

#include "advplan/core/plan.hpp"
#include "advplan/core/scenario.hpp"

namespace advplan {

struct PlacedAction {
  const Action* action = nullptr;
  const Asset* asset = nullptr;  ///< nullptr when the asset is unknown (invalid plan)
  double position = 0;
  double weight = 1;
  bool in_chain = true;
  int branch = -1;  ///< index into plan.branches, -1 for chain actions
  int option = -1;  ///< option index within the branch
};

/// Actions that are neither in the chain nor in an option are left out (an invalid plan has them).
/// The layout points into `plan` and `scenario`: both must outlive it.
std::vector<PlacedAction> layout_plan(const Plan& plan, const Scenario& scenario);
/// The same into `out` (cleared first), without allocating once `out` has the capacity.
void layout_plan_into(const Plan& plan, const Scenario& scenario, std::vector<PlacedAction>& out);

/// start-state proxies (paper): transit, deploy, marshal, prepare, assess, scan, recon.
bool is_start_verb(std::string_view verb);
/// end-state proxies (paper): return, withdraw, hold, evade, relocate, continue, support, mitigate.
bool is_end_verb(std::string_view verb);

}  // namespace advplan
