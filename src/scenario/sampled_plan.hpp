#pragma once
// A sampled plan with its actions' assets, as the sampler drew them (library internal; docs/DECISIONS.md "Speed").
// The RED candidate loop validates every sampled plan, and validation looks every action's asset up by id again;
// the sampler already holds each asset, and knows when its plan is valid by construction.
#include <string>
#include <vector>

#include "advplan/scenario/plan_sampler.hpp"

namespace advplan::detail {

/// sample_plan (the same draws, the same plan). With `assets`, writes each action's drawn asset into it, in action
/// order. With `by_construction`, sets it when the plan is valid for `side` by how it was drawn: a non-empty
/// objective and chain, and no empty branch option. Then, provided no two of the scenario's assets share an id
/// (asset_ids_unique), validate_plan finds nothing and accepts_resolving resolves the same assets.
Plan sample_plan_resolved(const Scenario& sc, Side side, Rng& rng, const SampleOptions& opts, const std::string& plan_id,
                          std::vector<const Asset*>* assets, bool* by_construction);

/// Whether every asset of the scenario has its own id (so find_asset(a.id) is &a for each asset a).
bool asset_ids_unique(const Scenario& sc);

}  // namespace advplan::detail
