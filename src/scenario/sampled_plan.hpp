#pragma once
// A sampled plan with its actions' assets, as the sampler drew them (library internal; docs/DECISIONS.md "Speed").
// The RED candidate loop validates every sampled plan, and validation looks every action's asset up by id again;
// the sampler already holds each asset, and knows when its plan is valid by construction.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "advplan/scenario/plan_sampler.hpp"

namespace advplan::detail {

/// What the sampler looks up for every action, once per scenario and side: per category, the able assets
/// (able_assets) and their pick_asset weights, and available_categories. A batch of candidates of one scenario
/// shares one.
struct SamplerTables {
  std::array<bool, kNumCategories> available{};
  std::vector<const Asset*> able;  ///< category c's able assets are able[at[c]] .. able[at[c + 1] - 1]
  std::vector<double> weight;      ///< their weights, .2 + capability
  std::array<std::uint32_t, kNumCategories + 1> at{};
  /// Whether every asset of the scenario has its own id (asset_ids_unique).
  bool asset_ids_unique = false;
};
SamplerTables sampler_tables(const Scenario& sc, Side side);

/// sample_plan (the same draws, the same plan). With `tables` (sampler_tables of the same scenario and side) the
/// assets are drawn from them instead of by a scan of the scenario. With `assets`, writes each action's drawn asset into it, in action
/// order. With `by_construction`, sets it when the plan is valid for `side` by how it was drawn: a non-empty
/// objective and chain, and no empty branch option. Then, provided no two of the scenario's assets share an id
/// (asset_ids_unique), validate_plan finds nothing and accepts_resolving resolves the same assets.
Plan sample_plan_resolved(const Scenario& sc, Side side, Rng& rng, const SampleOptions& opts, std::string plan_id,
                          std::vector<const Asset*>* assets, bool* by_construction,
                          const SamplerTables* tables = nullptr);

/// The lean draw: sample_plan_resolved's draws (the same, in the same order) into a reused plan `p`, keeping only
/// what a layout, effectiveness and pressure read: the actions' ids, categories and priorities, the chain, and the
/// branches' steps and options, with p.side set; each action's drawn asset goes into `assets`. Every other field of
/// `p` is left as it was (empty in a plan only ever drawn into this way). `by_construction` is set as
/// sample_plan_resolved sets it; only then (and with asset_ids_unique) is the lean plan's layout, with `assets`,
/// the full plan's layout. The vectors keep their capacity, so a thread's scratch plan draws without allocating
/// but for a branch's options.
void sample_plan_lean(Plan& p, const Scenario& sc, Side side, Rng& rng, const SampleOptions& opts,
                      std::vector<const Asset*>& assets, bool& by_construction, const SamplerTables& tables);

/// Whether every asset of the scenario has its own id (so find_asset(a.id) is &a for each asset a).
bool asset_ids_unique(const Scenario& sc);

}  // namespace advplan::detail
