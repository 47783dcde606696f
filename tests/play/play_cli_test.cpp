// `advplan play`'s terminal form (docs/PLAY.md): the run it writes is byte-identical to a run of the same
// plans given as `plans:FILE`, across sittings, for either side.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "advplan/core/plan_json.hpp"
#include "advplan/run/config.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {
namespace fs = std::filesystem;
using testing::advplan;
using testing::quote;
using testing::TempDir;

std::vector<testing::Edit> three() {
  return {{"templates: [urban, air-defense]", "templates: [urban]"}, testing::seeds("[100, 102]")};
}

/// A RED plan for `sc`: one action of its first RED asset, in that asset's first category, on the first
/// place.
Plan simple_red_plan(const Scenario& sc) {
  const Asset* a = sc.assets_of(Side::Red).front();
  Plan p;
  p.plan_id = sc.id + "/red/human";
  p.side = Side::Red;
  p.objective = sc.red_objective;
  p.domain = sc.domain;
  const Category c = a->categories.front();
  p.actions.push_back(
      Action{"r1", a->id, sc.verbs[static_cast<std::size_t>(c)].front(), c, sc.places.front(), 2, {}});
  p.chain = {"r1"};
  p.roles[a->id] = a->role;
  return p;
}

/// Each scenario's plan as one line of the terminal form, from `first` to `last` (exclusive).
std::string plan_lines(const ExperimentConfig& cfg, Side side, std::size_t first, std::size_t last) {
  std::string text;
  for (std::size_t i = first; i < last; ++i) {
    const Scenario sc = corpus_scenario(cfg, i);
    text += plan_to_string(side == Side::Blue ? sc.blue_seed_plans.front() : simple_red_plan(sc)) + "\n";
  }
  return text;
}

TEST(PlayCli, TheTerminalFormsRunIsTheRunOfItsPlansAsAPlanSetAcrossSittings) {
  TempDir dir("play-cli-blue");
  const std::string config = testing::small_config(dir, three());
  const ExperimentConfig cfg = load_experiment_config(config);
  const std::string out = dir / "sitting";
  testing::write_file(dir / "first.txt", plan_lines(cfg, Side::Blue, 0, 1));
  const auto first = advplan(
      "play " + quote(config) + " --side blue --out " + quote(out) + " --plans " + quote(dir / "first.txt"),
      dir);
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_NE(first.err.find("1 of 3 scenarios played"), std::string::npos) << first.err;
  EXPECT_FALSE(fs::exists(out + "/run"));
  // The rest pasted on standard input, one pretty-printed plan over several lines among them.
  const Scenario second = corpus_scenario(cfg, 1);
  testing::write_file(dir / "rest.txt", plan_to_string(second.blue_seed_plans.front(), 2) + "\n\n" +
                                            plan_lines(cfg, Side::Blue, 2, 3));
  // run_command gives the command /dev/null as its standard input; the group takes the file instead.
  const auto rest =
      testing::run_command("{ " + quote(testing::kBinary) + " play " + quote(config) + " --side blue --out " +
                               quote(out) + " --plans - < " + quote(dir / "rest.txt") + "; }",
                           dir);
  ASSERT_EQ(rest.status, 0) << rest.err;
  ASSERT_TRUE(fs::exists(out + "/run/MANIFEST")) << rest.err;
  testing::write_file(dir / "as-set.yaml", testing::small_config_text(three()) +
                                               "default_blue: \"plans:" + out + "/played.jsonl\"\n");
  ASSERT_EQ(
      advplan("run " + quote(dir / "as-set.yaml") + " --out " + quote(dir / "as-set") + " --progress none",
              dir)
          .status,
      0);
  EXPECT_EQ(testing::compare_runs(dir / "as-set", out + "/run"), "");
}

TEST(PlayCli, RedsRunAddsTheHumanConditionAndAnInvalidPlanStopsAFileInOneSentence) {
  TempDir dir("play-cli-red");
  const std::string config = testing::small_config(dir, three());
  const ExperimentConfig cfg = load_experiment_config(config);
  const std::string out = dir / "sitting";
  testing::write_file(dir / "bad.txt", plan_lines(cfg, Side::Blue, 0, 1));  // a BLUE plan in RED's seat
  const auto bad = advplan(
      "play " + quote(config) + " --side red --out " + quote(out) + " --plans " + quote(dir / "bad.txt"),
      dir);
  testing::expect_one_line_error(bad);
  EXPECT_NE(bad.err.find("urban-100"), std::string::npos) << bad.err;
  testing::write_file(dir / "plans.txt", plan_lines(cfg, Side::Red, 0, 3));
  const auto ok = advplan(
      "play " + quote(config) + " --side red --out " + quote(out) + " --plans " + quote(dir / "plans.txt"),
      dir);
  ASSERT_EQ(ok.status, 0) << ok.err;
  std::string text = testing::small_config_text(three());
  const std::string from = "{label: council, blue: council, red: greedy@8}]";
  text.replace(text.find(from), from.size(),
               from.substr(0, from.size() - 1) + ", {label: human, red: \"plans:" + out +
                   "/played.jsonl\"}, {label: council vs human, blue: council, red: \"plans:" + out +
                   "/played.jsonl\"}]");
  testing::write_file(dir / "as-set.yaml", text);
  ASSERT_EQ(
      advplan("run " + quote(dir / "as-set.yaml") + " --out " + quote(dir / "as-set") + " --progress none",
              dir)
          .status,
      0);
  EXPECT_EQ(testing::compare_runs(dir / "as-set", out + "/run"), "");
  EXPECT_NE(testing::read_file(out + "/run/per_scenario.csv").find(",human,"), std::string::npos);
}

TEST(PlayCli, RefusesASweepAndAnOutThatIsAFile) {
  TempDir dir("play-cli-refuse");
  const std::string config = testing::small_config(dir, three());
  testing::write_file(dir / "file", "x");
  testing::expect_one_line_error(
      advplan("play " + quote(config) + " --side blue --out " + quote(dir / "file") + " --plans -", dir));
  const std::string sweep = testing::small_config(
      dir,
      {testing::seeds("[100, 100]"),
       {"budget_sweep: [1, 2, 4, 8, 16]", "sweep: {policies.constraint.lambda: [0, 1]}"}},
      "sweep.yaml");
  testing::expect_one_line_error(
      advplan("play " + quote(sweep) + " --side blue --out " + quote(dir / "s") + " --plans -", dir));
}

}  // namespace
}  // namespace advplan
