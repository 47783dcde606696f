// The shared plan operations (scenario/plan_ops.hpp), Rng::pick, the pressure <-> category table, the exposure
// threshold and the highest-pressure selector. The draws are checked against a copy of the stream replaying the
// documented calls, so a change in how a pick consumes the stream fails here before it changes a trace.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <vector>

#include "advplan/core/random.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/council/council.hpp"
#include "advplan/metrics/frontier.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/scenario/plan_ops.hpp"
#include "support/fixtures.hpp"

namespace advplan {
namespace {

using testing::act;
using testing::make_plan;
using testing::tiny_scenario;

// ---------------------------------------------------------------------------------------------------------
// Rng::pick

TEST(RngKeyed, ThePrefixFormIsTheSameStream) {
  for (std::uint64_t i : {0ULL, 1ULL, 7ULL, 1999ULL, ~0ULL}) {
    Rng a = Rng::keyed(20240601, "urban-100", "sim", i);
    Rng b = Rng::keyed_at(Rng::key_prefix(20240601, "urban-100", "sim"), i);
    for (int k = 0; k < 4; ++k) EXPECT_EQ(a.next_u64(), b.next_u64()) << i;
  }
  EXPECT_NE(Rng::key_prefix(1, "ab", "c"), Rng::key_prefix(1, "a", "bc"));
}

TEST(RngLanes, EightStreamsInLockstepAreTheScalarStreamsBitForBit) {
  // The simulator's noise draws eight replications' streams in vector lanes; each lane must be uniform()'s
  // sequence exactly (all 53 bits: half the values have the top one set) and leave its stream where n calls would.
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1000}}) {
    Rng lanes[8] = {Rng::keyed(7, "s", "sim", 0), Rng::keyed(7, "s", "sim", 1), Rng::keyed(7, "s", "sim", 2),
                    Rng::keyed(7, "s", "sim", 3), Rng::keyed(7, "s", "sim", 4), Rng::keyed(7, "s", "sim", 5),
                    Rng::keyed(7, "s", "sim", 6), Rng::keyed(7, "s", "sim", 7)};
    for (auto& l : lanes) l.normal();  // a stream already advanced, as draw_noise's are
    Rng scalar[8] = {lanes[0], lanes[1], lanes[2], lanes[3], lanes[4], lanes[5], lanes[6], lanes[7]};
    std::vector<double> out(8 * n + 1, -1.0);
    Rng::uniforms_x8(lanes, n, out.data());
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t l = 0; l < 8; ++l) {
        const double want = scalar[l].uniform(), got = out[8 * i + l];
        ASSERT_EQ(std::memcmp(&want, &got, sizeof want), 0) << "draw " << i << ", lane " << l << ": " << got;
      }
    EXPECT_EQ(out[8 * n], -1.0) << "wrote past 8 n values";
    for (std::size_t l = 0; l < 8; ++l) EXPECT_EQ(lanes[l].next_u64(), scalar[l].next_u64()) << "lane " << l;
  }
}

TEST(RngPick, IsOneUniformIntDrawOverTheIndices) {
  const std::vector<int> v{10, 20, 30, 40, 50, 60, 70};
  Rng a(42), b(42);
  for (int i = 0; i < 200; ++i) {
    const int& got = a.pick(v);
    EXPECT_EQ(&got, &v[static_cast<std::size_t>(b.uniform_int(0, static_cast<std::int64_t>(v.size()) - 1))]);
  }
  EXPECT_EQ(a.next_u64(), b.next_u64());  // same number of draws
}

TEST(RngPick, ReachesEveryElementAndReturnsAReference) {
  std::array<int, 4> v{0, 0, 0, 0};
  Rng rng(7);
  for (int i = 0; i < 400; ++i) ++rng.pick(v);
  for (int n : v) EXPECT_GT(n, 60) << "pick should be roughly uniform";
  EXPECT_EQ(v[0] + v[1] + v[2] + v[3], 400);
}

TEST(RngPick, PickIndexMatchesUniformIntAndRejectsAnEmptySequence) {
  Rng a(9), b(9);
  for (std::size_t n = 1; n < 30; ++n) EXPECT_EQ(a.pick_index(n), static_cast<std::size_t>(b.uniform_int(0, static_cast<std::int64_t>(n) - 1)));
  const std::vector<int> empty;
  EXPECT_THROW(a.pick(empty), std::out_of_range);
  EXPECT_EQ(a.next_u64(), b.next_u64());  // the failed pick drew nothing
}

// ---------------------------------------------------------------------------------------------------------
// Assets and verbs

TEST(PlanOps, AbleAssetsAreTheSidesAssetsListingTheCategoryInScenarioOrder) {
  const Scenario sc = tiny_scenario();
  auto ids = [](const std::vector<const Asset*>& as) {
    std::vector<std::string> out;
    for (const Asset* a : as) out.push_back(a->id);
    return out;
  };
  EXPECT_EQ(ids(able_assets(sc, Side::Blue, Category::movement)), (std::vector<std::string>{"b1", "b3"}));
  EXPECT_EQ(ids(able_assets(sc, Side::Blue, Category::fires)), (std::vector<std::string>{"b2", "b3"}));
  EXPECT_EQ(ids(able_assets(sc, Side::Red, Category::movement)), (std::vector<std::string>{"r1"}));
  EXPECT_TRUE(able_assets(sc, Side::Blue, Category::cyber).empty());
}

TEST(PlanOps, AvailableCategoriesNeedAnAbleAssetAndVerbs) {
  Scenario sc = tiny_scenario();
  sc.verbs[index(Category::command)].clear();  // b3 lists command, but the vocabulary has no verb for it
  const auto blue = available_categories(sc, Side::Blue);
  for (auto c : {Category::movement, Category::fires, Category::information, Category::sustainment,
                 Category::protection, Category::deception})
    EXPECT_TRUE(blue[index(c)]) << to_string(c);
  for (auto c : {Category::cyber, Category::public_information, Category::civil, Category::command})
    EXPECT_FALSE(blue[index(c)]) << to_string(c);
  const auto red = available_categories(sc, Side::Red);
  EXPECT_EQ(std::count(red.begin(), red.end(), true), 2);
}

TEST(PlanOps, PickAssetIsOneWeightedDrawByCapability) {
  const Scenario sc = tiny_scenario();
  Rng a(3), b(3);
  for (int i = 0; i < 100; ++i) {
    const Asset* got = pick_asset(sc, Side::Blue, Category::movement, a);
    const std::vector<double> w{0.2 + 0.5, 0.2 + 1.0};  // b1, b3
    EXPECT_EQ(got->id, b.weighted_index(w) == 0 ? "b1" : "b3");
  }
  EXPECT_EQ(a.next_u64(), b.next_u64());
}

TEST(PlanOps, PickAssetWithNoAbleAssetIsNullAndDrawsNothing) {
  const Scenario sc = tiny_scenario();
  Rng a(3), b(3);
  EXPECT_EQ(pick_asset(sc, Side::Blue, Category::cyber, a), nullptr);
  EXPECT_EQ(a.next_u64(), b.next_u64());
}

TEST(PlanOps, PickVerbIsOnePickOfTheCategoryVerbs) {
  const Scenario sc = tiny_scenario();
  Rng a(5), b(5);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(pick_verb(sc, Category::movement, a), b.pick(sc.verbs[index(Category::movement)]));
  EXPECT_EQ(a.next_u64(), b.next_u64());
}

TEST(PlanOps, DefaultTargetIsTheFirstPlaceOrEmpty) {
  Scenario sc = tiny_scenario();
  EXPECT_EQ(default_target(sc), "bridge");
  sc.places.clear();
  EXPECT_EQ(default_target(sc), "");
}

// ---------------------------------------------------------------------------------------------------------
// draw_action

TEST(PlanOps, DrawActionDrawsTheAssetThenTheVerb) {
  const Scenario sc = tiny_scenario();
  Rng a(11), b(11);
  for (int i = 0; i < 20; ++i) {
    const auto drawn = draw_action(sc, Side::Blue, Category::movement, a);
    ASSERT_TRUE(drawn.has_value());
    const std::vector<double> w{0.2 + 0.5, 0.2 + 1.0};  // b1, b3
    EXPECT_EQ(drawn->asset, b.weighted_index(w) == 0 ? "b1" : "b3");
    EXPECT_EQ(drawn->verb, b.pick(sc.verbs[index(Category::movement)]));
  }
  EXPECT_EQ(a.next_u64(), b.next_u64());  // nothing else drawn
  const auto drawn = draw_action(sc, Side::Blue, Category::sustainment, a);
  ASSERT_TRUE(drawn.has_value());
  EXPECT_EQ(drawn->asset, "b1");
  EXPECT_EQ(drawn->verb, "resupply");
  EXPECT_EQ(drawn->category, Category::sustainment);
  EXPECT_EQ(drawn->id, "");
  EXPECT_EQ(drawn->target, "");
  EXPECT_EQ(drawn->priority, 3);
}

TEST(PlanOps, DrawActionWithAGivenVerbDrawsOnlyTheAsset) {
  const Scenario sc = tiny_scenario();
  Rng a(11), b(11);
  for (int i = 0; i < 20; ++i) {
    const auto drawn = draw_action(sc, Side::Blue, Category::movement, a, "return");
    ASSERT_TRUE(drawn.has_value());
    EXPECT_EQ(drawn->verb, "return");
    EXPECT_EQ(drawn->asset, b.weighted_index(std::vector<double>{0.2 + 0.5, 0.2 + 1.0}) == 0 ? "b1" : "b3");
  }
  EXPECT_EQ(a.next_u64(), b.next_u64());
}

TEST(PlanOps, DrawActionFailsWithoutADrawWhenNothingCanBeDrawn) {
  Scenario sc = tiny_scenario();
  sc.verbs[index(Category::civil)].clear();
  Rng a(13), b(13);
  EXPECT_FALSE(draw_action(sc, Side::Blue, Category::movement, a, "fly"));  // not a movement verb
  EXPECT_FALSE(draw_action(sc, Side::Blue, Category::civil, a));            // no verbs
  EXPECT_FALSE(draw_action(sc, Side::Blue, Category::cyber, a));            // no BLUE asset
  EXPECT_EQ(a.next_u64(), b.next_u64());
}

// ---------------------------------------------------------------------------------------------------------
// Ids, insertion

Plan three_step_plan_with_branch() {
  Branch br;
  br.at = "a2";
  br.condition = "if contested";
  br.options = {{"a4"}, {"a5"}};
  Plan p = make_plan("Secure the bridge and hold the market",
                     {act("a1", "b2", "scan", Category::information, "bridge", 3),
                      act("a2", "b1", "transit", Category::movement, "bridge", 3),
                      act("a3", "b3", "strike", Category::fires, "bridge", 4),
                      act("a4", "b1", "hold", Category::protection, "bridge", 3),
                      act("a5", "b3", "return", Category::movement, "bridge", 2)},
                     {"a1", "a2", "a3"}, {br});
  return p;
}

TEST(PlanOps, NextActionIdIsTheFirstFreeFromTheCountUp) {
  Plan p;
  EXPECT_EQ(next_action_id(p), "a1");
  p = three_step_plan_with_branch();
  EXPECT_EQ(next_action_id(p), "a6");
  p.actions[4].id = "a6";  // ids a1..a4, a6: a6 is taken, so a7
  EXPECT_EQ(next_action_id(p), "a7");
}

TEST(PlanOps, InsertActionPlacesTheStepAndKeepsThePlanValid) {
  const Scenario sc = tiny_scenario();
  ASSERT_TRUE(validate_plan(three_step_plan_with_branch(), sc, Side::Blue).empty());
  for (std::size_t pos = 0; pos <= 3; ++pos) {
    Plan p = three_step_plan_with_branch();
    const Action& added = insert_action(p, sc, act("", "b1", "harden", Category::protection, "market", 3), pos);
    EXPECT_EQ(added.id, "a6");
    ASSERT_EQ(p.chain.size(), 4u);
    EXPECT_EQ(p.chain[pos], "a6") << pos;
    EXPECT_EQ(p.actions.back().id, "a6");
    EXPECT_EQ(p.branches.front().at, "a2");  // the branch stays at its step
    EXPECT_EQ(p.roles.at("b1"), "role");
    EXPECT_TRUE(validate_plan(p, sc, Side::Blue).empty()) << "insert at " << pos;
  }
}

TEST(PlanOps, InsertActionPastTheEndAppends) {
  const Scenario sc = tiny_scenario();
  for (std::size_t pos : {std::size_t{3}, std::size_t{99}, kChainEnd}) {
    Plan p = three_step_plan_with_branch();
    insert_action(p, sc, act("", "b3", "prepare", Category::command, "market", 3), pos);
    EXPECT_EQ(p.chain, (std::vector<std::string>{"a1", "a2", "a3", "a6"}));
  }
}

TEST(PlanOps, InsertActionRecordsTheAssetsRole) {
  Scenario sc = tiny_scenario();
  sc.assets[2].role = "strike-group";  // b3
  Plan p = three_step_plan_with_branch();
  insert_action(p, sc, act("", "b3", "prepare", Category::command, "market", 3));
  EXPECT_EQ(p.roles.at("b3"), "strike-group");
}

TEST(PlanOps, AppendNewActionNumbersFromOneAndRecordsTheRole) {
  Scenario sc = tiny_scenario();
  sc.assets[2].role = "strike-group";  // b3
  Plan p;
  EXPECT_EQ(append_new_action(p, sc.assets[0], act("", "b1", "harden", Category::protection, "market", 3)).id, "a1");
  EXPECT_EQ(append_new_action(p, sc.assets[2], act("", "b3", "prepare", Category::command, "market", 3)).id, "a2");
  EXPECT_EQ(append_new_action(p, sc.assets[0], act("", "b1", "harden", Category::protection, "market", 3)).id, "a3");
  EXPECT_EQ(p.roles, (std::map<std::string, std::string>{{"b1", "role"}, {"b3", "strike-group"}}));
  EXPECT_EQ(p.chain, std::vector<std::string>{});
}

TEST(PlanOps, DrawActionReportsTheAssetItDrew) {
  const Scenario sc = tiny_scenario();
  Rng a = Rng::keyed(1, "t", "draw"), b = a;
  const Asset* drawn = nullptr;
  const auto with = draw_action(sc, Side::Blue, Category::protection, a, {}, &drawn);
  const auto without = draw_action(sc, Side::Blue, Category::protection, b);
  ASSERT_TRUE(with && without);
  EXPECT_EQ(*with, *without);  // reporting the asset draws nothing more
  ASSERT_NE(drawn, nullptr);
  EXPECT_EQ(drawn->id, with->asset);
  EXPECT_EQ(a.next_u64(), b.next_u64());
}

TEST(PlanOps, AddOptionActionStaysOutOfTheChain) {
  const Scenario sc = tiny_scenario();
  Plan p = three_step_plan_with_branch();
  const std::string id = add_option_action(p, sc, act("", "b1", "harden", Category::protection, "market", 3)).id;
  EXPECT_EQ(id, "a6");
  EXPECT_EQ(p.chain, (std::vector<std::string>{"a1", "a2", "a3"}));
  EXPECT_EQ(p.roles.at("b1"), "role");
  p.branches.front().options[1].push_back(id);
  EXPECT_TRUE(validate_plan(p, sc, Side::Blue).empty());
}

TEST(PlanOps, InsertedDrawnActionsBuildAValidPlan) {
  // The builders' common path: draw, then insert anywhere; the plan stays valid at every step.
  const Scenario sc = tiny_scenario();
  Plan p = make_plan("Secure the bridge and hold the market", {}, {});
  Rng rng(17);
  const std::array cats{Category::movement, Category::information, Category::fires, Category::protection};
  for (int i = 0; i < 12; ++i) {
    auto a = draw_action(sc, Side::Blue, rng.pick(cats), rng);
    ASSERT_TRUE(a.has_value());
    a->target = rng.pick(sc.places);
    insert_action(p, sc, std::move(*a), rng.pick_index(p.chain.size() + 1));
    ASSERT_TRUE(validate_plan(p, sc, Side::Blue).empty()) << "after " << i + 1 << " insertions";
  }
  EXPECT_EQ(p.actions.size(), 12u);
}

// ---------------------------------------------------------------------------------------------------------
// The pressure <-> category table

TEST(PressureTable, CountersAndMainEffortsAreThoseOfTheMetricsDoc) {
  const std::array<std::pair<Category, Category>, kNumPressures> expected{{
      {Category::fires, Category::protection},                     // direct
      {Category::cyber, Category::cyber},                          // cyber
      {Category::sustainment, Category::sustainment},              // logistics
      {Category::information, Category::deception},                // information_gathering
      {Category::public_information, Category::public_information} // public_information
  }};
  for (std::size_t p = 0; p < kNumPressures; ++p) {
    EXPECT_EQ(kPressureTable[p].main_effort, expected[p].first) << p;
    EXPECT_EQ(kPressureTable[p].counter, expected[p].second) << p;
  }
}

TEST(PressureTable, PressureOfIsTheTableReadBackwards) {
  const std::array<std::optional<Pressure>, kNumCategories> expected{
      Pressure::direct, Pressure::direct, Pressure::information_gathering, Pressure::cyber, Pressure::logistics,
      std::nullopt,     std::nullopt,     Pressure::public_information,    Pressure::information_gathering,
      std::nullopt};
  for (std::size_t c = 0; c < kNumCategories; ++c)
    EXPECT_EQ(pressure_of(static_cast<Category>(c)), expected[c]) << to_string(static_cast<Category>(c));
  for (const auto& row : kPressureTable) EXPECT_EQ(pressure_of(row.main_effort), row.pressure);
}

TEST(PressureTable, EveryMitigationSetIncludesTheCounterCategory) {
  for (const auto& row : kPressureTable) {
    const auto& ms = mitigations_for(row.pressure);
    EXPECT_TRUE(std::any_of(ms.begin(), ms.end(), [&](const Mitigation& m) { return m.category == row.counter; }))
        << to_string(row.pressure);
  }
}

// ---------------------------------------------------------------------------------------------------------
// The exposure threshold, the highest-pressure selector

TEST(Exposure, ExposedFromHalfUp) {
  Scenario sc = tiny_scenario();  // terrain exposure 2
  EXPECT_DOUBLE_EQ(kExposedThreshold, 0.5);
  sc.exposure[index(Category::civil)] = 0.25;  // exposure exactly .5
  EXPECT_TRUE(is_exposed(Category::civil, sc));
  sc.exposure[index(Category::civil)] = 0.2499;
  EXPECT_FALSE(is_exposed(Category::civil, sc));
  EXPECT_TRUE(is_exposed(Category::fires, sc));        // 1.2, capped at 1
  EXPECT_FALSE(is_exposed(Category::sustainment, sc)); // .4
  EXPECT_DOUBLE_EQ(exposure(Category::fires, sc), 1.0);
}

TEST(Selectors, HighestPressureTakesTheFirstLargestAndSkipsNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(select_highest_pressure(std::vector<double>{}), -1);
  EXPECT_EQ(select_highest_pressure(std::vector<double>{0.2, 0.7, 0.7, 0.1}), 1);
  EXPECT_EQ(select_highest_pressure(std::vector<double>{nan, 0.3, 0.1}), 1);
  EXPECT_EQ(select_highest_pressure(std::vector<double>{nan}), -1);
  EXPECT_EQ(select_highest_pressure(std::vector<double>{0.0, 0.0}), 0);
}

}  // namespace
}  // namespace advplan
