#include "advplan/sim/wargame.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "advplan/core/random.hpp"
#include "core/det_math.hpp"
#include "sim/scaled_exp.hpp"

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
  // Replication r's stream gives its two normals, then (step_b, step_r) for t = 0, 1, ... Eight replications are
  // drawn in vector lanes (Rng::uniforms_x8, the same values as eight scalar streams), kChunk steps at a time into
  // a stack buffer (the lanes keep their place between chunks); a tail of fewer than eight draws one at a time.
  constexpr int kChunk = 64;
  double u[16 * kChunk];
  int r0 = 0;
  for (; r0 + 8 <= R; r0 += 8) {
    Rng lanes[8] = {Rng::keyed_at(prefix, static_cast<std::uint64_t>(r0)),
                    Rng::keyed_at(prefix, static_cast<std::uint64_t>(r0 + 1)),
                    Rng::keyed_at(prefix, static_cast<std::uint64_t>(r0 + 2)),
                    Rng::keyed_at(prefix, static_cast<std::uint64_t>(r0 + 3)),
                    Rng::keyed_at(prefix, static_cast<std::uint64_t>(r0 + 4)),
                    Rng::keyed_at(prefix, static_cast<std::uint64_t>(r0 + 5)),
                    Rng::keyed_at(prefix, static_cast<std::uint64_t>(r0 + 6)),
                    Rng::keyed_at(prefix, static_cast<std::uint64_t>(r0 + 7))};
    // Each lane's two normals: their uniforms drawn as Rng::normal draws them, transformed together
    // (det::box_muller_n, Rng::normal's bits).
    double u1[16], u2[16], z[16];
    for (int l = 0; l < 8; ++l) {
      lanes[l].normal_uniforms(u1[2 * l], u2[2 * l]);
      lanes[l].normal_uniforms(u1[2 * l + 1], u2[2 * l + 1]);
    }
    det::box_muller_n(u1, u2, 16, z);
    for (int l = 0; l < 8; ++l) {
      n.z(r0 + l, 0) = z[2 * l];
      n.z(r0 + l, 1) = z[2 * l + 1];
    }
    for (int t0 = 0; t0 < T; t0 += kChunk) {
      const int steps = std::min(kChunk, T - t0);
      Rng::uniforms_x8(lanes, 2 * static_cast<std::size_t>(steps), u);
      for (int k = 0; k < steps; ++k) {
        const double* ub = u + 16 * k;
        double* b = &n.step_b(r0, t0 + k);
        double* rr = &n.step_r(r0, t0 + k);
        for (int l = 0; l < 8; ++l) {
          b[l] = (2.0 * ub[l] - 1.0) * half_width;
          rr[l] = (2.0 * ub[8 + l] - 1.0) * half_width;
        }
      }
    }
  }
  for (int r = r0; r < R; ++r) {
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

namespace {

/// The engagements of replications 0..R-1, four at a time in GCC vector types: the four lanes of a block step
/// together, each frozen once it breaks, and the block ends when all four have. Two blocks are stepped in the
/// same loop, two independent dependency chains that hide each other's latency. A lane's arithmetic is that of
/// one replication alone (((dt * beta) * r) * max(1 + sn * u, 0), then max(b - db, 0), with std::max's
/// (x < 0 ? 0 : x)), each operation rounded on its own (-ffp-contract=off), so the values are the same bits as a
/// scalar loop's; a frozen lane no longer changes. The x86-64-v4 (AVX-512) and AVX2 clones (where the CPU has them)
/// hold a block in one register; the default clone in two.
using V4 = double __attribute__((vector_size(32)));
using M4 = long long __attribute__((vector_size(32)));

struct Block {
  int i0 = 0, lanes = 0;
  V4 dtb{}, dta{}, b{}, r{}, s{};
  M4 active{};
  bool live = false;
};

__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) void step_replications(
    const double* __restrict alpha, const double* __restrict beta, const double* __restrict step_b,
    const double* __restrict step_r, int R, int T, double bp, double dt, double sn, double* __restrict b_out,
    double* __restrict r_out, double* __restrict steps_out) {
  constexpr int L = 4;
  const V4 zero = {0, 0, 0, 0}, one = {1, 1, 1, 1}, vbp = {bp, bp, bp, bp}, vsn = {sn, sn, sn, sn};
  const double td = T;
  auto start = [&](Block& k, int i0) __attribute__((always_inline)) {
    k.i0 = i0;
    k.lanes = std::max(0, std::min(L, R - i0));
    k.dtb = k.dta = zero;
    k.active = M4{0, 0, 0, 0};
    for (int l = 0; l < k.lanes; ++l) {
      k.dtb[l] = dt * beta[i0 + l];
      k.dta[l] = dt * alpha[i0 + l];
      k.active[l] = -1;
    }
    k.b = k.r = one;
    k.s = V4{td, td, td, td};
    k.live = k.lanes > 0;
  };
  auto step = [&](Block& k, int t) __attribute__((always_inline)) {
    V4 ub = zero, ur = zero;
    const double* pb = step_b + static_cast<std::ptrdiff_t>(t) * R + k.i0;
    const double* pr = step_r + static_cast<std::ptrdiff_t>(t) * R + k.i0;
    if (k.lanes == L) {
      std::memcpy(&ub, pb, sizeof ub);
      std::memcpy(&ur, pr, sizeof ur);
    } else {
      for (int l = 0; l < k.lanes; ++l) {
        ub[l] = pb[l];
        ur[l] = pr[l];
      }
    }
    V4 mb = one + vsn * ub, mr = one + vsn * ur;
    mb = mb < zero ? zero : mb;
    mr = mr < zero ? zero : mr;
    const V4 db = k.dtb * k.r * mb, dr = k.dta * k.b * mr;
    V4 nb = k.b - db, nr = k.r - dr;
    nb = nb < zero ? zero : nb;
    nr = nr < zero ? zero : nr;
    const M4 broke = (nb < vbp) | (nr < vbp) | (nb <= zero) | (nr <= zero);
    k.b = k.active ? nb : k.b;
    k.r = k.active ? nr : k.r;
    const double t1 = t + 1;
    k.s = (k.active & broke) ? V4{t1, t1, t1, t1} : k.s;
    k.active = k.active & ~broke;
    k.live = (k.active[0] | k.active[1] | k.active[2] | k.active[3]) != 0;
  };
  auto finish = [&](const Block& k) {
    for (int l = 0; l < k.lanes; ++l) {
      b_out[k.i0 + l] = k.b[l];
      r_out[k.i0 + l] = k.r[l];
      steps_out[k.i0 + l] = k.s[l];
    }
  };
  Block x, y;
  for (int i0 = 0; i0 < R; i0 += 2 * L) {
    start(x, i0);
    start(y, i0 + L);
    for (int t = 0; t < T && (x.live || y.live); ++t) {
      if (x.live) step(x, t);
      if (y.live) step(y, t);
    }
    finish(x);
    finish(y);
  }
}

}  // namespace

namespace detail {

Eigen::ArrayXd scaled_exp(const Eigen::Ref<const Eigen::ArrayXd>& z, double s) {
  Eigen::ArrayXd x = s * z;
  det::packet_exp_inplace(x.data(), static_cast<std::size_t>(x.size()));
  return x;
}

void check_noise(const SimNoise& noise, const SimConfig& cfg, const char* who) {
  const int R = cfg.replications, T = cfg.time_limit;
  if (noise.z.rows() != R || noise.z.cols() != 2 || noise.step_b.rows() != R || noise.step_r.rows() != R ||
      noise.step_b.cols() != T || noise.step_r.cols() != T)
    throw std::invalid_argument(std::string(who) + ": noise was drawn for another simulator config");
}

ReplicationRates replication_rates(const Force& blue, const Force& red, const SimNoise& noise, const SimConfig& cfg) {
  const double pb = effective_power(blue), pr = effective_power(red);
  const double pbar = 0.5 * (pb + pr);
  // Square law dB/dt = -beta R, dR/dt = -alpha B, rates normalised by the mean power so engagements take a
  // comparable time whatever the scale of raw capability.
  const double alpha0 = pbar > 0 ? pb / pbar : 0.0, beta0 = pbar > 0 ? pr / pbar : 0.0;
  return {alpha0 * scaled_exp(noise.z.col(0), cfg.noise), beta0 * scaled_exp(noise.z.col(1), cfg.noise)};
}

}  // namespace detail

SimResult simulate(const Force& blue, const Force& red, const SimNoise& noise, const SimConfig& cfg) {
  const int R = cfg.replications, T = cfg.time_limit;
  detail::check_noise(noise, cfg, "simulate");
  const detail::ReplicationRates rates = detail::replication_rates(blue, red, noise, cfg);
  const Eigen::ArrayXd& alpha = rates.alpha;
  const Eigen::ArrayXd& beta = rates.beta;
  Eigen::ArrayXd b(R), r(R), steps(R);
  step_replications(alpha.data(), beta.data(), noise.step_b.data(), noise.step_r.data(), R, T, cfg.break_point,
                    cfg.dt, cfg.step_noise, b.data(), r.data(), steps.data());
  // BLUE wins when RED broke and BLUE did not, or when both stand (time limit) or both broke and BLUE holds the
  // larger remaining strength. Exact ties go to RED: BLUE has not achieved its objective.
  const double bp = cfg.break_point;
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
