// The loader enforces every rule of docs/TEMPLATES.md ("Loader rules"): one test per rule class, each
// starting from the built-in urban template, breaking one thing, and expecting the one-sentence error that
// names the file and the key path. Also: the built-in template list is the embedded data
// (configs/templates/*.yaml).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "advplan/core/error.hpp"
#include "advplan/run/config.hpp"
#include "advplan/io/embedded_files.hpp"
#include "advplan/scenario/scenario_template.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using Edit = std::pair<std::string, std::string>;

std::string urban_text() { return std::string(*io::embedded_file("configs/templates/urban.yaml")); }

/// The urban template with each `from` (which must occur) replaced, once, by `to`.
std::string edited(std::initializer_list<Edit> edits) {
  std::string text = urban_text();
  for (const auto& [from, to] : edits) {
    const auto pos = text.find(from);
    if (pos == std::string::npos) {
      ADD_FAILURE() << "edit target not in urban.yaml: " << from;
      continue;
    }
    text.replace(pos, from.size(), to);
  }
  return text;
}

/// The ConfigError message parsing the edited template as "my.yaml", or "no error".
std::string error_of(std::initializer_list<Edit> edits) {
  try {
    (void)parse_template(edited(edits), "my.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TemplateRules, TheUnbrokenTemplateLoads) { EXPECT_EQ(error_of({}), "no error"); }

TEST(TemplateRules, NumbersOutsideTheirRange) {
  EXPECT_EQ(
      error_of({{"    mobility: 0.7\n", "    mobility: 1.9\n"}}),
      "my.yaml: key 'terrain_families[0].mobility': must be in [0.5, 1.5], while a value of 1.9 was given");
  EXPECT_EQ(
      error_of({{"    visibility: 0.8\n", "    visibility: 0.2\n"}}),
      "my.yaml: key 'terrain_families[0].visibility': must be in [0.5, 1.5], while a value of 0.2 was given");
  EXPECT_EQ(
      error_of({{"    exposure: 1.1\n", "    exposure: 1.8\n"}}),
      "my.yaml: key 'terrain_families[0].exposure': must be in [0.5, 1.5], while a value of 1.8 was given");
  EXPECT_EQ(error_of({{"{sustainment: 1.1}", "{sustainment: 1.6}"}}),
            "my.yaml: key 'terrain_families[2].category_modifiers.sustainment': must be in [0.5, 1.5], while "
            "a value "
            "of 1.6 was given");
  EXPECT_EQ(error_of({{"civil: 0.5}", "civil: 1.2}"}}),
            "my.yaml: key 'exposure.civil': must be in [0, 1], while a value of 1.2 was given");
  EXPECT_EQ(error_of({{"capability: 0.62, cost: 4,", "capability: 0.62, cost: 0,"}}),
            "my.yaml: key 'assets.BLUE[0].cost': must be a positive number, got 0");
  EXPECT_EQ(error_of({{"    budget: 34\n", "    budget: -1\n"}}),
            "my.yaml: key 'requirements.BLUE.budget': must be a positive number, got -1");
  EXPECT_EQ(error_of({{"    effort_scale: 1.4\n", "    effort_scale: 0\n"}}),
            "my.yaml: key 'requirements.RED.effort_scale': must be a positive number, got 0");
  EXPECT_EQ(
      error_of({{"branch_probability: 0.45", "branch_probability: 0.9"}}),
      "my.yaml: key 'seed_plans.branch_probability': must be in [0.3, 0.5], while a value of 0.9 was given");
  EXPECT_EQ(error_of({{"count: [2, 3]}", "count: [0, 3]}"}}),
            "my.yaml: key 'assets.BLUE[0].count[0]': must be in [1, 4], while a value of 0 was given");
  EXPECT_EQ(error_of({{"count: [2, 3]}", "count: [2, 5]}"}}),
            "my.yaml: key 'assets.BLUE[0].count[1]': must be in [1, 4], while a value of 5 was given");
  EXPECT_EQ(error_of({{"  count: [2, 3]\n", "  count: [1, 3]\n"}}),
            "my.yaml: key 'seed_plans.count[0]': must be in [2, 3], while a value of 1 was given");
  EXPECT_EQ(error_of({{"chain_length: [4, 7]", "chain_length: [4, 9]"}}),
            "my.yaml: key 'seed_plans.chain_length[1]': must be in [3, 8], while a value of 9 was given");
  EXPECT_EQ(error_of({{"option_length: [1, 2]", "option_length: [1, 3]"}}),
            "my.yaml: key 'seed_plans.option_length[1]': must be in [1, 2], while a value of 3 was given");
}

TEST(TemplateRules, MissingMandatoryVerb) {
  EXPECT_EQ(
      error_of({{"evade, disperse]", "evade]"}}),
      "my.yaml: key 'verbs.movement': must include the mandatory verb 'disperse' (mandatory here: transit, "
      "deploy, relocate, withdraw, return, continue, evade, disperse)");
  EXPECT_EQ(
      error_of({{"defend-network, oob-comms]", "defend-network]"}}),
      "my.yaml: key 'verbs.cyber': must include the mandatory verb 'oob-comms' (mandatory here: oob-comms)");
  EXPECT_EQ(error_of({{"[feint, decoy, counter-recon]", "[feint, decoy]"}}),
            "my.yaml: key 'verbs.deception': must include the mandatory verb 'counter-recon' (mandatory "
            "here: decoy, "
            "counter-recon)");
}

TEST(TemplateRules, UnknownVocabulary) {
  EXPECT_EQ(error_of({{"domain: land\n", "domain: space\n"}}),
            "my.yaml: key 'domain': unknown domain 'space' (expected one of land, sea, air, joint)");
  EXPECT_EQ(
      error_of({{"  - family: urban\n", "  - family: swamp\n"}}),
      "my.yaml: key 'terrain_families[0].family': unknown terrain family 'swamp' (expected one of urban, "
      "littoral, open, mountain, mixed, open-sea, desert, forest)");
  EXPECT_EQ(error_of({{"prefix: inf, domain: land,", "prefix: inf, domain: underwater,"}}),
            "my.yaml: key 'assets.BLUE[0].domain': unknown asset domain 'underwater' (expected one of land, "
            "sea, air, "
            "cyber, space, information)");
  EXPECT_EQ(
      error_of({{"categories: [movement]\n", "categories: [movemnt]\n"}}),
      "my.yaml: key 'branch_kinds[0].categories[0]': unknown category 'movemnt' (expected one of movement, "
      "fires, information, cyber, sustainment, protection, command, public_information, deception, civil)");
  EXPECT_EQ(error_of({{"added_category: command", "added_category: diplomacy"}}),
            "my.yaml: key 'framing.effects.blue_favorable.added_category': unknown category 'diplomacy' "
            "(expected one "
            "of movement, fires, information, cyber, sustainment, protection, command, public_information, "
            "deception, civil)");
  EXPECT_EQ(error_of({{"  - kind: route\n", "  - kind: detour\n"}}),
            "my.yaml: key 'branch_kinds[0].kind': expected 'route' (the three kinds come in the order route, "
            "proceed-or-withdraw, support-package), got 'detour'");
}

TEST(TemplateRules, CategoryMapsNameAllTenCategories) {
  EXPECT_EQ(error_of({{"deception: 0.2, civil: 0.5}", "deception: 0.2}"}}),
            "my.yaml: key 'exposure': missing category 'civil' (all ten categories must be named)");
  EXPECT_EQ(
      error_of({{"deception: 0.1, civil: 0.0}", "deception: 0.1}"}}),
      "my.yaml: key 'requirements.RED.weights': missing category 'civil' (all ten categories must be named)");
}

TEST(TemplateRules, EveryKeyButAddedCategoryIsRequired) {
  EXPECT_EQ(error_of({{"    category_modifiers: {civil: 1.1}\n", ""}}),
            "my.yaml: missing required key 'terrain_families[1].category_modifiers'");
  EXPECT_EQ(error_of({{"red_favorable: {objective_suffix: \"against entrenched local opposition\"}",
                       "red_favorable: {}"}}),
            "my.yaml: missing required key 'framing.effects.red_favorable.objective_suffix'");
  EXPECT_EQ(error_of({{", red_favorable: 0.25}", "}"}}),
            "my.yaml: missing required key 'framing.weights.red_favorable'");
}

TEST(TemplateRules, WeightsSumToOne) {
  EXPECT_THAT(error_of({{"    weight: 0.6\n", "    weight: 0.5\n"}}),
              StartsWith("my.yaml: key 'terrain_families': weights must sum to 1, while they sum to 0.9"));
  EXPECT_THAT(error_of({{"neutral: 0.5,", "neutral: 0.4,"}}),
              StartsWith("my.yaml: key 'framing.weights': weights must sum to 1, while they sum to 0.9"));
  EXPECT_THAT(
      error_of({{"movement: 0.14, fires: 0.06", "movement: 0.14, fires: 0.07"}}),
      StartsWith("my.yaml: key 'requirements.BLUE.weights': weights must sum to 1, while they sum to 1.01"));
}

TEST(TemplateRules, ListSizes) {
  EXPECT_EQ(
      error_of(
          {{"[market district, main supply route, city hall, river bridge, water plant, north checkpoint, "
            "hospital quarter,\n         old town, rail yard]",
            "[market district, main supply route, city hall, river bridge, water plant]"}}),
      "my.yaml: key 'places': must list 7 to 10 places, got 5");
  EXPECT_EQ(error_of({{"    - \"Undermine public confidence around the {place}\"\n", ""}}),
            "my.yaml: key 'objectives.RED': must list 2 to 3 objective phrases, got 1");
  EXPECT_EQ(
      error_of({{"categories: [cyber, information], count: [1, 1]}", "categories: [cyber], count: [1, 1]}"}}),
      "my.yaml: key 'assets.BLUE[4].categories': must list 2 to 3 categories, got 1");
  EXPECT_EQ(error_of({{"[\"threat level acceptable\", \"civil unrest contained\"]",
                       "[\"threat level acceptable\"]"}}),
            "my.yaml: key 'branch_kinds[1].conditions': must list 2 to 3 conditions, got 1");
  EXPECT_EQ(error_of({{"categories: [sustainment, civil, protection]",
                       "categories: [sustainment, civil, protection, movement]"}}),
            "my.yaml: key 'branch_kinds[2].categories': must list 1 to 3 categories, got 4");
}

TEST(TemplateRules, NamesAndUniqueness) {
  EXPECT_EQ(error_of({{"id: urban\n", "id: Urban_1\n"}}),
            "my.yaml: key 'id': id 'Urban_1' must be lowercase letters or digits joined by hyphens");
  EXPECT_EQ(error_of({{"[strike, suppress, neutralize]", "[strike, suppress, Neutralize]"}}),
            "my.yaml: key 'verbs.fires[2]': verb 'Neutralize' must be lowercase words joined by hyphens");
  EXPECT_EQ(error_of({{"[strike, suppress, neutralize]", "[strike, suppress, hold]"}}),
            "my.yaml: key 'verbs.protection[2]': verb 'hold' appears in more than one category");
  EXPECT_EQ(error_of({{"type: infantry-platoon", "type: infantry_platoon"}}),
            "my.yaml: key 'assets.BLUE[0].type': type 'infantry_platoon' must be lowercase words joined by "
            "hyphens");
  EXPECT_EQ(error_of({{"type: uav-team", "type: infantry-platoon"}}),
            "my.yaml: key 'assets.BLUE[1].type': type 'infantry-platoon' is listed twice");
  EXPECT_EQ(error_of({{"prefix: inf,", "prefix: infantry,"}}),
            "my.yaml: key 'assets.BLUE[0].prefix': prefix 'infantry' must be 1 to 5 lowercase letters");
  EXPECT_EQ(error_of({{"[movement, fires, protection]", "[movement, fires, movement]"}}),
            "my.yaml: key 'assets.BLUE[0].categories[2]': category 'movement' is listed twice");
  EXPECT_EQ(error_of({{"  - family: mixed\n", "  - family: urban\n"}}),
            "my.yaml: key 'terrain_families[1].family': terrain family 'urban' is listed twice");
  EXPECT_EQ(error_of({{"rail yard]", "city hall]"}}),
            "my.yaml: key 'places[8]': place 'city hall' is listed twice");
  EXPECT_EQ(error_of({{"old town", "Old Town"}}),
            "my.yaml: key 'places[7]': place 'Old Town' must be lowercase");
  EXPECT_EQ(error_of({{"around the {place}\"", "around the {place} in {city}\""}}),
            "my.yaml: key 'objectives.RED[1]': unknown placeholder '{city}' (only {place} and {place2} are "
            "filled)");
  EXPECT_EQ(error_of({{"movement: 0.14, fires: 0.06", "movement: 0.145, fires: 0.055"}}),
            "my.yaml: key 'requirements.BLUE.weights.movement': must be written with at most two decimals, "
            "got 0.145");
}

TEST(TemplateRules, FramingEffects) {
  EXPECT_EQ(
      error_of({{"neutral: {objective_suffix: \"\"}", "neutral: {objective_suffix: \"calmly\"}"}}),
      "my.yaml: key 'framing.effects.neutral.objective_suffix': must be \"\" for the neutral framing, got "
      "'calmly'");
  EXPECT_EQ(error_of({{", added_category: command", ""}}),
            "my.yaml: missing required key 'framing.effects.blue_favorable.added_category'");
  EXPECT_EQ(error_of({{"opposition\"}", "opposition\", added_category: fires}"}}),
            "my.yaml: key 'framing.effects.red_favorable.added_category': only the blue_favorable framing "
            "may add a "
            "category");
}

TEST(TemplateRules, ReferencesAreConsistent) {
  // Side coverage: BLUE loses its only fires asset kind, RED its only deception one.
  EXPECT_EQ(error_of({{"categories: [movement, fires, protection]", "categories: [movement, protection]"}}),
            "my.yaml: key 'assets.BLUE': no BLUE asset kind performs 'fires' (BLUE must cover movement, "
            "information, "
            "cyber, sustainment, protection, deception, public_information, command, fires)");
  EXPECT_EQ(error_of({{"categories: [movement, fires, deception]", "categories: [movement, fires]"}}),
            "my.yaml: key 'assets.RED': no RED asset kind performs 'deception' (RED must cover movement, "
            "fires, cyber, "
            "sustainment, information, public_information, deception)");
  // No BLUE asset kind can act in civil any more: BLUE's civil requirement, then a branch category, then the
  // framing's added category each refer to it in turn.
  const Edit no_civil_asset{"categories: [civil, public_information, command]",
                            "categories: [public_information, command]"};
  const Edit no_civil_weight{"deception: 0.02, civil: 0.14}", "deception: 0.16, civil: 0.0}"};
  const Edit no_civil_branch{"categories: [sustainment, civil, protection]",
                             "categories: [sustainment, protection]"};
  EXPECT_EQ(
      error_of({no_civil_asset}),
      "my.yaml: key 'requirements.BLUE.weights.civil': weight 0.14 but no BLUE asset kind performs 'civil'");
  EXPECT_EQ(
      error_of({no_civil_asset, no_civil_weight}),
      "my.yaml: key 'branch_kinds[2].categories[1]': no BLUE asset kind performs 'civil', so no seed plan "
      "branch could use it");
  EXPECT_EQ(error_of({no_civil_asset, no_civil_weight, no_civil_branch}), "no error");
  EXPECT_EQ(
      error_of({no_civil_asset,
                no_civil_weight,
                no_civil_branch,
                {"added_category: command", "added_category: civil"}}),
      "my.yaml: key 'framing.effects.blue_favorable.added_category': no BLUE asset kind performs 'civil', so "
      "the framing would add nothing");
}

// ------------------------------------------------------------------------------------------ built-in list

TEST(BuiltInTemplates, AreExactlyTheYamlFilesInConfigsTemplates) {
  std::vector<std::string> on_disk;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(ADVPLAN_SOURCE_DIR) + "/configs/templates"))
    if (entry.path().extension() == ".yaml") on_disk.push_back(entry.path().stem().string());
  std::sort(on_disk.begin(), on_disk.end());
  EXPECT_EQ(io::embedded_template_ids(), on_disk);
  EXPECT_GE(on_disk.size(), 5u);
  for (const auto& id : on_disk) EXPECT_TRUE(io::embedded_file(io::embedded_template_path(id))) << id;
  EXPECT_TRUE(io::embedded_file("configs/experiments/paper.yaml"));
}

TEST(BuiltInTemplates, UnknownBuiltInTemplateErrorListsTheEmbeddedIds) {
  std::string list;
  for (const auto& id : io::embedded_template_ids()) list += (list.empty() ? "" : ", ") + id;
  EXPECT_THAT(list, HasSubstr("urban"));
  try {
    (void)parse_experiment_config("corpus: {templates: [urban, nope], seeds: [1, 2]}\n", "inline.yaml", "");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "inline.yaml: key 'corpus.templates[1]': template 'nope' is not built in (built-in: " + list + ")");
  }
}

}  // namespace
}  // namespace advplan
