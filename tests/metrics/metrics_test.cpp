// Metrics against small plans worked by hand ("Algorithms tested against known values").
// The scenario is tests/support/fixtures.hpp's tiny_scenario(); every expected number is derived in the comments
// from the formulas of src/metrics/{quality,structure,coherence,plan_layout}.cpp:
//   supply_c = sum weight * capability * (priority / 5) * terrain factor; terrain factor = category modifier,
//              times terrain mobility * (.5 + .5 * asset mobility) for movement, times visibility for information
//   e = sum_c min(w_c, supply_c / S)          c = min(1, sum weight * asset cost / budget)
//   exposure = min(1, base_c * terrain exposure)   r = sum weight * exposure * (1 - .7 coverage) / sum weight
//   q = w_e e + w_c (1 - c) + w_r (1 - r)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <sstream>
#include <string>

#include "advplan/core/validation.hpp"
#include "advplan/run/config.hpp"
#include "advplan/metrics/coherence.hpp"
#include "advplan/metrics/plan_layout.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/metrics/structure.hpp"
#include "support/fixtures.hpp"

namespace advplan {
namespace {

using testing::act;
using testing::make_plan;
using testing::tiny_scenario;
using C = Category;
constexpr double kTol = 1e-12;

/// Normalised entropy of a load vector over ln(n).
double entropy_over(std::initializer_list<double> loads, double n) {
  double total = 0;
  for (double l : loads) total += l;
  double h = 0;
  for (double l : loads) h -= (l / total) * std::log(l / total);
  return h / std::log(n);
}

// Plan L: six chain steps, no branch.
//   pos action                       supply (cap * prio/5 * terrain factor)
//   0   l1 b1 transit  movement   p4   .5 * .8 * (1.25 * .8 * (.5 + .5*.5)) = .5 * .8 * .75 = .3
//   1   l2 b2 scan     information p5  .8 * 1 * (1 * .5)                       = .4
//   2   l3 b1 hold     protection  p5  .5 * 1 * 1                              = .5
//   3   l4 b3 strike   fires       p5  1 * 1 * .5                              = .5
//   4   l5 b3 return   movement    p5  1 * 1 * (1.25 * .8 * (.5 + 0))          = .5
//   5   l6 b1 resupply sustainment p5  .5 * 1 * 1                              = .5
Plan plan_linear() {
  Plan p = make_plan("Secure the bridge and hold the market",
                     {act("l1", "b1", "transit", C::movement, "bridge", 4), act("l2", "b2", "scan", C::information, "bridge", 5),
                      act("l3", "b1", "hold", C::protection, "market", 5), act("l4", "b3", "strike", C::fires, "market", 5),
                      act("l5", "b3", "return", C::movement, "depot", 5),
                      act("l6", "b1", "resupply", C::sustainment, "depot", 5)},
                     {"l1", "l2", "l3", "l4", "l5", "l6"});
  p.roles = {{"b1", "maneuver"}, {"b2", "isr"}};
  return p;
}

// Plan B: chain c1 c2 c3, a branch at c2 with options [o1] and [o2, o3] (weight 1/2 each).
//   pos      action                      weighted supply
//   0        c1 b2 scan     information   .8 * .5                    = .4
//   1        c2 b1 transit  movement      .5 * .75                   = .375
//   2        c3 b3 strike   fires         1 * .5                     = .5
//   1+1/2    o1 b1 hold     protection    .5 * (.5 * 1)              = .25
//   1+1/3    o2 b2 decoy    deception     .5 * (.8 * 1)              = .4
//   1+2/3    o3 b1 advance  movement      .5 * (.5 * .75)            = .1875
Plan plan_branch() {
  Branch br;
  br.at = "c2";
  br.condition = "ridge clear";
  br.options = {{"o1"}, {"o2", "o3"}};
  return make_plan("Take the ridge",
                   {act("c1", "b2", "scan", C::information, "ridge", 5), act("c2", "b1", "transit", C::movement, "ridge", 5),
                    act("c3", "b3", "strike", C::fires, "town", 5), act("o1", "b1", "hold", C::protection, "town", 5),
                    act("o2", "b2", "decoy", C::deception, "ridge", 5), act("o3", "b1", "advance", C::movement, "town", 5)},
                   {"c1", "c2", "c3"}, {br});
}

TEST(TinyScenario, IsTheOneTheHandCalculationsAssume) {
  const Scenario sc = tiny_scenario();
  // Both hand-worked plans are valid plans of the scenario, so the metrics are scored on legal input.
  EXPECT_THAT(validate_plan(plan_linear(), sc), ::testing::IsEmpty());
  EXPECT_THAT(validate_plan(plan_branch(), sc), ::testing::IsEmpty());
}

// ---------------------------------------------------------------------------------------------------------
// Layout
// ---------------------------------------------------------------------------------------------------------

TEST(PlanLayout, ChainThenOptionsWithPositionsAndOptionWeights) {
  const Scenario sc = tiny_scenario();
  const Plan p = plan_branch();
  const auto layout = layout_plan(p, sc);
  ASSERT_EQ(layout.size(), 6u);
  const char* ids[] = {"c1", "c2", "c3", "o1", "o2", "o3"};
  // chain: position = index, weight 1; option k step m of a branch at chain index 1: 1 + (m+1)/(len+1), 1/2.
  const double pos[] = {0, 1, 2, 1.0 + 1.0 / 2.0, 1.0 + 1.0 / 3.0, 1.0 + 2.0 / 3.0};
  const double w[] = {1, 1, 1, 0.5, 0.5, 0.5};
  const int option[] = {-1, -1, -1, 0, 1, 1};
  for (std::size_t i = 0; i < layout.size(); ++i) {
    SCOPED_TRACE(ids[i]);
    EXPECT_EQ(layout[i].action->id, ids[i]);
    EXPECT_NEAR(layout[i].position, pos[i], kTol);
    EXPECT_NEAR(layout[i].weight, w[i], kTol);
    EXPECT_EQ(layout[i].in_chain, i < 3);
    EXPECT_EQ(layout[i].branch, i < 3 ? -1 : 0);
    EXPECT_EQ(layout[i].option, option[i]);
    ASSERT_NE(layout[i].asset, nullptr);
    EXPECT_EQ(layout[i].asset->id, p.actions[i].asset);
  }
}

TEST(PlanLayout, ThreeOptionsWeighOneThirdEach) {
  const Scenario sc = tiny_scenario();
  Branch br{"x1", "cond", {{"y1"}, {"y2"}, {"y3"}}};
  const Plan p = make_plan("Go", {act("x1", "b1", "transit", C::movement, "bridge", 3), act("x2", "b3", "strike", C::fires, "bridge", 3),
                                  act("y1", "b1", "advance", C::movement, "depot", 3), act("y2", "b3", "advance", C::movement, "depot", 3),
                                  act("y3", "b2", "scan", C::information, "depot", 3)},
                           {"x1", "x2"}, {br});
  const auto layout = layout_plan(p, sc);
  ASSERT_EQ(layout.size(), 5u);
  for (std::size_t i = 2; i < 5; ++i) {
    EXPECT_NEAR(layout[i].weight, 1.0 / 3.0, kTol);
    EXPECT_NEAR(layout[i].position, 0.5, kTol);  // 0 + (0+1)/(1+1)
  }
}

TEST(PlanLayout, StartAndEndVerbsAreThePapersLists) {
  for (const char* v : {"transit", "deploy", "marshal", "prepare", "assess", "scan", "recon"}) {
    EXPECT_TRUE(is_start_verb(v)) << v;
    EXPECT_FALSE(is_end_verb(v)) << v;
  }
  for (const char* v : {"return", "withdraw", "hold", "evade", "relocate", "continue", "support", "mitigate"}) {
    EXPECT_TRUE(is_end_verb(v)) << v;
    EXPECT_FALSE(is_start_verb(v)) << v;
  }
  for (const char* v : {"strike", "advance", "resupply", "", "Transit"}) {
    EXPECT_FALSE(is_start_verb(v)) << v;
    EXPECT_FALSE(is_end_verb(v)) << v;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Quality: e, c, coverage, exposure, r, q
// ---------------------------------------------------------------------------------------------------------

TEST(Quality, EffectivenessCapsEachCategoryAtItsNeed) {
  const Scenario sc = tiny_scenario();
  // Plan L, supply / S (S = 2):  movement (.3 + .5)/2 = .4  -> min(.35, .4)  = .35 (capped)
  //                              information .4/2 = .2       -> min(.25, .2)  = .2  (uncapped)
  //                              fires .5/2 = .25            -> min(.2, .25)  = .2  (capped)
  //                              protection .25 -> .1, sustainment .25 -> .1 (capped)
  // e = .35 + .2 + .2 + .1 + .1 = .95
  EXPECT_NEAR(effectiveness(layout_plan(plan_linear(), sc), sc, Side::Blue), 0.95, kTol);
  // Plan B: movement (.375 + .1875)/2 = .28125 (< .35), information .2, fires .2 (capped), protection .125 -> .1,
  // deception .2 but its weight is 0 -> 0.  e = .28125 + .2 + .2 + .1 = .78125
  EXPECT_NEAR(effectiveness(layout_plan(plan_branch(), sc), sc, Side::Blue), 0.78125, kTol);
}

TEST(Quality, CostIsExpectedSpendOverBudgetCappedAtOne) {
  const Scenario sc = tiny_scenario();
  // L: b1 2 + b2 4 + b1 2 + b3 1 + b3 1 + b1 2 = 12;  12 / 16 = .75
  EXPECT_NEAR(cost(layout_plan(plan_linear(), sc), sc, Side::Blue), 0.75, kTol);
  // B: chain 4 + 2 + 1 = 7, options .5 * (2 + 4 + 2) = 4;  11 / 16 = .6875
  EXPECT_NEAR(cost(layout_plan(plan_branch(), sc), sc, Side::Blue), 0.6875, kTol);
  // Five b2 actions spend 20 > 16: capped at 1.
  const Plan p = make_plan("Look", {act("s1", "b2", "scan", C::information, "bridge", 3), act("s2", "b2", "scan", C::information, "bridge", 3),
                                    act("s3", "b2", "scan", C::information, "bridge", 3), act("s4", "b2", "scan", C::information, "bridge", 3),
                                    act("s5", "b2", "scan", C::information, "bridge", 3)},
                           {"s1", "s2", "s3", "s4", "s5"});
  EXPECT_NEAR(cost(layout_plan(p, sc), sc, Side::Blue), 1.0, kTol);
}

TEST(Quality, CoverageOfTheLinearPlan) {
  const Scenario sc = tiny_scenario();
  // The only protector is l3 (hold, b1, market) at position 2; it covers later actions only.
  //   l1, l2 come before it: 0;  l3 itself: 0
  //   l4 (b3, market): same target -> 1;  l5 (b3, depot): neither -> .5;  l6 (b1, depot): same asset -> 1
  const auto cov = coverage(layout_plan(plan_linear(), sc));
  ASSERT_EQ(cov.size(), 6u);
  const double expected[] = {0, 0, 0, 1, 0.5, 1};
  for (std::size_t i = 0; i < 6; ++i) EXPECT_NEAR(cov[i], expected[i], kTol) << "action " << i;
}

TEST(Quality, CoverageOfTheBranchPlanStaysOnItsOwnPath) {
  const Scenario sc = tiny_scenario();
  // Protectors: o1 (hold, option 0, pos 1.5, b1, town) and o2 (decoy, option 1, pos 1.33, b2, ridge).
  //   c1, c2: both protectors come later: 0
  //   c3 (chain, pos 2, b3, town): o1 close 1 * option weight .5 + o2 far .5 * .5 = .75
  //   o1: o2 is on the other option: 0;  o2: o1 is on the other option (and later): 0
  //   o3 (option 1, pos 1.67, b1, town): o2 same option, earlier, far -> .5; o1 other option -> 0
  const auto cov = coverage(layout_plan(plan_branch(), sc));
  ASSERT_EQ(cov.size(), 6u);
  const double expected[] = {0, 0, 0.75, 0, 0, 0.5};
  for (std::size_t i = 0; i < 6; ++i) EXPECT_NEAR(cov[i], expected[i], kTol) << "action " << i;
}

TEST(Quality, CoverageIsCappedAtOne) {
  const Scenario sc = tiny_scenario();
  // p1, p2 both protect target x; p3 gets 1 + 1 = 2 -> 1.  p2 gets 1 from p1.  p1 gets nothing (p2 is later).
  const Plan p = make_plan("Hold x", {act("p1", "b1", "harden", C::protection, "x", 3), act("p2", "b1", "hold", C::protection, "x", 3),
                                      act("p3", "b3", "strike", C::fires, "x", 3)},
                           {"p1", "p2", "p3"});
  const auto cov = coverage(layout_plan(p, sc));
  ASSERT_EQ(cov.size(), 3u);
  EXPECT_NEAR(cov[0], 0.0, kTol);
  EXPECT_NEAR(cov[1], 1.0, kTol);
  EXPECT_NEAR(cov[2], 1.0, kTol);
}

TEST(Quality, ExposureIsBaseTimesTerrainCappedAtOne) {
  const Scenario sc = tiny_scenario();
  const Plan plan = plan_linear();  // the layout points into the plan: keep it alive
  const auto layout = layout_plan(plan, sc);
  // terrain exposure 2: movement .3*2 = .6, information .1*2 = .2, protection .05*2 = .1,
  // fires .6*2 = 1.2 -> 1, sustainment .2*2 = .4
  const double expected[] = {0.6, 0.2, 0.1, 1.0, 0.6, 0.4};
  for (std::size_t i = 0; i < layout.size(); ++i) EXPECT_NEAR(exposure(layout[i], sc), expected[i], kTol) << i;
}

TEST(Quality, RiskIsTheWeightedMeanOfUncoveredExposure) {
  const Scenario sc = tiny_scenario();
  // L: .6 + .2 + .1 + 1*(1 - .7) + .6*(1 - .35) + .4*(1 - .7) = .6 + .2 + .1 + .3 + .39 + .12 = 1.71;  / 6 = .285
  EXPECT_NEAR(risk(layout_plan(plan_linear(), sc), sc), 0.285, kTol);
  // B: c1 .2 + c2 .6 + c3 1*(1 - .525) + o1 .5*.1 + o2 .5*.2 + o3 .5*.6*(1 - .35)
  //    = .2 + .6 + .475 + .05 + .1 + .195 = 1.62;  weights 3 + 1.5 = 4.5;  r = .36
  EXPECT_NEAR(risk(layout_plan(plan_branch(), sc), sc), 0.36, kTol);
}

TEST(Quality, QualityWithDefaultWeights) {
  const Scenario sc = tiny_scenario();
  // L: q = .5 * .95 + .3 * (1 - .75) + .2 * (1 - .285) = .475 + .075 + .143 = .693
  const auto l = quality(plan_linear(), sc);
  EXPECT_NEAR(l.e, 0.95, kTol);
  EXPECT_NEAR(l.c, 0.75, kTol);
  EXPECT_NEAR(l.r, 0.285, kTol);
  EXPECT_NEAR(l.q, 0.693, kTol);
  // B: q = .5 * .78125 + .3 * (1 - .6875) + .2 * (1 - .36) = .390625 + .09375 + .128 = .612375
  const auto b = quality(plan_branch(), sc);
  EXPECT_NEAR(b.e, 0.78125, kTol);
  EXPECT_NEAR(b.c, 0.6875, kTol);
  EXPECT_NEAR(b.r, 0.36, kTol);
  EXPECT_NEAR(b.q, 0.612375, kTol);
}

TEST(Quality, QualityWithCustomWeights) {
  const Scenario sc = tiny_scenario();
  const QualityWeights w{0.2, 0.2, 0.6};
  // L: .2 * .95 + .2 * .25 + .6 * .715 = .19 + .05 + .429 = .669
  EXPECT_NEAR(quality(plan_linear(), sc, w).q, 0.669, kTol);
  // B: .2 * .78125 + .2 * .3125 + .6 * .64 = .15625 + .0625 + .384 = .60275
  EXPECT_NEAR(quality(plan_branch(), sc, w).q, 0.60275, kTol);
  // Effectiveness only: q = e.
  EXPECT_NEAR(quality(plan_linear(), sc, QualityWeights{1, 0, 0}).q, 0.95, kTol);
}

TEST(Quality, RedPlanUsesRedRequirementsAndBudget) {
  const Scenario sc = tiny_scenario();
  // r1 advance (movement, p5): .6 * 1 * (1.25 * .8 * (.5 + .5*.5)) = .45;  S = 1 -> min(.5, .45) = .45
  // c = 1 / 5 = .2;  r = .6 (uncovered movement);  q = .5*.45 + .3*.8 + .2*.4 = .225 + .24 + .08 = .545
  const Plan p = make_plan("Contest the bridge", {act("r", "r1", "advance", C::movement, "bridge", 5)}, {"r"}, {}, Side::Red);
  const auto q = quality(p, sc);
  EXPECT_NEAR(q.e, 0.45, kTol);
  EXPECT_NEAR(q.c, 0.2, kTol);
  EXPECT_NEAR(q.r, 0.6, kTol);
  EXPECT_NEAR(q.q, 0.545, kTol);
}

// ---------------------------------------------------------------------------------------------------------
// Structure: O, P_V, W
// ---------------------------------------------------------------------------------------------------------

TEST(Structure, LinearPlan) {
  // O: no branch -> 0/6.  P_V: six distinct (asset, verb, category) / six events = 1.
  // W: b1 (transit start, hold end) complete; b2 (scan) start only; b3 (strike, return) end only -> 1/3.
  const auto s = structure(plan_linear());
  EXPECT_NEAR(s.O, 0.0, kTol);
  EXPECT_NEAR(s.P_V, 1.0, kTol);
  EXPECT_NEAR(s.W, 1.0 / 3.0, kTol);
}

TEST(Structure, BranchPlanHasOptionality) {
  // O: c2 is the `at` of a branch: 1/3.  P_V: 6 distinct signatures over 6 events (3 chain + 3 option) = 1.
  // W: b1 (transit, hold in option 0, advance) complete; b2 (scan, decoy) start only; b3 (strike) -> 1/3.
  const Plan p = plan_branch();
  EXPECT_NEAR(path_optionality(p), 1.0 / 3.0, kTol);
  EXPECT_NEAR(vertex_parsimony(p), 1.0, kTol);
  EXPECT_NEAR(worldline_completion(p), 1.0 / 3.0, kTol);
}

TEST(Structure, OptionalityCountsChainStepsNotBranches) {
  // Two branches at t2 and one at t3 over four chain steps: 2 steps carry a branch -> 2/4, not 3/4.
  Plan p = make_plan("Go", {act("t1", "b1", "transit", C::movement, "a", 3), act("t2", "b1", "advance", C::movement, "b", 3),
                            act("t3", "b3", "strike", C::fires, "c", 3), act("t4", "b3", "return", C::movement, "d", 3)},
                     {"t1", "t2", "t3", "t4"});
  p.branches = {Branch{"t2", "x", {{"u1"}, {"u2"}}}, Branch{"t2", "y", {{"u3"}, {"u4"}}}};
  EXPECT_NEAR(path_optionality(p), 1.0 / 4.0, kTol);
  p.branches.push_back(Branch{"t3", "z", {{"u5"}, {"u6"}}});
  EXPECT_NEAR(path_optionality(p), 2.0 / 4.0, kTol);
}

TEST(Structure, OneChainStep) {
  // One step, no branch: O = 0/1 = 0; P_V = 1/1; W: b1 has only the start verb transit -> 0/1.
  const Plan p = make_plan("Go", {act("s1", "b1", "transit", C::movement, "bridge", 5)}, {"s1"});
  EXPECT_NEAR(path_optionality(p), 0.0, kTol);
  EXPECT_NEAR(vertex_parsimony(p), 1.0, kTol);
  EXPECT_NEAR(worldline_completion(p), 0.0, kTol);
}

TEST(Structure, EverySignatureDuplicatedGivesOneOverN) {
  // Four events, all (b1, transit, movement): P_V = 1/4.
  const Plan chain_only = make_plan("Go", {act("d1", "b1", "transit", C::movement, "a", 1), act("d2", "b1", "transit", C::movement, "b", 2),
                                           act("d3", "b1", "transit", C::movement, "c", 3), act("d4", "b1", "transit", C::movement, "d", 4)},
                                    {"d1", "d2", "d3", "d4"});
  EXPECT_NEAR(vertex_parsimony(chain_only), 1.0 / 4.0, kTol);
  // The same four actions placed as two chain steps plus a two-option branch: option actions are events too.
  Plan with_branch = chain_only;
  with_branch.chain = {"d1", "d2"};
  with_branch.branches = {Branch{"d1", "c", {{"d3"}, {"d4"}}}};
  EXPECT_NEAR(vertex_parsimony(with_branch), 1.0 / 4.0, kTol);
  EXPECT_NEAR(path_optionality(with_branch), 1.0 / 2.0, kTol);
  // Target and priority are not part of the signature; the verb is: two signatures over four events.
  Plan two = chain_only;
  two.actions[2].verb = "advance";
  two.actions[3].verb = "advance";
  EXPECT_NEAR(vertex_parsimony(two), 2.0 / 4.0, kTol);
}

TEST(Structure, WorldlineNeedsBothAStartAndAnEndVerb) {
  // b1 transit, deploy (both start verbs) -> 0.
  Plan p = make_plan("Go", {act("w1", "b1", "transit", C::movement, "a", 3), act("w2", "b1", "deploy", C::movement, "b", 3)},
                     {"w1", "w2"});
  EXPECT_NEAR(worldline_completion(p), 0.0, kTol);
  // Add an end verb for b1 in the chain: 1/1.
  p.actions.push_back(act("w3", "b1", "return", C::movement, "c", 3));
  p.chain.push_back("w3");
  EXPECT_NEAR(worldline_completion(p), 1.0, kTol);
  // An end verb inside a branch option counts; b3 (strike) is used but incomplete: 1/2.
  Plan q = make_plan("Go", {act("v1", "b1", "transit", C::movement, "a", 3), act("v2", "b3", "strike", C::fires, "b", 3),
                            act("v3", "b1", "return", C::movement, "c", 3), act("v4", "b3", "strike", C::fires, "d", 3)},
                     {"v1", "v2"}, {Branch{"v1", "c", {{"v3"}, {"v4"}}}});
  EXPECT_NEAR(worldline_completion(q), 1.0 / 2.0, kTol);
}

// ---------------------------------------------------------------------------------------------------------
// Coherence: six sub-scores and D
// ---------------------------------------------------------------------------------------------------------

TEST(Coherence, LinearPlanEverySubScore) {
  const Scenario sc = tiny_scenario();
  const auto c = coherence(plan_linear(), sc);
  // objective clarity: "Secure the bridge and hold the market" has 7 words (4..30) -> 1; it names target
  //   "bridge" -> 1; used assets b1, b2, b3, of which b1 and b2 have roles -> 2/3.   (1 + 1 + 2/3) / 3 = 8/9
  const double clarity = (1.0 + 1.0 + 2.0 / 3.0) / 3.0;
  // information preparation: first information action l2 at position 1; fires/movement: l1 (0, not prepared),
  //   l4 (3), l5 (4) -> 2/3
  const double prep = 2.0 / 3.0;
  // resource balance: loads b1 3, b2 1, b3 2 of 6; n = min(6 actions, 3 BLUE assets) = 3
  const double balance = entropy_over({3, 1, 2}, 3);
  // sustainment: one sustainment action / ceil(6 / 4) = 1/2
  const double sust = 0.5;
  // risk mitigation: exposed (>= .5): l1 (.6, cov 0), l4 (1, cov 1), l5 (.6, cov .5) -> 1.5 / 3 = .5
  const double mit = 0.5;
  // tempo: phases transit 0, scan 0, hold 2, strike 1, return 2, resupply 1; non-decreasing pairs 3 of 5
  const double tempo = 3.0 / 5.0;
  EXPECT_NEAR(c[CoherencePart::objective_clarity], clarity, kTol);
  EXPECT_NEAR(c[CoherencePart::information_preparation], prep, kTol);
  EXPECT_NEAR(c[CoherencePart::resource_balance], balance, kTol);
  EXPECT_NEAR(c[CoherencePart::sustainment], sust, kTol);
  EXPECT_NEAR(c[CoherencePart::risk_mitigation], mit, kTol);
  EXPECT_NEAR(c[CoherencePart::tempo_sequencing], tempo, kTol);
  EXPECT_NEAR(c.D, (clarity + prep + balance + sust + mit + tempo) / 6.0, kTol);
  // The sub-score in numbers: H(1/2, 1/6, 1/3) / ln 3 = 0.920619835714305 (python math.log)
  EXPECT_NEAR(balance, 0.920619835714305, 1e-12);
}

TEST(Coherence, BranchPlanEverySubScore) {
  const Scenario sc = tiny_scenario();
  const auto c = coherence(plan_branch(), sc);
  // clarity: "Take the ridge" is 3 words -> .5; names "ridge" -> 1; no roles -> 0.   1.5 / 3 = .5
  const double clarity = 0.5;
  // preparation: c1 (information) at 0; c2 (1), c3 (2), o3 (1.67) all later -> 1
  const double prep = 1.0;
  // balance: expected loads b2 1 + .5 = 1.5, b1 1 + .5 + .5 = 2, b3 1; n = min(6, 3) = 3
  const double balance = entropy_over({1.5, 2.0, 1.0}, 3);
  // sustainment: none / ceil(6/4) = 0
  const double sust = 0.0;
  // mitigation: exposed c2 (.6, cov 0), c3 (1, cov .75), o3 (.6, cov .5) -> 1.25 / 3
  const double mit = 1.25 / 3.0;
  // tempo: chain phases scan 0, transit 0, strike 1 -> 2/2
  const double tempo = 1.0;
  EXPECT_NEAR(c[CoherencePart::objective_clarity], clarity, kTol);
  EXPECT_NEAR(c[CoherencePart::information_preparation], prep, kTol);
  EXPECT_NEAR(c[CoherencePart::resource_balance], balance, kTol);
  EXPECT_NEAR(c[CoherencePart::sustainment], sust, kTol);
  EXPECT_NEAR(c[CoherencePart::risk_mitigation], mit, kTol);
  EXPECT_NEAR(c[CoherencePart::tempo_sequencing], tempo, kTol);
  EXPECT_NEAR(c.D, (clarity + prep + balance + sust + mit + tempo) / 6.0, kTol);
}

TEST(Coherence, TheObjectiveNamesATargetCaseInsensitivelyAtAnyPosition) {
  // objective_clarity's target search against a plain search of the lowered strings, with the target before,
  // across and after 16-byte blocks, in mixed case, and near misses (a prefix of the target at the end).
  const Scenario sc = tiny_scenario();
  const std::string target = "Harbor Gate";
  for (std::size_t pad = 0; pad < 40; ++pad)
    for (int variant = 0; variant < 4; ++variant) {
      std::string objective = std::string(pad, 'h') + " ";
      if (variant == 0) objective += "take the HARBOR gate now";
      if (variant == 1) objective += "take the harbor gat";        // a prefix only, at the end
      if (variant == 2) objective += "hold the harbor and the gate";  // both words, not the phrase
      if (variant == 3) objective += "reach harbor gATE";
      const Plan p = make_plan(objective, {act("s1", "b1", "transit", C::movement, target, 5)}, {"s1"});
      std::string lowered = objective;
      for (char& ch : lowered) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      const bool named = lowered.find("harbor gate") != std::string::npos;
      std::istringstream words_in(objective);
      std::size_t words = 0;
      for (std::string w; words_in >> w;) ++words;
      const double len_ok = words >= 4 && words <= 30 ? 1.0 : 0.5;
      const double clarity = (len_ok + (named ? 1.0 : 0.0) + 0.0) / 3.0;  // no role
      EXPECT_NEAR(coherence(p, sc)[CoherencePart::objective_clarity], clarity, kTol)
          << "pad " << pad << ", variant " << variant;
    }
}

TEST(Coherence, OneChainStep) {
  const Scenario sc = tiny_scenario();
  const Plan p = make_plan("Go", {act("s1", "b1", "transit", C::movement, "bridge", 5)}, {"s1"});
  const auto c = coherence(p, sc);
  // clarity: 1 word -> .5; "go" does not name "bridge" -> 0; no role -> 0:  .5 / 3 = 1/6
  EXPECT_NEAR(c[CoherencePart::objective_clarity], 1.0 / 6.0, kTol);
  // preparation: one movement step, no information before it -> 0/1
  EXPECT_NEAR(c[CoherencePart::information_preparation], 0.0, kTol);
  // balance: n = min(1 action, 3 assets) = 1 -> 1
  EXPECT_NEAR(c[CoherencePart::resource_balance], 1.0, kTol);
  // sustainment: 0 / ceil(1/4) = 0
  EXPECT_NEAR(c[CoherencePart::sustainment], 0.0, kTol);
  // mitigation: exposed (.6) and uncovered -> 0
  EXPECT_NEAR(c[CoherencePart::risk_mitigation], 0.0, kTol);
  // tempo: one step -> 1
  EXPECT_NEAR(c[CoherencePart::tempo_sequencing], 1.0, kTol);
  EXPECT_NEAR(c.D, (1.0 / 6.0 + 0 + 1 + 0 + 0 + 1) / 6.0, kTol);  // 13/36
  // q of the same plan: e = .375/2 = .1875, c = 2/16 = .125, r = .6:
  //   .5 * .1875 + .3 * .875 + .2 * .4 = .09375 + .2625 + .08 = .43625
  EXPECT_NEAR(quality(p, sc).q, 0.43625, kTol);
}

TEST(Coherence, InformationPreparationNeedsAStrictlyEarlierInformationAction) {
  const Scenario sc = tiny_scenario();
  // chain k1 (transit, pos 0), k2 (strike, pos 1); a branch at k1 with options [k3 scan] and [k4 advance], both at
  // position 0 + 1/2. First information action: k3 at .5. Fires/movement: k1 (0, no), k4 (.5, not strictly
  // earlier, no), k2 (1, yes) -> 1/3.
  const Plan p = make_plan("Go", {act("k1", "b1", "transit", C::movement, "a", 3), act("k2", "b3", "strike", C::fires, "b", 3),
                                  act("k3", "b2", "scan", C::information, "c", 3), act("k4", "b1", "advance", C::movement, "d", 3)},
                           {"k1", "k2"}, {Branch{"k1", "c", {{"k3"}, {"k4"}}}});
  EXPECT_NEAR(coherence(p, sc)[CoherencePart::information_preparation], 1.0 / 3.0, kTol);
}

TEST(Coherence, NoExposedOrExecutionActionsScoreOne) {
  const Scenario sc = tiny_scenario();
  // Only information and command actions: nothing to prepare (preparation 1), nothing exposed (mitigation 1).
  // Tempo: scan 0, prepare 0 -> 1. Sustainment: 0 / ceil(2/4) = 0.
  const Plan p = make_plan("Watch", {act("i1", "b2", "scan", C::information, "ridge", 3), act("i2", "b3", "prepare", C::command, "ridge", 3)},
                           {"i1", "i2"});
  const auto c = coherence(p, sc);
  EXPECT_NEAR(c[CoherencePart::information_preparation], 1.0, kTol);
  EXPECT_NEAR(c[CoherencePart::risk_mitigation], 1.0, kTol);
  EXPECT_NEAR(c[CoherencePart::tempo_sequencing], 1.0, kTol);
  EXPECT_NEAR(c[CoherencePart::sustainment], 0.0, kTol);
  // balance: two assets with one action each, n = min(2, 3) = 2: ln 2 / ln 2 = 1
  EXPECT_NEAR(c[CoherencePart::resource_balance], 1.0, kTol);
}

TEST(Coherence, WeightedCoherenceReweightsTheParts) {
  const Scenario sc = tiny_scenario();
  const auto c = coherence(plan_linear(), sc);
  const double clarity = 8.0 / 9.0, tempo = 0.6;
  EXPECT_NEAR(weighted_coherence(c, {1, 0, 0, 0, 0, 0}), clarity, kTol);
  // (2 * 8/9 + 1 * .6) / 3
  EXPECT_NEAR(weighted_coherence(c, {2, 0, 0, 0, 0, 1}), (2 * clarity + tempo) / 3.0, kTol);
  EXPECT_NEAR(weighted_coherence(c, {1, 1, 1, 1, 1, 1}), c.D, kTol);
  EXPECT_NEAR(weighted_coherence(c, {0, 0, 0, 0, 0, 0}), 0.0, kTol);
}

TEST(Coherence, PartNames) {
  EXPECT_EQ(to_string(CoherencePart::objective_clarity), "objective_clarity");
  EXPECT_EQ(to_string(CoherencePart::information_preparation), "information_preparation");
  EXPECT_EQ(to_string(CoherencePart::resource_balance), "resource_balance");
  EXPECT_EQ(to_string(CoherencePart::sustainment), "sustainment");
  EXPECT_EQ(to_string(CoherencePart::risk_mitigation), "risk_mitigation");
  EXPECT_EQ(to_string(CoherencePart::tempo_sequencing), "tempo_sequencing");
}

// ---------------------------------------------------------------------------------------------------------
// Every score of every seed plan of the built-in corpus lies in [0, 1].
// ---------------------------------------------------------------------------------------------------------

TEST(MetricsOnCorpus, EveryScoreLiesInTheUnitInterval) {
  const auto cfg = default_experiment_config();
  const auto corpus = generate_corpus(cfg);
  ASSERT_EQ(corpus.size(), 150u);
  auto in01 = [](double v) { return v >= 0.0 && v <= 1.0; };  // false for NaN
  std::size_t plans = 0;
  for (const auto& sc : corpus) {
    for (const auto& p : sc.blue_seed_plans) {
      SCOPED_TRACE(p.plan_id);
      ++plans;
      const auto layout = layout_plan(p, sc);
      const auto q = quality(layout, sc, p.side, cfg.quality);
      EXPECT_PRED1(in01, q.e);
      EXPECT_PRED1(in01, q.c);
      EXPECT_PRED1(in01, q.r);
      EXPECT_PRED1(in01, q.q);
      for (double v : coverage(layout)) EXPECT_PRED1(in01, v);
      for (const auto& a : layout) EXPECT_PRED1(in01, exposure(a, sc));
      const auto st = structure(p);
      EXPECT_PRED1(in01, st.O);
      EXPECT_PRED1(in01, st.P_V);
      EXPECT_PRED1(in01, st.W);
      EXPECT_GT(st.P_V, 0.0);  // a non-empty plan has at least one signature
      const auto d = coherence(p, layout, sc);
      for (double v : d.part) EXPECT_PRED1(in01, v);
      EXPECT_PRED1(in01, d.D);
    }
  }
  EXPECT_GE(plans, 300u);  // >= 2 seed plans per scenario
}

}  // namespace
}  // namespace advplan
