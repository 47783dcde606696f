#pragma once
// The wargame simulator's settings (config key `simulator`, docs/CONFIG.md).

namespace advplan {

struct SimConfig {
  int replications = 200;   ///< R
  double break_point = 0.3; ///< a side breaks below this share of its initial strength
  int time_limit = 60;      ///< steps
  double dt = 0.05;         ///< step length
  double noise = 0.15;      ///< per-replication log-normal noise on each side's effectiveness
  double step_noise = 0.1;  ///< per-step noise on attrition
};

}  // namespace advplan
