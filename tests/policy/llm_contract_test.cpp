// The language-model JSON contract (src/policy/llm_contract.cpp): the completion parser on the ways a real model
// answers (clean, fenced with prose, bare object in prose, truncated, empty, schema-violating, wrong side, not an
// object), run_contract's retry and accounting logic against a scripted client, and the offline client over the
// whole built-in corpus.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <nlohmann/json.hpp>

#include "advplan/core/plan_json.hpp"
#include "advplan/core/random.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/run/config.hpp"
#include "advplan/policy/llm_contract.hpp"
#include "advplan/run/scenario_lookup.hpp"

#include "support/fixtures.hpp"

namespace advplan {
namespace {

using ::testing::HasSubstr;

const ExperimentConfig& paper() { return testing::paper_config(); }
const Scenario& urban100() {
  static const Scenario sc = find_scenario(paper(), "urban-100");
  return sc;
}

const Asset& first_asset(const Scenario& sc, Side side) {
  for (const auto& a : sc.assets)
    if (a.side == side && !a.categories.empty() && !sc.verbs[index(a.categories.front())].empty()) return a;
  throw std::logic_error("scenario has no usable asset of that side");
}

/// A small valid plan for `side`: two actions of the side's first asset in its first category, in a chain.
Plan small_plan(const Scenario& sc, Side side) {
  const Asset& a = first_asset(sc, side);
  const Category c = a.categories.front();
  Plan p;
  p.plan_id = sc.id + "/test";
  p.side = side;
  p.objective = side == Side::Red ? sc.red_objective : sc.blue_objective;
  p.domain = sc.domain;
  for (const char* id : {"a1", "a2"}) {
    Action act;
    act.id = id;
    act.asset = a.id;
    act.category = c;
    act.verb = sc.verbs[index(c)].front();
    act.target = sc.places.empty() ? "" : sc.places.front();
    act.priority = 3;
    p.actions.push_back(act);
    p.chain.push_back(id);
  }
  return p;
}

std::string red_text() { return to_json(small_plan(urban100(), Side::Red)).dump(); }

bool has_path(const PlanParse& p, const std::string& path) {
  return std::any_of(p.violations.begin(), p.violations.end(), [&](const Violation& v) { return v.path == path; });
}

// ---- parse_completion ----------------------------------------------------------------------------------------

TEST(ParseCompletion, FixturePlanIsValid) {
  ASSERT_TRUE(validate_plan(small_plan(urban100(), Side::Red), urban100(), Side::Red).empty());
  ASSERT_TRUE(validate_plan(small_plan(urban100(), Side::Blue), urban100(), Side::Blue).empty());
}

TEST(ParseCompletion, CleanJsonIsParsedNotRepaired) {
  const CompletionParse p = parse_completion(red_text(), urban100(), Side::Red);
  EXPECT_TRUE(p.parse.ok()) << p.parse.summary();
  EXPECT_FALSE(p.repaired);
  EXPECT_EQ(*p.parse.plan, small_plan(urban100(), Side::Red));
}

TEST(ParseCompletion, FencedJsonWithProseIsRepaired) {
  const std::string text = "Sure. Here is the RED plan:\n```json\n" + red_text() + "\n```\nIt probes, then strikes.";
  const CompletionParse p = parse_completion(text, urban100(), Side::Red);
  EXPECT_TRUE(p.parse.ok()) << p.parse.summary();
  EXPECT_TRUE(p.repaired);
  EXPECT_EQ(*p.parse.plan, small_plan(urban100(), Side::Red));
}

TEST(ParseCompletion, BareObjectInProseIsRepaired) {
  const std::string text = "My answer is " + red_text() + " and I hope it helps.";
  const CompletionParse p = parse_completion(text, urban100(), Side::Red);
  EXPECT_TRUE(p.parse.ok()) << p.parse.summary();
  EXPECT_TRUE(p.repaired);
}

TEST(ParseCompletion, TruncatedJsonIsAViolationNotACrash) {
  const std::string text = red_text();
  const CompletionParse p = parse_completion(text.substr(0, text.size() / 2), urban100(), Side::Red);
  EXPECT_FALSE(p.parse.ok());
  EXPECT_FALSE(p.repaired);
  ASSERT_FALSE(p.parse.violations.empty());
  EXPECT_THAT(p.parse.summary(), HasSubstr("no parseable JSON object"));
}

TEST(ParseCompletion, EveryPrefixAndRandomBytesNeverThrow) {
  const std::string head = "Plan:\n```json\n", json = red_text(), text = head + json + "\n```";
  for (std::size_t n = 0; n < text.size(); ++n) {
    CompletionParse p;
    ASSERT_NO_THROW(p = parse_completion(text.substr(0, n), urban100(), Side::Red)) << "prefix " << n;
    // Until the whole object is there nothing can parse; once it is, the missing closing fence does not matter
    // (the outermost {...} is extracted).
    ASSERT_EQ(p.parse.ok(), n >= head.size() + json.size()) << "prefix " << n;
  }
  Rng rng = Rng::keyed(1, "llm_contract_test", "fuzz");
  const std::string alphabet = "{}[]\":,` \nabc123-json";
  for (int i = 0; i < 300; ++i) {
    std::string s;
    for (int j = 0, n = static_cast<int>(rng.uniform_int(0, 60)); j < n; ++j)
      s += alphabet[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(alphabet.size()) - 1))];
    ASSERT_NO_THROW(parse_completion(s, urban100(), Side::Red)) << s;
  }
}

TEST(ParseCompletion, EmptyText) {
  const CompletionParse p = parse_completion("", urban100(), Side::Red);
  EXPECT_FALSE(p.parse.ok());
  EXPECT_THAT(p.parse.summary(), HasSubstr("empty completion"));
}

TEST(ParseCompletion, SchemaViolationNamesItsPath) {
  nlohmann::json j = to_json(small_plan(urban100(), Side::Red));
  j["actions"][0]["priority"] = 9;
  const CompletionParse p = parse_completion(j.dump(), urban100(), Side::Red);
  EXPECT_FALSE(p.parse.ok());
  EXPECT_FALSE(p.repaired);
  EXPECT_TRUE(has_path(p.parse, "actions[0].priority")) << p.parse.summary();
  EXPECT_THAT(p.parse.summary(), HasSubstr("actions[0].priority"));
}

TEST(ParseCompletion, AssetOfTheOtherSideIsAViolation) {
  // A BLUE plan that uses a RED asset.
  Plan p = small_plan(urban100(), Side::Blue);
  p.actions[0].asset = first_asset(urban100(), Side::Red).id;
  const CompletionParse blue = parse_completion(to_json(p).dump(), urban100(), Side::Blue);
  EXPECT_FALSE(blue.parse.ok());
  EXPECT_TRUE(has_path(blue.parse, "actions[0].asset")) << blue.parse.summary();
  EXPECT_THAT(blue.parse.summary(), HasSubstr("belongs to RED"));
  // A valid RED plan offered where a BLUE plan is expected.
  const CompletionParse red_as_blue = parse_completion(red_text(), urban100(), Side::Blue);
  EXPECT_FALSE(red_as_blue.parse.ok());
  EXPECT_TRUE(has_path(red_as_blue.parse, "side")) << red_as_blue.parse.summary();
}

// A completion that decodes without a structural violation is read without the DOM (src/core/plan_text.hpp); its
// parse must be parse_plan_json's: the same plan and the same semantic violations, in order.
TEST(ParseCompletion, AStructurallyCleanPlanParsesAsTheDomPathParsesIt) {
  const Scenario& sc = urban100();
  std::size_t with_violations = 0;
  for (int k = 0; k < 8; ++k) {
    Plan p = small_plan(sc, Side::Red);
    switch (k) {
      case 1: p.actions[0].asset = "nobody"; break;
      case 2: p.actions[0].verb = "teleport"; break;
      case 3: p.chain.push_back("a99"); break;
      case 4: p.actions.push_back(p.actions.front()); break;  // a duplicate id
      case 5: p.objective.clear(); break;
      case 6: p.actions[0].asset = first_asset(sc, Side::Blue).id; break;
      case 7: p.side = Side::Blue; break;
      default: break;
    }
    for (const std::string& text : {to_json(p).dump(), to_json(p).dump(2)}) {
      const CompletionParse got = parse_completion(text, sc, Side::Red);
      const PlanParse want = parse_plan_json(nlohmann::json::parse(text), sc, Side::Red);
      EXPECT_FALSE(got.repaired);
      ASSERT_EQ(got.parse.plan.has_value(), want.plan.has_value()) << k;
      if (want.plan) {
        EXPECT_TRUE(*got.parse.plan == *want.plan) << k;
      }
      EXPECT_EQ(got.parse.summary(), want.summary()) << k;
      with_violations += want.violations.empty() ? 0 : 1;
    }
  }
  EXPECT_GE(with_violations, 12u);  // cases 1 to 7, both layouts: the validation step is compared too
}

TEST(ParseCompletion, NonObjectJsonIsAViolation) {
  for (const std::string& text : std::vector<std::string>{"[1, 2, 3]", "[" + red_text() + "]", "42", "\"a plan\"", "null"}) {
    CompletionParse p;
    ASSERT_NO_THROW(p = parse_completion(text, urban100(), Side::Red)) << text;
    EXPECT_FALSE(p.parse.ok()) << text;
    EXPECT_FALSE(p.parse.violations.empty()) << text;
  }
}

// ---- run_contract against a scripted client --------------------------------------------------------------------

/// Returns a programmed sequence of completions (the last repeats) and records every request.
class ScriptedClient : public CompletionClient {
 public:
  explicit ScriptedClient(std::vector<Completion> script) : script_(std::move(script)) {}
  Completion complete(const CompletionRequest& req) const override {
    std::lock_guard lock(mu_);
    requests_.push_back(req);
    return script_[std::min(requests_.size() - 1, script_.size() - 1)];
  }
  std::string name() const override { return "scripted"; }
  std::size_t calls() const { return requests_.size(); }
  const CompletionRequest& request(std::size_t i) const { return requests_.at(i); }

 private:
  std::vector<Completion> script_;
  mutable std::mutex mu_;
  mutable std::vector<CompletionRequest> requests_;
};

Completion text(std::string t, int prompt_tokens = -1, int completion_tokens = -1) {
  Completion c;
  c.ok = true;
  c.text = std::move(t);
  c.prompt_tokens = prompt_tokens;
  c.completion_tokens = completion_tokens;
  return c;
}
Completion transport_error(std::string why) {
  Completion c;
  c.ok = false;
  c.error = std::move(why);
  return c;
}

CompletionRequest red_request() { return build_red_prompt(urban100(), urban100().blue_seed_plans.front()); }

TEST(RunContract, CleanFirstAnswer) {
  ScriptedClient client({text(red_text())});
  const ContractResult r = run_contract(client, red_request(), urban100(), Side::Red, 1, "urban-100/red/x");
  ASSERT_TRUE(r.plan.has_value()) << r.failure;
  EXPECT_EQ(r.plan->plan_id, "urban-100/red/x");  // overwritten
  EXPECT_EQ(r.stats.parsed, 1);
  EXPECT_EQ(r.stats.repaired, 0);
  EXPECT_EQ(r.stats.retries, 0);
  EXPECT_EQ(r.stats.failed, 0);
  EXPECT_TRUE(r.failure.empty());
  EXPECT_EQ(client.calls(), 1u);
  EXPECT_FALSE(r.stats.tokens_reported);
}

TEST(RunContract, GarbageThenValidRetriesOnceWithTheViolations) {
  ScriptedClient client({text("I cannot comply."), text(red_text())});
  const CompletionRequest req = red_request();
  const ContractResult r = run_contract(client, req, urban100(), Side::Red, 1, "id");
  ASSERT_TRUE(r.plan.has_value()) << r.failure;
  EXPECT_EQ(r.stats.retries, 1);
  EXPECT_EQ(r.stats.parsed, 1);
  EXPECT_EQ(r.stats.repaired, 0);
  EXPECT_EQ(r.stats.failed, 0);
  ASSERT_EQ(client.calls(), 2u);
  // The re-prompt carries the bad reply and the violations.
  const auto& msgs = client.request(1).messages;
  ASSERT_EQ(msgs.size(), req.messages.size() + 2);
  EXPECT_EQ(msgs[msgs.size() - 2].role, "assistant");
  EXPECT_EQ(msgs[msgs.size() - 2].content, "I cannot comply.");
  EXPECT_EQ(msgs.back().role, "user");
  EXPECT_THAT(msgs.back().content, HasSubstr("no parseable JSON object"));
}

TEST(RunContract, AlwaysGarbageFailsWithTheReason) {
  ScriptedClient client({text("no plan today")});
  const ContractResult r = run_contract(client, red_request(), urban100(), Side::Red, 2, "id");
  EXPECT_FALSE(r.plan.has_value());
  EXPECT_EQ(r.stats.failed, 1);
  EXPECT_EQ(r.stats.retries, 2);
  EXPECT_EQ(r.stats.parsed + r.stats.repaired, 0);
  EXPECT_EQ(client.calls(), 3u);  // the first attempt and max_repairs re-prompts
  EXPECT_THAT(r.failure, HasSubstr("invalid plan"));
  EXPECT_THAT(r.failure, HasSubstr("no parseable JSON object"));
}

TEST(RunContract, SchemaViolationFailureNamesThePath) {
  nlohmann::json j = to_json(small_plan(urban100(), Side::Red));
  j["actions"][0]["priority"] = 9;
  ScriptedClient client({text(j.dump())});
  const ContractResult r = run_contract(client, red_request(), urban100(), Side::Red, 0, "id");
  EXPECT_FALSE(r.plan.has_value());
  EXPECT_EQ(r.stats.failed, 1);
  EXPECT_EQ(r.stats.retries, 0);
  EXPECT_THAT(r.failure, HasSubstr("actions[0].priority"));
}

// A call that brought no completion is not re-prompted (docs/LLM.md: re-prompts follow an unusable completion only;
// the client has retried the transport already): the contract fails with it, and the valid reply is never asked for.
TEST(RunContract, ATransportErrorIsNotReprompted) {
  ScriptedClient client({transport_error("connection refused"), text(red_text())});
  const ContractResult r = run_contract(client, red_request(), urban100(), Side::Red, 1, "id");
  EXPECT_FALSE(r.plan.has_value());
  EXPECT_EQ(r.stats.retries, 0);
  EXPECT_EQ(r.stats.parsed, 0);
  EXPECT_EQ(r.stats.failed, 1);
  EXPECT_EQ(r.failure, "transport: connection refused");
  EXPECT_EQ(r.transcript.calls.size(), 1u);
}

TEST(RunContract, PersistentTransportErrorIsTheFailure) {
  ScriptedClient client({transport_error("HTTP 503")});
  const ContractResult r = run_contract(client, red_request(), urban100(), Side::Red, 1, "id");
  EXPECT_FALSE(r.plan.has_value());
  EXPECT_EQ(r.stats.failed, 1);
  EXPECT_EQ(r.failure, "transport: HTTP 503");
}

TEST(RunContract, FencedAnswerCountsAsRepaired) {
  ScriptedClient client({text("```json\n" + red_text() + "\n```")});
  const ContractResult r = run_contract(client, red_request(), urban100(), Side::Red, 1, "id");
  ASSERT_TRUE(r.plan.has_value());
  EXPECT_EQ(r.stats.repaired, 1);
  EXPECT_EQ(r.stats.parsed, 0);
  EXPECT_EQ(r.stats.retries, 0);
}

TEST(RunContract, ReportedTokensAreSummedOverAttempts) {
  Completion bad = text("not json", 100, 7);
  bad.http_retries = 2;
  ScriptedClient client({bad, text(red_text(), 130, 250)});
  const ContractResult r = run_contract(client, red_request(), urban100(), Side::Red, 1, "id");
  ASSERT_TRUE(r.plan.has_value());
  EXPECT_TRUE(r.stats.tokens_reported);
  EXPECT_EQ(r.stats.prompt_tokens, 230);
  EXPECT_EQ(r.stats.completion_tokens, 257);
  EXPECT_EQ(r.stats.http_retries, 2);
  // Unreported counts (-1) add nothing and do not mark the tokens reported.
  ScriptedClient silent({text(red_text())});
  const ContractResult s = run_contract(silent, red_request(), urban100(), Side::Red, 1, "id");
  EXPECT_FALSE(s.stats.tokens_reported);
  EXPECT_EQ(s.stats.prompt_tokens, 0);
  EXPECT_EQ(s.stats.completion_tokens, 0);
}

TEST(ContractStats, SumsEveryField) {
  ContractStats a{1, 2, 3, 4, 5, 6, 7, false}, b{10, 20, 30, 40, 50, 60, 70, true};
  a += b;
  EXPECT_EQ(a.parsed, 11);
  EXPECT_EQ(a.repaired, 22);
  EXPECT_EQ(a.failed, 33);
  EXPECT_EQ(a.retries, 44);
  EXPECT_EQ(a.http_retries, 55);
  EXPECT_EQ(a.prompt_tokens, 66);
  EXPECT_EQ(a.completion_tokens, 77);
  EXPECT_TRUE(a.tokens_reported);
}

// ---- prompts and the offline client ---------------------------------------------------------------------------

TEST(Prompts, RedPromptHasTheMarkedSectionsWithoutBlueSeedPlans) {
  const CompletionRequest req = red_request();
  ASSERT_EQ(req.messages.size(), 2u);
  EXPECT_EQ(req.messages[0].role, "system");
  EXPECT_THAT(req.messages[0].content, HasSubstr(plan_json_schema()));
  EXPECT_THAT(req.messages[1].content, HasSubstr("SCENARIO:\n"));
  EXPECT_THAT(req.messages[1].content, HasSubstr("BLUE PLAN:\n"));
  EXPECT_THAT(req.messages[1].content, HasSubstr("\"blue_seed_plans\":[]"));
  const CompletionRequest blue = build_blue_prompt(urban100());
  EXPECT_THAT(blue.messages[1].content, ::testing::Not(HasSubstr("BLUE PLAN:\n")));
  EXPECT_TRUE(nlohmann::json::parse(plan_json_schema(), nullptr, false).is_object());
}

TEST(OfflineClient, IsDeterministic) {
  const OfflineCompletionClient client;
  const CompletionRequest req = red_request();
  const Completion a = client.complete(req), b = client.complete(req);
  EXPECT_TRUE(a.ok);
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(client.name(), "offline");
}

TEST(OfflineClient, PromptWithoutAScenarioGetsAnUnusableButHarmlessAnswer) {
  const OfflineCompletionClient client;
  CompletionRequest req;
  req.messages.push_back({"user", "write a plan"});
  const Completion c = client.complete(req);
  EXPECT_TRUE(c.ok);
  EXPECT_FALSE(parse_completion(c.text, urban100(), Side::Red).parse.ok());
}

TEST(OfflineClient, EveryCorpusScenarioYieldsAValidRedPlanWithinOneRetry) {
  const OfflineCompletionClient client;
  ContractStats total;
  std::size_t n = 0;
  for (const Scenario& sc : generate_corpus(paper())) {
    ++n;
    const ContractResult r = run_contract(client, build_red_prompt(sc, sc.blue_seed_plans.front()), sc, Side::Red, 1,
                                          sc.id + "/red/llm");
    ASSERT_TRUE(r.plan.has_value()) << sc.id << ": " << r.failure;
    EXPECT_LE(r.stats.retries, 1) << sc.id;
    EXPECT_EQ(r.stats.failed, 0) << sc.id;
    EXPECT_EQ(r.plan->side, Side::Red) << sc.id;
    const auto v = validate_plan(*r.plan, sc, Side::Red);
    EXPECT_TRUE(v.empty()) << sc.id << ": " << (v.empty() ? "" : v.front().str());
    total += r.stats;
  }
  EXPECT_EQ(n, 150u);
  EXPECT_GT(total.parsed, 0) << "some completions must parse as-is";
  EXPECT_GT(total.repaired, 0) << "some completions must need fence/prose repair";
  EXPECT_GT(total.retries, 0) << "some completions must need a re-prompt (truncated or schema-violating)";
  EXPECT_EQ(total.parsed + total.repaired, static_cast<int>(n));
}

TEST(OfflineClient, EveryCorpusScenarioYieldsAValidBluePlan) {
  const OfflineCompletionClient client;
  for (const Scenario& sc : generate_corpus(paper())) {
    const ContractResult r = run_contract(client, build_blue_prompt(sc), sc, Side::Blue, 1, sc.id + "/blue/llm");
    ASSERT_TRUE(r.plan.has_value()) << sc.id << ": " << r.failure;
    EXPECT_TRUE(validate_plan(*r.plan, sc, Side::Blue).empty()) << sc.id;
  }
}

}  // namespace
}  // namespace advplan
