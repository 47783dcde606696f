#pragma once
// Framing (paper: framing-sensitivity test). Under FramingMode::metadata the framing is stored and never used,
// the paper's original behaviour. Under FramingMode::applied it changes the BLUE objective text and, where the
// template's effect names an added_category (BLUE-favourable framing), adds one action of that category to each
// BLUE seed plan.
#include "advplan/core/scenario.hpp"
#include "advplan/scenario/generator.hpp"
#include "advplan/scenario/scenario_template.hpp"

namespace advplan {

/// Appends the framing's objective suffix to the BLUE objective.
void apply_framing_to_objective(Scenario& s, const ScenarioTemplate& tpl);
/// Adds the framing's action (if any) to every BLUE seed plan, right after the first chain step, drawn from
/// the scenario's own "framing-action" stream. The plans stay valid.
void apply_framing_to_plans(Scenario& s, const ScenarioTemplate& tpl);
/// The scenario generate_scenario(tpl, seed, {mode, framing}) gives, from `base` = generate_scenario(tpl, seed,
/// {FramingMode::metadata, any framing}): the framing has its own stream and, applied, changes only the objective
/// and the seed plans afterwards, so a study of several framings generates each scenario once.
Scenario reframe(Scenario base, const ScenarioTemplate& tpl, Framing framing, FramingMode mode);

}  // namespace advplan
