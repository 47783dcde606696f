// The meta-game from several runs (docs/METRICS.md "Meta-game", "Cells from several runs" and "Sweep points as
// players"): cells of runs of the same game pool into the matrix one run of every pairing writes, runs played under
// another seed, simulator or quality weights, or on other scenarios under the same ids, are refused naming the run
// and the field or cell, and a sweep point that reaches one side is a policy of its own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "advplan/core/error.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/metagame/metagame.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/runner.hpp"
#include "support/cli.hpp"

namespace advplan::metagame {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::TempDir;

/// The small config as a matrix, with `extra` edits.
std::string matrix_config(const TempDir& dir, const std::string& matrix, const std::string& name,
                          std::vector<testing::Edit> extra = {}) {
  std::vector<testing::Edit> edits{
      {"conditions: [single, greedy@8, constraint@8, llm_offline, {label: council, blue: council, red: greedy@8}]",
       "matrix: " + matrix},
      {"budget_sweep: [1, 2, 4, 8, 16]", "budget_sweep: []"},
      {"studies: {rubric: true, framing: true, components: true}", "studies: {rubric: false, framing: false, components: false}"}};
  edits.insert(edits.end(), extra.begin(), extra.end());
  return testing::small_config(dir, edits, name);
}

std::string run(const std::string& config, const fs::path& out) {
  const ExperimentConfig cfg = load_experiment_config(config);
  RunOptions o;
  o.out_dir = out.string();
  o.progress = false;
  o.studies = false;
  run_experiment(prepare_run(cfg, run_conditions(cfg)), o);
  return out.string();
}

std::string error_of(const std::vector<std::string>& dirs) {
  try {
    (void)read_metagame_data(dirs, Payoff::advantage);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(MetagameRuns, CellsOfSeveralRunsOfOneGameEqualOneRunOfEveryPairing) {
  TempDir dir("mg-runs");
  const fs::path p = dir.path();
  const std::string whole = run(matrix_config(dir, "{blue: [seed, proposer:cyber], red: [single, greedy@4]}", "w.yaml"), p / "whole");
  const std::string a = run(matrix_config(dir, "{blue: [seed, proposer:cyber], red: [single]}", "a.yaml"), p / "a");
  const std::string b = run(matrix_config(dir, "{blue: [seed, proposer:cyber], red: [greedy@4]}", "b.yaml"), p / "b");
  const MetaGameData one = read_metagame_data({whole}, Payoff::advantage);
  const MetaGameData pooled = read_metagame_data({a, b}, Payoff::advantage);
  EXPECT_EQ(pooled.blue, one.blue);
  EXPECT_EQ(pooled.red, one.red);
  EXPECT_EQ(pooled.scenarios, one.scenarios);
  EXPECT_EQ(pooled.cells, one.cells);  // common random numbers: the same cells, integer for integer

  // Another seed, other simulator settings, other quality weights: refused naming the run's file and the field.
  const std::string seed = run(matrix_config(dir, "{blue: [seed, proposer:cyber], red: [greedy@4]}", "s.yaml",
                                             {{"seed: 20240601", "seed: 5"}}),
                               p / "seed");
  EXPECT_THAT(error_of({a, seed}), HasSubstr(seed + "/run_metadata.json: seed is 5, while the first run " + a + " has 20240601"));
  const std::string sim = run(matrix_config(dir, "{blue: [seed, proposer:cyber], red: [greedy@4]}", "m.yaml",
                                            {{"replications: 50", "replications: 40"}}),
                              p / "sim");
  EXPECT_THAT(error_of({a, sim}), HasSubstr("run_metadata.json: simulator is"));
  const std::string qw = run(matrix_config(dir, "{blue: [seed, proposer:cyber], red: [greedy@4]}", "q.yaml",
                                           {{"effectiveness: 0.5, cost: 0.3, risk: 0.2", "effectiveness: 0.6, cost: 0.2, risk: 0.2"}}),
                             p / "qw");
  EXPECT_THAT(error_of({a, qw}), HasSubstr("run_metadata.json: quality_weights is"));

  // The same scenario id generated otherwise (an edited scenarios.csv stands for another template version).
  fs::copy(b, p / "edited", fs::copy_options::recursive);
  const std::string edited = (p / "edited").string();
  io::CsvTable sc = io::CsvTable::read(edited + "/scenarios.csv");
  io::CsvTable changed(sc.header());
  for (std::size_t i = 0; i < sc.size(); ++i) {
    auto row = sc.rows()[i];
    if (i == 2) row[sc.col("terrain_family")] += "x";
    changed.add(row);
  }
  changed.write(edited + "/scenarios.csv");
  const std::string e = error_of({a, edited});
  EXPECT_THAT(e, HasSubstr(edited + "/per_scenario.csv: line "));
  EXPECT_THAT(e, HasSubstr("is on scenario " + sc.rows()[2][0] + ", which " + a + " generated otherwise"));
  // A run without scenarios.csv cannot be checked, so it is not pooled; alone it still reads.
  fs::remove(edited + "/scenarios.csv");
  EXPECT_THAT(error_of({a, edited}), HasSubstr("scenarios.csv: missing"));
  EXPECT_NO_THROW((void)read_metagame_data({edited}, Payoff::advantage));
}

TEST(MetagameRuns, ASweepPointThatReachesOneSideIsAPolicyOfItsOwn) {
  TempDir dir("mg-sweep");
  const std::string r = run(matrix_config(dir, "{blue: [seed], red: [constraint@4, greedy@4]}", "sw.yaml",
                                          {{"budget_sweep: []", "budget_sweep: []\nsweep: {policies.constraint.lambda: [0.3, 1]}"}}),
                            dir.path() / "run");
  const MetaGameData d = read_metagame_data({r}, Payoff::advantage);
  // λ = 1 is the quality-greedy choice: its cells equal greedy@4's in every scenario, so it is no player of its own.
  EXPECT_EQ(d.red, (std::vector<std::string>{"constraint@4", "greedy@4", "constraint@4 [lambda=0.3]"}));
  // The point at the config's own lambda (0.7) plays constraint@4's cells: no player of its own.
  const std::string dup = run(matrix_config(dir, "{blue: [seed], red: [constraint@4, greedy@4]}", "dup.yaml",
                                            {{"budget_sweep: []", "budget_sweep: []\nsweep: {policies.constraint.lambda: [0.3, 0.7]}"}}),
                              dir.path() / "dup");
  EXPECT_EQ(read_metagame_data({dup}, Payoff::advantage).red,
            (std::vector<std::string>{"constraint@4", "greedy@4", "constraint@4 [lambda=0.3]"}));
  // With two BLUE policies, a point of seed's condition meets seed alone: left out, and the game still solves.
  const std::string two = run(matrix_config(dir, "{blue: [seed, proposer:cyber], red: [constraint@4, greedy@4]}", "two.yaml",
                                            {{"budget_sweep: []", "budget_sweep: []\nsweep: {policies.constraint.lambda: [0.3]}"}}),
                              dir.path() / "two");
  const MetaGameData d2 = read_metagame_data({two}, Payoff::advantage);
  EXPECT_EQ(d2.red, (std::vector<std::string>{"constraint@4", "greedy@4"}));
  EXPECT_EQ(d2.blue, (std::vector<std::string>{"seed", "proposer:cyber"}));
  // A point that changes the wargame is no player.
  const std::string noise = run(matrix_config(dir, "{blue: [seed], red: [greedy@4]}", "sn.yaml",
                                              {{"budget_sweep: []", "budget_sweep: []\nsweep: {simulator.noise: [0.05]}"}}),
                                dir.path() / "noise");
  EXPECT_EQ(read_metagame_data({noise}, Payoff::advantage).red, std::vector<std::string>{"greedy@4"});
}

}  // namespace
}  // namespace advplan::metagame
