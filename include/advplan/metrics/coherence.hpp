#pragma once
// Constraint coherence D (paper: "constraint-coherence score" and "constraint-inspired alignment score"):
// the mean of six sub-scores in [0,1]. Each sub-score is kept so rubric validators can reweight them.
#include <array>

#include <span>
#include <vector>

#include "advplan/core/plan.hpp"
#include "advplan/core/scenario.hpp"
#include "advplan/metrics/plan_layout.hpp"

namespace advplan {

enum class CoherencePart {
  objective_clarity,
  information_preparation,
  resource_balance,
  sustainment,
  risk_mitigation,
  tempo_sequencing
};
inline constexpr std::size_t kNumCoherenceParts = 6;
std::string_view to_string(CoherencePart p);

struct CoherenceParts {
  std::array<double, kNumCoherenceParts> part{};
  double D = 0;  ///< mean of the six parts
  double operator[](CoherencePart p) const { return part[static_cast<std::size_t>(p)]; }
};

CoherenceParts coherence(const Plan& plan, const Scenario& sc);
CoherenceParts coherence(const Plan& plan, const std::vector<PlacedAction>& layout, const Scenario& sc);
/// The same with the layout's coverage (coverage_into) given, as quality's overload takes it.
CoherenceParts coherence(const Plan& plan, const std::vector<PlacedAction>& layout, const Scenario& sc,
                         std::span<const double> cov);

/// Weighted mean of the sub-scores (weights >= 0, not all 0); the base rubric D is equal weights.
double weighted_coherence(const CoherenceParts& parts, const std::array<double, kNumCoherenceParts>& weights);

}  // namespace advplan
