#pragma once
// exp(s * z) for the simulator's per-replication rates (internal header).
#include <Eigen/Core>

namespace advplan::detail {

/// exp(s * z[i]) for every i, through det::packet_exp_inplace (src/core/det_math.hpp): Eigen's packet exp for
/// every element, the tail too, so the same bits on every CPU. tests/core/cross_cpu_test.cpp checks every element
/// against the packet function, for odd lengths too.
Eigen::ArrayXd scaled_exp(const Eigen::Ref<const Eigen::ArrayXd>& z, double s);

}  // namespace advplan::detail
