#pragma once
// Structure diagnostics, exactly as the paper states them (docs/METRICS.md).
#include "advplan/core/plan.hpp"

namespace advplan {

/// O: (chain steps that are the `at` of at least one branch) / (chain steps); 0 for an empty chain.
double path_optionality(const Plan& plan);
/// P_V: unique (asset, verb, category) signatures / all action events (chain and branch actions);
/// 1 for a plan with no events.
double vertex_parsimony(const Plan& plan);
/// W: assets used whose actions include a start verb and an end verb / assets used; 0 when none used.
double worldline_completion(const Plan& plan);

struct StructureParts {
  double O = 0, P_V = 0, W = 0;
};
StructureParts structure(const Plan& plan);

}  // namespace advplan
