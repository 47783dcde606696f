#pragma once
// The council's settings (config key `council`, docs/CONFIG.md).
#include <string>

namespace advplan {

struct CouncilConfig {
  std::string red = "greedy@8";  ///< the RED policy that stress-tests every candidate
  double w_quality = 0.35, w_coherence = 0.25, w_diversity = 0.15, w_pressure = 0.25;
  int shortlist = 2;
};

}  // namespace advplan
