// plan_from_json's steps (header, roles, actions, chain, branches, tool calls): the structural violations each
// step reports, and their order across steps. Semantic validation is validation_test.cpp's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "advplan/core/plan_json.hpp"
#include "test_fixtures.hpp"

namespace advplan {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

Plan branching_plan() {
  Branch br;
  br.at = "a1";
  br.condition = "if contested";
  br.options = {{"a3"}, {"a4"}};
  Plan p = testing::make_plan("Secure the bridge",
                              {testing::act("a1", "b2", "scan", Category::information, "bridge", 3),
                               testing::act("a2", "b3", "strike", Category::fires, "bridge", 4),
                               testing::act("a3", "b1", "hold", Category::protection, "bridge", 3),
                               testing::act("a4", "b1", "transit", Category::movement, "market", 2)},
                              {"a1", "a2"}, {br});
  p.roles = {{"b1", "screen"}, {"b2", "recon"}};
  p.actions[0].metadata["phase"] = "1";
  p.tool_calls.push_back({"branch_planner", R"({"at":"a1"})"});
  return p;
}

std::vector<std::string> messages(const json& j, std::vector<std::size_t>* unknown = nullptr) {
  std::vector<Violation> v;
  plan_from_json(j, v, unknown);
  std::vector<std::string> out;
  for (const auto& x : v) out.push_back(x.str());
  return out;
}

TEST(PlanJson, RoundTripsEveryField) {
  const Plan p = branching_plan();
  std::vector<Violation> v;
  const auto back = plan_from_json(to_json(p), v);
  EXPECT_THAT(v, IsEmpty());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, p);
}

TEST(PlanJson, EachStepReportsItsWrongTypes) {
  const json good = to_json(branching_plan());
  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases{
      {[](json& j) { j["domain"] = 3; }, "domain: wrong type: expected a string, got number"},
      {[](json& j) { j["side"] = "GREEN"; }, "side: unknown side \"GREEN\" (expected BLUE or RED)"},
      {[](json& j) { j["roles"]["b1"] = 1; }, "roles.b1: wrong type: expected a string, got number"},
      {[](json& j) { j["actions"][1]["target"] = json::array(); }, "actions[1].target: wrong type: expected a string, got array"},
      {[](json& j) { j["actions"][1]["priority"] = 0; }, "actions[1].priority: priority 0 is outside 1..5"},
      {[](json& j) { j["branches"] = "a1"; }, "branches: wrong type: expected an array, got string"},
      {[](json& j) { j["branches"][0] = 1; }, "branches[0]: wrong type: expected an object, got number"},
      {[](json& j) { j["branches"][0]["options"] = "a3"; }, "branches[0].options: wrong type: expected an array, got string"},
      {[](json& j) { j["branches"][0].erase("at"); }, "branches[0].at: missing required field"},
      {[](json& j) { j["tool_calls"] = json::object(); }, "tool_calls: wrong type: expected an array, got object"},
      {[](json& j) { j["tool_calls"][0] = "branch_planner"; }, "tool_calls[0]: wrong type: expected an object, got string"},
      {[](json& j) { j["tool_calls"][0].erase("name"); }, "tool_calls[0].name: missing required field"},
  };
  for (const auto& [edit, expected] : cases) {
    json j = good;
    edit(j);
    EXPECT_THAT(messages(j), ElementsAre(expected));
  }
}

TEST(PlanJson, ViolationsFollowTheFieldOrderAcrossSteps) {
  json j = to_json(branching_plan());
  j["tool_calls"][0]["arguments"] = 1;
  j["branches"][0]["condition"] = false;
  j["chain"][0] = 5;
  j["actions"][2]["category"] = "magic";
  j["roles"] = json::array();
  j["plan_id"] = nullptr;
  std::vector<std::size_t> unknown;
  EXPECT_THAT(messages(j, &unknown),
              ElementsAre("plan_id: wrong type: expected a string, got null",
                          "roles: wrong type: expected an object, got array",
                          "actions[2].category: unknown category \"magic\" (expected one of movement, fires, "
                          "information, cyber, sustainment, protection, command, public_information, deception, civil)",
                          "chain[0]: wrong type: expected a string, got number",
                          "branches[0].condition: wrong type: expected a string, got boolean",
                          "tool_calls[0].arguments: wrong type: expected an object, got number"));
  EXPECT_EQ(unknown, (std::vector<std::size_t>{2}));
}

TEST(PlanJson, NotAnObjectIsOneViolationAndNoPlan) {
  std::vector<Violation> v;
  EXPECT_FALSE(plan_from_json(json::array(), v).has_value());
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v.front().str(), "wrong type: a plan must be a JSON object, got array");
}

}  // namespace
}  // namespace advplan

namespace advplan {
namespace {

TEST(ScenarioJsonTest, WithoutSeedPlansIsTheFullEncodingWithAnEmptySeedPlanList) {
  // What LLM prompts show: the scenario with blue_seed_plans emptied, built without encoding the plans.
  Scenario sc = testing::tiny_scenario();
  for (int plans = 0; plans < 3; ++plans) {
    json want = to_json(sc);
    want["blue_seed_plans"] = json::array();
    const json got = to_json(sc, ScenarioJson::without_seed_plans);
    EXPECT_EQ(got, want) << plans << " seed plans";
    EXPECT_EQ(got.dump(), want.dump());
    Plan p;
    p.plan_id = "seed-" + std::to_string(plans);
    p.objective = "hold";
    sc.blue_seed_plans.push_back(p);
  }
}

}  // namespace
}  // namespace advplan
