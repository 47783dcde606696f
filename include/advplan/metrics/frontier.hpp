#pragma once
// Candidate-set diagnostics (docs/METRICS.md "Selectors and candidate diagnostics"). Free functions over plain
// values. Convention: q and D are both maximised. NaN-safe: a NaN score never wins and never dominates.
#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
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

// ---- Multi-objective analysis (docs/METRICS.md "Pareto frontier analysis"). Convention below: every objective is
// MINIMISED (pagmo2's convention); callers flip the sign of, or complement, maximised objectives. A point with a NaN
// coordinate takes no part: it gets rank 0 and adds no volume.

/// A point set: n points of `dim` coordinates, stored row-major (point i is v[i*dim .. i*dim+dim)).
struct PointSet {
  std::size_t dim = 2;
  std::vector<double> v;
  std::size_t size() const { return dim == 0 ? 0 : v.size() / dim; }
  double at(std::size_t i, std::size_t j) const { return v[i * dim + j]; }
  void add(std::span<const double> p) { v.insert(v.end(), p.begin(), p.end()); }
};

/// Non-domination ranks, minimisation: rank 1 for the points no other point dominates, rank r+1 for the points
/// only points of ranks <= r dominate. j dominates i when f_j <= f_i in every objective and f_j != f_i. Equal
/// points share a rank. NaN points get 0. Two objectives: an O(N log N) sweep; more: pagmo2's
/// fast_non_dominated_sorting (O(M N^2)).
std::vector<int> nondominated_ranks(const PointSet& points);
/// The two routes, exposed for the tests and the benchmark: the 2-D sweep (dim must be 2) and pagmo2 (any dim).
std::vector<int> nondominated_ranks_2d(const PointSet& points);
std::vector<int> nondominated_ranks_pagmo(const PointSet& points);

/// Exact hypervolume (pagmo2's `hypervolume`: hv2d, hv3d, WFG beyond) of the region the points dominate and
/// `reference` bounds, minimisation. Points not strictly better than the reference in every objective add no
/// volume and are left out; an empty set has volume 0. Throws std::invalid_argument when the sizes disagree.
double hypervolume(const PointSet& points, std::span<const double> reference);

/// Empirical attainment in two objectives (minimisation) over n runs, each a point set of dim 2. A run attains
/// z when one of its points weakly dominates z (x <= z in both objectives).
using Point2 = std::array<double, 2>;
/// The level-l attainment surface (1 <= l <= n): the minimal points of {z : at least l runs attain z}, sorted by
/// the first objective ascending (the second then descends). Empty when fewer than l runs have a point.
std::vector<Point2> attainment_surface(std::span<const PointSet> runs, std::size_t level);
/// Runs attaining each grid point (xs[i], ys[j]), row-major over i then j. xs need not be sorted.
std::vector<int> attainment_counts(std::span<const PointSet> runs, std::span<const double> xs,
                                   std::span<const double> ys);
/// The level for attainment share t in (0, 1] over n runs: ceil(t n), at least 1 (10% of 150 runs: 15).
std::size_t attainment_level(double t, std::size_t n);

/// A category set as written in candidates.csv: the category names in vocabulary order joined by '|', "none"
/// when empty. parse_category_set reads it back; nullopt on an unknown name.
std::string format_category_set(const CategorySet& s);
std::optional<CategorySet> parse_category_set(std::string_view text);

}  // namespace advplan
