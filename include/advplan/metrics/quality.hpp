#pragma once
// Synthetic quality q (paper "synthetic quality score"; docs/METRICS.md "Quality q"):
//   q = w_e * e + w_c * (1 - c) + w_r * (1 - r),   defaults w_e = .5, w_c = .3, w_r = .2.
// Sub-formulas in docs/METRICS.md.
#include <span>
#include <vector>

#include "advplan/core/plan.hpp"
#include "advplan/core/scenario.hpp"
#include "advplan/metrics/plan_layout.hpp"

namespace advplan {

struct QualityWeights {
  double effectiveness = 0.5;  // w_e
  double cost = 0.3;           // w_c
  double risk = 0.2;           // w_r
};

struct QualityParts {
  double e = 0;  ///< effectiveness in [0,1]
  double c = 0;  ///< cost in [0,1]
  double r = 0;  ///< risk in [0,1]
  double q = 0;  ///< quality in [0,1]
};

/// e: sum over categories of min(w_cat, supply_cat / S), S = the side's effort scale.
double effectiveness(const std::vector<PlacedAction>& layout, const Scenario& sc, Side side);
/// c: min(1, expected spend / budget).
double cost(const std::vector<PlacedAction>& layout, const Scenario& sc, Side side);
/// Raw capability: the sum of the capabilities of the distinct assets a plan uses (in asset-id order), the
/// simulator's force before q and D scale it (docs/METRICS.md).
double raw_capability(const Plan& plan, const Scenario& sc);
/// Coverage in [0,1] of each action by earlier protection or deception actions (same target or asset: 1
/// each, otherwise .5 each, capped at 1).
std::vector<double> coverage(const std::vector<PlacedAction>& layout);
/// The same into `out` (resized), without allocating once `out` has the capacity.
void coverage_into(const std::vector<PlacedAction>& layout, std::vector<double>& out);
/// Exposure of an action of category c: min(1, base exposure of c * terrain exposure).
double exposure(Category c, const Scenario& sc);
double exposure(const PlacedAction& a, const Scenario& sc);
/// An action is exposed when its exposure is at least this: the coherence rubric's risk_mitigation averages
/// over exposed actions, and the council puts protection and deception before the first exposed step.
inline constexpr double kExposedThreshold = 0.5;
inline bool is_exposed(Category c, const Scenario& sc) { return exposure(c, sc) >= kExposedThreshold; }
/// r: weighted mean of exposure * (1 - .7 * coverage).
double risk(const std::vector<PlacedAction>& layout, const Scenario& sc);
/// The same with the layout's coverage already computed (coverage_into), so q and D share one computation.
double risk(const std::vector<PlacedAction>& layout, const Scenario& sc, std::span<const double> cov);

QualityParts quality(const Plan& plan, const Scenario& sc, const QualityWeights& w = {});
QualityParts quality(const std::vector<PlacedAction>& layout, const Scenario& sc, Side side, const QualityWeights& w = {});
/// The same with the layout's coverage (coverage_into) given.
QualityParts quality(const std::vector<PlacedAction>& layout, const Scenario& sc, Side side, const QualityWeights& w,
                     std::span<const double> cov);

}  // namespace advplan
