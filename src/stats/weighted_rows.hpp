#pragma once
// Internal (not installed): the count-weighted row sums behind the joint bootstrap and the rubric layer's
// replicates.
#include <cstddef>
#include <cstdint>

#include "advplan/core/random.hpp"

namespace advplan::detail {

/// resample_counts for four streams at once: counts[l][0..n) gets lanes[l]'s n draws, exactly as
/// resample_counts(lanes[l], ...) would (the same draws in the same order, each lane left where it would be). The
/// lanes' draws are interleaved, so their four xoshiro dependency chains overlap.
void resample_counts_x4(Rng (&lanes)[4], std::uint32_t* const (&counts)[4], std::size_t n);

/// sums[u] += counts[s] * x[s * stride + u] over the rows s with a nonzero count, in row order, for u < stride (a
/// multiple of 4). Each column's sum takes the same operations in the same order on every CPU (the vector clones
/// and the baseline one give the same bits). A row that leaves a column alone holds +0.0 there: for a sum that
/// starts at +0.0, adding w * +0.0 changes no bit, so such a row is the same as one that skips the column.
void add_weighted_rows(const std::uint32_t* counts, const double* x, std::size_t n, std::size_t stride, double* sums);

}  // namespace advplan::detail
