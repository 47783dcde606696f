#pragma once
// The wargame simulator's settings (config key `simulator`, docs/CONFIG.md).

#include <string>

namespace advplan {

/// The engagement model's settings (`simulator.engagement`, docs/METRICS.md "Engagement wargame").
struct EngagementSettings {
  bool support = true;     ///< support actions' effects (off: only contact and attrition)
  double durations = 1.0;  ///< scale of every action's steps (0: every chain step starts at step 0)
  int effect_steps = 40;   ///< steps a support effect lasts after its action ends (docs/DECISIONS.md)
  /// Replanning calls per side and cell, over all its replications (a policy with `replans: true`; docs/POLICIES.md
  /// "6. Replanning"); once they are spent the default rule decides.
  int replan_calls = 200;
};

struct SimConfig {
  int replications = 200;   ///< R
  double break_point = 0.3; ///< a side breaks below this share of its initial strength
  int time_limit = 60;      ///< steps
  double dt = 0.05;         ///< step length
  double noise = 0.15;      ///< per-replication log-normal noise on each side's effectiveness
  double step_noise = 0.1;  ///< per-step noise on attrition
  /// "lanchester" (the paper's square law on the forces' effective power) or "engagement" (the two plans played
  /// step by step, sim/engagement.hpp).
  std::string model = "lanchester";
  EngagementSettings engagement;
};

}  // namespace advplan
