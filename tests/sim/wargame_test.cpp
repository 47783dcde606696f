// The wargame simulator (docs/METRICS.md "Wargame simulator"; src/sim/wargame.cpp) against the closed form of the
// deterministic Lanchester square law, and its common-random-numbers and monotonicity contracts.
//
// Closed form. With noise 0 the rates are alpha = P_B / Pbar and beta = P_R / Pbar (Pbar = (P_B + P_R) / 2),
//   dB/dt = -beta R,  dR/dt = -alpha B,  B(0) = R(0) = 1,
// which conserves I = alpha B^2 - beta R^2 = alpha - beta. When alpha > beta RED is annihilated at
//   t* = atanh(sqrt(beta / alpha)) / sqrt(alpha beta)       (R(t) = cosh(kt) - sqrt(alpha/beta) sinh(kt))
// with BLUE left at B* = sqrt(1 - beta / alpha).
//
// Euler error bound. The simulator's explicit step b' = b - dt beta r, r' = r - dt alpha b maps I to
// I (1 - alpha beta dt^2) exactly, so after N steps alpha b^2 = (alpha - beta)(1 - alpha beta dt^2)^N
// + beta r^2; the final clamp of r at 0 adds at most beta (dt alpha b)^2, and the break point 1e-6 leaves at
// most beta 1e-12. Hence B* (1 - N alpha beta dt^2) - 1e-9 <= b_N <= B* + alpha beta dt^2 / B* + 1e-9, and the
// test asserts |b_N - B*| <= B* N alpha beta dt^2 + alpha beta dt^2 / B* + 1e-9 with N the simulator's steps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <stdexcept>

#include "advplan/core/random.hpp"
#include "advplan/sim/wargame.hpp"
#include "sim/scaled_exp.hpp"

namespace advplan {
namespace {

SimConfig deterministic(double dt, int time_limit, int replications = 8) {
  SimConfig s;
  s.replications = replications;
  s.break_point = 1e-6;
  s.time_limit = time_limit;
  s.dt = dt;
  s.noise = 0;
  s.step_noise = 0;
  return s;
}

TEST(EffectivePower, Formula) {
  // P = raw (.5 + q)(.5 + D)
  EXPECT_DOUBLE_EQ(effective_power({2.0, 0.5, 0.25}), 2.0 * 1.0 * 0.75);
  EXPECT_DOUBLE_EQ(effective_power({3.0, 0.0, 0.0}), 0.75);
  EXPECT_DOUBLE_EQ(effective_power({1.0, 1.0, 1.0}), 2.25);
  EXPECT_EQ(effective_power({0.0, 0.9, 0.9}), 0.0);
  // Power grows with each of raw, q and D.
  EXPECT_LT(effective_power({1.0, 0.4, 0.5}), effective_power({1.0, 0.5, 0.5}));
  EXPECT_LT(effective_power({1.0, 0.5, 0.4}), effective_power({1.0, 0.5, 0.5}));
  EXPECT_LT(effective_power({1.0, 0.5, 0.5}), effective_power({1.1, 0.5, 0.5}));
}

struct ClosedForm {
  double alpha, beta, b_star, t_star;
};
ClosedForm closed_form(const Force& blue, const Force& red) {
  const double pb = effective_power(blue), pr = effective_power(red), pbar = 0.5 * (pb + pr);
  ClosedForm c{pb / pbar, pr / pbar, 0, 0};
  c.b_star = std::sqrt(1.0 - c.beta / c.alpha);
  c.t_star = std::atanh(std::sqrt(c.beta / c.alpha)) / std::sqrt(c.alpha * c.beta);
  return c;
}

void expect_square_law(const Force& blue, const Force& red, double dt) {
  const ClosedForm cf = closed_form(blue, red);
  const int T = static_cast<int>(std::ceil(4.0 * cf.t_star / dt));  // room to spare: the engagement ends first
  const SimConfig cfg = deterministic(dt, T);
  const SimNoise noise = draw_noise(1, "closed-form", cfg);
  const SimResult res = simulate(blue, red, noise, cfg);

  EXPECT_EQ(res.win_rate, 1.0) << "BLUE has the larger effective power and must win every replication";
  EXPECT_LT(res.red_final, 1e-6) << "RED is annihilated (below the 1e-6 break point)";
  EXPECT_LT(res.mean_steps, T) << "the engagement ended before the time limit";
  const double N = res.mean_steps;
  const double ab_dt2 = cf.alpha * cf.beta * dt * dt;
  const double tol = cf.b_star * N * ab_dt2 + ab_dt2 / cf.b_star + 1e-9;
  EXPECT_NEAR(res.blue_final, cf.b_star, tol) << "dt " << dt << ", " << N << " steps";
  // The annihilation time: N dt within a few steps of t* (r passes 1e-6 within dt of zero).
  EXPECT_NEAR(N * dt, cf.t_star, 0.01 * cf.t_star + 3 * dt);
}

TEST(WargameClosedForm, SquareLawFinalStrength) {
  // P_B = 2 * 1 * 1 = 2, P_R = 1: alpha = 4/3, beta = 2/3, B* = sqrt(1/2), t* = atanh(sqrt(1/2)) / sqrt(8/9).
  const Force blue{2.0, 0.5, 0.5}, red{1.0, 0.5, 0.5};
  expect_square_law(blue, red, 1e-3);
  expect_square_law(blue, red, 1e-2);
  // A closer fight: P_B = 1.2 * .9 * 1.1 vs 1.
  expect_square_law({1.2, 0.4, 0.6}, {1.0, 0.5, 0.5}, 1e-3);
  // A lopsided one.
  expect_square_law({3.0, 0.8, 0.7}, {1.0, 0.2, 0.3}, 1e-3);
}

TEST(WargameClosedForm, EulerErrorShrinksWithTheStep) {
  const Force blue{2.0, 0.5, 0.5}, red{1.0, 0.5, 0.5};
  const ClosedForm cf = closed_form(blue, red);
  auto error = [&](double dt) {
    const SimConfig cfg = deterministic(dt, static_cast<int>(4 * cf.t_star / dt));
    return std::abs(simulate(blue, red, draw_noise(1, "x", cfg), cfg).blue_final - cf.b_star);
  };
  const double e2 = error(1e-2), e3 = error(1e-3);
  EXPECT_LT(e3, e2);
  EXPECT_LT(e3, 1e-3);
}

TEST(WargameSymmetry, EqualPowersWithoutNoiseAreExactlySymmetric) {
  SimConfig cfg = deterministic(0.05, 60);
  cfg.break_point = 0.3;
  const Force f{2.0, 0.6, 0.4};
  const SimResult res = simulate(f, f, draw_noise(1, "sym", cfg), cfg);
  EXPECT_EQ(res.blue_final, res.red_final);
  // Both break at the same step with equal strength: an exact tie goes to RED (wargame.cpp: BLUE has not
  // achieved its objective).
  EXPECT_EQ(res.win_rate, 0.0);
}

TEST(WargameSymmetry, SwappingSidesAndTheirNoiseMirrorsEveryReplication) {
  SimConfig cfg;  // the paper's defaults: noise .15, step noise .1, break point .3
  cfg.replications = 500;
  const SimNoise n = draw_noise(5, "mirror", cfg);
  SimNoise swapped = n;
  swapped.z.col(0) = n.z.col(1);
  swapped.z.col(1) = n.z.col(0);
  swapped.step_b = n.step_r;
  swapped.step_r = n.step_b;
  const Force a{2.0, 0.6, 0.5}, b{1.8, 0.55, 0.6};
  const SimResult ab = simulate(a, b, n, cfg);
  const SimResult ba = simulate(b, a, swapped, cfg);
  EXPECT_EQ(ab.blue_final, ba.red_final);
  EXPECT_EQ(ab.red_final, ba.blue_final);
  EXPECT_EQ(ab.mean_steps, ba.mean_steps);
  // Every replication has one winner (ties need equal strengths, which continuous noise does not give).
  EXPECT_DOUBLE_EQ(ab.win_rate + ba.win_rate, 1.0);
}

TEST(WargameSymmetry, EqualPowersWithNoiseWinAboutHalf) {
  SimConfig cfg;
  cfg.replications = 1000;
  const Force f{2.0, 0.6, 0.4};
  const SimResult res = simulate(f, f, draw_noise(3, "half", cfg), cfg);
  // Binomial sd at p = .5, R = 1000 is .016; .08 is five of them.
  EXPECT_NEAR(res.win_rate, 0.5, 0.08);
}

TEST(WargameContract, WinRateIsAShareOfReplications) {
  SimConfig cfg;
  cfg.replications = 40;
  const SimNoise noise = draw_noise(9, "share", cfg);
  for (double raw : {0.5, 1.0, 1.5, 2.0, 4.0}) {
    const SimResult res = simulate({raw, 0.5, 0.5}, {1.5, 0.5, 0.5}, noise, cfg);
    EXPECT_GE(res.win_rate, 0.0);
    EXPECT_LE(res.win_rate, 1.0);
    const double wins = res.win_rate * cfg.replications;
    EXPECT_DOUBLE_EQ(wins, std::round(wins)) << "win rate must be wins / R";
    EXPECT_GE(res.blue_final, 0.0);
    EXPECT_LE(res.blue_final, 1.0);
    EXPECT_GE(res.red_final, 0.0);
    EXPECT_LE(res.red_final, 1.0);
    EXPECT_GE(res.mean_steps, 1.0);
    EXPECT_LE(res.mean_steps, cfg.time_limit);
  }
  // No power on either side: nothing happens, the time limit is reached with a tie, which RED keeps.
  const SimResult idle = simulate({0, 0.5, 0.5}, {0, 0.5, 0.5}, noise, cfg);
  EXPECT_EQ(idle.win_rate, 0.0);
  EXPECT_EQ(idle.mean_steps, cfg.time_limit);
}

TEST(WargameCommonRandomNumbers, SameNoiseSameResult) {
  SimConfig cfg;
  cfg.replications = 100;
  const SimNoise n1 = draw_noise(20240601, "urban-100", cfg);
  const SimNoise n2 = draw_noise(20240601, "urban-100", cfg);
  EXPECT_TRUE((n1.z == n2.z).all());
  EXPECT_TRUE((n1.step_b == n2.step_b).all());
  EXPECT_TRUE((n1.step_r == n2.step_r).all());
  const Force blue{2.0, 0.6, 0.5}, red{2.1, 0.5, 0.55};
  const SimResult a = simulate(blue, red, n1, cfg), b = simulate(blue, red, n2, cfg), c = simulate(blue, red, n1, cfg);
  for (const SimResult& r : {b, c}) {
    EXPECT_EQ(a.win_rate, r.win_rate);
    EXPECT_EQ(a.blue_final, r.blue_final);
    EXPECT_EQ(a.red_final, r.red_final);
    EXPECT_EQ(a.mean_steps, r.mean_steps);
  }
  // Another scenario draws another stream.
  const SimNoise other = draw_noise(20240601, "urban-101", cfg);
  EXPECT_FALSE((other.z == n1.z).all());
  // Replication r's noise does not depend on R: the first 100 rows of an R = 200 draw are the R = 100 draw.
  SimConfig big = cfg;
  big.replications = 200;
  const SimNoise nb = draw_noise(20240601, "urban-100", big);
  EXPECT_TRUE((nb.z.topRows(100) == n1.z).all());
  EXPECT_TRUE((nb.step_b.topRows(100) == n1.step_b).all());
}

TEST(WargameNoise, EachReplicationIsItsOwnKeyedStreamInOrder) {
  // draw_noise draws eight replications in vector lanes and the steps in chunks; the values must be those of
  // one scalar stream per replication: two normals, then (step_b, step_r) for t = 0, 1, ... Odd R and T (a tail of
  // replications, several chunks and a partial one) exercise every path.
  for (const auto [R, T] : {std::pair{13, 150}, std::pair{8, 64}, std::pair{3, 5}, std::pair{17, 129}}) {
    SimConfig cfg;
    cfg.replications = R;
    cfg.time_limit = T;
    const SimNoise n = draw_noise(20240601, "urban-100", cfg);
    const double half_width = std::sqrt(3.0);
    const std::uint64_t prefix = Rng::key_prefix(20240601, "urban-100", "sim");
    for (int r = 0; r < R; ++r) {
      Rng rng = Rng::keyed_at(prefix, static_cast<std::uint64_t>(r));
      ASSERT_EQ(n.z(r, 0), rng.normal()) << "R " << R << ", replication " << r;
      ASSERT_EQ(n.z(r, 1), rng.normal());
      for (int t = 0; t < T; ++t) {
        ASSERT_EQ(n.step_b(r, t), (2.0 * rng.uniform() - 1.0) * half_width) << "replication " << r << ", step " << t;
        ASSERT_EQ(n.step_r(r, t), (2.0 * rng.uniform() - 1.0) * half_width) << "replication " << r << ", step " << t;
      }
    }
  }
}

TEST(WargameCommonRandomNumbers, StrongerBlueNeverWinsLess) {
  // Under common noise a stronger BLUE has a larger alpha and a smaller beta, so at every step BLUE's strength is
  // no lower and RED's no higher; each replication a weaker BLUE wins is won by a stronger one too.
  SimConfig cfg;
  cfg.replications = 300;
  const SimNoise noise = draw_noise(77, "monotone", cfg);
  const Force red{2.0, 0.55, 0.55};
  for (const auto& vary : {0, 1, 2}) {  // raw, q, D
    double prev = -1;
    for (double x : {0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7}) {
      Force blue{2.0, 0.45, 0.45};  // P_B = 1.81 against P_R = 2.21, rising past it
      (vary == 0 ? blue.raw : vary == 1 ? blue.q : blue.D) += x;
      const double w = simulate(blue, red, noise, cfg).win_rate;
      EXPECT_GE(w, prev) << "parameter " << vary << " + " << x;
      prev = w;
    }
    EXPECT_GT(prev, 0.5) << "the sweep should reach a clearly stronger BLUE";
  }
  // And for several noise settings.
  for (double sigma : {0.0, 0.05, 0.3, 0.6}) {
    SimConfig c = cfg;
    c.noise = sigma;
    c.step_noise = sigma;
    double prev = -1;
    for (double raw : {1.0, 1.5, 1.9, 2.0, 2.1, 2.5, 3.0}) {
      const double w = simulate({raw, 0.55, 0.55}, red, noise, c).win_rate;
      EXPECT_GE(w, prev) << "sigma " << sigma << " raw " << raw;
      prev = w;
    }
  }
}

TEST(WargameReference, EqualsOneReplicationAtATimeBitForBit) {
  // The simulator steps four replications at a time in vector registers; the oracle is the plain loop over one
  // replication at a time with the documented arithmetic. Replication counts that are not multiples of four, and
  // forces from even to lopsided, with and without step noise.
  for (int R : {1, 3, 7, 13, 200})
    for (double sn : {0.0, 0.1, 0.9})
      for (const auto& [blue, red] : {std::pair{Force{2.0, 0.6, 0.5}, Force{2.1, 0.5, 0.55}},
                                      std::pair{Force{1.0, 0.9, 0.9}, Force{3.0, 0.2, 0.1}},
                                      std::pair{Force{2.0, 0.5, 0.5}, Force{2.0, 0.5, 0.5}}}) {
        SimConfig cfg;
        cfg.replications = R;
        cfg.step_noise = sn;
        const SimNoise n = draw_noise(20240601, "urban-100", cfg);
        const double pb = effective_power(blue), pr = effective_power(red), pbar = 0.5 * (pb + pr);
        // The rates as simulate() forms them: detail::scaled_exp keeps every element on Eigen's packet path (the C
        // library's exp, which Eigen uses past the last whole packet, depends on the CPU; tests/core/cross_cpu_test.cpp).
        const Eigen::ArrayXd alpha = pb / pbar * detail::scaled_exp(n.z.col(0), cfg.noise);
        const Eigen::ArrayXd beta = pr / pbar * detail::scaled_exp(n.z.col(1), cfg.noise);
        Eigen::ArrayXd b(R), r(R), steps(R);
        int wins = 0;
        for (int i = 0; i < R; ++i) {
          double bi = 1, ri = 1, si = cfg.time_limit;
          for (int t = 0; t < cfg.time_limit; ++t) {
            const double db = cfg.dt * beta(i) * ri * std::max(1.0 + sn * n.step_b(i, t), 0.0);
            const double dr = cfg.dt * alpha(i) * bi * std::max(1.0 + sn * n.step_r(i, t), 0.0);
            bi = std::max(bi - db, 0.0);
            ri = std::max(ri - dr, 0.0);
            if (bi < cfg.break_point || ri < cfg.break_point || bi <= 0 || ri <= 0) {
              si = t + 1;
              break;
            }
          }
          b(i) = bi;
          r(i) = ri;
          steps(i) = si;
          const bool blue_broke = bi < cfg.break_point || bi <= 0, red_broke = ri < cfg.break_point || ri <= 0;
          wins += (red_broke && !blue_broke) || (blue_broke == red_broke && bi > ri) ? 1 : 0;
        }
        const SimResult got = simulate(blue, red, n, cfg);
        SCOPED_TRACE(::testing::Message() << "R " << R << " step noise " << sn << " P_B " << pb);
        EXPECT_EQ(got.win_rate, static_cast<double>(wins) / R);
        EXPECT_EQ(got.blue_final, b.mean());
        EXPECT_EQ(got.red_final, r.mean());
        EXPECT_EQ(got.mean_steps, steps.mean());
      }
}

TEST(WargameContract, ThrowsWhenNoiseWasDrawnForAnotherConfig) {
  SimConfig cfg;
  cfg.replications = 20;
  const SimNoise noise = draw_noise(1, "x", cfg);
  SimConfig more = cfg;
  more.replications = 30;
  EXPECT_THROW(simulate({1, 0.5, 0.5}, {1, 0.5, 0.5}, noise, more), std::invalid_argument);
  SimConfig longer = cfg;
  longer.time_limit = cfg.time_limit + 1;
  EXPECT_THROW(simulate({1, 0.5, 0.5}, {1, 0.5, 0.5}, noise, longer), std::invalid_argument);
  try {
    simulate({1, 0.5, 0.5}, {1, 0.5, 0.5}, noise, longer);
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "simulate: noise was drawn for another simulator config");
  }
  // Noise parameters other than R and T do not change the draw, so the same noise serves them.
  SimConfig louder = cfg;
  louder.noise = 0.4;
  EXPECT_NO_THROW(simulate({1, 0.5, 0.5}, {1, 0.5, 0.5}, noise, louder));
}

}  // namespace
}  // namespace advplan
