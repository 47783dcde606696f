// The plans of an external policy are graded from the run (docs/RUBRIC.md): `advplan evaluate` writes rubric/ with
// the exec: policy's plans, the ones it played, without asking the program again.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>

#include "advplan/io/csv.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using testing::shell_quote;

TEST(ExternalPlans, EvaluateGradesTheExecPlansItPlayed) {
  testing::TempDir dir("external-plans");
  const std::string cfg = dir / "small.yaml";
  std::ofstream(cfg) << "name: small\nseed: 3\ncorpus: {templates: [urban, maritime], seeds: [1, 3]}\n"
                        "simulator: {replications: 10}\nbootstrap: {resamples: 20}\n";
  // The seed plan, as trivial_blue.py answers, with every request counted in a file.
  const std::string counter = dir / "requests.txt", program = dir / "counting_blue.py";
  std::ofstream(program) << "import json, sys\n"
                            "for line in sys.stdin:\n"
                            "    if not line.strip(): continue\n"
                            "    req = json.loads(line)\n"
                            "    with open(sys.argv[1], 'a') as f: f.write(req['scenario']['id'] + '\\n')\n"
                            "    plan = req['scenario']['blue_seed_plans'][0]\n"
                            "    print(json.dumps({'request_id': req['request_id'], 'plan': plan}), flush=True)\n";
  const std::string blue = "exec:python3 " + program + " " + counter;
  const std::string out = dir / "eval";
  const auto r = testing::run_command(shell_quote(ADVPLAN_BINARY) + " evaluate --blue " + shell_quote(blue) +
                                          " --config " + shell_quote(cfg) + " --out " + shell_quote(out) +
                                          " --red single --budget '' --rerun 0 --threads 2 --progress none",
                                      dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto briefs = io::CsvTable::read(out + "/rubric/scores_per_brief.csv");
  const auto col = briefs.col("model");
  std::size_t exec_briefs = 0, seed_briefs = 0;
  for (const auto& row : briefs.rows()) {
    exec_briefs += row[col] == blue;
    seed_briefs += row[col] == "seed";
  }
  EXPECT_GT(exec_briefs, 0u) << "the exec: policy's plans were left out of rubric/";
  EXPECT_EQ(exec_briefs, seed_briefs);
  // The program answered once per scenario: the run's requests alone, none from the rubric layer.
  std::ifstream t(counter);
  std::size_t requests = 0;
  for (std::string line; std::getline(t, line);) ++requests;
  EXPECT_EQ(requests, 6u);
  // Its plans are the seed plans, so every brief scores as the seed policy's does.
  const auto per_policy = io::CsvTable::read(out + "/rubric/scores_per_policy.csv");
  const auto m = per_policy.col("model"), w = per_policy.col("weighted_score"), j = per_policy.col("judge");
  std::map<std::string, std::string> exec_score, seed_score;
  for (const auto& row : per_policy.rows()) {
    if (row[m] == blue) exec_score[row[j]] = row[w];
    if (row[m] == "seed") seed_score[row[j]] = row[w];
  }
  EXPECT_FALSE(exec_score.empty());
  EXPECT_EQ(exec_score, seed_score);
  EXPECT_EQ(testing::run_command(shell_quote(ADVPLAN_BINARY) + " check " + shell_quote(out), dir).status, 0);
}

}  // namespace
}  // namespace advplan
