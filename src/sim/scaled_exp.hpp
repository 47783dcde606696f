#pragma once
// exp(s * z) for the simulator's per-replication rates (internal header).
#include <Eigen/Core>

#include "advplan/sim/sim_config.hpp"
#include "advplan/sim/wargame.hpp"

namespace advplan::detail {

/// exp(s * z[i]) for every i, through det::packet_exp_inplace (src/core/det_math.hpp): Eigen's packet exp for
/// every element, the tail too, so the same bits on every CPU. tests/core/cross_cpu_test.cpp checks every element
/// against the packet function, for odd lengths too.
Eigen::ArrayXd scaled_exp(const Eigen::Ref<const Eigen::ArrayXd>& z, double s);

/// The square law's per-replication rates (docs/METRICS.md "Wargame simulator"): alpha_r = (P_B / P̄) exp(σ z_{r,B})
/// and beta_r = (P_R / P̄) exp(σ z_{r,R}), P the effective powers and P̄ their mean; the Lanchester and the
/// engagement models take them from here, so both play the same rates bit for bit.
struct ReplicationRates {
  Eigen::ArrayXd alpha, beta;
};
ReplicationRates replication_rates(const Force& blue, const Force& red, const SimNoise& noise, const SimConfig& cfg);
/// Throws std::invalid_argument naming `who` when `noise` was drawn for another simulator config.
void check_noise(const SimNoise& noise, const SimConfig& cfg, const char* who);

}  // namespace advplan::detail
