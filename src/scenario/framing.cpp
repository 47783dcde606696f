#include "advplan/scenario/framing.hpp"

#include <algorithm>

#include "advplan/core/random.hpp"
#include "advplan/scenario/plan_ops.hpp"

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
  for (std::size_t i = 0; i < s.blue_seed_plans.size(); ++i) {
    Plan& p = s.blue_seed_plans[i];
    Rng rng = Rng::keyed(s.seed, s.id, "framing-action", i);
    auto a = draw_action(s, Side::Blue, c, rng);
    if (!a) continue;  // no verb, or no BLUE asset can perform it: the framing adds nothing
    a->target = default_target(s);
    a->priority = 3;
    a->metadata["added_by"] = "framing";
    insert_action(p, s, std::move(*a), std::min<std::size_t>(1, p.chain.size()));
  }
}

Scenario reframe(Scenario base, const ScenarioTemplate& tpl, Framing framing, FramingMode mode) {
  base.framing = framing;
  if (mode == FramingMode::applied) {
    apply_framing_to_objective(base, tpl);
    apply_framing_to_plans(base, tpl);
  }
  return base;
}

}  // namespace advplan
