// The meta-game's BLUE baselines (proposer:ROLE, random) and the `matrix:` config key.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/core/plan_json.hpp"
#include "advplan/council/council.hpp"
#include "advplan/run/config.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

const ExperimentConfig& cfg() { return testing::paper_config(); }

const std::vector<Scenario>& scenarios() {
  static const std::vector<Scenario> s = [] {
    ExperimentConfig c = cfg();
    c.seed_to = c.seed_from + 1;
    return generate_corpus(c);
  }();
  return s;
}

nlohmann::json actions_of(const Plan& p) {
  auto j = to_json(p);
  j.erase("plan_id");
  return j;
}

TEST(ProposerPolicy, PlansTheCouncilsFirstRoundCandidateOfItsRole) {
  const CouncilPolicy council(Params{}, policy_context(cfg()));
  std::size_t compared = 0;
  for (const auto& sc : scenarios()) {
    const Rng rng = Rng::keyed(cfg().seed, sc.id, "blue/council");
    Rng r1 = rng;
    const CouncilRecord rec = council.deliberate(sc, r1);
    for (const Category role : kProposerRoles) {
      const std::string spec = "proposer:" + std::string(to_string(role));
      const auto policy = make_blue_policy(spec, policy_context(cfg()));
      EXPECT_EQ(policy->label(), spec);
      Rng r2 = rng;  // the council's stream: child("propose", role index) is then the same
      const BluePlanResult r = policy->plan(sc, r2);
      ASSERT_TRUE(r.plan) << r.failure;
      EXPECT_EQ(r.plan->plan_id, sc.id + "/blue/proposer/" + std::string(to_string(role)));
      for (const auto& c : rec.candidates)
        if (c.round == 1 && c.role == to_string(role)) {
          EXPECT_EQ(actions_of(*r.plan), actions_of(c.plan)) << sc.id << " " << spec;
          ++compared;
        }
      // The proposal is the seed plan plus one action whenever the council kept it.
      if (r.plan->actions.size() != sc.blue_seed_plans.front().actions.size()) {
        EXPECT_EQ(r.plan->actions.size(), sc.blue_seed_plans.front().actions.size() + 1);
      }
    }
  }
  EXPECT_GT(compared, 0u);
}

TEST(ProposerPolicy, UnknownRoleIsAPolicyErrorNamingIt) {
  try {
    (void)make_blue_policy("proposer:fires", policy_context(cfg()));
    FAIL() << "no error";
  } catch (const PolicyError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown proposer role 'fires'"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)make_blue_policy("proposer", policy_context(cfg())), PolicyError);
}

TEST(RandomBluePolicy, SamplesValidDeterministicPlansThatDifferFromTheSeed) {
  const auto policy = make_blue_policy("random", policy_context(cfg()));
  std::size_t differ = 0;
  for (const auto& sc : scenarios()) {
    Rng a = Rng::keyed(cfg().seed, sc.id, "blue/random"), b = a;
    const BluePlanResult ra = policy->plan(sc, a), rb = policy->plan(sc, b);
    ASSERT_TRUE(ra.plan) << ra.failure;  // plan() validated it as a BLUE plan
    EXPECT_EQ(to_json(*ra.plan), to_json(*rb.plan));
    if (actions_of(*ra.plan) != actions_of(sc.blue_seed_plans.front())) ++differ;
    for (const auto& act : ra.plan->actions) {
      bool blue_asset = false;
      for (const auto& as : sc.assets)
        if (as.id == act.asset && as.side == Side::Blue) blue_asset = true;
      EXPECT_TRUE(blue_asset) << act.asset;
    }
  }
  EXPECT_EQ(differ, scenarios().size());
}

TEST(MatrixConfig, ExpandsEveryBlueAgainstEveryRed) {
  const std::string text = testing::read_file(std::string(ADVPLAN_SOURCE_DIR) + "/configs/experiments/metagame.yaml");
  const ExperimentConfig c =
      parse_experiment_config(text, "metagame.yaml", std::string(ADVPLAN_SOURCE_DIR) + "/configs/experiments");
  const auto conds = run_conditions(c);
  ASSERT_EQ(conds.size(), 64u);
  EXPECT_EQ(conds.front().label, "seed vs single");
  EXPECT_EQ(conds.front().group, "main");
  EXPECT_EQ(conds[9].blue, "council");
  EXPECT_EQ(conds[9].red, "greedy@2");
  EXPECT_EQ(conds.back().label, "proposer:protection vs llm_offline");
  // Every policy of the matrix can be created.
  const PolicyContext ctx = policy_context(c);
  for (const auto& cd : conds) EXPECT_NO_THROW((void)make_blue_policy(cd.blue, ctx)) << cd.blue;
}

TEST(MatrixConfig, BadMatrixIsOneSentenceNamingTheField) {
  const std::string base = "name: t\ncorpus: {templates: [urban], seeds: [100, 100]}\nstudies: {rubric: false, framing: false, components: false}\n";
  auto fails_with = [&](const std::string& extra, const std::string& needle) {
    try {
      (void)parse_experiment_config(base + extra, "t.yaml", "");
      ADD_FAILURE() << "no error for " << extra;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("t.yaml"), std::string::npos) << e.what();
    }
  };
  fails_with("matrix: {blue: [seed], red: []}\n", "empty");
  fails_with("matrix: {blue: [seed, seed], red: [single]}\n", "listed twice");
  fails_with("matrix: {blue: [seed], red: [single], green: [x]}\n", "green");
  fails_with("conditions: [{label: seed vs single, red: greedy@8}]\nmatrix: {blue: [seed], red: [single]}\n",
             "label of another condition");
  const ExperimentConfig ok =
      parse_experiment_config(base + "matrix: {blue: [seed, random], red: [single, greedy@2]}\n", "t.yaml", "");
  ASSERT_EQ(ok.conditions.size(), 4u);
  EXPECT_EQ(ok.conditions[1].label, "seed vs greedy@2");
}

}  // namespace
}  // namespace advplan
