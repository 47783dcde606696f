#include "advplan/sim/advantage.hpp"

#include <algorithm>
#include <cmath>

namespace advplan {

double advantage(double q_blue, double q_red) { return (1.0 + q_blue - q_red) / 2.0; }

double nash_gap(double q_blue, double q_red) {
  return std::abs(std::clamp(q_blue, 0.0, 1.0) - std::clamp(q_red, 0.0, 1.0));
}

}  // namespace advplan
