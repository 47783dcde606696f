#pragma once
// Candidate-set diagnostics (docs/METRICS.md "Selectors and candidate diagnostics"). Free functions over plain
// values. Convention: q and D are both maximised. NaN-safe: a NaN score never wins and never dominates.
#include <array>
#include <span>
#include <vector>

#include "advplan/core/vocabulary.hpp"

namespace advplan {

/// c_q = argmax q; ties to the lowest index; -1 for an empty set.
int select_quality_greedy(std::span<const double> q);
/// c_D = argmax lambda*q + (1-lambda)*D; ties to the lowest index; -1 for an empty set.
int select_constraint_aware(std::span<const double> q, std::span<const double> D, double lambda);
/// c_p = argmax pressure magnitude (the council's critique among the RED responses); ties to the lowest index;
/// -1 for an empty set.
int select_highest_pressure(std::span<const double> pressure);

/// Flags of candidates not dominated on (q, D): j dominates i when q_j >= q_i and D_j >= D_i with one strict.
std::vector<bool> pareto_front(std::span<const double> q, std::span<const double> D);
std::size_t pareto_count(std::span<const double> q, std::span<const double> D);

using CategorySet = std::array<bool, kNumCategories>;
/// Jaccard distance 1 - |A∩B|/|A∪B|; 0 when both are empty.
double jaccard_distance(const CategorySet& a, const CategorySet& b);
/// Mean pairwise Jaccard distance; 0 for fewer than two sets.
double action_type_diversity(std::span<const CategorySet> sets);
/// max q - min q; 0 for an empty set.
double quality_spread(std::span<const double> q);

}  // namespace advplan
