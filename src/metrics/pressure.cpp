#include "advplan/metrics/pressure.hpp"

#include <algorithm>

namespace advplan {

std::array<double, kNumPressures> pressure_shares(const std::vector<PlacedAction>& layout) {
  std::array<double, kNumPressures> s{};
  double total = 0;
  for (const auto& a : layout) {
    const double effort = a.weight * (a.asset ? a.asset->capability : 0.0) * (a.action->priority / 5.0);
    total += effort;
    if (auto p = pressure_of(a.action->category)) s[index(*p)] += effort;
  }
  if (total > 0)
    for (auto& v : s) v /= total;
  return s;
}

Pressure dominant_pressure(const std::array<double, kNumPressures>& shares) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < kNumPressures; ++i)
    if (shares[i] > shares[best]) best = i;
  return static_cast<Pressure>(best);
}

std::array<double, kNumPressures> vulnerability(const std::vector<PlacedAction>& blue) {
  std::array<double, kNumPressures> v{};
  for (std::size_t p = 0; p < kNumPressures; ++p) {
    const Category counter = kPressureTable[p].counter;
    double n = 0;
    for (const auto& a : blue)
      if (a.action->category == counter) n += a.weight;
    v[p] = 1.0 / (1.0 + n);
  }
  return v;
}

PressureResult pressure(const std::array<double, kNumPressures>& s, double e_red,
                        const std::array<double, kNumPressures>& v) {
  double sum = 0;
  for (std::size_t p = 0; p < kNumPressures; ++p) sum += s[p] * v[p];
  return {dominant_pressure(s), std::clamp((0.5 + 0.5 * e_red) * sum, 0.0, 1.0)};
}

}  // namespace advplan
