#pragma once
// exp(s * z) for the simulator's per-replication rates (internal header).
#include <Eigen/Core>

namespace advplan::detail {

/// exp(s * z[i]) for every i, each through Eigen's vectorised exp: its own polynomial in packets of two doubles,
/// compiled once for baseline x86-64 (SSE2), so the same bits on every CPU. Eigen's x.exp() evaluates an element
/// past the last whole packet with the C library's exp instead, whose FMA and SSE2 builds can differ in the last
/// bit; the length is therefore padded to whole packets, and the packets go through Eigen's packet exp directly.
/// tests/cross_cpu_test.cpp checks every element against the packet function, for odd lengths too.
Eigen::ArrayXd scaled_exp(const Eigen::Ref<const Eigen::ArrayXd>& z, double s);

}  // namespace advplan::detail
