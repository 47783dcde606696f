#pragma once
// Rubric-sensitivity validators (paper: "three independent deterministic validators representing constraint,
// logistics, and adversarial-review emphases"). Each reweights the six coherence sub-scores; the weights and the
// reason for each are in docs/METRICS.md.
#include <array>
#include <string>
#include <vector>

#include "advplan/metrics/coherence.hpp"

namespace advplan {

struct RubricValidator {
  std::string name;
  std::array<double, kNumCoherenceParts> weights;  ///< objective, information, balance, sustainment, risk, tempo
};

/// base (equal weights: D itself), then constraint, logistics, adversarial_review.
const std::vector<RubricValidator>& rubric_validators();

/// Agreement of two validators over records: 1 - mean |v_i - v_j|.
double rubric_agreement(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace advplan
