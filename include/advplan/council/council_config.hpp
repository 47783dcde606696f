#pragma once
// The council's settings (config key `council`, docs/CONFIG.md).
#include <string>

namespace advplan {

struct CouncilConfig {
  std::string red = "greedy@8";  ///< the RED policy that stress-tests every candidate
  double w_quality = 0.35, w_coherence = 0.25, w_diversity = 0.15, w_pressure = 0.25;
  int shortlist = 2;
  /// The parts the attribution study switches (docs/METRICS.md "Attribution"): with `propose` off the first round
  /// is the seed plan alone; with `revise` off nothing is revised. Both off: the council returns the seed plan.
  bool propose = true, revise = true;
};

}  // namespace advplan
