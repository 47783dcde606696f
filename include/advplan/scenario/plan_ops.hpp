#pragma once
// Plan operations: the one place where an action is drawn and put into a plan. The plan sampler, the framing,
// the council's operators and the offline LLM client all edit plans through these, so an added action always
// has a free id, an asset of the scenario able to perform its category, a verb of that category, and its
// asset's role in the plan's roles.
#include <algorithm>
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "advplan/core/plan.hpp"
#include "advplan/core/random.hpp"
#include "advplan/core/scenario.hpp"

namespace advplan {

/// Whether `a` is of `side` and lists `category`: an asset able to perform it.
inline bool is_able(const Asset& a, Side side, Category category) {
  return a.side == side && std::find(a.categories.begin(), a.categories.end(), category) != a.categories.end();
}
/// An able asset's weight in pick_asset's draw: .2 + capability.
inline double pick_weight(const Asset& a) { return 0.2 + a.capability; }
/// Assets of `side` that list `category`, in scenario order.
std::vector<const Asset*> able_assets(const Scenario& sc, Side side, Category category);
/// Categories `side` can act in: some asset of the side lists it and the scenario has verbs for it.
std::array<bool, kNumCategories> available_categories(const Scenario& sc, Side side);

/// An able asset, drawn with weight .2 + capability (one weighted_index draw); nullptr, with no draw, when none.
const Asset* pick_asset(const Scenario& sc, Side side, Category category, Rng& rng);
/// A verb of `category`, drawn uniformly (one Rng::pick). The category must have verbs.
const std::string& pick_verb(const Scenario& sc, Category category, Rng& rng);
/// The target an action gets when nothing else decides it: the scenario's first place, or "" when it has none.
std::string default_target(const Scenario& sc);

/// A new action of `category`: a drawn asset (pick_asset), then a drawn verb (pick_verb), or `verb` without a
/// draw when it is given. No id, no target, priority 3. nullopt with no draw when the category has no verbs or
/// `verb` is not one of them; nullopt after the asset draw when no asset of `side` can perform the category.
/// When `drawn` is given, it receives the drawn asset (nullptr when there is no action).
std::optional<Action> draw_action(const Scenario& sc, Side side, Category category, Rng& rng,
                                  std::string_view verb = {}, const Asset** drawn = nullptr);

/// Next free action id "a<N>", trying N = number of actions + 1 upwards.
std::string next_action_id(const Plan& plan);

/// A chain position meaning "after the last step".
inline constexpr std::size_t kChainEnd = static_cast<std::size_t>(-1);
/// Adds `action` to the plan under the next free id, records its asset's role (the asset must be one of the
/// scenario's), and puts it into the chain before step `chain_pos` (positions past the end append). Branches
/// name their branch point by step id, so every branch stays attached to the same step. Returns the added
/// action, valid until the plan's actions change again.
Action& insert_action(Plan& plan, const Scenario& sc, Action action, std::size_t chain_pos = kChainEnd);
/// Adds `action` to the plan under the next free id and records its asset's role, outside the chain (a step
/// of a branch option, which the caller lists in the branch). Returns the added action, as insert_action.
Action& add_option_action(Plan& plan, const Scenario& sc, Action action);
/// add_option_action for a plan that has gained actions only through this function since it was empty (the plan
/// sampler's): the next free id is then always "a<number of actions + 1>", found without a search, and `asset` is
/// the action's asset, already resolved (from draw_action), so there is no lookup either.
Action& append_new_action(Plan& plan, const Asset& asset, Action&& action);

}  // namespace advplan
