// Experiment config and template reading (docs/CONFIG.md; "constructor validation with exact
// messages"): bad input gets one sentence naming the file and the key. Each case edits a known-good config or
// template in a fresh temporary directory, so the error can only come from the edit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "advplan/core/error.hpp"
#include "advplan/run/config.hpp"
#include "advplan/scenario/scenario_template.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kGoodConfig =
    "name: tiny\n"
    "seed: 5\n"
    "corpus:\n"
    "  templates: [urban]\n"
    "  seeds: [100, 101]\n"
    "  template_dir: ../templates\n"
    "simulator: {replications: 10}\n";

std::string source_template(const std::string& id) {
  return testing::read_file(std::string(ADVPLAN_SOURCE_DIR) + "/configs/templates/" + id + ".yaml");
}

/// <tmp>/experiments holds the config (the base dir), <tmp>/templates a copy of urban.yaml, as in configs/.
class ConfigTest : public ::testing::Test {
 protected:
  ConfigTest() : dir_("config") {
    fs::create_directories(dir_.path() / "experiments");
    fs::create_directories(dir_.path() / "templates");
    set_template(source_template("urban"));
  }
  std::string base() const { return (dir_.path() / "experiments").string(); }
  std::string file() const { return (dir_.path() / "experiments" / "bad.yaml").string(); }
  std::string template_path() const { return (dir_.path() / "templates" / "urban.yaml").string(); }
  void set_template(const std::string& text) const { testing::write_file(template_path(), text); }

  /// The ConfigError message for `text`; records a failure when nothing or something else is thrown.
  std::string error_of(const std::string& text) const {
    try {
      (void)parse_experiment_config(text, file(), base());
    } catch (const ConfigError& e) {
      return e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "expected a ConfigError, got: " << e.what();
      return "";
    }
    ADD_FAILURE() << "no error for:\n" << text;
    return "";
  }
  /// A copy of urban.yaml with `from` replaced by `to` (which must occur).
  void edit_template(const std::string& from, const std::string& to) const {
    std::string t = source_template("urban");
    const auto pos = t.find(from);
    ASSERT_NE(pos, std::string::npos) << "urban.yaml no longer contains: " << from;
    t.replace(pos, from.size(), to);
    set_template(t);
  }

  testing::TempDir dir_;
};

TEST_F(ConfigTest, TheGoodConfigParses) {
  const auto cfg = parse_experiment_config(kGoodConfig, file(), base());
  EXPECT_EQ(cfg.name, "tiny");
  EXPECT_EQ(cfg.seed, 5u);
  EXPECT_EQ(cfg.seed_from, 100u);
  EXPECT_EQ(cfg.seed_to, 101u);
  EXPECT_EQ(cfg.sim.replications, 10);
  ASSERT_EQ(cfg.templates.size(), 1u);
  EXPECT_EQ(cfg.templates[0].id, "urban");
  EXPECT_EQ(cfg.templates[0].source, template_path());
  EXPECT_EQ(generate_corpus(cfg).size(), 2u);
}

TEST_F(ConfigTest, SyntaxErrorNamesFileAndLine) {
  const std::string msg = error_of("name: tiny\ncorpus:\n  templates: [urban\n  seeds: [100, 101]\n");
  EXPECT_THAT(msg, AllOf(HasSubstr(file()), HasSubstr("YAML syntax error"), HasSubstr("line")));
  EXPECT_THAT(msg, ::testing::StartsWith(file() + ": "));
}

// A key named twice in one mapping is refused, naming its line (yaml-cpp keeps both and a lookup found the first,
// so a second simulator: block was silently ignored), at any depth; so is a template listed twice, which ran every
// scenario twice and then failed in the summaries with a half-written directory.
TEST_F(ConfigTest, DuplicateKeysAndTemplatesAreRefused) {
  EXPECT_EQ(error_of("name: tiny\nsimulator: {replications: 10}\nsimulator: {replications: 20}\n"),
            file() + ": line 3, column 1: key 'simulator' appears twice in one mapping (the second would be "
                     "ignored); keep one");
  EXPECT_EQ(error_of("name: tiny\ncorpus:\n  templates: [urban]\n  seeds: [100, 101]\n  seeds: [1, 2]\n"),
            file() + ": line 5, column 3: key 'seeds' appears twice in one mapping (the second would be ignored); "
                     "keep one");
  EXPECT_EQ(error_of("name: tiny\nconditions:\n  - {label: a, blue: seed, red: single, red: greedy@8}\n"),
            file() + ": line 3, column 41: key 'red' appears twice in one mapping (the second would be ignored); "
                     "keep one");
  EXPECT_EQ(error_of("name: tiny\ncorpus:\n  templates: [urban, maritime, urban]\n  seeds: [100, 101]\n"),
            file() + ": key 'corpus.templates': template 'urban' is listed twice (every scenario would run twice); "
                     "list it once");
}

TEST_F(ConfigTest, MissingKey) {
  EXPECT_EQ(error_of("name: tiny\ncorpus:\n  templates: [urban]\n"), file() + ": missing required key 'corpus.seeds'");
  EXPECT_EQ(error_of("name: tiny\n"), file() + ": missing required key 'corpus'");
}

TEST_F(ConfigTest, WrongType) {
  std::string text = kGoodConfig;
  text.replace(text.find("seed: 5"), 7, "seed: abc");
  EXPECT_EQ(error_of(text), file() + ": key 'seed': expected an integer, got 'abc'");
  EXPECT_EQ(error_of("corpus:\n  templates: [urban]\n  seeds: [100]\n"), file() + ": key 'corpus.seeds': expected [first, last]");
  EXPECT_EQ(error_of("corpus:\n  templates: urban\n  seeds: [100, 101]\n"), file() + ": key 'corpus.templates': expected a list");
  EXPECT_EQ(error_of(std::string(kGoodConfig) + "studies: {rubric: yes}\n"),
            file() + ": key 'studies.rubric': expected true or false, got 'yes'");
  EXPECT_EQ(error_of("- just\n- a list\n"), file() + ": an experiment config must be a YAML mapping");
}

TEST_F(ConfigTest, UnknownKeyAtTopLevel) {
  const std::string msg = error_of(std::string(kGoodConfig) + "simulater: {replications: 5}\n");
  EXPECT_THAT(msg, HasSubstr(file() + ": unknown key 'simulater' (valid keys here: name, seed, corpus, quality_weights, "));
  EXPECT_THAT(msg, HasSubstr("simulator"));
}

TEST_F(ConfigTest, UnknownKeyInsideSimulator) {
  std::string text = kGoodConfig;
  text.replace(text.find("replications"), 12, "replicatons");
  EXPECT_EQ(error_of(text), file() + ": unknown key 'simulator.replicatons' (valid keys here: replications, break_point, "
                                     "time_limit, dt, noise, step_noise, model, engagement)");
}

TEST_F(ConfigTest, OutOfRange) {
  std::string text = kGoodConfig;
  text.replace(text.find("replications: 10"), 16, "replications: 0");
  const std::string msg = error_of(text);
  EXPECT_THAT(msg, HasSubstr("R must be at least 1"));
  EXPECT_EQ(msg, file() + ": key 'simulator.replications': R must be at least 1, while 0 was given");
  EXPECT_THAT(error_of("corpus:\n  templates: [urban]\n  seeds: [101, 100]\n"),
              HasSubstr("key 'corpus.seeds': first seed is greater than last seed"));
  EXPECT_THAT(error_of(std::string(kGoodConfig) + "quality_weights: {effectiveness: 0.5, cost: 0.3, risk: 0.3}\n"),
              HasSubstr(file() + ": key 'quality_weights': weights must sum to 1, while they sum to 1.1"));
  EXPECT_EQ(error_of(std::string(kGoodConfig) + "budget_sweep: [1, 0]\n"),
            file() + ": key 'budget_sweep[1]': k must be at least 1 (accepted: integers 1..1024), while 0 was given");
  EXPECT_EQ(error_of(std::string(kGoodConfig) + "bootstrap: {resamples: 0}\n"),
            file() + ": key 'bootstrap.resamples': must be in [1, 1000000], while a value of 0 was given");
  EXPECT_EQ(error_of(std::string(kGoodConfig) + "framing_mode: sometimes\n"),
            file() + ": key 'framing_mode': unknown framing mode 'sometimes' (accepted: metadata, applied)");
}

TEST_F(ConfigTest, ApiKeyInConfigIsRejectedNamingTheKey) {
  // The dedicated message, not the generic unknown-key one.
  EXPECT_EQ(error_of(std::string(kGoodConfig) + "llm: {api_key: sk-123}\n"),
            file() + ": key 'llm.api_key': never put an API key in a config; name its environment variable in "
                     "llm.api_key_env");
}

TEST_F(ConfigTest, TheKeysVariableIsWithheldFromExecPrograms) {
  EXPECT_EQ(parse_experiment_config(kGoodConfig, file(), base()).exec.withheld_env,
            std::vector<std::string>{"ADVPLAN_LLM_API_KEY"});
  // llm before or after exec: the named variable is withheld either way.
  EXPECT_EQ(parse_experiment_config(std::string(kGoodConfig) + "llm: {api_key_env: MY_KEY}\nexec: {workers: 2}\n",
                                    file(), base())
                .exec.withheld_env,
            (std::vector<std::string>{"ADVPLAN_LLM_API_KEY", "MY_KEY"}));
}

TEST_F(ConfigTest, MissingTemplateFile) {
  std::string text = kGoodConfig;
  text.replace(text.find("[urban]"), 7, "[urban, nope]");
  const std::string missing = (dir_.path() / "templates" / "nope.yaml").string();
  EXPECT_EQ(error_of(text), file() + ": key 'corpus.templates[1]': template 'nope' not found: no file " + missing +
                                " (corpus.template_dir '../templates' is relative to the config's folder " + base() +
                                "; leave template_dir out to use the built-in templates)");
}

// Without template_dir a config uses the built-in templates wherever it is (README: "copy paper.yaml and run it"),
// and a template that is not built in is named with the built-in ones.
TEST_F(ConfigTest, WithoutTemplateDirTheBuiltInTemplatesServe) {
  std::string text = kGoodConfig;
  text.erase(text.find("  template_dir: ../templates\n"), 29);
  set_template("not a template at all");  // the file beside it is not read
  const auto cfg = parse_experiment_config(text, file(), base());
  ASSERT_EQ(cfg.templates.size(), 1u);
  EXPECT_EQ(cfg.template_texts.at(0).first, "<built-in>/configs/templates/urban.yaml");
  text.replace(text.find("[urban]"), 7, "[urban, nope]");
  EXPECT_THAT(error_of(text), HasSubstr("template 'nope' is not built in (built-in: air-defense, humanitarian"));
}

TEST_F(ConfigTest, AnOverlongTemplateDirIsASentenceNotAFilesystemError) {
  // Found by the config fuzzer: std::filesystem threw "File name too long" out of the loader.
  std::string text = std::string(kGoodConfig);
  text.replace(text.find("  template_dir: ../templates\n"), 29, "  template_dir: " + std::string(5000, 'x') + "\n");
  const std::string msg = error_of(text);
  EXPECT_NE(msg.find("key 'corpus.templates[0]': template 'urban': cannot read"), std::string::npos) << msg;
  EXPECT_NE(msg.find("File name too long"), std::string::npos) << msg;
}

TEST_F(ConfigTest, MalformedTemplateUnknownKey) {
  set_template(source_template("urban") + "colour: red\n");
  const std::string msg = error_of(kGoodConfig);
  EXPECT_THAT(msg, HasSubstr(template_path() + ": unknown key 'colour' (valid keys here: id, name, domain, "));
  EXPECT_THAT(msg, Not(HasSubstr(file())));  // the template, not the config, is at fault
}

TEST_F(ConfigTest, MalformedTemplateWeightsNotSummingToOne) {
  edit_template("weights: {movement: 0.14, fires: 0.06", "weights: {movement: 0.24, fires: 0.06");
  // The BLUE weights now add up to 1.1 (printed with full double precision, 1.0999999999999999).
  EXPECT_THAT(error_of(kGoodConfig),
              HasSubstr(template_path() + ": key 'requirements.BLUE.weights': weights must sum to 1, while they sum to 1."));
}

TEST_F(ConfigTest, MalformedTemplateUnknownCategory) {
  edit_template("categories: [movement, fires, protection]", "categories: [movement, firez, protection]");
  EXPECT_EQ(error_of(kGoodConfig), template_path() +
                                       ": key 'assets.BLUE[0].categories[1]': unknown category 'firez' (expected one of "
                                       "movement, fires, information, cyber, sustainment, protection, command, "
                                       "public_information, deception, civil)");
  edit_template("  movement: [transit,", "  movment: [transit,");
  EXPECT_THAT(error_of(kGoodConfig), HasSubstr(template_path() + ": key 'verbs.movment': unknown category 'movment'"));
}

TEST_F(ConfigTest, MalformedTemplateOtherErrors) {
  edit_template("id: urban", "id: urbane");
  EXPECT_EQ(error_of(kGoodConfig), file() + ": key 'corpus.templates[0]': template file " + template_path() +
                                       " declares id 'urbane', not 'urban'");
  edit_template("capability: 0.62", "capability: high");
  EXPECT_EQ(error_of(kGoodConfig), template_path() + ": key 'assets.BLUE[0].capability': expected a number, got 'high'");
  edit_template("branch_probability: 0.45", "branch_probability: 1.5");
  EXPECT_EQ(error_of(kGoodConfig), template_path() + ": key 'seed_plans.branch_probability': must be in [0.3, 0.5], "
                                                     "while a value of 1.5 was given");
  edit_template("- \"Undermine public confidence around the {place}\"", "- \"Undermine public confidence\"");
  EXPECT_EQ(error_of(kGoodConfig), template_path() + ": key 'objectives.RED[1]': objective phrase must contain {place}");
  edit_template("name: Urban stability\n", "");
  EXPECT_EQ(error_of(kGoodConfig), template_path() + ": missing required key 'name'");
}

TEST(Config, LoadTemplateFileErrors) {
  try {
    (void)load_template_file("/nonexistent/advplan/nope.yaml");
    ADD_FAILURE() << "no error";
  } catch (const IoError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/advplan/nope.yaml: cannot read file");
  }
  try {
    (void)parse_template("id: [unclosed\n", "inline.yaml");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("inline.yaml: YAML syntax error at line"), HasSubstr("column")));
  }
}

TEST(Config, MissingConfigFile) {
  try {
    (void)load_experiment_config("/nonexistent/advplan/paper.yaml");
    ADD_FAILURE() << "no error";
  } catch (const IoError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/advplan/paper.yaml: config file not found");
  }
}

TEST(Config, BuiltInConfigEqualsTheFileInTheSourceTree) {
  const auto builtin = default_experiment_config();
  const auto file = load_experiment_config(std::string(ADVPLAN_SOURCE_DIR) + "/configs/experiments/paper.yaml");
  EXPECT_EQ(builtin.source, "<built-in>/configs/experiments/paper.yaml");
  EXPECT_EQ(builtin.text, file.text);
  ASSERT_EQ(builtin.template_texts.size(), 5u);
  ASSERT_EQ(file.template_texts.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(builtin.template_texts[i].second, file.template_texts[i].second) << file.template_texts[i].first;
    EXPECT_EQ(builtin.templates[i].id, file.templates[i].id);
  }
  EXPECT_EQ(builtin.seed, 20240601u);
  EXPECT_EQ(builtin.sim.replications, 200);
  EXPECT_EQ(builtin.bootstrap.resamples, 2000);
  EXPECT_NEAR(builtin.quality.effectiveness, 0.5, 0);
  EXPECT_NEAR(builtin.quality.cost, 0.3, 0);
  EXPECT_NEAR(builtin.quality.risk, 0.2, 0);
}

}  // namespace
}  // namespace advplan
