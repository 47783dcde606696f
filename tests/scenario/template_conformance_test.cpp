// One conformance suite for every scenario template ("One conformance suite for every registered
// plug-in"), run over every built-in template (whatever configs/templates/*.yaml holds, as embedded in the
// binary: no list here) and over a template dropped into a directory next to a config, to show that a new
// template is one YAML file and nothing else. For each: the file parses; for seeds 100..109 every seed plan
// validates and scores in [0,1]; same seed, same scenario; different seeds, different scenarios; the verbs
// and capabilities the council's proposers and mitigation map rely on exist.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cctype>
#include <ostream>
#include <set>

#include "advplan/core/plan_json.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/run/config.hpp"
#include "advplan/io/embedded_files.hpp"
#include "advplan/metrics/coherence.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/metrics/structure.hpp"
#include "advplan/scenario/generator.hpp"
#include "advplan/scenario/scenario_template.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using ::testing::Contains;
using ::testing::IsEmpty;
using ::testing::StartsWith;

constexpr std::uint64_t kFirstSeed = 100, kLastSeed = 109;

/// Where a template under test comes from: built into the binary, or a new file in a directory of its own.
enum class Origin { built_in, dropped_in };

struct TemplateCase {
  std::string id;
  Origin origin = Origin::built_in;
};

void PrintTo(const TemplateCase& c, std::ostream* os) {
  *os << c.id << (c.origin == Origin::built_in ? " (built in)" : " (dropped in)");
}

std::vector<TemplateCase> built_in_cases() {
  std::vector<TemplateCase> out;
  for (const auto& id : io::embedded_template_ids()) out.push_back({id, Origin::built_in});
  return out;
}

/// A new template, `harbour`: a copy of the built-in urban one under another id and name, written with a
/// config naming it into a fresh directory (`corpus.template_dir: .`). Nothing else in the project knows
/// about it.
struct DroppedIn {
  testing::TempDir dir{"dropped-in-template"};
  std::string template_file = dir / "harbour.yaml";
  std::string config_file = dir / "harbour-study.yaml";
  ExperimentConfig config;

  DroppedIn() {
    std::string text(*io::embedded_file(io::embedded_template_path("urban")));
    auto replace = [&](const std::string& from, const std::string& to) {
      text.replace(text.find(from), from.size(), to);
    };
    replace("id: urban\n", "id: harbour\n");
    replace("name: Urban stability\n", "name: Harbour town\n");
    testing::write_file(template_file, text);
    testing::write_file(config_file, fmt::format("name: harbour-study\ncorpus:\n  templates: [harbour]\n"
                                                 "  seeds: [{}, {}]\n  template_dir: .\n",
                                                 kFirstSeed, kLastSeed));
    config = load_experiment_config(config_file);
  }
  static const DroppedIn& get() {
    static const DroppedIn d;
    return d;
  }
};

/// The template text and the name it is parsed under.
std::pair<std::string, std::string> text_of(const TemplateCase& c) {
  if (c.origin == Origin::built_in) {
    const std::string path = io::embedded_template_path(c.id);
    return {std::string(*io::embedded_file(path)), "<built-in>/" + path};
  }
  return {testing::read_file(DroppedIn::get().template_file), DroppedIn::get().template_file};
}

ScenarioTemplate load(const TemplateCase& c) {
  const auto [text, source] = text_of(c);
  return parse_template(text, source);
}

class TemplateConformance : public ::testing::TestWithParam<TemplateCase> {
 protected:
  const std::string& id() const { return GetParam().id; }
  const ScenarioTemplate& tpl() {
    if (!tpl_) tpl_ = load(GetParam());
    return *tpl_;
  }

 private:
  std::optional<ScenarioTemplate> tpl_;
};

TEST_P(TemplateConformance, Parses) {
  ScenarioTemplate t;
  ASSERT_NO_THROW(t = load(GetParam()));
  EXPECT_EQ(t.id, id());
  EXPECT_EQ(t.source, text_of(GetParam()).second);
  EXPECT_FALSE(t.name.empty());
  EXPECT_FALSE(t.terrains.empty());
  EXPECT_FALSE(t.assets[index(Side::Blue)].empty());
  EXPECT_FALSE(t.assets[index(Side::Red)].empty());
  for (auto side : kSides) {
    double sum = 0;
    for (double w : t.requirements[index(side)].weight) sum += w;
    EXPECT_NEAR(sum, 1.0, 1e-9) << to_string(side);
  }
}

TEST_P(TemplateConformance, FileStartsWithACommentSayingWhatItStresses) {
  EXPECT_THAT(text_of(GetParam()).first, StartsWith("# "));
}

TEST_P(TemplateConformance, SeedPlansValidateAndScoreInUnitInterval) {
  auto in01 = [](double v) { return v >= 0.0 && v <= 1.0; };
  for (std::uint64_t seed = kFirstSeed; seed <= kLastSeed; ++seed) {
    const Scenario sc = generate_scenario(tpl(), seed);
    SCOPED_TRACE(sc.id);
    EXPECT_EQ(sc.id, fmt::format("{}-{}", id(), seed));
    ASSERT_GE(sc.blue_seed_plans.size(), 2u);
    for (const auto& p : sc.blue_seed_plans) {
      SCOPED_TRACE(p.plan_id);
      EXPECT_THAT(validate_plan(p, sc, Side::Blue), IsEmpty());
      const auto parsed = parse_plan_text(plan_to_string(p), sc, Side::Blue);
      ASSERT_TRUE(parsed.ok()) << parsed.summary();
      EXPECT_EQ(*parsed.plan, p);
      const auto q = quality(p, sc);
      for (double v : {q.e, q.c, q.r, q.q}) EXPECT_PRED1(in01, v);
      const auto d = coherence(p, sc);
      for (double v : d.part) EXPECT_PRED1(in01, v);
      EXPECT_PRED1(in01, d.D);
      const auto s = structure(p);
      for (double v : {s.O, s.P_V, s.W}) EXPECT_PRED1(in01, v);
    }
  }
}

TEST_P(TemplateConformance, SameSeedGivesIdenticalScenario) {
  for (std::uint64_t seed = kFirstSeed; seed <= kLastSeed; ++seed) {
    EXPECT_EQ(scenario_to_string(generate_scenario(tpl(), seed)),
              scenario_to_string(generate_scenario(tpl(), seed)))
        << seed;
    // A freshly loaded copy of the template gives the same scenario too (no hidden state in the loader).
    EXPECT_EQ(generate_scenario(load(GetParam()), seed), generate_scenario(tpl(), seed)) << seed;
  }
}

TEST_P(TemplateConformance, DifferentSeedsGiveDifferentScenarios) {
  std::set<std::string> bodies;
  for (std::uint64_t seed = kFirstSeed; seed <= kLastSeed; ++seed) {
    Scenario s = generate_scenario(tpl(), seed);
    // Blank out everything that names the seed, so only the substance is compared.
    s.id.clear();
    s.seed = 0;
    for (auto& p : s.blue_seed_plans) p.plan_id.clear();
    bodies.insert(scenario_to_string(s));
  }
  EXPECT_EQ(bodies.size(), kLastSeed - kFirstSeed + 1);
}

TEST_P(TemplateConformance, CouncilVerbsExist) {
  // Mitigation map (docs/METRICS.md "Council"): direct -> dispersion and hardening; cyber -> out-of-band comms;
  // logistics -> redundant supply routing; information gathering -> deception and counter-reconnaissance;
  // public information -> a communication cell.
  const std::pair<Category, const char*> needed[] = {{Category::movement, "disperse"},
                                                     {Category::protection, "harden"},
                                                     {Category::cyber, "oob-comms"},
                                                     {Category::sustainment, "reroute-supply"},
                                                     {Category::deception, "decoy"},
                                                     {Category::deception, "counter-recon"},
                                                     {Category::public_information, "comm-cell"}};
  for (const auto& [cat, verb] : needed) {
    EXPECT_THAT(tpl().verbs[index(cat)], Contains(verb)) << to_string(cat);
    EXPECT_TRUE(generate_scenario(tpl(), kFirstSeed).verb_allowed(cat, verb)) << verb;
  }
}

TEST_P(TemplateConformance, BlueAssetsCoverTheCouncilCategories) {
  // Proposer roles (movement, information, cyber, sustainment, protection) and the mitigation categories
  // (deception, public_information) each need a BLUE asset that can act, in every generated scenario.
  const Category needed[] = {Category::movement,          Category::information, Category::cyber,
                             Category::sustainment,       Category::protection,  Category::deception,
                             Category::public_information};
  for (Category c : needed) {
    bool in_template = false;
    for (const auto& spec : tpl().assets[index(Side::Blue)])
      for (auto sc : spec.categories) in_template = in_template || (sc == c && spec.count_max > 0);
    EXPECT_TRUE(in_template) << to_string(c);
    for (std::uint64_t seed = kFirstSeed; seed <= kLastSeed; ++seed) {
      const Scenario s = generate_scenario(tpl(), seed);
      bool able = false;
      for (const Asset* a : s.assets_of(Side::Blue))
        for (auto ac : a->categories) able = able || ac == c;
      EXPECT_TRUE(able) << s.id << ": no BLUE asset can perform " << to_string(c);
    }
  }
}

/// `air-defense` -> `air_defense`: gtest names allow letters, digits and underscores only.
std::string test_name(const ::testing::TestParamInfo<TemplateCase>& info) {
  std::string name = info.param.id;
  for (auto& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(BuiltIn, TemplateConformance, ::testing::ValuesIn(built_in_cases()), test_name);
INSTANTIATE_TEST_SUITE_P(DroppedIn, TemplateConformance,
                         ::testing::Values(TemplateCase{"harbour", Origin::dropped_in}), test_name);

TEST(BuiltInTemplates, EmbeddedTextEqualsTheSourceFile) {
  // The binary holds the current configs/templates/*.yaml (CMake re-globs and re-embeds on every build).
  for (const auto& c : built_in_cases()) {
    const std::string file = std::string(ADVPLAN_SOURCE_DIR) + "/configs/templates/" + c.id + ".yaml";
    EXPECT_TRUE(text_of(c).first == testing::read_file(file)) << file << " differs from the embedded copy";
  }
}

TEST(NewTemplate, IsOneYamlFileAndNothingElse) {
  // The config names the new template and the corpus generator builds its scenarios, with no other edit.
  const ExperimentConfig& cfg = DroppedIn::get().config;
  ASSERT_EQ(cfg.templates.size(), 1u);
  EXPECT_EQ(cfg.templates[0].id, "harbour");
  EXPECT_EQ(cfg.templates[0].name, "Harbour town");
  EXPECT_EQ(cfg.templates[0].source, DroppedIn::get().template_file);
  const auto corpus = generate_corpus(cfg);
  ASSERT_EQ(corpus.size(), kLastSeed - kFirstSeed + 1);
  for (std::uint64_t seed = kFirstSeed; seed <= kLastSeed; ++seed) {
    const Scenario& sc = corpus[seed - kFirstSeed];
    EXPECT_EQ(sc.id, fmt::format("harbour-{}", seed));
    for (const auto& p : sc.blue_seed_plans)
      EXPECT_THAT(validate_plan(p, sc, Side::Blue), IsEmpty()) << p.plan_id;
  }
}

}  // namespace
}  // namespace advplan
