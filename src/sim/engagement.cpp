#include "advplan/sim/engagement.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <tuple>

#include "sim/scaled_exp.hpp"

namespace advplan {
namespace {

/// Base steps of an action by category (at dt = .05, 20 steps are one time unit): movement, fires, information,
/// cyber, sustainment, protection, command, public_information, deception, civil.
constexpr std::array<double, kNumCategories> kBaseSteps{8, 4, 4, 4, 6, 3, 2, 3, 3, 4};

// The support effects (docs/METRICS.md "Engagement wargame"), each active for effect_steps after its action ends.
constexpr double kInformationFire = 1.2;   ///< own fire
constexpr double kCommandFire = 1.1;       ///< own fire
constexpr double kCyberFire = 0.8;         ///< the other side's fire
constexpr double kDeceptionFire = 0.85;    ///< the other side's fire
constexpr double kProtectionLoss = 0.7;    ///< own losses
constexpr double kSustainmentRate = 0.3;   ///< own restoration per time unit, times (1 - strength)

bool is_contact(Category c) { return c == Category::fires || c == Category::movement; }

/// A side's plan as it unfolds in one replication.
struct SideState {
  const Plan* plan = nullptr;
  const Scenario* sc = nullptr;
  // Per action of the plan, fixed for the call: its steps, and the rate at which its route exposes the side to the
  // other's threat zones (exposure x the moving asset's share of raw capability; 0 off the map).
  std::vector<int> steps;
  std::vector<double> exposed;
  std::vector<int> steps0;         ///< steps and exposed of the side's own plan (a replan changes the current ones)
  std::vector<double> exposed0;
  const Plan* plan0 = nullptr;
  Side side = Side::Blue;
  double raw = 0;
  Replanner* replanner = nullptr;
  const PlanOnMap* map = nullptr;  ///< the side's moves on the map (terrain: geo), for its revised plans too
  int replanned_at = -1;           ///< the step of its last replanning call in this replication (one per step)
  std::vector<std::string> done;   ///< the actions started in this replication, kept only with a replanner
  int replication = 0;
  std::vector<std::string> queue;  ///< action ids still to run, in order
  std::size_t next = 0;            ///< index into queue of the next action to start
  int next_start = 0;              ///< the step it starts at
  // The action running now: its index in plan->actions, and the step it ends at.
  int running = -1, running_end = 0;
  double running_exposed = 0;      ///< exposed[running] while a movement runs, else 0
  std::array<int, kNumCategories> effect_until{};  ///< a support effect of the category is active at t < this
  std::vector<int> committed;      ///< indices into sc->assets of the assets in the fight, in joining order
  std::vector<std::string> committed_where;
  double committed_cap = 0;
  std::vector<bool> branch_done;
  std::string branches;
  bool active(Category c, int t) const { return effect_until[index(c)] > t; }
};

int asset_index(const Scenario& sc, const std::string& id) {
  for (std::size_t i = 0; i < sc.assets.size(); ++i)
    if (same_id(sc.assets[i].id, id)) return static_cast<int>(i);
  return -1;
}

}  // namespace

int action_steps(const Action& a, const Scenario& sc, const SimConfig& cfg) {
  double steps = kBaseSteps[index(a.category)];
  if (a.category == Category::movement) {
    const int i = asset_index(sc, a.asset);
    const double mob = i < 0 ? 0.5 : sc.assets[static_cast<std::size_t>(i)].mobility;
    steps /= std::max(0.25, mob * sc.terrain.mobility);
  }
  return static_cast<int>(std::lround(steps * cfg.engagement.durations));
}

int route_steps(double hours, double time_window_h, const SimConfig& cfg) {
  const int T = cfg.time_limit;
  if (!(hours >= 0) || !(time_window_h > 0)) return T;
  const double steps = cfg.engagement.durations * T * (hours / time_window_h);
  return steps >= T ? T : static_cast<int>(std::lround(steps));
}

namespace {

/// The per-action steps and exposure rates of a side (on the map when `map` is given), once per call.
void prepare(SideState& s, const Plan& p, const Scenario& sc, const SimConfig& cfg, const PlanOnMap* map, double raw) {
  s.steps.resize(p.actions.size());
  s.exposed.assign(p.actions.size(), 0.0);
  for (std::size_t a = 0; a < p.actions.size(); ++a) {
    const Action& act = p.actions[a];
    s.steps[a] = action_steps(act, sc, cfg);
    if (map == nullptr || act.category != Category::movement) continue;
    for (const MoveOnMap& m : map->moves) {
      if (!same_id(m.action_id, act.id) || m.asset != act.asset || m.target != act.target) continue;
      s.steps[a] = route_steps(m.hours, map->time_window_h, cfg);
      const int k = asset_index(sc, act.asset);
      const double share = k < 0 || !(raw > 0) ? 0.0 : std::min(1.0, sc.assets[static_cast<std::size_t>(k)].capability / raw);
      s.exposed[a] = m.hours < 0 ? 0.0 : std::clamp(m.exposure, 0.0, 1.0) * share;
      break;
    }
  }
}

void reset(SideState& s, const Plan& p, const Scenario& sc) {
  if (s.plan != &p && s.plan0 == &p) {  // the last replication replanned: back to the side's own plan
    s.steps = s.steps0;
    s.exposed = s.exposed0;
  }
  s.plan = &p;
  s.sc = &sc;
  s.done.clear();
  s.replanned_at = -1;
  s.queue = p.chain;
  s.next = 0;
  s.next_start = 0;
  s.running = -1;
  s.running_end = 0;
  s.running_exposed = 0;
  s.effect_until.fill(0);
  s.committed.clear();
  s.committed_where.clear();
  s.committed_cap = 0;
  s.branch_done.assign(p.branches.size(), false);
  s.branches.clear();
}

std::vector<std::string> engaged_ids(const SideState& s) {
  std::vector<std::string> out;
  for (const int k : s.committed) out.push_back(s.sc->assets[static_cast<std::size_t>(k)].id);
  return out;
}

std::vector<Category> active_effects(const SideState& s, int t) {
  std::vector<Category> out;
  for (std::size_t c = 0; c < kNumCategories; ++c)
    if (s.effect_until[c] > t) out.push_back(static_cast<Category>(c));
  return out;
}

/// Asks the side's replanner at branch `b`; true when it switched to a revised plan (its chain is the queue from
/// here on, its branches new decision points; a move keeps its route when its id, asset and target are a bound
/// move's, else takes the template's steps).
bool replan_at(SideState& s, const SideState& o, std::size_t b, int t, double own, double other, const SimConfig& cfg) {
  DecisionPoint d;
  d.side = s.side;
  d.replication = s.replication;
  d.step = t;
  d.plan = s.plan;
  d.branch = b;
  d.own = own;
  d.other = other;
  d.done = s.done;
  d.remaining.assign(s.queue.begin() + static_cast<std::ptrdiff_t>(s.next), s.queue.end());
  d.own_engaged = engaged_ids(s);
  d.other_engaged = engaged_ids(o);
  d.own_effects = active_effects(s, t);
  d.other_effects = active_effects(o, t);
  s.replanned_at = t;
  const Plan* p = s.replanner->replan(d);
  if (p == nullptr) return false;
  s.branches += (s.branches.empty() ? "" : ";") + s.plan->branches[b].at + "=replan";
  s.plan = p;
  prepare(s, *p, *s.sc, cfg, s.map, s.raw);
  s.queue = p->chain;
  s.next = 0;
  s.branch_done.assign(p->branches.size(), false);
  return true;
}

/// Ends the running action at step t (its support effect starts), then decides a branch at it: the side's
/// replanner when it has one and it answers, else option 0 when the side's strength share is at least the other's,
/// else the last option, whose actions run next.
void end_running(SideState& s, const SideState& o, int t, double own, double other, const SimConfig& cfg) {
  const Action& a = s.plan->actions[static_cast<std::size_t>(s.running)];
  if (cfg.engagement.support && !is_contact(a.category))
    s.effect_until[index(a.category)] = std::max(s.effect_until[index(a.category)], t + cfg.engagement.effect_steps);
  for (std::size_t b = 0; b < s.plan->branches.size(); ++b) {
    const Branch& br = s.plan->branches[b];
    if (s.branch_done[b] || !same_id(br.at, a.id) || br.options.empty()) continue;
    s.branch_done[b] = true;
    // At most one replanning call per side and step: a revised plan whose first step ends at once and branches
    // again is decided by the default rule until the next step.
    if (s.replanner != nullptr && s.replanned_at != t && replan_at(s, o, b, t, own, other, cfg)) break;
    const std::size_t o = own >= other ? 0 : br.options.size() - 1;
    s.queue.insert(s.queue.begin() + static_cast<std::ptrdiff_t>(s.next), br.options[o].begin(), br.options[o].end());
    s.branches += (s.branches.empty() ? "" : ";") + br.at + "=" + std::to_string(o);
  }
  s.running = -1;
  s.running_exposed = 0;
}

/// Starts every action due at step t (a zero-step action ends at once); returns whether the engaged assets changed.
bool advance(SideState& s, const SideState& o, int t, double own, double other, const SimConfig& cfg) {
  bool changed = false;
  for (;;) {
    if (s.running >= 0 && s.running_end <= t) end_running(s, o, t, own, other, cfg);
    if (s.running >= 0 || s.next >= s.queue.size() || s.next_start > t) break;
    const int ai = s.plan->find_action(s.queue[s.next++]);
    if (ai < 0) continue;
    const Action& a = s.plan->actions[static_cast<std::size_t>(ai)];
    if (s.replanner != nullptr) s.done.push_back(a.id);
    s.running = ai;
    s.running_end = t + s.steps[static_cast<std::size_t>(ai)];
    s.running_exposed = s.exposed[static_cast<std::size_t>(ai)];
    s.next_start = s.running_end;
    if (is_contact(a.category)) {
      const int k = asset_index(*s.sc, a.asset);
      if (k >= 0 && std::find(s.committed.begin(), s.committed.end(), k) == s.committed.end()) {
        s.committed.push_back(k);
        s.committed_where.push_back(a.target);
        s.committed_cap += s.sc->assets[static_cast<std::size_t>(k)].capability;
        changed = true;
      }
    }
  }
  return changed;
}

/// The engaged share of a side's raw capability; the whole force is exactly 1 (the capabilities summed in another
/// order than raw's may differ in the last bit), so a full engagement is the Lanchester model's bits.
double engaged_share(double committed, double raw) {
  if (!(raw > 0)) return 0.0;
  return committed >= raw * (1 - 1e-12) ? 1.0 : committed / raw;
}

std::string joined_assets(const SideState& s) {
  std::string out;
  for (const int k : s.committed) out += (out.empty() ? "" : ";") + s.sc->assets[static_cast<std::size_t>(k)].id;
  return out;
}

/// What one call plays: the scenario, the forces, the noise, the config, the trace.
struct EngagementCall {
  const Scenario& sc;
  const Force& fb;
  const Force& fr;
  const SimNoise& noise;
  const SimConfig& cfg;
  EngagementTrace* trace;
  int trace_engagements;
};

/// Both sides' states for the call: their plans' steps and exposure, their replanners and maps.
void prepare_sides(SideState& sb, SideState& sr, const Plan& blue, const Plan& red, const EngagementCall& call,
                   const EngagementSides& sides) {
  for (auto [s, p, map, rp, side, raw] :
       {std::tuple{&sb, &blue, sides.blue_map, sides.blue_replanner, Side::Blue, call.fb.raw},
        std::tuple{&sr, &red, sides.red_map, sides.red_replanner, Side::Red, call.fr.raw}}) {
    prepare(*s, *p, call.sc, call.cfg, map, raw);
    s->steps0 = s->steps;
    s->exposed0 = s->exposed;
    s->plan0 = p;
    s->side = side;
    s->raw = raw;
    s->replanner = rp;
    s->map = map;
  }
}

/// One replication as it runs: the strengths, the losses to the other side's fire, the step it ended at, the
/// engagement open now.
struct ReplicationCourse {
  int i = 0;
  double dta = 0, dtb = 0;  ///< dt times the replication's rates
  double b = 1, r = 1, lost_b = 0, lost_r = 0;
  int steps = 0;
  EngagementRow open;
  bool in_fight = false, fought = false;
  bool rows = false;  ///< this replication's engagements are traced
};

/// The open engagement ends at step t (traced when the replication's rows are).
void close_engagement(ReplicationCourse& x, int t, EngagementTrace* trace) {
  if (!x.in_fight) return;
  x.open.end = t;
  x.open.blue_after = x.b;
  x.open.red_after = x.r;
  if (x.rows) trace->engagements.push_back(x.open);
  x.in_fight = false;
}

/// An engagement starts at step t between the committed assets.
void open_engagement(ReplicationCourse& x, int t, const SideState& sb, const SideState& sr, const EngagementCall& call) {
  x.open = EngagementRow{};
  x.open.replication = x.i;
  x.open.start = t;
  if (x.rows) {  // the texts only for the traced replications
    x.open.blue_assets = joined_assets(sb);
    x.open.red_assets = joined_assets(sr);
    for (const auto* s : {&sb, &sr})
      for (const auto& w : s->committed_where) x.open.where += (x.open.where.empty() ? "" : ";") + w;
  }
  x.open.blue_share = engaged_share(sb.committed_cap, call.fb.raw);
  x.open.red_share = engaged_share(sr.committed_cap, call.fr.raw);
  x.open.blue_before = x.b;
  x.open.red_before = x.r;
  x.in_fight = x.fought = true;
}

/// The share of the other side's fire a side takes at step t (its protection lessens it).
double loss_of(const SideState& s, int t, const SimConfig& cfg) {
  return cfg.engagement.support && s.active(Category::protection, t) ? kProtectionLoss : 1.0;
}

/// A side's fire at step t: the engaged share, its own information and command effects, the other side's cyber and
/// deception (a side's own cyber halves the other's cyber effect, its deception the other's information).
double fire_of(const SideState& own, const SideState& other, double raw, int t, const SimConfig& cfg) {
  double f = engaged_share(own.committed_cap, raw);
  if (cfg.engagement.support) {
    if (own.active(Category::information, t))
      f *= other.active(Category::deception, t) ? 1 + (kInformationFire - 1) / 2 : kInformationFire;
    if (own.active(Category::command, t)) f *= kCommandFire;
    if (other.active(Category::cyber, t))
      f *= own.active(Category::cyber, t) ? 1 - (1 - kCyberFire) / 2 : kCyberFire;
    if (other.active(Category::deception, t)) f *= kDeceptionFire;
  }
  return f;
}

/// Losses `db` to BLUE and `dr` to RED, each down to 0 at most, counted in the losses.
void take_losses(ReplicationCourse& x, double db, double dr) {
  const double nb = std::max(x.b - db, 0.0), nr = std::max(x.r - dr, 0.0);
  x.lost_b += x.b - nb;
  x.lost_r += x.r - nr;
  x.b = nb;
  x.r = nr;
}

/// Step t of the fight: each side's fire on the other.
void exchange_fire(ReplicationCourse& x, int t, const SideState& sb, const SideState& sr, const EngagementCall& call) {
  const double sn = call.cfg.step_noise;
  const double mb = std::max(1 + sn * call.noise.step_b(x.i, t), 0.0), mr = std::max(1 + sn * call.noise.step_r(x.i, t), 0.0);
  const double db = x.dtb * (fire_of(sr, sb, call.fr.raw, t, call.cfg) * loss_of(sb, t, call.cfg)) * x.r * mb;
  const double dr = x.dta * (fire_of(sb, sr, call.fb.raw, t, call.cfg) * loss_of(sr, t, call.cfg)) * x.b * mr;
  take_losses(x, db, dr);
}

/// A move through the other side's threat zones takes that side's fire on its exposed share, fight or not.
void exposure_fire(ReplicationCourse& x, int t, const SideState& sb, const SideState& sr, const EngagementCall& call) {
  const double sn = call.cfg.step_noise;
  const double mb = std::max(1 + sn * call.noise.step_b(x.i, t), 0.0), mr = std::max(1 + sn * call.noise.step_r(x.i, t), 0.0);
  const double xb = x.dtb * (sb.running_exposed * loss_of(sb, t, call.cfg)) * x.r * mb;
  const double xr = x.dta * (sr.running_exposed * loss_of(sr, t, call.cfg)) * x.b * mr;
  take_losses(x, xb, xr);
}

/// Sustainment restores a standing side towards its full strength.
void sustain(ReplicationCourse& x, int t, const SideState& sb, const SideState& sr, const SimConfig& cfg) {
  const double dt = cfg.dt;
  if (sb.active(Category::sustainment, t) && x.b > 0) x.b = std::min(1.0, x.b + dt * kSustainmentRate * (1 - x.b));
  if (sr.active(Category::sustainment, t) && x.r > 0) x.r = std::min(1.0, x.r + dt * kSustainmentRate * (1 - x.r));
}

/// Step t of a replication; false when a side broke (the replication ends after it).
bool play_step(ReplicationCourse& x, int t, SideState& sb, SideState& sr, const EngagementCall& call) {
  const SimConfig& cfg = call.cfg;
  const double bp = cfg.break_point;
  const bool cb = advance(sb, sr, t, x.b, x.r, cfg), cr = advance(sr, sb, t, x.r, x.b, cfg);
  const bool fight = sb.committed_cap > 0 && sr.committed_cap > 0;
  if (x.in_fight && (!fight || cb || cr)) close_engagement(x, t, call.trace);
  if (fight && !x.in_fight) open_engagement(x, t, sb, sr, call);
  if (fight) exchange_fire(x, t, sb, sr, call);
  if (sb.running_exposed > 0 || sr.running_exposed > 0) exposure_fire(x, t, sb, sr, call);
  if (cfg.engagement.support) sustain(x, t, sb, sr, cfg);
  if (x.b < bp || x.b <= 0 || x.r < bp || x.r <= 0) {
    x.steps = t + 1;
    return false;
  }
  return true;
}

}  // namespace

bool engagement_blue_won(double b, double r, double break_point, bool fought, bool blue_committed,
                         bool red_committed) {
  const bool blue_broke = b < break_point || b <= 0, red_broke = r < break_point || r <= 0;
  if (red_broke && !blue_broke) return true;
  if (red_broke == blue_broke)
    // Both stand (or both broke): the stronger side; a replication with no engagement at all goes to BLUE exactly
    // when it committed an asset and RED committed none (it advanced unopposed).
    return fought ? b > r : blue_committed && !red_committed;
  return false;
}

namespace {

/// Replication i from the sides' fresh states: its course to the end (a side broken or the time limit).
ReplicationCourse play_replication(int i, SideState& sb, SideState& sr, const Plan& blue, const Plan& red,
                                   const detail::ReplicationRates& rates, const EngagementCall& call) {
  reset(sb, blue, call.sc);
  reset(sr, red, call.sc);
  sb.replication = sr.replication = i;
  ReplicationCourse x;
  x.i = i;
  x.dta = call.cfg.dt * rates.alpha(i);
  x.dtb = call.cfg.dt * rates.beta(i);
  x.steps = call.cfg.time_limit;
  x.rows = call.trace != nullptr && i < call.trace_engagements;
  for (int t = 0; t < call.cfg.time_limit; ++t)
    if (!play_step(x, t, sb, sr, call)) break;
  close_engagement(x, x.steps, call.trace);
  return x;
}

}  // namespace

SimResult simulate_engagement(const Scenario& sc, const Plan& blue, const Force& fb, const Plan& red, const Force& fr,
                              const SimNoise& noise, const SimConfig& cfg, EngagementTrace* trace,
                              int trace_engagements, const EngagementSides& sides) {
  const int R = cfg.replications;
  detail::check_noise(noise, cfg, "simulate_engagement");
  // The Lanchester model's per-replication rates (the same function, the same bits).
  const detail::ReplicationRates rates = detail::replication_rates(fb, fr, noise, cfg);
  const EngagementCall call{sc, fb, fr, noise, cfg, trace, trace_engagements};
  SideState sb, sr;
  prepare_sides(sb, sr, blue, red, call, sides);
  SimResult res;
  int wins = 0;
  Eigen::ArrayXd final_b(R), final_r(R), final_steps(R);  // their means as the Lanchester model takes them
  for (int i = 0; i < R; ++i) {
    const ReplicationCourse x = play_replication(i, sb, sr, blue, red, rates, call);
    const bool won = engagement_blue_won(x.b, x.r, cfg.break_point, x.fought, !sb.committed.empty(),
                                         !sr.committed.empty());
    wins += won ? 1 : 0;
    final_b(i) = x.b;
    final_r(i) = x.r;
    final_steps(i) = x.steps;
    if (trace)
      trace->outcomes.push_back({i, won, x.b, x.r, x.steps, sb.branches, sr.branches, x.lost_b, x.lost_r});
  }
  res.win_rate = R > 0 ? static_cast<double>(wins) / R : 0.0;
  res.blue_final = R > 0 ? final_b.mean() : 0.0;
  res.red_final = R > 0 ? final_r.mean() : 0.0;
  res.mean_steps = R > 0 ? final_steps.mean() : 0.0;
  return res;
}

}  // namespace advplan
