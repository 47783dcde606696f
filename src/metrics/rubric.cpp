#include "advplan/metrics/rubric.hpp"

#include <cmath>

namespace advplan {

const std::vector<RubricValidator>& rubric_validators() {
  // Order of weights: objective_clarity, information_preparation, resource_balance, sustainment,
  // risk_mitigation, tempo_sequencing. Each emphasis doubles the weight of the two sub-scores its reviewer
  // cares about most (docs/METRICS.md gives the reasons).
  static const std::vector<RubricValidator> v{
      {"base", {1, 1, 1, 1, 1, 1}},
      {"constraint", {2, 1, 1, 1, 1, 2}},
      {"logistics", {1, 1, 2, 2, 1, 1}},
      {"adversarial_review", {1, 2, 1, 1, 2, 1}},
  };
  return v;
}

double rubric_agreement(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || a.size() != b.size()) return std::nan("");
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += std::abs(a[i] - b[i]);
  return 1.0 - s / static_cast<double>(a.size());
}

}  // namespace advplan
