#pragma once
// Frontier quality indicators beyond the hypervolume (docs/METRICS.md "Frontier indicators"): exclusive hypervolume
// contributions, the additive epsilon-indicator, IGD+, exact 2-D attainment staircases and exact 2-D EAF
// differences. Same convention as metrics/frontier.hpp: every objective is MINIMISED, a point with a NaN
// coordinate takes no part.
#include <cstddef>
#include <span>
#include <vector>

#include "advplan/metrics/frontier.hpp"

namespace advplan {

/// Exclusive hypervolume contribution of each point: HV(S) − HV(S \ {i}) against `reference` (minimisation), 0 for
/// a point outside the reference box, with a NaN coordinate, or weakly dominated by another point (so two equal
/// points both get 0). Exact algorithms: in 2-D a sort (each front point's slab of the staircase minus the
/// staircase of the points inside it, O(N log N)); in 3-D and 4-D, vol([p_i, r]) − HV({max(p_i, p_j)}), the
/// hypervolume being pagmo2's exact one. Throws std::invalid_argument when the sizes disagree.
std::vector<double> hypervolume_contributions(const PointSet& points, std::span<const double> reference);
/// The 2-D routes, exposed for the tests: the sort (dim 2) and a plain O(N²) search for each point's slab and the
/// points inside it. They perform the same floating-point operations, so they agree bit for bit.
std::vector<double> hypervolume_contributions_2d(const PointSet& points, std::span<const double> reference);
std::vector<double> hypervolume_contributions_2d_plain(const PointSet& points, std::span<const double> reference);

/// Additive epsilon-indicator of A against the reference set R, minimisation:
///   I_eps+(A, R) = max_{r in R} min_{a in A} max_i (a_i − r_i),
/// the least eps by which A must be translated (every coordinate reduced by eps) to weakly dominate every r.
/// NaN when A or R has no finite point. Throws std::invalid_argument when the dimensions differ.
double epsilon_additive(const PointSet& a, const PointSet& r);
/// IGD+ (Ishibuchi et al. 2015), minimisation: the mean over r in R of min_{a in A} sqrt(sum_i max(a_i − r_i, 0)²).
/// NaN when A or R has no finite point. Throws std::invalid_argument when the dimensions differ.
double igd_plus(const PointSet& a, const PointSet& r);

/// The points of a set no other point dominates (rank 1), in their order, without repeats of an equal point.
PointSet nondominated_points(const PointSet& points);

/// The level-l attainment surface of n runs (2-D, minimisation) as a closed staircase from the upper bound of the
/// second objective to the upper bound of the first: (c_1.x, ymax), c_1, (c_2.x, c_1.y), c_2, …, c_m,
/// (xmax, c_m.y), where c_1…c_m are attainment_surface(runs, level). Empty when the surface is.
std::vector<Point2> attainment_staircase(std::span<const PointSet> runs, std::size_t level, double xmax, double ymax);

/// One rectangle of an exact EAF difference (2-D, minimisation): every z with x_lo <= z_1 < x_hi and
/// y_lo <= z_2 < y_hi is attained by exactly count_a of A's runs and count_b of B's.
struct EafRegion {
  double x_lo, x_hi, y_lo, y_hi;
  int count_a, count_b;
};
/// The exact EAF difference of runs A and B over the box [−inf, xmax) x [−inf, ymax): a partition, into maximal
/// column-merged rectangles, of the part of the box where count_a / |A| != count_b / |B| (elsewhere the
/// difference is 0). The counts are constant on the cells between consecutive distinct coordinates of the points;
/// each column [x_i, x_{i+1}) is split into y-intervals of constant counts, and a rectangle of one column is
/// continued into the next when the next has the same y-interval with the same counts. Sorted by x_lo, then y_lo.
/// Points at or beyond xmax or ymax take no part in the boxes they do not reach (they attain nothing inside).
std::vector<EafRegion> eaf_difference_regions(std::span<const PointSet> a, std::span<const PointSet> b, double xmax,
                                              double ymax);

}  // namespace advplan
