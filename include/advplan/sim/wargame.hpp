#pragma once
// Stylised stochastic wargame (docs/METRICS.md "Wargame simulator"). Each side's effective power grows with raw
// asset capability, quality q and coherence D; strengths follow a stochastic Lanchester square law with a
// break point and a time limit. Replication r of a scenario uses the same noise in every condition (common
// random numbers): draw the noise once per scenario with draw_noise and reuse it. The R replications advance
// together as Eigen arrays.
#include <Eigen/Core>
#include <cstdint>
#include <string_view>

#include "advplan/sim/sim_config.hpp"

namespace advplan {

struct Force {
  double raw = 0;  ///< raw capability: sum of the capabilities of the distinct assets the plan uses
  double q = 0;    ///< quality
  double D = 0;    ///< coherence
  /// Map hook (terrain: geo, docs/METRICS.md "Geospatial terms"): the share of the force that arrives in time,
  /// in (0, 1]. Exactly 1 without a map, so P is unchanged.
  double readiness = 1.0;
};

/// P = raw * (.5 + q) * (.5 + D) * readiness
double effective_power(const Force& f);

/// Per-replication noise: z (R x 2 standard normals, one per side) and per-step noise u (R x T, per side),
/// uniform with mean 0 and variance 1.
struct SimNoise {
  Eigen::ArrayXXd z;       ///< R x 2
  Eigen::ArrayXXd step_b;  ///< R x T, column-major: one step of consecutive replications is contiguous
  Eigen::ArrayXXd step_r;  ///< R x T
};
SimNoise draw_noise(std::uint64_t run_seed, std::string_view scenario_id, const SimConfig& cfg);

struct SimResult {
  double win_rate = 0;           ///< share of replications BLUE won
  double blue_final = 0;         ///< mean final BLUE strength (share of initial)
  double red_final = 0;          ///< mean final RED strength
  double mean_steps = 0;         ///< mean steps until the engagement ended
};

/// Runs cfg.replications engagements. Throws std::invalid_argument when noise does not match cfg.
SimResult simulate(const Force& blue, const Force& red, const SimNoise& noise, const SimConfig& cfg);

}  // namespace advplan
