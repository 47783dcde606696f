// The engagement wargame (docs/METRICS.md "Engagement wargame"): the limit case (every asset in one engagement at
// step 0, no support effects) is the Lanchester model bit for bit; property tests over many plans (strengths in
// [0, 1], losses conserved, engagements in time order, each branch taken at most once and chain steps in order);
// and the structure of a plan now matters: a well-ordered chain reversed wins less, and a protection step removed
// raises BLUE's losses. Each effect's sign is asserted and its size printed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <numeric>
#include <set>

#include "advplan/core/random.hpp"
#include "advplan/metrics/plan_layout.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/metrics/coherence.hpp"
#include "advplan/policy/red_policy.hpp"
#include "advplan/run/config.hpp"
#include "advplan/sim/engagement.hpp"
#include "support/fixtures.hpp"

namespace advplan {
namespace {

const ExperimentConfig& paper() { return testing::paper_config(); }

const std::vector<Scenario>& corpus() {
  static const std::vector<Scenario> s = [] {
    ExperimentConfig c = paper();
    c.seed_to = c.seed_from + 5;  // 6 seeds x 5 templates
    return generate_corpus(c);
  }();
  return s;
}

Force force_of(const Plan& p, const Scenario& sc, Side side) {
  return {raw_capability(p, sc), quality(layout_plan(p, sc), sc, side, paper().quality).q, coherence(p, sc).D, 1.0};
}

/// greedy@4's answer to `blue`.
Plan red_for(const Scenario& sc, const Plan& blue) {
  static const auto greedy = make_red_policy("greedy@4", policy_context(paper()));
  return greedy->respond(red_request(sc, blue, policy_context(paper()), "baseline")).chosen()->plan;
}

SimConfig engagement_config(double durations = 1.0, bool support = true) {
  SimConfig s = paper().sim;
  s.model = "engagement";
  s.engagement.durations = durations;
  s.engagement.support = support;
  return s;
}

TEST(EngagementOutcome, RedBreakingAloneIsAWinAndTiesGoToTheStrongerOrTheUnopposedSide) {
  EXPECT_TRUE(engagement_blue_won(0.5, 0.2, 0.3, true, true, true));    // RED broke, BLUE stands
  EXPECT_FALSE(engagement_blue_won(0.2, 0.5, 0.3, true, true, true));   // BLUE broke
  EXPECT_TRUE(engagement_blue_won(0.6, 0.5, 0.3, true, true, true));    // both stand: the stronger
  EXPECT_FALSE(engagement_blue_won(0.5, 0.5, 0.3, true, true, true));   // equal strengths are not a win
  EXPECT_TRUE(engagement_blue_won(0.2, 0.1, 0.3, true, true, true));    // both broke: the stronger
  EXPECT_TRUE(engagement_blue_won(0.0, 0.0, 0.0, false, true, false));  // at 0 both broke; no fight: unopposed
  EXPECT_TRUE(engagement_blue_won(1, 1, 0.3, false, true, false));      // BLUE advanced unopposed
  EXPECT_FALSE(engagement_blue_won(1, 1, 0.3, false, true, true));
  EXPECT_FALSE(engagement_blue_won(1, 1, 0.3, false, false, false));
}

TEST(EngagementLimit, OneEngagementOfEveryAssetAtStepZeroIsTheLanchesterModel) {
  std::size_t compared = 0;
  for (const Scenario& sc : corpus()) {
    Plan blue = sc.blue_seed_plans.front(), red = red_for(sc, blue);
    const Force fb = force_of(blue, sc, Side::Blue), fr = force_of(red, sc, Side::Red);
    // Every action a contact action in the chain (branch options too), every duration 0, no support effects: all
    // assets engage at step 0.
    for (Plan* p : {&blue, &red}) {
      for (Action& a : p->actions) {
        a.category = Category::fires;
        if (std::find(p->chain.begin(), p->chain.end(), a.id) == p->chain.end()) p->chain.push_back(a.id);
      }
      p->branches.clear();
    }
    const SimConfig cfg = engagement_config(0.0, false);
    const SimNoise noise = draw_noise(paper().seed, sc.id, cfg);
    const SimResult lan = simulate(fb, fr, noise, cfg);
    EngagementTrace tr;
    const SimResult eng = simulate_engagement(sc, blue, fb, red, fr, noise, cfg, &tr);
    EXPECT_EQ(eng.win_rate, lan.win_rate) << sc.id;
    EXPECT_EQ(eng.blue_final, lan.blue_final) << sc.id;
    EXPECT_EQ(eng.red_final, lan.red_final) << sc.id;
    EXPECT_EQ(eng.mean_steps, lan.mean_steps) << sc.id;
    // One engagement per replication, from step 0, with both whole forces.
    ASSERT_EQ(tr.engagements.size(), static_cast<std::size_t>(cfg.replications));
    for (const auto& e : tr.engagements) {
      EXPECT_EQ(e.start, 0);
      EXPECT_EQ(e.blue_share, 1.0);
      EXPECT_EQ(e.red_share, 1.0);
    }
    ++compared;
  }
  EXPECT_EQ(compared, corpus().size());
}

TEST(EngagementProperties, StrengthsStayInRangeLossesAreConservedTimeRunsForwardAndBranchesAreTakenOnce) {
  std::size_t plans = 0, engagements = 0, branched = 0;
  for (const Scenario& sc : corpus()) {
    // The seed plans and their shuffled chains, against greedy@4's answers; with and without support effects.
    for (std::size_t k = 0; k < sc.blue_seed_plans.size(); ++k)
      for (int shuffle = 0; shuffle < 3; ++shuffle)
        for (const bool support : {false, true}) {
          Plan blue = sc.blue_seed_plans[k];
          Rng rng = Rng::keyed(7, sc.id, "shuffle", static_cast<std::uint64_t>(shuffle));
          for (std::size_t i = blue.chain.size(); i > 1; --i) std::swap(blue.chain[i - 1], blue.chain[rng.pick_index(i)]);
          const Plan red = red_for(sc, blue);
          const Force fb = force_of(blue, sc, Side::Blue), fr = force_of(red, sc, Side::Red);
          const SimConfig cfg = engagement_config(1.0, support);
          const SimNoise noise = draw_noise(paper().seed, sc.id, cfg);
          EngagementTrace tr;
          const SimResult res = simulate_engagement(sc, blue, fb, red, fr, noise, cfg, &tr);
          ASSERT_EQ(tr.outcomes.size(), static_cast<std::size_t>(cfg.replications));
          int wins = 0;
          std::vector<double> lost_b(tr.outcomes.size(), 0), lost_r(tr.outcomes.size(), 0);
          std::vector<int> last_end(tr.outcomes.size(), 0);
          for (const auto& e : tr.engagements) {
            ++engagements;
            const auto i = static_cast<std::size_t>(e.replication);
            EXPECT_GE(e.start, last_end[i]);  // time runs forward, engagements do not overlap
            EXPECT_GT(e.end, e.start);
            EXPECT_LE(e.end, tr.outcomes[i].steps);
            last_end[i] = e.end;
            for (double v : {e.blue_before, e.blue_after, e.red_before, e.red_after}) {
              EXPECT_GE(v, 0.0);
              EXPECT_LE(v, 1.0);
            }
            EXPECT_GT(e.blue_share, 0.0);
            EXPECT_LE(e.blue_share, 1.0);
            if (!support) {  // without restoration a strength only falls
              EXPECT_LE(e.blue_after, e.blue_before);
              EXPECT_LE(e.red_after, e.red_before);
              lost_b[i] += e.blue_before - e.blue_after;
              lost_r[i] += e.red_before - e.red_after;
            }
          }
          for (const auto& o : tr.outcomes) {
            wins += o.blue_won ? 1 : 0;
            EXPECT_GE(o.blue_final, 0.0);
            EXPECT_LE(o.blue_final, 1.0);
            if (!support) {  // conservation: what the engagements took is what the side lost, and all it lost
              EXPECT_NEAR(lost_b[static_cast<std::size_t>(o.replication)], o.blue_loss, 1e-12);
              EXPECT_NEAR(1.0 - o.blue_final, o.blue_loss, 1e-12);
              EXPECT_NEAR(1.0 - o.red_final, o.red_loss, 1e-12);
            }
            std::set<std::string> at;  // each branch decided at most once
            std::string s = o.blue_branches;
            for (std::size_t p = 0; p < s.size();) {
              const std::size_t q = std::min(s.find(';', p), s.size());
              EXPECT_TRUE(at.insert(s.substr(p, s.find('=', p) - p)).second) << s;
              p = q + 1;
            }
            branched += at.size();
          }
          EXPECT_EQ(res.win_rate, static_cast<double>(wins) / cfg.replications);
          ++plans;
        }
  }
  EXPECT_GT(engagements, plans);
  EXPECT_GT(branched, 0u);  // some plans branch, and their branches are decided
}

TEST(EngagementProperties, ChainStepsStartWhenTheirPredecessorsEnd) {
  const Scenario& sc = corpus().front();
  const SimConfig cfg = engagement_config();
  const Plan& p = sc.blue_seed_plans.front();
  // Every step's duration is its category's base (movement by mobility); a chain of contact-free steps never engages,
  // so the replication ends at the time limit, and the steps' sum is what the plan takes.
  int total = 0;
  for (const auto& id : p.chain) total += action_steps(p.actions[static_cast<std::size_t>(p.find_action(id))], sc, cfg);
  EXPECT_GT(total, 0);
  for (const auto& a : p.actions) {
    const int d = action_steps(a, sc, cfg);
    EXPECT_GE(d, 0);
    if (a.category != Category::movement) {
      SimConfig half = cfg;
      half.engagement.durations = 0.5;
      EXPECT_LE(action_steps(a, sc, half), d);
    }
  }
  // A plan whose only contact action is its last chain step engages exactly when the steps before it have ended.
  Plan late = p;
  int before = 0;
  for (std::size_t k = 0; k < late.chain.size(); ++k) {
    Action& a = late.actions[static_cast<std::size_t>(late.find_action(late.chain[k]))];
    if (k + 1 < late.chain.size()) {
      a.category = Category::information;
      before += action_steps(a, sc, cfg);
    } else {
      a.category = Category::fires;
    }
  }
  const Plan red = red_for(sc, p);
  const SimNoise noise = draw_noise(paper().seed, sc.id, cfg);
  EngagementTrace tr;
  simulate_engagement(sc, late, force_of(late, sc, Side::Blue), red, force_of(red, sc, Side::Red), noise, cfg, &tr);
  ASSERT_FALSE(tr.engagements.empty());
  int first = 1 << 30;
  for (const auto& e : tr.engagements)
    if (!e.blue_assets.empty()) first = std::min(first, e.start);
  EXPECT_GE(first, before);
}

/// The mean BLUE win rate and BLUE loss over the corpus of `make(scenario)` against greedy@4's answer to the seed plan,
/// with BLUE's force (raw capability, q, D) that of `ref(scenario)`: the same q and D, only the structure differs.
std::pair<double, double> mean_outcome(const std::function<Plan(const Scenario&)>& make,
                                       const std::function<Plan(const Scenario&)>& ref) {
  double wins = 0, loss = 0;
  std::size_t n = 0;
  for (const Scenario& sc : corpus()) {
    const Plan blue = make(sc), red = red_for(sc, sc.blue_seed_plans.front());
    const SimConfig cfg = engagement_config();
    const SimNoise noise = draw_noise(paper().seed, sc.id, cfg);
    EngagementTrace tr;
    wins += simulate_engagement(sc, blue, force_of(ref(sc), sc, Side::Blue), red, force_of(red, sc, Side::Red), noise,
                                cfg, &tr).win_rate;
    for (const auto& o : tr.outcomes) loss += o.blue_loss / static_cast<double>(tr.outcomes.size());
    ++n;
  }
  return {wins / static_cast<double>(n), loss / static_cast<double>(n)};
}

/// The seed plan with its chain in a well-ordered form: support steps (information, protection, cyber, command,
/// deception, sustainment) first, contact steps (fires, movement) after.
Plan well_ordered(const Scenario& sc) {
  Plan p = sc.blue_seed_plans.front();
  std::stable_partition(p.chain.begin(), p.chain.end(), [&](const std::string& id) {
    const Category c = p.actions[static_cast<std::size_t>(p.find_action(id))].category;
    return c != Category::fires && c != Category::movement;
  });
  return p;
}

TEST(EngagementSensitivity, ReversingAWellOrderedChainLowersTheWinRate) {
  const auto [ordered, ordered_loss] = mean_outcome(well_ordered, well_ordered);
  const auto [reversed, reversed_loss] = mean_outcome(
      [](const Scenario& sc) {
        Plan p = well_ordered(sc);
        std::reverse(p.chain.begin(), p.chain.end());
        return p;
      },
      well_ordered);
  std::printf("win rate: well-ordered %.4f, reversed %.4f (difference %.4f)\n", ordered, reversed, ordered - reversed);
  EXPECT_GT(ordered, reversed);
}

TEST(EngagementSensitivity, RemovingAProtectionStepRaisesBluesLosses) {
  // The well-ordered seed plan with a protection step first, by an asset the plan already uses, and the same plan
  // with that step a public-information step (the same three steps, no effect), both with the first plan's force.
  auto with = [](const Scenario& sc) {
    Plan p = well_ordered(sc);
    Action a = p.actions.front();
    a.id = "protect-test";
    a.category = Category::protection;
    a.verb = "harden";
    p.actions.push_back(a);
    p.chain.insert(p.chain.begin(), a.id);
    return p;
  };
  auto without = [&](const Scenario& sc) {
    Plan p = with(sc);
    p.actions.back().category = Category::public_information;
    return p;
  };
  const auto [win_with, loss_with] = mean_outcome(with, with);
  const auto [win_without, loss_without] = mean_outcome(without, with);
  std::printf("BLUE loss to RED's direct fire: with protection %.4f, without %.4f (difference %.4f); win rate %.4f vs %.4f\n",
              loss_with, loss_without, loss_without - loss_with, win_with, win_without);
  EXPECT_GT(loss_without, loss_with);
}

}  // namespace
}  // namespace advplan

namespace advplan {
namespace {

TEST(EngagementOutcome, WithNoEngagementBlueWinsExactlyWhenItAdvancedUnopposed) {
  const Scenario& sc = corpus().front();
  const SimConfig cfg = engagement_config();
  const SimNoise noise = draw_noise(paper().seed, sc.id, cfg);
  // Each plan's chain with every action made a contact action (fires) or a non-contact one (information).
  auto as = [&](Plan p, Category c) {
    for (Action& a : p.actions) a.category = c;
    p.branches.clear();
    return p;
  };
  const Plan blue = sc.blue_seed_plans.front(), red = red_for(sc, blue);
  const Force fb = force_of(blue, sc, Side::Blue), fr = force_of(red, sc, Side::Red);
  auto win = [&](Category bc, Category rc) {
    EngagementTrace tr;
    const double w = simulate_engagement(sc, as(blue, bc), fb, as(red, rc), fr, noise, cfg, &tr).win_rate;
    return std::pair{w, tr.engagements.size()};
  };
  EXPECT_EQ(win(Category::fires, Category::information), (std::pair{1.0, std::size_t{0}}));        // unopposed
  EXPECT_EQ(win(Category::information, Category::fires), (std::pair{0.0, std::size_t{0}}));        // BLUE never came
  EXPECT_EQ(win(Category::information, Category::information), (std::pair{0.0, std::size_t{0}}));  // nobody moved
  EXPECT_GT(win(Category::fires, Category::fires).second, 0u);                                      // a fight
}

}  // namespace
}  // namespace advplan

namespace advplan {
namespace {

/// Records every decision point and answers with `answer` (nullptr: the default rule).
struct RecordingReplanner final : Replanner {
  std::vector<DecisionPoint> seen;
  const Plan* answer = nullptr;
  const Plan* replan(const DecisionPoint& d) override {
    seen.push_back(d);
    return answer;
  }
};

/// A scenario of the corpus whose seed plan has a branch, with its seed plan and RED's answer.
const Scenario& branching_scenario() {
  for (const Scenario& sc : corpus())
    if (!sc.blue_seed_plans.front().branches.empty()) return sc;
  ADD_FAILURE() << "no seed plan branches";
  return corpus().front();
}

TEST(EngagementReplanning, DecisionPointsReachTheReplannerAndARevisedPlanIsPlayed) {
  const Scenario& sc = branching_scenario();
  const SimConfig cfg = engagement_config();
  const SimNoise noise = draw_noise(paper().seed, sc.id, cfg);
  const Plan& blue = sc.blue_seed_plans.front();
  const Plan red = red_for(sc, blue);
  const Force fb = force_of(blue, sc, Side::Blue), fr = force_of(red, sc, Side::Red);
  EngagementTrace plain;
  const SimResult base = simulate_engagement(sc, blue, fb, red, fr, noise, cfg, &plain);

  // A replanner that always declines: the default rule decides, the same bits; it saw each replication's branch
  // point once, with what had started and what remained.
  RecordingReplanner decline;
  EngagementTrace tr;
  const SimResult same = simulate_engagement(sc, blue, fb, red, fr, noise, cfg, &tr, 1 << 30, {nullptr, nullptr, &decline});
  EXPECT_EQ(same.win_rate, base.win_rate);
  EXPECT_EQ(same.blue_final, base.blue_final);
  ASSERT_FALSE(decline.seen.empty());
  std::set<std::pair<int, std::size_t>> once;
  for (const DecisionPoint& d : decline.seen) {
    EXPECT_EQ(d.side, Side::Blue);
    EXPECT_EQ(d.plan, &blue);
    EXPECT_TRUE(once.insert({d.replication, d.branch}).second) << "a branch point asked twice";
    ASSERT_FALSE(d.done.empty());
    EXPECT_EQ(d.done.back(), blue.branches[d.branch].at);  // the branch's step is the last one started
    EXPECT_EQ(d.done.size() + d.remaining.size(), blue.chain.size());  // the chain, split at the point
    EXPECT_GE(d.own, 0.0);
    EXPECT_LE(d.own, 1.0);
  }
  EXPECT_LE(decline.seen.size(), static_cast<std::size_t>(cfg.replications * blue.branches.size()));

  // A revised plan that commits everything to fires at once: it is played from the decision point on.
  Plan all_in;
  all_in.plan_id = "all-in";
  all_in.side = Side::Blue;
  all_in.objective = blue.objective;
  for (const Asset& a : sc.assets)
    if (a.side == Side::Blue) {
      all_in.actions.push_back({"x" + std::to_string(all_in.actions.size()), a.id, "strike", Category::fires, "r", 3, {}});
      all_in.chain.push_back(all_in.actions.back().id);
    }
  RecordingReplanner revise;
  revise.answer = &all_in;
  EngagementTrace rt;
  const SimResult revised = simulate_engagement(sc, blue, fb, red, fr, noise, cfg, &rt, 1 << 30, {nullptr, nullptr, &revise});
  std::size_t replanned = 0;
  for (const auto& o : rt.outcomes) replanned += o.blue_branches.find("=replan") != std::string::npos ? 1 : 0;
  EXPECT_EQ(replanned, revise.seen.size());  // every point it answered took the revised plan
  bool full = false;  // after a replan every BLUE asset is in the fight
  for (const auto& e : rt.engagements) full = full || e.blue_share == 1.0;
  EXPECT_TRUE(full);
  EXPECT_NE(revised.win_rate, base.win_rate);
  std::printf("[ replanning ] all-in at the branch point: win rate %.3f against %.3f by the default rule\n",
              revised.win_rate, base.win_rate);
}

}  // namespace
}  // namespace advplan
