// Scenario generator (docs/ARCHITECTURE.md "Data model", "Determinism"): deterministic in (template, seed), seeds differ in substance, the
// paper corpus has the paper's shape, and framing is metadata-only unless applied.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "advplan/core/error.hpp"
#include "advplan/core/plan_json.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/run/config.hpp"
#include "advplan/scenario/framing.hpp"
#include "advplan/scenario/generator.hpp"
#include "advplan/run/scenario_lookup.hpp"

namespace advplan {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const ExperimentConfig& paper() {
  static const ExperimentConfig cfg = default_experiment_config();
  return cfg;
}
const std::vector<Scenario>& paper_corpus() {
  static const std::vector<Scenario> corpus = generate_corpus(paper());
  return corpus;
}

/// The seed plans without their ids, which always name the scenario.
std::vector<Plan> plans_without_ids(const Scenario& s) {
  auto plans = s.blue_seed_plans;
  for (auto& p : plans) p.plan_id.clear();
  return plans;
}

TEST(Generator, SameTemplateAndSeedGiveIdenticalJson) {
  for (const auto& tpl : paper().templates) {
    for (std::uint64_t seed : {100u, 117u, 129u}) {
      SCOPED_TRACE(fmt::format("{}-{}", tpl.id, seed));
      const std::string a = scenario_to_string(generate_scenario(tpl, seed));
      const std::string b = scenario_to_string(generate_scenario(tpl, seed));
      EXPECT_EQ(a, b);
      EXPECT_EQ(generate_scenario(tpl, seed), generate_scenario(tpl, seed));
    }
  }
}

TEST(Generator, DifferentSeedsDifferInSubstance) {
  for (const auto& tpl : paper().templates) {
    for (std::uint64_t seed = 100; seed < 129; ++seed) {
      SCOPED_TRACE(fmt::format("{}-{} vs {}", tpl.id, seed, seed + 1));
      const Scenario a = generate_scenario(tpl, seed);
      const Scenario b = generate_scenario(tpl, seed + 1);
      EXPECT_NE(a.id, b.id);
      // Not only the id: the assets or the seed plans themselves differ.
      EXPECT_TRUE(a.assets != b.assets || plans_without_ids(a) != plans_without_ids(b));
      // And the first seed plan (the fixed one the experiments use) differs as a plan.
      EXPECT_NE(plans_without_ids(a).front(), plans_without_ids(b).front());
    }
  }
}

TEST(Generator, PaperConfigGivesOneHundredFiftyScenariosInTemplateMajorOrder) {
  EXPECT_THAT(paper().template_ids, ElementsAre("urban", "maritime", "mixed", "air-defense", "humanitarian"));
  EXPECT_EQ(paper().seed_from, 100u);
  EXPECT_EQ(paper().seed_to, 129u);
  const auto& corpus = paper_corpus();
  ASSERT_EQ(corpus.size(), 150u);
  std::map<std::string, int> per_template;
  for (std::size_t i = 0; i < corpus.size(); ++i) {
    const std::string& tpl = paper().template_ids[i / 30];
    const std::uint64_t seed = 100 + i % 30;
    EXPECT_EQ(corpus[i].id, fmt::format("{}-{}", tpl, seed));
    EXPECT_EQ(corpus[i].template_id, tpl);
    EXPECT_EQ(corpus[i].seed, seed);
    ++per_template[corpus[i].template_id];
  }
  EXPECT_EQ(corpus.front().id, "urban-100");
  EXPECT_EQ(corpus[30].id, "maritime-100");
  EXPECT_EQ(corpus.back().id, "humanitarian-129");
  ASSERT_EQ(per_template.size(), 5u);
  for (const auto& [tpl, n] : per_template) EXPECT_EQ(n, 30) << tpl;
}

TEST(Generator, EveryScenarioHasSeedPlansAndARedPool) {
  for (const auto& sc : paper_corpus()) {
    SCOPED_TRACE(sc.id);
    EXPECT_GE(sc.blue_seed_plans.size(), 2u);
    EXPECT_FALSE(sc.assets_of(Side::Red).empty());
    EXPECT_FALSE(sc.assets_of(Side::Blue).empty());
    // BLUE assets first, then the RED pool.
    bool seen_red = false;
    for (const auto& a : sc.assets) {
      if (a.side == Side::Red) seen_red = true;
      EXPECT_FALSE(seen_red && a.side == Side::Blue) << a.id;
    }
    for (std::size_t i = 0; i < sc.blue_seed_plans.size(); ++i)
      EXPECT_EQ(sc.blue_seed_plans[i].plan_id, fmt::format("{}/blue/seed-{}", sc.id, i));
  }
}

TEST(Generator, SomeSeedPlansHaveBranchesAndRoleAssignments) {
  std::size_t plans = 0, with_branch = 0, with_roles = 0;
  for (const auto& sc : paper_corpus()) {
    for (const auto& p : sc.blue_seed_plans) {
      ++plans;
      with_branch += p.branches.empty() ? 0 : 1;
      with_roles += p.roles.empty() ? 0 : 1;
      // Every role names an asset the plan uses.
      for (const auto& [asset, role] : p.roles) {
        EXPECT_FALSE(role.empty()) << p.plan_id;
        bool used = false;
        for (const auto& a : p.actions) used = used || a.asset == asset;
        EXPECT_TRUE(used) << p.plan_id << " role for unused asset " << asset;
      }
    }
  }
  EXPECT_GT(with_branch, 0u);
  EXPECT_LT(with_branch, plans);  // branching is probabilistic, not universal
  EXPECT_GT(with_roles, 0u);
}

TEST(Generator, FramingAsMetadataChangesOnlyTheFramingField) {
  for (const auto& tpl : paper().templates) {
    for (std::uint64_t seed : {100u, 105u, 123u}) {
      SCOPED_TRACE(fmt::format("{}-{}", tpl.id, seed));
      const Scenario neutral = generate_scenario(tpl, seed, GeneratorOptions{FramingMode::metadata, Framing::neutral});
      for (Framing f : {Framing::blue_favorable, Framing::red_favorable}) {
        Scenario framed = generate_scenario(tpl, seed, GeneratorOptions{FramingMode::metadata, f});
        EXPECT_EQ(framed.framing, f);
        EXPECT_NE(framed, neutral);
        framed.framing = Framing::neutral;
        EXPECT_EQ(framed, neutral);
      }
    }
  }
}

TEST(Generator, FramingOverrideDoesNotChangeTheRestOfTheCorpus) {
  const auto blue = generate_corpus(paper(), Framing::blue_favorable);
  const auto& base = paper_corpus();
  ASSERT_EQ(blue.size(), base.size());
  for (std::size_t i = 0; i < blue.size(); ++i) {
    EXPECT_EQ(blue[i].framing, Framing::blue_favorable);
    Scenario s = blue[i];
    s.framing = base[i].framing;
    EXPECT_EQ(s, base[i]) << base[i].id;
  }
}

TEST(Generator, ReframingAMetadataScenarioIsGeneratingItUnderThatFraming) {
  // The framing study generates each scenario once (metadata, neutral) and reframes it per arm.
  for (const auto& tpl : paper().templates)
    for (std::uint64_t seed = 100; seed < 110; ++seed) {
      const Scenario base = generate_scenario(tpl, seed, GeneratorOptions{FramingMode::metadata, Framing::neutral});
      for (FramingMode mode : {FramingMode::metadata, FramingMode::applied})
        for (Framing f : {Framing::neutral, Framing::blue_favorable, Framing::red_favorable}) {
          SCOPED_TRACE(fmt::format("{}-{} {} {}", tpl.id, seed, mode == FramingMode::applied ? "applied" : "metadata",
                                   to_string(f)));
          const Scenario want = generate_scenario(tpl, seed, GeneratorOptions{mode, f});
          const Scenario got = reframe(base, tpl, f, mode);
          EXPECT_EQ(got, want);
        }
    }
}

TEST(Generator, AppliedFramingChangesTheBlueObjective) {
  for (const auto& tpl : paper().templates) {
    const auto& effect = tpl.framing_effects[static_cast<std::size_t>(Framing::blue_favorable)];
    ASSERT_FALSE(effect.objective_suffix.empty()) << tpl.id;
    for (std::uint64_t seed : {100u, 111u}) {
      SCOPED_TRACE(fmt::format("{}-{}", tpl.id, seed));
      const Scenario meta = generate_scenario(tpl, seed, GeneratorOptions{FramingMode::metadata, Framing::blue_favorable});
      const Scenario applied = generate_scenario(tpl, seed, GeneratorOptions{FramingMode::applied, Framing::blue_favorable});
      EXPECT_NE(applied.blue_objective, meta.blue_objective);
      EXPECT_EQ(applied.blue_objective, meta.blue_objective + " " + effect.objective_suffix);
      EXPECT_EQ(applied.red_objective, meta.red_objective);
      ASSERT_EQ(applied.blue_seed_plans.size(), meta.blue_seed_plans.size());
      for (std::size_t i = 0; i < applied.blue_seed_plans.size(); ++i) {
        const Plan& p = applied.blue_seed_plans[i];
        EXPECT_EQ(p.objective, applied.blue_objective);
        EXPECT_THAT(validate_plan(p, applied, Side::Blue), IsEmpty()) << p.plan_id;
        if (effect.added_category) {
          // One action of the added category, inserted after the first chain step.
          ASSERT_EQ(p.actions.size(), meta.blue_seed_plans[i].actions.size() + 1);
          const Action& added = p.actions.back();
          EXPECT_EQ(added.category, *effect.added_category);
          EXPECT_EQ(added.metadata.at("added_by"), "framing");
          ASSERT_GE(p.chain.size(), 2u);
          EXPECT_EQ(p.chain[1], added.id);
        }
      }
      // Neutral framing has an empty suffix: applying it changes nothing in the objective.
      const Scenario neutral_applied = generate_scenario(tpl, seed, GeneratorOptions{FramingMode::applied, Framing::neutral});
      const Scenario neutral_meta = generate_scenario(tpl, seed, GeneratorOptions{FramingMode::metadata, Framing::neutral});
      EXPECT_EQ(neutral_applied.blue_objective, neutral_meta.blue_objective);
    }
  }
}

TEST(Generator, FindScenarioMatchesTheCorpus) {
  EXPECT_EQ(find_scenario(paper(), "urban-100"), paper_corpus().front());
  EXPECT_EQ(find_scenario(paper(), "humanitarian-129"), paper_corpus().back());
  EXPECT_EQ(find_scenario(paper(), "air-defense-107"), paper_corpus()[3 * 30 + 7]);
  for (const char* bad : {"urban-99", "urban-130", "nope-100", "urban", "urban-1x0"}) {
    try {
      (void)find_scenario(paper(), bad);
      ADD_FAILURE() << bad << " was found";
    } catch (const ConfigError& e) {
      EXPECT_THAT(e.what(), HasSubstr(fmt::format("scenario '{}' is not in the corpus", bad)));
      EXPECT_THAT(e.what(), HasSubstr("seed in 100..129"));
    }
  }
}

}  // namespace
}  // namespace advplan
