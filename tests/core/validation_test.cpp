// Plan parsing and validation (docs/ARCHITECTURE.md "Data model"): seed plans validate and round-trip through JSON; each kind of
// invalid plan is rejected with a message naming its JSON path (exact texts from src/core/validation.cpp and
// src/core/plan_json.cpp); random corruption of a plan's text never crashes or throws.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>

#include "advplan/core/plan_json.hpp"
#include "advplan/core/random.hpp"
#include "advplan/core/validation.hpp"
#include "core/validation_reference.hpp"
#include "advplan/run/config.hpp"
#include "advplan/metrics/coherence.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/metrics/structure.hpp"
#include "advplan/scenario/plan_sampler.hpp"
#include "core/resolved_plan.hpp"
#include "metrics/resolved_layout.hpp"
#include "scenario/sampled_plan.hpp"
#include "support/fixtures.hpp"

namespace advplan {
namespace {

using nlohmann::json;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A valid plan of tiny_scenario(): four chain steps.
constexpr const char* kLinearPlan = R"({
  "plan_id": "tiny-1/blue/test", "side": "BLUE", "objective": "Secure the bridge and hold the market",
  "domain": "land", "roles": {"b1": "maneuver"},
  "actions": [
    {"id": "a1", "asset": "b2", "verb": "scan", "category": "information", "target": "bridge", "priority": 3,
     "metadata": {"phase": "1"}},
    {"id": "a2", "asset": "b1", "verb": "transit", "category": "movement", "target": "bridge", "priority": 4},
    {"id": "a3", "asset": "b3", "verb": "strike", "category": "fires", "target": "market", "priority": 5},
    {"id": "a4", "asset": "b1", "verb": "hold", "category": "protection", "target": "market", "priority": 2}
  ],
  "chain": ["a1", "a2", "a3", "a4"],
  "branches": [],
  "tool_calls": [{"name": "route_planner", "arguments": {"from": "port", "to": "market"}}]
})";

// The same plus a branch at a2 with options [a5] and [a6].
json branch_plan() {
  json j = json::parse(kLinearPlan);
  j["actions"].push_back({{"id", "a5"}, {"asset", "b1"}, {"verb", "advance"}, {"category", "movement"}, {"target", "depot"}, {"priority", 3}});
  j["actions"].push_back({{"id", "a6"}, {"asset", "b2"}, {"verb", "decoy"}, {"category", "deception"}, {"target", "ridge"}, {"priority", 3}});
  j["branches"] = json::array({{{"at", "a2"}, {"condition", "bridge intact"}, {"options", {{"a5"}, {"a6"}}}}});
  return j;
}

std::vector<std::string> messages(const PlanParse& p) {
  std::vector<std::string> out;
  for (const auto& v : p.violations) out.push_back(v.str());
  return out;
}
std::vector<std::string> messages(const std::string& text, std::optional<Side> side = std::nullopt) {
  return messages(parse_plan_text(text, testing::tiny_scenario(), side));
}
std::vector<std::string> messages(const json& j) { return messages(j.dump()); }

json linear() { return json::parse(kLinearPlan); }

// ---------------------------------------------------------------------------------------------------------
// Valid plans
// ---------------------------------------------------------------------------------------------------------

TEST(Validation, HandWrittenPlansAreValid) {
  EXPECT_THAT(messages(linear()), IsEmpty());
  EXPECT_THAT(messages(branch_plan()), IsEmpty());
  const auto parsed = parse_plan_text(branch_plan().dump(), testing::tiny_scenario(), Side::Blue);
  ASSERT_TRUE(parsed.ok()) << parsed.summary();
  const Plan& p = *parsed.plan;
  EXPECT_EQ(p.plan_id, "tiny-1/blue/test");
  EXPECT_EQ(p.actions.size(), 6u);
  EXPECT_EQ(p.actions[0].metadata.at("phase"), "1");
  EXPECT_EQ(p.actions[2].priority, 5);
  EXPECT_EQ(p.actions[5].category, Category::deception);
  ASSERT_EQ(p.branches.size(), 1u);
  EXPECT_EQ(p.branches[0].options, (std::vector<std::vector<std::string>>{{"a5"}, {"a6"}}));
  ASSERT_EQ(p.tool_calls.size(), 1u);
  EXPECT_EQ(p.tool_calls[0].arguments_json, R"({"from":"port","to":"market"})");
  EXPECT_EQ(p.roles.at("b1"), "maneuver");
}

TEST(Validation, HandWrittenPlanRoundTrips) {
  const auto first = parse_plan_text(branch_plan().dump(), testing::tiny_scenario());
  ASSERT_TRUE(first.ok()) << first.summary();
  const auto again = parse_plan_text(to_json(*first.plan).dump(), testing::tiny_scenario());
  ASSERT_TRUE(again.ok()) << again.summary();
  EXPECT_EQ(*again.plan, *first.plan);
  EXPECT_EQ(plan_to_string(*again.plan), plan_to_string(*first.plan));
}

TEST(Validation, EveryCorpusSeedPlanValidatesAndRoundTrips) {
  const auto corpus = generate_corpus(default_experiment_config());
  ASSERT_EQ(corpus.size(), 150u);
  std::size_t plans = 0;
  for (const auto& sc : corpus) {
    for (const auto& p : sc.blue_seed_plans) {
      SCOPED_TRACE(p.plan_id);
      ++plans;
      EXPECT_THAT(validate_plan(p, sc, Side::Blue), IsEmpty());
      const std::string text = to_json(p).dump();
      const auto parsed = parse_plan_text(text, sc, Side::Blue);
      ASSERT_TRUE(parsed.ok()) << parsed.summary();
      EXPECT_EQ(*parsed.plan, p);
      EXPECT_EQ(to_json(*parsed.plan).dump(), text);
    }
  }
  EXPECT_GE(plans, 300u);
}

TEST(Validation, ScenarioRoundTripsThroughJson) {
  const auto corpus = generate_corpus(default_experiment_config());
  for (std::size_t i = 0; i < corpus.size(); i += 7) {
    SCOPED_TRACE(corpus[i].id);
    const Scenario back = scenario_from_json(json::parse(scenario_to_string(corpus[i])));
    EXPECT_EQ(back, corpus[i]);
    EXPECT_EQ(scenario_to_string(back), scenario_to_string(corpus[i]));
  }
}

TEST(Validation, AScenarioWithADuplicateAssetIdIsRefused) {
  const auto corpus = generate_corpus(default_experiment_config());
  json j = json::parse(scenario_to_string(corpus.front()));
  ASSERT_GE(j["assets"].size(), 2u);
  j["assets"][1]["id"] = j["assets"][0]["id"];
  try {
    (void)scenario_from_json(j);
    FAIL() << "a duplicate asset id was accepted";
  } catch (const PlanError& e) {
    EXPECT_THAT(e.what(), HasSubstr("duplicate asset id"));
  }
}

// ---------------------------------------------------------------------------------------------------------
// Graph violations
// ---------------------------------------------------------------------------------------------------------

TEST(Validation, CycleFromAChainStepPlacedTwice) {
  json j = linear();
  j["chain"] = {"a1", "a2", "a3", "a4", "a2"};  // a4 -> a2 closes a2 -> a3 -> a4 -> a2
  EXPECT_THAT(messages(j), ElementsAre("chain[4]: action \"a2\" is placed twice (also at chain[1])",
                                       "actions[1]: action \"a2\" is on a cycle",
                                       "actions[2]: action \"a3\" is on a cycle",
                                       "actions[3]: action \"a4\" is on a cycle"));
}

TEST(Validation, SelfLoopIsACycle) {
  json j = linear();
  j["chain"] = {"a1", "a2", "a2", "a3", "a4"};
  EXPECT_THAT(messages(j), ElementsAre("chain[2]: action \"a2\" is placed twice (also at chain[1])",
                                       "actions[1]: action \"a2\" is on a cycle"));
}

TEST(Validation, CycleThroughABranchOption) {
  json j = branch_plan();
  // Branch at a3 whose second option is the first chain step: a3 -> a1 (branch), a1 -> a4 (rejoin) and
  // a1 -> a2 -> a3 along the chain: a1, a2, a3 form a cycle. a6 is no longer placed anywhere.
  j["branches"][0]["at"] = "a3";
  j["branches"][0]["options"] = {{"a5"}, {"a1"}};
  EXPECT_THAT(messages(j),
              ElementsAre("branches[0].options[1][0]: action \"a1\" is a chain step; options hold actions outside the chain",
                          "branches[0].options[1][0]: action \"a1\" is placed twice (also at chain[0])",
                          "actions[0]: action \"a1\" is on a cycle", "actions[1]: action \"a2\" is on a cycle",
                          "actions[2]: action \"a3\" is on a cycle",
                          "actions[5]: action \"a6\" is not reachable from the first chain step"));
}

TEST(Validation, CycleThroughARejoinEdge) {
  json j = branch_plan();
  // A second branch at a3 reuses a5 and a6: a3 -> a5 (branch) and a5 -> a3 (rejoin of the branch at a2, whose
  // next chain step is a3) close a3 -> a5 -> a3; the same for a6.
  j["branches"].push_back({{"at", "a3"}, {"condition", "again"}, {"options", {{"a5"}, {"a6"}}}});
  EXPECT_THAT(messages(j),
              ElementsAre("branches[1].options[0][0]: action \"a5\" is placed twice (also at branches[0].options[0][0])",
                          "branches[1].options[1][0]: action \"a6\" is placed twice (also at branches[0].options[1][0])",
                          "actions[2]: action \"a3\" is on a cycle", "actions[4]: action \"a5\" is on a cycle",
                          "actions[5]: action \"a6\" is on a cycle"));
}

TEST(Validation, UnknownActionInChainIsADanglingReference) {
  json j = linear();
  j["chain"].push_back("a9");
  EXPECT_THAT(messages(j), ElementsAre("chain[4]: dangling reference to undefined action \"a9\""));
  // In the middle of the chain it also cuts off what follows.
  j["chain"] = {"a1", "a9", "a2", "a3", "a4"};
  EXPECT_THAT(messages(j), ElementsAre("chain[1]: dangling reference to undefined action \"a9\"",
                                       "actions[1]: action \"a2\" is not reachable from the first chain step",
                                       "actions[2]: action \"a3\" is not reachable from the first chain step",
                                       "actions[3]: action \"a4\" is not reachable from the first chain step"));
}

TEST(Validation, UnknownActionInOptionIsADanglingReference) {
  json j = branch_plan();
  j["branches"][0]["options"][1] = {"a7"};
  EXPECT_THAT(messages(j), ElementsAre("branches[0].options[1][0]: dangling reference to undefined action \"a7\"",
                                       "actions[5]: action \"a6\" is not reachable from the first chain step"));
}

TEST(Validation, DuplicateActionId) {
  json j = linear();
  j["actions"].push_back({{"id", "a2"}, {"asset", "b3"}, {"verb", "advance"}, {"category", "movement"}, {"priority", 3}});
  EXPECT_THAT(messages(j), ElementsAre("actions[4].id: duplicate id \"a2\" (first defined at actions[1])"));
}

TEST(Validation, UnreachableAction) {
  json j = linear();
  j["actions"].push_back({{"id", "a7"}, {"asset", "b3"}, {"verb", "strike"}, {"category", "fires"}, {"priority", 3}});
  EXPECT_THAT(messages(j), ElementsAre("actions[4]: action \"a7\" is not reachable from the first chain step"));
}

TEST(Validation, BranchAtNotInChain) {
  json j = branch_plan();
  j["branches"][0]["at"] = "zz";
  EXPECT_THAT(messages(j), ElementsAre("branches[0].at: dangling reference: \"zz\" is not a chain step",
                                       "actions[4]: action \"a5\" is not reachable from the first chain step",
                                       "actions[5]: action \"a6\" is not reachable from the first chain step"));
}

TEST(Validation, BranchNeedsTwoNonEmptyOptions) {
  json j = branch_plan();
  j["branches"][0]["options"] = {{"a5"}};
  EXPECT_THAT(messages(j), ElementsAre("branches[0].options: a branch needs at least two options",
                                       "actions[5]: action \"a6\" is not reachable from the first chain step"));
  j["branches"][0]["options"] = {{"a5"}, json::array()};
  EXPECT_THAT(messages(j), ElementsAre("branches[0].options[1]: an option must not be empty",
                                       "actions[5]: action \"a6\" is not reachable from the first chain step"));
}

TEST(Validation, EmptyChain) {
  json j = linear();
  j["chain"] = json::array();
  EXPECT_THAT(messages(j), ElementsAre("chain: must hold at least one action"));
}

// ---------------------------------------------------------------------------------------------------------
// Field violations
// ---------------------------------------------------------------------------------------------------------

TEST(Validation, AssetOfTheOtherSide) {
  json j = linear();
  j["actions"][1]["asset"] = "r1";
  EXPECT_THAT(messages(j), ElementsAre("actions[1].asset: asset \"r1\" belongs to RED, not to the plan's side BLUE"));
  j = linear();
  j["roles"]["r1"] = "raider";
  EXPECT_THAT(messages(j), ElementsAre("roles.r1: asset \"r1\" belongs to RED, not to the plan's side BLUE"));
}

TEST(Validation, UnknownAsset) {
  json j = linear();
  j["actions"][1]["asset"] = "b-tank-9";
  EXPECT_THAT(messages(j), ElementsAre("actions[1].asset: unknown asset \"b-tank-9\""));
  j = linear();
  j["roles"]["b9"] = "ghost";
  EXPECT_THAT(messages(j), ElementsAre("roles.b9: unknown asset \"b9\""));
}

TEST(Validation, PriorityOutsideOneToFive) {
  for (int pr : {0, 6, -1}) {
    json j = linear();
    j["actions"][0]["priority"] = pr;
    EXPECT_THAT(messages(j), ElementsAre(fmt::format("actions[0].priority: priority {} is outside 1..5", pr)));
  }
  for (int pr : {1, 5}) {
    json j = linear();
    j["actions"][0]["priority"] = pr;
    EXPECT_THAT(messages(j), IsEmpty()) << pr;
  }
}

TEST(Validation, UnknownCategory) {
  json j = linear();
  j["actions"][0]["category"] = "magic";
  // Only the category is reported: the verb cannot be checked against an unknown category.
  EXPECT_THAT(messages(j),
              ElementsAre("actions[0].category: unknown category \"magic\" (expected one of movement, fires, information, "
                          "cyber, sustainment, protection, command, public_information, deception, civil)"));
}

TEST(Validation, UnknownVerb) {
  json j = linear();
  j["actions"][0]["verb"] = "teleport";
  EXPECT_THAT(messages(j), ElementsAre("actions[0].verb: unknown verb \"teleport\" for category information"));
  // A verb of another category is unknown for this one.
  j["actions"][0]["verb"] = "transit";
  EXPECT_THAT(messages(j), ElementsAre("actions[0].verb: unknown verb \"transit\" for category information"));
}

TEST(Validation, WrongSide) {
  json j = linear();
  j["side"] = "GREEN";
  EXPECT_THAT(messages(j), ElementsAre("side: unknown side \"GREEN\" (expected BLUE or RED)"));
  EXPECT_THAT(messages(linear().dump(), Side::Red), ElementsAre("side: plan side is BLUE but RED was expected"));
  EXPECT_THAT(messages(linear().dump(), Side::Blue), IsEmpty());
}

TEST(Validation, EmptyObjective) {
  json j = linear();
  j["objective"] = "";
  EXPECT_THAT(messages(j), ElementsAre("objective: must not be empty"));
}

TEST(Validation, MissingFields) {
  json j = linear();
  j.erase("chain");
  EXPECT_THAT(messages(j), ElementsAre("chain: missing required field", "chain: must hold at least one action"));

  j = linear();
  j["actions"][2].erase("verb");
  EXPECT_THAT(messages(j), Contains("actions[2].verb: missing required field"));

  j = linear();
  j.erase("plan_id");
  EXPECT_THAT(messages(j), ElementsAre("plan_id: missing required field"));

  j = linear();
  j.erase("objective");
  EXPECT_THAT(messages(j), Contains("objective: missing required field"));

  j = linear();
  j["actions"][1].erase("asset");
  EXPECT_THAT(messages(j), Contains("actions[1].asset: missing required field"));

  j = linear();
  j["actions"][3].erase("priority");
  EXPECT_THAT(messages(j), ElementsAre("actions[3].priority: missing required field"));

  j = branch_plan();
  j["branches"][0].erase("options");
  EXPECT_THAT(messages(j), Contains("branches[0].options: missing required field"));

  j = linear();
  j.erase("actions");
  EXPECT_THAT(messages(j), Contains("actions: missing required field"));

  // Optional fields may be left out.
  j = linear();
  for (const char* k : {"domain", "roles", "branches", "tool_calls"}) j.erase(k);
  j["actions"][0].erase("metadata");
  j["actions"][0].erase("target");
  EXPECT_THAT(messages(j), IsEmpty());
}

TEST(Validation, WrongTypes) {
  json j = linear();
  j["actions"][0]["priority"] = "3";
  EXPECT_THAT(messages(j), ElementsAre("actions[0].priority: wrong type: expected an integer, got string"));
  j["actions"][0]["priority"] = 3.5;
  EXPECT_THAT(messages(j), ElementsAre("actions[0].priority: wrong type: expected an integer, got number"));

  j = linear();
  j["actions"] = json::object({{"a1", linear()["actions"][0]}});
  EXPECT_THAT(messages(j), Contains("actions: wrong type: expected an array, got object"));

  j = linear();
  j["chain"] = "a1";
  EXPECT_THAT(messages(j), Contains("chain: wrong type: expected an array of strings, got string"));

  j = linear();
  j["chain"][1] = 2;
  EXPECT_THAT(messages(j), Contains("chain[1]: wrong type: expected a string, got number"));

  j = linear();
  j["roles"] = json::array({"b1"});
  EXPECT_THAT(messages(j), ElementsAre("roles: wrong type: expected an object, got array"));

  j = linear();
  j["side"] = 1;
  EXPECT_THAT(messages(j), ElementsAre("side: wrong type: expected a string, got number"));

  j = linear();
  j["actions"][0]["metadata"] = "phase 1";
  EXPECT_THAT(messages(j), ElementsAre("actions[0].metadata: wrong type: expected an object, got string"));

  j = linear();
  j["actions"][2] = "a3";
  EXPECT_THAT(messages(j), Contains("actions[2]: wrong type: expected an object, got string"));

  j = linear();
  j["tool_calls"][0]["arguments"] = "from port";
  EXPECT_THAT(messages(j), ElementsAre("tool_calls[0].arguments: wrong type: expected an object, got string"));

  j = branch_plan();
  j["branches"][0]["options"][0] = "a5";
  EXPECT_THAT(messages(j), Contains("branches[0].options[0]: wrong type: expected an array of strings, got string"));
}

// ---------------------------------------------------------------------------------------------------------
// Not a plan at all
// ---------------------------------------------------------------------------------------------------------

TEST(Validation, NonObjectJson) {
  const auto sc = testing::tiny_scenario();
  const std::pair<const char*, const char*> cases[] = {
      {"[1, 2]", "array"}, {"\"a plan\"", "string"}, {"42", "number"}, {"null", "null"}, {"true", "boolean"}};
  for (const auto& [text, type] : cases) {
    const auto p = parse_plan_text(text, sc);
    EXPECT_FALSE(p.plan.has_value()) << text;
    EXPECT_FALSE(p.ok());
    EXPECT_THAT(messages(p), ElementsAre(std::string("wrong type: a plan must be a JSON object, got ") + type)) << text;
  }
}

TEST(Validation, InvalidJsonText) {
  const auto sc = testing::tiny_scenario();
  // nlohmann/json reports the byte where the lexer stopped (1-based): "{not json" fails on the 'o' of the
  // would-be literal "null", the third byte.
  auto p = parse_plan_text("{not json", sc);
  EXPECT_FALSE(p.plan.has_value());
  EXPECT_THAT(messages(p), ElementsAre("invalid JSON at byte 3"));
  // Empty input: the end of input is byte 1.
  EXPECT_THAT(messages(parse_plan_text("", sc)), ElementsAre("invalid JSON at byte 1"));
  // Trailing garbage after a complete plan.
  const std::string text = linear().dump();
  EXPECT_THAT(messages(parse_plan_text(text + " x", sc)),
              ElementsAre(fmt::format("invalid JSON at byte {}", text.size() + 2)));
}

TEST(Validation, TruncatedJsonText) {
  const auto sc = testing::tiny_scenario();
  const std::string text = linear().dump();
  for (std::size_t cut : {std::size_t{1}, text.size() / 3, text.size() / 2, text.size() - 1}) {
    SCOPED_TRACE(cut);
    const auto p = parse_plan_text(std::string_view(text).substr(0, cut), sc);
    EXPECT_FALSE(p.plan.has_value());
    ASSERT_EQ(p.violations.size(), 1u);
    EXPECT_EQ(p.violations[0].path, "");
    EXPECT_THAT(p.violations[0].message, ::testing::StartsWith("invalid JSON at byte "));
  }
  // Cut right after the last complete value: the parser reaches the end of input, one past the last byte.
  const std::string head = text.substr(0, text.size() - 1);  // drop the closing brace
  EXPECT_THAT(messages(parse_plan_text(head, sc)), ElementsAre(fmt::format("invalid JSON at byte {}", text.size())));
}

// Regression: an unknown category once was marked through the action's metadata, so a plan could switch the
// verb check off from its own metadata.
TEST(Validation, MetadataCannotSwitchOffTheVerbCheck) {
  json j = linear();
  j["actions"][0]["verb"] = "teleport";
  j["actions"][0]["metadata"]["__invalid_category"] = "1";
  EXPECT_THAT(messages(j), Contains("actions[0].verb: unknown verb \"teleport\" for category information"));
}
// Regression: the priority was once clamped before the range check, so the message named a number the plan
// does not contain.
TEST(Validation, OutOfRangePriorityIsReportedAsGiven) {
  json j = linear();
  j["actions"][0]["priority"] = 1000000000;
  EXPECT_THAT(messages(j), ElementsAre("actions[0].priority: priority 1000000000 is outside 1..5"));
  j["actions"][0]["priority"] = 18446744073709551615ULL;
  EXPECT_THAT(messages(j), ElementsAre("actions[0].priority: priority 18446744073709551615 is outside 1..5"));
}

TEST(Validation, SummaryJoinsEveryViolation) {
  json j = linear();
  j["actions"][0]["priority"] = 0;
  j["actions"][1]["asset"] = "b-tank-9";
  const auto p = parse_plan_text(j.dump(), testing::tiny_scenario());
  EXPECT_EQ(p.summary(), "actions[0].priority: priority 0 is outside 1..5; actions[1].asset: unknown asset \"b-tank-9\"");
}

// ---------------------------------------------------------------------------------------------------------
// Robustness: random corruption never crashes or throws
// ---------------------------------------------------------------------------------------------------------

std::string mutate(std::string s, Rng& rng) {
  const int ops = static_cast<int>(rng.uniform_int(1, 3));
  for (int k = 0; k < ops; ++k) {
    const auto n = static_cast<std::int64_t>(s.size());
    const auto at = n == 0 ? 0 : static_cast<std::size_t>(rng.uniform_int(0, n - 1));
    switch (rng.uniform_int(0, 5)) {
      case 0:  // delete a few bytes
        if (n > 0) s.erase(at, static_cast<std::size_t>(rng.uniform_int(1, 8)));
        break;
      case 1:  // insert a random byte (any value, NUL and invalid UTF-8 included)
        s.insert(s.begin() + static_cast<std::ptrdiff_t>(at), static_cast<char>(rng.uniform_int(0, 255)));
        break;
      case 2:  // replace a byte with a JSON-significant one
        if (n > 0) s[at] = "{}[]\",:0123456789-.eEtfn \\"[rng.uniform_int(0, 26)];
        break;
      case 3:  // truncate
        s.resize(at);
        break;
      case 4:  // duplicate a slice
        if (n > 0) s.insert(at, s.substr(at, static_cast<std::size_t>(rng.uniform_int(1, 40))));
        break;
      default:  // replace a byte with a random one
        if (n > 0) s[at] = static_cast<char>(rng.uniform_int(0, 255));
        break;
    }
  }
  return s;
}

TEST(Validation, RandomMutationsNeverCrashOrThrow) {
  const Scenario sc = testing::tiny_scenario();
  const std::string base = branch_plan().dump();
  Rng rng(20240601);
  int parsed_objects = 0, still_valid = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::string text = mutate(base, rng);
    PlanParse p;
    EXPECT_NO_THROW(p = parse_plan_text(text, sc)) << "mutation " << i << ": " << text;
    if (p.violations.empty()) {
      EXPECT_TRUE(p.plan.has_value()) << text;
    }
    if (!p.plan) continue;
    ++parsed_objects;
    if (p.ok()) {
      ++still_valid;
      EXPECT_THAT(validate_plan(*p.plan, sc), IsEmpty());
    }
    // Metrics on whatever was decoded (valid or not) must not crash or throw either.
    EXPECT_NO_THROW({
      (void)quality(*p.plan, sc);
      (void)coherence(*p.plan, sc);
      (void)structure(*p.plan);
    }) << text;
  }
  // The mutations exercise both the JSON error path and the plan checks.
  EXPECT_GT(parsed_objects, 100);
  EXPECT_LT(parsed_objects, 2000);
  EXPECT_GT(still_valid, 0);
}

TEST(Validation, DeeplyNestedJsonDoesNotCrash) {
  const Scenario sc = testing::tiny_scenario();
  const std::size_t depth = 20000;
  const std::string nested = std::string(depth, '[') + std::string(depth, ']');
  PlanParse p;
  EXPECT_NO_THROW(p = parse_plan_text(nested, sc));
  // Refused before parsing (the depth limit of every untrusted JSON input, docs/POLICIES.md).
  EXPECT_THAT(messages(p), ElementsAre("JSON nests deeper than 64 levels"));
  const std::string unbalanced(depth, '{');
  EXPECT_NO_THROW(p = parse_plan_text(unbalanced, sc));
  EXPECT_FALSE(p.plan.has_value());
}

// ---- the fast acceptance check against the full (Boost.Graph) check -------------------------------------------

/// One random corruption of a plan (or none): each kind of violation validate_plan_reference names.
void corrupt(Plan& p, const Scenario& sc, Rng& rng) {
  const std::size_t n = p.actions.size();
  auto any_action = [&]() -> Action& { return p.actions[rng.pick_index(n)]; };
  auto other_side_asset = [&]() -> std::string {
    for (const auto& a : sc.assets)
      if (a.side != p.side) return a.id;
    return "nobody";
  };
  switch (rng.uniform_int(0, 21)) {
    case 0: any_action().id = any_action().id; break;  // may duplicate
    case 1: any_action().id.clear(); break;
    case 2: any_action().asset = "no-such-asset"; break;
    case 3: any_action().asset = other_side_asset(); break;
    case 4: any_action().priority = rng.bernoulli(0.5) ? 0 : 6; break;
    case 5: any_action().verb = "teleport"; break;
    case 6: p.roles["no-such-asset"] = "x"; break;
    case 7: p.roles[other_side_asset()] = "x"; break;
    case 8: if (!p.chain.empty()) p.chain.erase(p.chain.begin() + static_cast<long>(rng.pick_index(p.chain.size()))); break;
    case 9: p.chain.push_back("dangling"); break;
    case 10: if (!p.chain.empty()) p.chain.push_back(rng.pick(p.chain)); break;
    case 11: if (!p.branches.empty()) rng.pick(p.branches).at = "elsewhere"; break;
    case 12: if (!p.branches.empty() && !rng.pick(p.branches).options.empty()) rng.pick(p.branches).options.pop_back(); break;
    case 13: if (!p.branches.empty()) rng.pick(p.branches).options.push_back({}); break;
    case 14: if (!p.branches.empty() && !p.chain.empty()) rng.pick(p.branches).options.front().push_back(rng.pick(p.chain)); break;
    case 15: if (!p.branches.empty()) { auto& b = rng.pick(p.branches); b.options.push_back(b.options.front()); } break;
    case 16: p.side = p.side == Side::Blue ? Side::Red : Side::Blue; break;
    case 17: p.objective.clear(); break;
    case 18: p.chain.clear(); break;
    case 19: { Action extra = any_action(); extra.id = "unplaced"; p.actions.push_back(extra); } break;
    case 20: if (!p.branches.empty()) { auto& b = rng.pick(p.branches); b.at = b.options.front().front(); } break;
    default: break;  // unchanged: valid
  }
}

/// Sampled plans of every fifth paper scenario, 40 each, both sides, with branches, corrupted 0-3 times: the plans
/// the fast-validation tests compare on. `each(scenario, side, plan, index)`.
template <typename Each>
void for_each_corrupted_plan(Each each) {
  const auto& cfg = testing::paper_config();
  const auto corpus = generate_corpus(cfg);
  for (std::size_t s = 0; s < corpus.size(); s += 5) {
    const Scenario& sc = corpus[s];
    const ScenarioTemplate* tpl = &testing::template_of(cfg, sc);
    for (std::uint64_t i = 0; i < 40; ++i) {
      Rng rng = Rng::keyed(1, sc.id, "fast-validation", i);
      const Side side = i % 2 ? Side::Red : Side::Blue;
      SampleOptions opts{tpl->seed_plans, tpl->branch_kinds, 0.6, {}};
      opts.shape.branch_probability = 0.7;
      Plan p = sample_plan(sc, side, rng, opts, "p");
      const auto corruptions = rng.uniform_int(0, 3);
      for (int c = 0; c < corruptions; ++c) corrupt(p, sc, rng);
      each(sc, side, p, i);
    }
  }
}

TEST(Validation, TheFastCheckAcceptsExactlyWhatTheFullCheckAccepts) {
  // Differential oracle: sampled plans of every template and side, corrupted 0-3 times, must be accepted by
  // validate_plan exactly when validate_plan_reference (Boost.Graph cycles and reachability, every rule) finds
  // nothing, and the messages must be the reference's.
  std::size_t valid = 0, invalid = 0;
  for_each_corrupted_plan([&](const Scenario& sc, Side side, const Plan& p, std::uint64_t i) {
    const auto fast = validate_plan(p, sc, side);
    const auto full = validate_plan_reference(p, sc, side);
    ASSERT_EQ(fast.empty(), full.empty()) << sc.id << " plan " << i << ": " << (full.empty() ? "" : full.front().str());
    ASSERT_EQ(fast.size(), full.size());
    (fast.empty() ? valid : invalid) += 1;
  });
  // Both outcomes are well represented, so neither side of the equivalence is vacuous.
  EXPECT_GT(valid, 300u);
  EXPECT_GT(invalid, 500u);
}

/// Two layouts place the same actions (by index in their plans' actions, so two plans drawn alike compare), assets,
/// positions, weights, chain flags, branches and options, in the same order.
void expect_same_layout(const std::vector<PlacedAction>& got, const Plan& got_plan,
                        const std::vector<PlacedAction>& want, const Plan& want_plan) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    SCOPED_TRACE(k);
    EXPECT_EQ(got[k].action - got_plan.actions.data(), want[k].action - want_plan.actions.data());
    EXPECT_EQ(got[k].asset, want[k].asset);
    EXPECT_EQ(got[k].position, want[k].position);
    EXPECT_EQ(got[k].weight, want[k].weight);
    EXPECT_EQ(got[k].in_chain, want[k].in_chain);
    EXPECT_EQ(got[k].branch, want[k].branch);
    EXPECT_EQ(got[k].option, want[k].option);
  }
}

TEST(Validation, TheResolvingCheckGivesTheAssetsTheLayoutAndTheRawCapabilityOfThePublicPath) {
  // score_red_plan takes each action's asset from the fast check and lays the plan out and sums its raw
  // capability from them (src/core/resolved_plan.hpp). On the same corrupted plans: the check accepts exactly when
  // validate_plan finds nothing, and then the assets, the layout (every field) and the raw capability (its bits)
  // are those of find_asset, layout_plan and raw_capability.
  std::size_t accepted = 0;
  for_each_corrupted_plan([&](const Scenario& sc, Side side, const Plan& p, std::uint64_t i) {
    std::vector<const Asset*> assets(p.actions.size(), nullptr);
    const bool ok = detail::accepts_resolving(p, sc, side, assets.data());
    ASSERT_EQ(ok, validate_plan(p, sc, side).empty()) << sc.id << " plan " << i;
    if (!ok) return;
    ++accepted;
    for (std::size_t a = 0; a < p.actions.size(); ++a) ASSERT_EQ(assets[a], sc.find_asset(p.actions[a].asset));
    std::vector<PlacedAction> got;
    detail::layout_resolved_into(p, assets.data(), got);
    expect_same_layout(got, p, layout_plan(p, sc), p);
    const double rc = detail::raw_capability_of_layout(got), ref = raw_capability(p, sc);
    EXPECT_EQ(std::memcmp(&rc, &ref, sizeof rc), 0) << sc.id << " plan " << i;
    // The same plan with its actions in reverse order (still valid: the chain and options name actions by id), so
    // no action sits where a sampled plan keeps it.
    Plan rev = p;
    std::reverse(rev.actions.begin(), rev.actions.end());
    std::vector<const Asset*> rev_assets(assets.rbegin(), assets.rend());
    std::vector<PlacedAction> got_rev;
    detail::layout_resolved_into(rev, rev_assets.data(), got_rev);
    expect_same_layout(got_rev, rev, layout_plan(rev, sc), rev);
  });
  EXPECT_GT(accepted, 300u);
}

TEST(Validation, APlanValidByConstructionIsOneTheResolvingCheckAcceptsWithTheSameAssets) {
  // The RED candidate loop skips validation when the sampler says its plan is valid by construction and the
  // scenario's asset ids are distinct (src/scenario/sampled_plan.hpp). Over every fifth paper scenario, both
  // sides, and shapes that allow empty options and empty chains (so some plans are not valid by construction),
  // plus a scenario without an objective: the draws and the plan are sample_plan's (with the shared sampler
  // tables or without), and a plan said to be valid
  // is accepted by accepts_resolving with exactly the assets the sampler drew.
  const auto& cfg = testing::paper_config();
  const auto corpus = generate_corpus(cfg);
  std::size_t certified = 0, not_certified = 0;
  Plan lean;  // the lean draw's scratch plan, reused as a thread's is
  for (std::size_t s = 0; s < corpus.size(); s += 5) {
    Scenario sc = corpus[s];
    ASSERT_TRUE(detail::asset_ids_unique(sc)) << sc.id;
    if (s % 25 == 0) sc.red_objective.clear(), sc.blue_objective.clear();
    const ScenarioTemplate& tpl = testing::template_of(cfg, corpus[s]);
    for (std::uint64_t i = 0; i < 40; ++i) {
      const Side side = i % 2 ? Side::Red : Side::Blue;
      SampleOptions opts{tpl.seed_plans, tpl.branch_kinds, 0.6, {}};
      opts.shape.branch_probability = 0.8;
      if (i % 4 >= 2) opts.shape.option_min = 0;
      if (i % 8 == 7) opts.shape.chain_min = 0;
      Rng r1 = Rng::keyed(2, sc.id, "by-construction", i), r2 = r1;
      std::vector<const Asset*> assets;
      bool valid = false;
      // Half with the per-scenario tables a batch of candidates shares (sampler_tables): the same draws.
      const detail::SamplerTables tables = detail::sampler_tables(sc, side);
      const Plan p = detail::sample_plan_resolved(sc, side, r1, opts, "p", &assets, &valid, i % 3 ? &tables : nullptr);
      ASSERT_EQ(p, sample_plan(sc, side, r2, opts, "p")) << sc.id << " plan " << i;
      ASSERT_EQ(r1.uniform_int(0, 1 << 30), r2.uniform_int(0, 1 << 30)) << "the same number of draws";
      ASSERT_EQ(assets.size(), p.actions.size());
      {
        // The lean draw (sample_plan_lean, into one plan reused across the loop): the same draws, the same
        // certificate and assets, and the full plan's ids, categories, priorities, chain and branches, so the
        // same layout.
        Rng r3 = Rng::keyed(2, sc.id, "by-construction", i), r4 = r3;
        (void)sample_plan(sc, side, r4, opts, "p");
        std::vector<const Asset*> lean_assets;
        bool lean_valid = !valid;
        detail::sample_plan_lean(lean, sc, side, r3, opts, lean_assets, lean_valid, tables);
        ASSERT_EQ(r3.next_u64(), r4.next_u64()) << "the lean draw makes the same draws";
        ASSERT_EQ(lean_valid, valid) << sc.id << " plan " << i;
        ASSERT_EQ(lean_assets, assets) << sc.id << " plan " << i;
        EXPECT_EQ(lean.side, side);
        ASSERT_EQ(lean.actions.size(), p.actions.size());
        for (std::size_t k = 0; k < p.actions.size(); ++k) {
          EXPECT_EQ(lean.actions[k].id, p.actions[k].id);
          EXPECT_EQ(lean.actions[k].category, p.actions[k].category);
          EXPECT_EQ(lean.actions[k].priority, p.actions[k].priority);
        }
        EXPECT_EQ(lean.chain, p.chain);
        ASSERT_EQ(lean.branches.size(), p.branches.size());
        for (std::size_t b = 0; b < p.branches.size(); ++b) {
          EXPECT_EQ(lean.branches[b].at, p.branches[b].at);
          EXPECT_EQ(lean.branches[b].options, p.branches[b].options);
        }
        if (valid) {
          std::vector<PlacedAction> got, want;
          detail::layout_resolved_into(lean, lean_assets.data(), got);
          detail::layout_resolved_into(p, assets.data(), want);
          expect_same_layout(got, lean, want, p);
        }
      }
      std::vector<const Asset*> resolved(p.actions.size(), nullptr);
      const bool accepted = detail::accepts_resolving(p, sc, side, resolved.data());
      if (!valid) {
        ++not_certified;
        continue;
      }
      ++certified;
      ASSERT_TRUE(accepted) << sc.id << " plan " << i << ": " << validate_plan(p, sc, side).front().str();
      ASSERT_EQ(resolved, assets) << sc.id << " plan " << i;
    }
  }
  EXPECT_GT(certified, 500u);
  EXPECT_GT(not_certified, 20u);
}

TEST(Validation, AssetIdsUniqueFindsASharedId) {
  Scenario sc = generate_corpus(testing::paper_config()).front();
  ASSERT_TRUE(detail::asset_ids_unique(sc));
  EXPECT_TRUE(detail::sampler_tables(sc, Side::Red).asset_ids_unique);
  sc.assets.back().id = sc.assets.front().id;
  EXPECT_FALSE(detail::asset_ids_unique(sc));
  EXPECT_FALSE(detail::sampler_tables(sc, Side::Red).asset_ids_unique);  // the batch then validates every plan
}

}  // namespace
}  // namespace advplan
