#include "advplan/scenario/framing.hpp"

#include "advplan/core/random.hpp"
#include "advplan/scenario/plan_sampler.hpp"

namespace advplan {

void apply_framing_to_objective(Scenario& s, const ScenarioTemplate& tpl) {
  const auto& effect = tpl.framing_effects[static_cast<std::size_t>(s.framing)];
  if (!effect.objective_suffix.empty()) s.blue_objective += " " + effect.objective_suffix;
}

void apply_framing_to_plans(Scenario& s, const ScenarioTemplate& tpl) {
  const auto& effect = tpl.framing_effects[static_cast<std::size_t>(s.framing)];
  for (auto& p : s.blue_seed_plans) p.objective = s.blue_objective;
  if (!effect.added_category) return;
  const Category c = *effect.added_category;
  if (s.verbs[index(c)].empty()) return;
  for (std::size_t i = 0; i < s.blue_seed_plans.size(); ++i) {
    Plan& p = s.blue_seed_plans[i];
    Rng rng = Rng::keyed(s.seed, s.id, "framing-action", i);
    const Asset* asset = pick_asset(s, Side::Blue, c, rng);
    if (!asset) continue;  // no BLUE asset can perform it: the framing adds nothing
    Action a;
    a.id = next_action_id(p);
    a.asset = asset->id;
    a.category = c;
    const auto& verbs = s.verbs[index(c)];
    a.verb = verbs[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(verbs.size()) - 1))];
    a.target = s.places.empty() ? "" : s.places.front();
    a.priority = 3;
    a.metadata["added_by"] = "framing";
    const auto pos = std::min<std::size_t>(1, p.chain.size());
    p.chain.insert(p.chain.begin() + static_cast<std::ptrdiff_t>(pos), a.id);
    p.roles[asset->id] = asset->role;
    p.actions.push_back(std::move(a));
  }
}

}  // namespace advplan
