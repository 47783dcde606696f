#pragma once
// RED pressure (docs/METRICS.md "RED candidates and pressure"). A RED plan's effort share per pressure category comes from the
// categories of its actions (pressure_of in vocabulary.hpp); BLUE's vulnerability to a pressure falls with the
// actions of its counter category (kPressureTable in vocabulary.hpp). Formulas in docs/METRICS.md.
#include <array>

#include "advplan/core/plan.hpp"
#include "advplan/core/scenario.hpp"
#include "advplan/metrics/plan_layout.hpp"

namespace advplan {

/// s_p: share of the plan's effort (weight * capability * priority/5) in actions exerting pressure p.
std::array<double, kNumPressures> pressure_shares(const std::vector<PlacedAction>& red_layout);
/// Dominant pressure: argmax of s_p (ties to the lower category), direct when the plan exerts none.
Pressure dominant_pressure(const std::array<double, kNumPressures>& shares);
/// v_p(B) = 1 / (1 + n_p), n_p = expected number of B's actions in p's counter category.
std::array<double, kNumPressures> vulnerability(const std::vector<PlacedAction>& blue_layout);

struct PressureResult {
  Pressure category = Pressure::direct;
  double magnitude = 0;  ///< (.5 + .5 e(R)) * sum_p s_p(R) v_p(B), in [0,1]
};
PressureResult pressure(const std::array<double, kNumPressures>& red_shares, double red_effectiveness,
                        const std::array<double, kNumPressures>& blue_vulnerability);

}  // namespace advplan
