#pragma once
// The engagement wargame (`simulator: {model: engagement}`, docs/METRICS.md "Engagement wargame"): the two plans
// played step by step. Each action takes a number of steps by its category (a movement by its asset's mobility
// and the terrain's); chain steps run in order, a branch is decided when its step ends by the strengths seen
// then; an asset joins the fight when its first fires or movement action starts; support actions set up effects
// for a while after they end (information and command raise a side's fire, cyber and deception lower the other's,
// protection lowers its losses, sustainment restores strength), and a side's counter to a pressure halves the
// other side's effect of it. While both sides have assets in the fight, strengths follow the wargame's
// stochastic square law on the same noise (common random numbers), each side's fire scaled by the share of its
// force engaged. With zero durations and no support effects it is the Lanchester model, bit for bit.
#include <string>
#include <vector>

#include "advplan/core/plan.hpp"
#include "advplan/core/scenario.hpp"
#include "advplan/sim/sim_config.hpp"
#include "advplan/sim/wargame.hpp"

namespace advplan {

/// One engagement of one replication: a maximal run of steps with both sides in the fight and the same assets
/// engaged.
struct EngagementRow {
  int replication = 0;
  int start = 0, end = 0;                 ///< steps [start, end)
  std::string blue_assets, red_assets;    ///< the engaged assets, ';'-joined in the order they joined
  std::string where;                      ///< the targets of the engaged assets' contact actions, ';'-joined
  double blue_share = 0, red_share = 0;   ///< engaged share of each side's raw capability
  double blue_before = 0, blue_after = 0, red_before = 0, red_after = 0;
};

/// How one replication ended.
struct ReplicationOutcome {
  int replication = 0;
  bool blue_won = false;
  double blue_final = 0, red_final = 0;
  int steps = 0;                          ///< the step after which it ended (the time limit when no side broke)
  std::string blue_branches, red_branches;  ///< each branch's chosen option, "at=option" ';'-joined
  /// BLUE's strength lost to RED's fire, and RED's to BLUE's (before sustainment restores any).
  double blue_loss = 0, red_loss = 0;
};

/// A movement's route on the map (terrain: geo; docs/METRICS.md "Engagement wargame", "Moves on the map"): the
/// run's geo_moves.csv row of a bound move.
struct MoveOnMap {
  std::string action_id;
  std::string asset, target;  ///< the move's: a revised plan's action takes the route only with the same three
  double hours = 0;     ///< the route's time at the asset's speed; < 0: no route reaches the target
  double exposure = 0;  ///< the share of the route inside the other side's threat zones, in [0, 1]
};
/// A side's moves on the map, and the order's time window, which the replication's T steps span.
struct PlanOnMap {
  std::vector<MoveOnMap> moves;
  double time_window_h = 0;
};

/// What a side sees at one of its decision points (a branch's step has ended), as a replanning policy receives it
/// (docs/POLICIES.md "6. Replanning").
struct DecisionPoint {
  Side side = Side::Blue;
  int replication = 0, step = 0;
  const Plan* plan = nullptr;          ///< the plan the side is playing (its last revision)
  std::size_t branch = 0;              ///< index into plan->branches
  double own = 1, other = 1;           ///< the two sides' strengths
  std::vector<std::string> done;       ///< the side's actions started so far, in order
  std::vector<std::string> remaining;  ///< its queue after this point, before the branch's option is added
  std::vector<std::string> own_engaged, other_engaged;  ///< asset ids in the fight
  std::vector<Category> own_effects, other_effects;     ///< support effects active at this step
};

/// A side's replanning at its decision points. replan() returns the revised plan, whose chain is the side's
/// remainder from here on (its branches are new decision points), or nullptr to let the default rule decide. The
/// plan must stay alive until the call of simulate_engagement returns.
class Replanner {
 public:
  virtual ~Replanner() = default;
  virtual const Plan* replan(const DecisionPoint& at) = 0;
};

/// The optional inputs of simulate_engagement: each side's moves on the map (terrain: geo) and replanner.
struct EngagementSides {
  const PlanOnMap* blue_map = nullptr;
  const PlanOnMap* red_map = nullptr;
  Replanner* blue_replanner = nullptr;
  Replanner* red_replanner = nullptr;
};

struct EngagementTrace {
  std::vector<EngagementRow> engagements;
  std::vector<ReplicationOutcome> outcomes;
};

/// Whether BLUE won a replication that ended at strengths b and r: RED broke (below the break point, or at 0) and
/// BLUE did not; when both stand or both broke, the stronger side, or, with no engagement fought at all, BLUE exactly
/// when it committed an asset and RED committed none (it advanced unopposed).
bool engagement_blue_won(double b, double r, double break_point, bool fought, bool blue_committed, bool red_committed);

/// Plays `blue` (whose force is fb: raw capability, q, D) against `red` (fr) over cfg.replications replications
/// on `noise` (draw_noise for the scenario: the Lanchester model's noise). Appends every replication's outcome, and
/// the engagements of replications 0..trace_engagements-1, to `trace` when it is given. Throws
/// std::invalid_argument when noise does not match cfg. With a side's map (terrain: geo) its movements that have a
/// route take its time and exposure; with its replanner, its decision points call it (replications in order).
SimResult simulate_engagement(const Scenario& sc, const Plan& blue, const Force& fb, const Plan& red, const Force& fr,
                              const SimNoise& noise, const SimConfig& cfg, EngagementTrace* trace = nullptr,
                              int trace_engagements = 1 << 30, const EngagementSides& sides = {});

/// The steps an action takes under cfg (docs/METRICS.md "Engagement wargame": its category's base, a movement
/// divided by max(.25, asset mobility x terrain mobility), times engagement.durations, rounded).
int action_steps(const Action& a, const Scenario& sc, const SimConfig& cfg);
/// A movement's steps on its route: round(durations x T x hours / time window), within [0, T]; T when no route
/// reaches the target.
int route_steps(double hours, double time_window_h, const SimConfig& cfg);

}  // namespace advplan
