#pragma once
// Advantage and Nash gap (docs/METRICS.md, reconstruction of the paper's lost equation).
namespace advplan {

/// A(B, R) = (1 + q_B - q_R) / 2, so A(B,R) + A(R,B) = 1 and A = .5 at parity.
double advantage(double q_blue, double q_red);
/// |u_B - u_R| with u = q rescaled to [0,1]; our q already lies in [0,1], so u = q (clamped).
double nash_gap(double q_blue, double q_red);

}  // namespace advplan
