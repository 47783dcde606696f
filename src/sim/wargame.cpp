#include "advplan/sim/wargame.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "advplan/core/random.hpp"

namespace advplan {

double effective_power(const Force& f) { return f.raw * (0.5 + f.q) * (0.5 + f.D) * f.readiness; }

SimNoise draw_noise(std::uint64_t run_seed, std::string_view scenario_id, const SimConfig& cfg) {
  const int R = cfg.replications, T = cfg.time_limit;
  SimNoise n;
  n.z.resize(R, 2);
  n.step_b.resize(R, T);
  n.step_r.resize(R, T);
  const double half_width = std::sqrt(3.0);  // uniform on [-sqrt3, sqrt3] has variance 1
  const std::uint64_t prefix = Rng::key_prefix(run_seed, scenario_id, "sim");
  for (int r = 0; r < R; ++r) {
    Rng rng = Rng::keyed_at(prefix, static_cast<std::uint64_t>(r));
    n.z(r, 0) = rng.normal();
    n.z(r, 1) = rng.normal();
    for (int t = 0; t < T; ++t) {
      n.step_b(r, t) = (2.0 * rng.uniform() - 1.0) * half_width;
      n.step_r(r, t) = (2.0 * rng.uniform() - 1.0) * half_width;
    }
  }
  return n;
}

SimResult simulate(const Force& blue, const Force& red, const SimNoise& noise, const SimConfig& cfg) {
  const int R = cfg.replications, T = cfg.time_limit;
  if (noise.z.rows() != R || noise.z.cols() != 2 || noise.step_b.rows() != R || noise.step_r.rows() != R ||
      noise.step_b.cols() != T || noise.step_r.cols() != T)
    throw std::invalid_argument("simulate: noise was drawn for another simulator config");
  const double pb = effective_power(blue), pr = effective_power(red);
  const double pbar = 0.5 * (pb + pr);
  // Square law dB/dt = -beta R, dR/dt = -alpha B, rates normalised by the mean power so engagements take a
  // comparable time whatever the scale of raw capability.
  const double alpha0 = pbar > 0 ? pb / pbar : 0.0, beta0 = pbar > 0 ? pr / pbar : 0.0;
  const Eigen::ArrayXd alpha = alpha0 * (cfg.noise * noise.z.col(0)).exp();
  const Eigen::ArrayXd beta = beta0 * (cfg.noise * noise.z.col(1)).exp();
  Eigen::ArrayXd b(R), r(R), steps(R);
  const double bp = cfg.break_point, dt = cfg.dt, sn = cfg.step_noise;
  // Each replication is stepped on its own until it breaks: the arithmetic per step is that of the array form
  // (((dt * beta) * r) * max(1 + sn * noise, 0), then max(b - db, 0)), element by element, so the values are
  // the same bits; a stopped engagement no longer changes, so leaving its loop early changes nothing.
  for (int i = 0; i < R; ++i) {
    double bi = 1.0, ri = 1.0, si = T;
    const double dtb = dt * beta(i), dta = dt * alpha(i);
    for (int t = 0; t < T; ++t) {
      const double db = dtb * ri * std::max(1.0 + sn * noise.step_b(i, t), 0.0);
      const double dr = dta * bi * std::max(1.0 + sn * noise.step_r(i, t), 0.0);
      bi = std::max(bi - db, 0.0);
      ri = std::max(ri - dr, 0.0);
      if (bi < bp || ri < bp || bi <= 0 || ri <= 0) {
        si = t + 1;
        break;
      }
    }
    b(i) = bi;
    r(i) = ri;
    steps(i) = si;
  }
  // BLUE wins when RED broke and BLUE did not, or when both stand (time limit) or both broke and BLUE holds the
  // larger remaining strength. Exact ties go to RED: BLUE has not achieved its objective.
  int wins = 0;
  for (int i = 0; i < R; ++i) {
    const bool blue_broke = b(i) < bp || b(i) <= 0, red_broke = r(i) < bp || r(i) <= 0;
    if (red_broke && !blue_broke)
      ++wins;
    else if (blue_broke == red_broke && b(i) > r(i))
      ++wins;
  }
  SimResult res;
  res.win_rate = static_cast<double>(wins) / R;
  res.blue_final = b.mean();
  res.red_final = r.mean();
  res.mean_steps = steps.mean();
  return res;
}

}  // namespace advplan
