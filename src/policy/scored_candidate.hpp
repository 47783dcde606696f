#pragma once
// score_red_plan for a plan whose assets are already known to be valid (library internal; src/scenario/
// sampled_plan.hpp gives them for a sampled plan).
#include "advplan/policy/red_candidate.hpp"

namespace advplan::detail {

/// score_red_plan. With `valid_assets` (one per action, in action order) the plan is taken as valid for RED with
/// those assets, as accepts_resolving would find it, and is not validated again; without, it is validated. Without
/// `with_quality` only q.e of the quality is computed (the pressure's input; q.c, q.r and q.q are NaN) and neither
/// is the coherence.
RedCandidate score_red_plan_resolved(Plan plan, const Asset* const* valid_assets, const Scenario& sc,
                                     const std::array<double, kNumPressures>& blue_vulnerability,
                                     const QualityWeights& weights, int index, bool with_coherence,
                                     bool with_quality = true);

/// score_red_plan_resolved's scoring of a plan valid for RED with `assets` (one per action, in action order): c's
/// q, d, raw capability, pressure and categories, as that function sets them; c's index, plan and validity are
/// left as they are. `plan` need not be c.plan (a lean plan, src/scenario/sampled_plan.hpp, gives the same
/// pressure and e; only those are read without `with_quality`).
void score_valid_into(RedCandidate& c, const Plan& plan, const Asset* const* assets, const Scenario& sc,
                      const std::array<double, kNumPressures>& blue_vulnerability, const QualityWeights& weights,
                      bool with_coherence, bool with_quality);

}  // namespace advplan::detail
