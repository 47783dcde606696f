// plan_from_json's steps (header, roles, actions, chain, branches, tool calls): the structural violations each
// step reports, and their order across steps. Semantic validation is validation_test.cpp's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <typeinfo>
#include <nlohmann/json.hpp>

#include "advplan/core/plan_json.hpp"
#include "advplan/run/config.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/core/random.hpp"
#include "advplan/scenario/plan_sampler.hpp"
#include "core/plan_text.hpp"
#include "core/scenario_text.hpp"
#include "support/fixtures.hpp"

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


// scenario_to_string writes the text itself, and scenario_from_text reads it with simdjson; each must be the DOM
// path exactly: the same bytes, the same scenario, the same exception.
/// A scenario whose strings and numbers take every branch of nlohmann's writer: escapes, control characters,
/// UTF-8, integral doubles, exponents, negative zero, non-finite values, the largest seed.
Scenario awkward_scenario() {
  Scenario sc = testing::tiny_scenario();
  sc.id = "quote\"back\\slash";
  sc.template_id = "tab\tnew\nline\x01\x1f del\x7f";
  sc.domain = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";
  sc.seed = std::numeric_limits<std::uint64_t>::max();
  sc.terrain.mobility = 100.0;
  sc.terrain.visibility = 1e-7;
  sc.terrain.exposure = 1e21;
  sc.terrain.category_modifier[0] = -0.0;
  sc.terrain.category_modifier[1] = 0.1 + 0.2;
  sc.terrain.category_modifier[2] = std::numeric_limits<double>::denorm_min();
  sc.terrain.category_modifier[3] = std::numeric_limits<double>::max();
  sc.terrain.category_modifier[4] = std::nan("");
  sc.terrain.category_modifier[5] = -std::numeric_limits<double>::infinity();
  sc.exposure[6] = 123456789.125;
  sc.places.push_back("");
  sc.places.push_back("/\\u0041");
  sc.assets.front().capability = 2.0;
  sc.assets.front().categories.clear();
  sc.verbs[3].clear();
  return sc;
}

TEST(ScenarioText, TheWriterGivesTheDomDumpByteForByte) {
  std::vector<Scenario> all = generate_corpus(testing::paper_config());
  all.push_back(awkward_scenario());
  for (const Scenario& sc : all)
    for (ScenarioJson what : {ScenarioJson::with_seed_plans, ScenarioJson::without_seed_plans})
      ASSERT_EQ(scenario_to_string(sc, what), to_json(sc, what).dump()) << sc.id;
  EXPECT_EQ(scenario_to_string(all.front()), to_json(all.front()).dump());
  // Invalid UTF-8 is nlohmann's error, from both.
  Scenario bad = testing::tiny_scenario();
  bad.red_objective = "cut \xff off";
  EXPECT_THROW((void)to_json(bad).dump(), json::type_error);
  EXPECT_THROW((void)scenario_to_string(bad), json::type_error);
}

/// scenario_from_text(text) against scenario_from_json(json::parse(text)): equal scenarios, or the same exception
/// type and message.
void expect_same_reading(const std::string& text) {
  std::optional<Scenario> dom, fast;
  std::string dom_error, fast_error;
  try {
    dom = scenario_from_json(json::parse(text));
  } catch (const std::exception& e) {
    dom_error = std::string(typeid(e).name()) + ": " + e.what();
  }
  try {
    fast = scenario_from_text(text);
  } catch (const std::exception& e) {
    fast_error = std::string(typeid(e).name()) + ": " + e.what();
  }
  EXPECT_EQ(fast_error, dom_error) << text.substr(0, 200);
  ASSERT_EQ(fast.has_value(), dom.has_value()) << text.substr(0, 200);
  if (dom) {
    EXPECT_TRUE(*fast == *dom) << text.substr(0, 200);
    // Bits, not values: == is true of -0.0 and +0.0, and false of NaN.
    EXPECT_EQ(scenario_to_string(*fast), scenario_to_string(*dom));
    for (std::size_t c = 0; c < kNumCategories; ++c)
      EXPECT_EQ(std::signbit(fast->terrain.category_modifier[c]), std::signbit(dom->terrain.category_modifier[c]));
  }
}

TEST(ScenarioText, TheReaderGivesTheDomReading) {
  for (const Scenario& sc : generate_corpus(testing::paper_config())) {
    const std::string text = scenario_to_string(sc, ScenarioJson::without_seed_plans);
    expect_same_reading(text);
    // A prompt's scenario is the fast reader's, not the fallback's (the speed-up is not lost silently).
    EXPECT_TRUE(detail::scenario_from_text_fast(text).has_value()) << sc.id;
  }
  Scenario odd = awkward_scenario();
  odd.terrain.category_modifier[4] = 0.5;  // the writer's null for a NaN is not a number to read back
  odd.terrain.category_modifier[5] = -7.0;
  const std::string base = scenario_to_string(odd, ScenarioJson::without_seed_plans);
  expect_same_reading(base);
  expect_same_reading(scenario_to_string(testing::tiny_scenario()));  // with seed plans: the DOM path's
  // Variants the fast reader must read as the DOM does, or hand over: each is one edit of the text.
  auto edit = [&](const std::string& from, const std::string& to) {
    std::string t = base;
    const auto at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) t.replace(at, from.size(), to);
    return t;
  };
  const std::vector<std::string> variants = {
      edit("\"mobility\":100.0", "\"mobility\":100"),                       // an integer where a double is
      edit("\"mobility\":100.0", "\"mobility\":-0"),                        // an integer negative zero
      edit("\"mobility\":100.0", "\"mobility\":true"),                      // a boolean: an error both ways
      edit("\"mobility\":100.0", "\"mobility\":1e400"),                     // out of range
      edit("\"mobility\":100.0", "\"mobility\":18446744073709551615"),      // an unsigned where a double is
      edit("\"seed\":18446744073709551615", "\"seed\":5.0"),                // a double where the seed is
      edit("\"seed\":18446744073709551615", "\"seed\":-3"),                 // a negative seed
      edit("\"seed\":18446744073709551615", "\"seed\":18446744073709551616"),  // past uint64
      edit("{\"assets\"", "{\"id\":\"first\",\"id\":5,\"assets\""),      // duplicates: the last wins
      edit("{\"assets\"", "{\"seed\":1,\"extra\":{\"x\":[1,2]},\"assets\""),  // unknown keys are ignored
      edit(",\"domain\":\"caf", ",\"domainx\":\"caf"),                      // the domain is optional
      edit(",\"domain\":\"caf", ",\"domain\":null,\"d\":\"caf"),            // but a string when present
      edit("\"framing\":\"neutral\"", "\"framing\":\"sideways\""),          // not a framing
      edit("\"side\":\"BLUE\"", "\"side\":\"GREEN\""),                      // not a side
      edit("\"verbs\":{", "\"verbs\":{\"juggling\":[],"),                   // not a category
      edit("\"exposure\":{", "\"exposure\":{\"cyber\":1,\"cyber\":2,"),     // duplicate category keys
      edit("\"categories\":[", "\"categories\":[\"flying\","),              // not a category
      edit("\"places\":[", "\"places\":[7,"),                               // not a string
      edit("\"places\":[", "\"places\":[\"\\u0041\\u00e9\\ud83d\\ude00\\n\","),   // escapes, a surrogate pair
      edit("\"places\":[", "\"places\":[\"\\udc00\","),                // a lone low surrogate
      edit("\"places\":[", "\"places\":[\"\\ud83dx\","),               // a high surrogate alone
      edit("\"assets\":[{", "\"assets\":[{\"id\":\"dup\"},{"),              // an asset without its fields
      edit("\"blue_seed_plans\":[]", "\"blue_seed_plans\":{}"),            // not an array
      edit("\"blue_seed_plans\":[]", "\"blue_seed_plans\":[{\"plan_id\":\"p\"}]"),  // a seed plan
      edit("\"requirements\":{", "\"requirements\":{\"GREEN\":{},"),        // unknown side keys are ignored
      "\xef\xbb\xbf" + base,                                                 // a byte-order mark
      " \n\t" + base + " \r\n",                                              // whitespace
      base + "x",                                                            // trailing text
      base.substr(0, base.size() / 2),                                       // cut off
      "[" + base + "]",                                                      // not an object
      "",
  };
  for (const auto& v : variants) expect_same_reading(v);
  // A duplicate asset id is the DOM path's PlanError.
  Scenario dup = testing::tiny_scenario();
  dup.blue_seed_plans.clear();
  dup.assets.push_back(dup.assets.front());
  expect_same_reading(scenario_to_string(dup));
}


// plan_from_text_fast against plan_from_json(json::parse(text)): whenever it gives a plan, the DOM path gives the
// same plan and no violation; it must give one for the plans the library writes (sampled, seed, council and the
// offline model's pretty-printed replies); and it hands over whatever the decoder would report.
void expect_same_plan_reading(const std::string& text, bool must_take) {
  std::vector<Violation> v;
  const auto dom = plan_from_json(json::parse(text, nullptr, false), v);
  const auto fast = detail::plan_from_text_fast(text);
  if (fast) {
    ASSERT_TRUE(dom.has_value()) << text.substr(0, 300);
    EXPECT_TRUE(v.empty()) << text.substr(0, 300) << "\n" << v.front().str();
    EXPECT_TRUE(*fast == *dom) << text.substr(0, 300);
    EXPECT_EQ(plan_to_string(*fast), plan_to_string(*dom));
  } else if (must_take) {
    ADD_FAILURE() << "the fast reader handed over " << text.substr(0, 300);
  }
}

TEST(PlanText, TheWriterGivesTheDomsTextAtEveryIndent) {
  // plan_to_string writes to_json(plan).dump(indent) without the DOM: the same bytes, or the same exception, for
  // seed and sampled plans of every template (branches, tool calls, metadata) and for awkward plans (empty
  // sections, escapes, UTF-8, invalid UTF-8, tool-call arguments of every shape), compact and indented.
  const auto& cfg = testing::paper_config();
  const auto corpus = generate_corpus(cfg);
  std::vector<Plan> plans;
  for (std::size_t s = 0; s < corpus.size(); s += 7) {
    const Scenario& sc = corpus[s];
    for (const Plan& p : sc.blue_seed_plans) plans.push_back(p);
    const ScenarioTemplate& tpl = testing::template_of(cfg, sc);
    for (std::uint64_t i = 0; i < 4; ++i) {
      Rng rng = Rng::keyed(5, sc.id, "plan-writer", i);
      SampleOptions opts{tpl.seed_plans, tpl.branch_kinds, 0.6, {}};
      opts.shape.branch_probability = 0.8;
      plans.push_back(sample_plan(sc, i % 2 ? Side::Red : Side::Blue, rng, opts, "p"));
    }
  }
  std::size_t with_tools = 0;
  for (const Plan& p : plans) with_tools += p.tool_calls.empty() ? 0 : 1;
  ASSERT_GT(with_tools, 10u);
  Plan odd = plans.back();
  plans.push_back(Plan{});  // every section empty
  odd.objective = "quote \" backslash \\ tab \t newline \n bell \x07 del \x7f caf\xc3\xa9 \xe2\x82\xac";
  odd.roles["r\"x"] = "";
  if (!odd.actions.empty()) {
    odd.actions.front().metadata.clear();
    odd.actions.back().metadata = {{"a", "1"}, {"b", "two words"}, {"z\n", "\u00e9"}};
  }
  odd.branches.push_back({"a1", "", {{}, {"x"}, {}}});
  odd.branches.push_back({"a1", "c", {}});
  for (const std::string args : {"{}", "[]", "null", "3", "\"s\"", "{\"a\":{\"b\":[1,{\"c\":[]},{}]},\"d\":[]}",
                                 "[[],[[]],{\"k\":\"v\"}]", "not json", "{\"x\":1.5e300,\"y\":-0.0,\"z\":true}"})
    odd.tool_calls.push_back({"tool", args});
  plans.push_back(odd);
  for (const int indent : {-1, 0, 1, 2, 4}) {
    for (const Plan& p : plans) {
      const std::string want = to_json(p).dump(indent);
      ASSERT_EQ(plan_to_string(p, indent), want) << "indent " << indent << ": " << want.substr(0, 200);
      if (indent < 0) {
        ASSERT_EQ(plan_to_string(p), want);
      }
    }
    Plan bad = odd;
    bad.actions.empty() ? void(bad.objective += "\xff") : void(bad.actions.front().target = "bad \xc3");
    std::string dom_error, writer_error;
    try { (void)to_json(bad).dump(indent); } catch (const json::exception& e) { dom_error = e.what(); }
    try { (void)plan_to_string(bad, indent); } catch (const json::exception& e) { writer_error = e.what(); }
    EXPECT_FALSE(dom_error.empty());
    EXPECT_EQ(writer_error, dom_error);
  }
}

TEST(PlanText, TheReaderGivesTheDecodersPlanOrHandsOver) {
  const auto& cfg = testing::paper_config();
  const auto corpus = generate_corpus(cfg);
  std::size_t taken = 0;
  for (std::size_t s = 0; s < corpus.size(); s += 3) {
    const Scenario& sc = corpus[s];
    for (const Plan& p : sc.blue_seed_plans) {
      expect_same_plan_reading(plan_to_string(p), true);
      expect_same_plan_reading(to_json(p).dump(2), true);  // the offline model's layout
      ++taken;
    }
    const ScenarioTemplate* tpl = &testing::template_of(cfg, sc);
    for (std::uint64_t i = 0; i < 6; ++i) {
      Rng rng = Rng::keyed(3, sc.id, "plan-text", i);
      SampleOptions opts{tpl->seed_plans, tpl->branch_kinds, 0.6, {}};
      opts.shape.branch_probability = 0.8;  // branches and their tool calls
      expect_same_plan_reading(plan_to_string(sample_plan(sc, i % 2 ? Side::Red : Side::Blue, rng, opts, "p")), true);
      ++taken;
    }
  }
  EXPECT_GT(taken, 200u);
  // One edit of a plan with a branch, a tool call, roles and metadata: each reads as the decoder reads it.
  const Scenario sc = corpus.front();
  const ScenarioTemplate& tpl = cfg.templates.front();
  Plan base;
  for (std::uint64_t i = 0; base.branches.empty() && i < 200; ++i) {
    Rng rng = Rng::keyed(4, sc.id, "plan-text-base", i);
    SampleOptions opts{tpl.seed_plans, tpl.branch_kinds, 0.6, {}};
    opts.shape.branch_probability = 1.0;
    base = sample_plan(sc, Side::Red, rng, opts, "base");
  }
  ASSERT_FALSE(base.branches.empty());
  ASSERT_FALSE(base.tool_calls.empty());
  const std::string text = plan_to_string(base);
  expect_same_plan_reading(text, true);
  auto edit = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const auto at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) t.replace(at, from.size(), to);
    return t;
  };
  const std::vector<std::string> variants = {
      edit("\"priority\":", "\"priority\":3.0,\"x\":"),                    // a double where the priority is
      edit("\"priority\":", "\"priority\":0,\"x\":"),                      // out of range
      edit("\"priority\":", "\"priority\":-0,\"x\":"),
      edit("\"priority\":", "\"priority\":18446744073709551615,\"x\":"),
      edit("\"priority\":", "\"priority\":\"3\",\"x\":"),                  // a string
      edit("\"category\":\"", "\"category\":\"juggling\",\"x\":\""),       // not a category
      edit("\"metadata\":{", "\"metadata\":{\"n\":7,"),                    // a number in the metadata
      edit("\"metadata\":{", "\"metadata\":{\"phase\":\"9\","),            // a duplicate: the last wins
      edit("\"arguments\":{", "\"arguments\":{\"n\":7,"),                  // a number in a tool's arguments
      edit("\"arguments\":{", "\"arguments\":{\"zz\":\"last\",\"a\":\"fi\\\"rst\","),  // unsorted, escaped
      edit("\"arguments\":{", "\"arguments\":{\"at\":\"dup\","),           // a duplicate argument
      edit("\"arguments\":{", "\"arguments\":[],\"y\":{"),                 // not an object
      edit("\"roles\":{", "\"roles\":{\"r-x\":1,"),                        // a role that is not a string
      edit("\"roles\":{", "\"roles\":{\"zzz\":\"a\",\"zzz\":\"b\","),      // a duplicate role
      edit("\"side\":\"RED\"", "\"side\":\"GREEN\""),
      edit("\"side\":\"RED\"", "\"side\":\"BLUE\",\"side\":\"RED\""),      // a duplicate: the last wins
      edit("\"chain\":[", "\"chain\":[7,"),
      edit("\"chain\":[", "\"chainx\":["),                                 // no chain
      edit("\"options\":[", "\"options\":[\"a1\","),                       // an option that is not an array
      edit("\"options\":[", "\"optionsx\":["),                             // a branch without options
      edit("\"condition\":\"", "\"condition\":5,\"c\":\""),
      edit("\"domain\":\"", "\"domain\":null,\"d\":\""),
      edit("{\"actions\":", "{\"extra\":{\"deep\":[1,2,{}]},\"actions\":"),  // an unknown key is ignored
      edit("{\"actions\":", "{\"actions\":[],\"actions\":"),                  // a duplicate array: the last wins
      edit("\"target\":\"", "\"target\":\"\\u0041\\ud83d\\ude00\\n"),          // escapes
      "\xef\xbb\xbf" + text,
      " \n" + text + "\n ",
      text + "}",
      text.substr(0, text.size() / 2),
      "[" + text + "]",
      "",
  };
  for (const auto& t : variants) expect_same_plan_reading(t, false);
  // The limits: a document deeper than the decoder's limit (in a key the plan does not have) and 1,001 actions are
  // the decoder's violations, not the fast reader's plan.
  for (std::size_t depth : {10u, 20u, 63u, 64u, 65u, 200u}) {
    const std::string deep = std::string(depth, '[') + std::string(depth, ']');
    expect_same_plan_reading(edit("{\"actions\":", "{\"extra\":" + deep + ",\"actions\":"), false);
  }
  expect_same_plan_reading(edit("{\"actions\":", "{\"extra\":" + std::string(70, '[') + std::string(70, ']') +
                                                    ",\"actions\":"), false);
  Plan many = base;
  while (many.actions.size() <= untrusted::kMaxPlanActions) many.actions.push_back(many.actions.front());
  EXPECT_FALSE(detail::plan_from_text_fast(plan_to_string(many)).has_value());
}

}  // namespace
}  // namespace advplan
