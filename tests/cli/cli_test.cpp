// End-to-end tests of the `advplan` executable (docs/ARCHITECTURE.md "Command line"): `scenarios` writes the corpus as JSON lines,
// deterministically; `validate` accepts a seed plan and prints its metrics, rejects a broken plan naming the
// field; a bad config path fails with the path in the message and leaves no output file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <sstream>

#include "advplan/core/plan_json.hpp"
#include "advplan/run/config.hpp"
#include "advplan/metrics/coherence.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/metrics/structure.hpp"
#include "advplan/run/scenario_lookup.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::Contains;
using ::testing::HasSubstr;

using RunResult = testing::CommandResult;
using testing::shell_quote;
using testing::quote;

/// Runs ADVPLAN_BINARY with `args` (already quoted), capturing stdout and stderr through files in `dir`.
RunResult run_cli(const std::string& args, const testing::TempDir& dir) {
  return testing::run_command(quote(ADVPLAN_BINARY) + " " + args, dir);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string paper_config() { return std::string(ADVPLAN_SOURCE_DIR) + "/configs/experiments/paper.yaml"; }

TEST(Cli, BinaryExists) { ASSERT_TRUE(fs::exists(ADVPLAN_BINARY)) << ADVPLAN_BINARY; }

TEST(Cli, RunWithoutOutWritesRunsSlashTheConfigName) {
  // `advplan run CONFIG` alone writes runs/<name> in the working directory, and says so.
  testing::TempDir dir("cli-run-default-out");
  testing::write_file(dir / "tiny.yaml",
                      "name: tiny\ncorpus: {templates: [urban], seeds: [100, 101], template_dir: " +
                          std::string(ADVPLAN_SOURCE_DIR) + "/configs/templates}\nconditions: [single]\n"
                      "budget_sweep: []\nsimulator: {replications: 10}\nbootstrap: {resamples: 20}\n"
                      "studies: {rubric: false, framing: false, components: false}\n");
  const auto r = testing::run_command("cd " + quote(dir.path().string()) + " && " + quote(ADVPLAN_BINARY) +
                                          " run tiny.yaml --threads 1",
                                      dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("writing the run to runs/tiny"));
  EXPECT_TRUE(fs::exists(dir / "runs/tiny/MANIFEST"));
  EXPECT_TRUE(fs::exists(dir / "runs/tiny/per_scenario.csv"));
}

TEST(Cli, MetagameReadsOnlyACompleteRunAsItsManifestListsIt) {
  testing::TempDir dir("cli-metagame-manifest");
  testing::write_file(dir / "mg.yaml",
                      "name: mg\ncorpus: {templates: [urban], seeds: [100, 102], template_dir: " +
                          std::string(ADVPLAN_SOURCE_DIR) + "/configs/templates}\n"
                          "matrix: {blue: [seed, random], red: [single, greedy@2]}\n"
                          "simulator: {replications: 10}\nbootstrap: {resamples: 20}\n"
                          "studies: {rubric: false, framing: false, components: false}\n");
  const std::string run = dir / "run";
  ASSERT_EQ(run_cli("run " + quote(dir / "mg.yaml") + " --out " + quote(run) + " --threads 1", dir).status, 0);
  const auto ok = run_cli("metagame " + quote(run), dir);
  ASSERT_EQ(ok.status, 0) << ok.err;
  // Its own output folder is derived, so a second analysis still reads the run.
  EXPECT_EQ(run_cli("metagame " + quote(run), dir).status, 0);
  // A changed trace is refused, naming the file.
  std::string text = testing::read_file(run + "/per_scenario.csv");
  const auto digit = text.find_last_of("0123456789", text.find('\n', text.find('\n') + 1));
  text[digit] = text[digit] == '1' ? '2' : '1';  // still a well-formed CSV: only the MANIFEST can tell
  testing::write_file(run + "/per_scenario.csv", text);
  const auto bad = run_cli("metagame " + quote(run), dir);
  EXPECT_NE(bad.status, 0);
  EXPECT_THAT(bad.err, HasSubstr("per_scenario.csv"));
}

TEST(Cli, AQuizQuestionFileIsBoundedPerLine) {
  testing::TempDir dir("cli-quiz-bound");
  testing::write_file(dir / "q.jsonl", std::string(2u << 20, 'x') + "\n");
  const auto r = run_cli("quiz --questions " + quote(dir / "q.jsonl") + " --agent exec:/bin/cat", dir);
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.err, HasSubstr("q.jsonl:1: the line is over 1024 KiB"));
  // A directory (or a FIFO) is not a question file.
  const auto d = run_cli("quiz --questions " + quote(dir.path().string()) + " --agent exec:/bin/cat", dir);
  EXPECT_NE(d.status, 0);
  EXPECT_THAT(d.err, HasSubstr("not a regular file"));
}

TEST(Cli, ScenariosWritesTheCorpusDeterministically) {
  testing::TempDir dir("cli");
  const std::string first = dir / "first.jsonl", second = dir / "second.jsonl";
  const auto r1 = run_cli("scenarios " + quote(paper_config()) + " --out " + quote(first), dir);
  ASSERT_EQ(r1.status, 0) << r1.err;
  const auto r2 = run_cli("scenarios " + quote(paper_config()) + " --out " + quote(second), dir);
  ASSERT_EQ(r2.status, 0) << r2.err;
  const std::string a = testing::read_file(first), b = testing::read_file(second);
  const auto lines = lines_of(a);
  ASSERT_EQ(lines.size(), 150u);
  EXPECT_EQ(a, b);
  EXPECT_TRUE(r1.out.empty());  // with --out nothing goes to stdout
  // Each line is one scenario, in corpus order, identical to the library's own JSON.
  const auto corpus = generate_corpus(default_experiment_config());
  ASSERT_EQ(corpus.size(), lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const json j = json::parse(lines[i]);
    EXPECT_EQ(j.at("id").get<std::string>(), corpus[i].id);
    EXPECT_EQ(lines[i], scenario_to_string(corpus[i])) << corpus[i].id;
  }
  // No temporary file is left beside the output.
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir.path())) files += e.path().extension() == ".jsonl" ? 1 : 0;
  EXPECT_EQ(files, 2u);
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_THAT(e.path().filename().string(), ::testing::Not(HasSubstr(".tmp-")));
}

TEST(Cli, ValidateAcceptsASeedPlanAndPrintsItsMetrics) {
  testing::TempDir dir("cli");
  const std::string corpus_file = dir / "corpus.jsonl";
  ASSERT_EQ(run_cli("scenarios " + quote(paper_config()) + " --out " + quote(corpus_file), dir).status, 0);
  const auto lines = lines_of(testing::read_file(corpus_file));
  ASSERT_FALSE(lines.empty());
  const json scenario = json::parse(lines.front());
  ASSERT_EQ(scenario.at("id"), "urban-100");
  const std::string plan_file = dir / "plan.json";
  testing::write_file(plan_file, scenario.at("blue_seed_plans").at(0).dump(2));

  const auto r = run_cli("validate " + quote(plan_file) + " --scenario urban-100 --config " + quote(paper_config()), dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto out = lines_of(r.out);
  auto has_prefix = [&](const std::string& prefix) {
    for (const auto& l : out)
      if (l.rfind(prefix, 0) == 0) return true;
    return false;
  };
  EXPECT_TRUE(has_prefix("q ")) << r.out;
  EXPECT_TRUE(has_prefix("D ")) << r.out;
  EXPECT_TRUE(has_prefix("P_V ")) << r.out;
  EXPECT_TRUE(has_prefix("W ")) << r.out;
  EXPECT_TRUE(has_prefix("D.tempo_sequencing ")) << r.out;
  // The printed numbers are the library's, to 4 decimals.
  const auto cfg = default_experiment_config();
  const Scenario sc = find_scenario(cfg, "urban-100");
  const Plan& p = sc.blue_seed_plans.front();
  EXPECT_THAT(out, Contains(fmt::format("q {:.4f}", quality(p, sc, cfg.quality).q)));
  EXPECT_THAT(out, Contains(fmt::format("D {:.4f}", coherence(p, sc).D)));
  EXPECT_THAT(out, Contains(fmt::format("P_V {:.4f}", vertex_parsimony(p))));
  EXPECT_THAT(out, Contains(fmt::format("O {:.4f}", path_optionality(p))));
}

TEST(Cli, ValidateJsonPrintsTheLibrarysMetricsOrTheViolations) {
  testing::TempDir dir("cli");
  const auto cfg = default_experiment_config();
  const Scenario sc = find_scenario(cfg, "urban-100");
  const Plan& p = sc.blue_seed_plans.front();
  const std::string plan_file = dir / "plan.json";
  testing::write_file(plan_file, to_json(p).dump());
  const auto r = run_cli("validate " + quote(plan_file) + " --scenario urban-100 --json", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("valid"), true);
  EXPECT_EQ(j.at("q").get<double>(), quality(p, sc, cfg.quality).q);
  EXPECT_EQ(j.at("D").get<double>(), coherence(p, sc).D);
  EXPECT_EQ(j.at("P_V").get<double>(), vertex_parsimony(p));
  EXPECT_TRUE(j.at("D_parts").contains("tempo_sequencing"));
  json broken = to_json(p);
  broken["actions"][0]["asset"] = "b-tank-9";
  testing::write_file(plan_file, broken.dump());
  const auto r2 = run_cli("validate " + quote(plan_file) + " --scenario urban-100 --json", dir);
  EXPECT_EQ(r2.status, 1);
  const json j2 = json::parse(r2.out);
  EXPECT_EQ(j2.at("valid"), false);
  EXPECT_THAT(j2.at("violations").at(0).get<std::string>(), HasSubstr("unknown asset"));
}

TEST(Cli, ValidateRejectsABrokenPlanNamingTheField) {
  testing::TempDir dir("cli");
  const auto cfg = default_experiment_config();
  const Scenario sc = find_scenario(cfg, "urban-100");
  json plan = to_json(sc.blue_seed_plans.front());
  plan["actions"][0]["asset"] = "b-tank-9";
  const std::string plan_file = dir / "broken.json";
  testing::write_file(plan_file, plan.dump());
  const auto r = run_cli("validate " + quote(plan_file) + " --scenario urban-100", dir);
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.err, HasSubstr("actions[0].asset: unknown asset \"b-tank-9\""));
  EXPECT_THAT(r.err, HasSubstr(plan_file));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("q ")));

  // Not JSON at all.
  testing::write_file(plan_file, "{\"plan_id\": ");
  const auto r2 = run_cli("validate " + quote(plan_file) + " --scenario urban-100", dir);
  EXPECT_NE(r2.status, 0);
  EXPECT_THAT(r2.err, HasSubstr("invalid JSON at byte"));

  // A scenario outside the corpus.
  testing::write_file(plan_file, to_json(sc.blue_seed_plans.front()).dump());
  const auto r3 = run_cli("validate " + quote(plan_file) + " --scenario urban-999", dir);
  EXPECT_NE(r3.status, 0);
  EXPECT_THAT(r3.err, HasSubstr("scenario 'urban-999' is not in the corpus"));
}

TEST(Cli, BadConfigPathFailsAndWritesNothing) {
  testing::TempDir dir("cli");
  const std::string missing = dir / "no-such-dir/paper.yaml";
  const std::string out_file = dir / "out.jsonl";
  const auto r = run_cli("scenarios " + quote(missing) + " --out " + quote(out_file), dir);
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.err, HasSubstr(missing));
  EXPECT_FALSE(fs::exists(out_file));
  EXPECT_TRUE(r.out.empty());

  // A config with an error: the message names the file and key, and again no output.
  const std::string bad = dir / "bad.yaml";
  testing::write_file(bad, "corpus:\n  templates: [urban]\n  seeds: [100, 101]\n  template_dir: " +
                               std::string(ADVPLAN_SOURCE_DIR) + "/configs/templates\nsimulator: {replications: 0}\n");
  const auto r2 = run_cli("scenarios " + quote(bad) + " --out " + quote(out_file), dir);
  EXPECT_NE(r2.status, 0);
  EXPECT_THAT(r2.err, HasSubstr(bad + ": key 'simulator.replications': R must be at least 1"));
  EXPECT_FALSE(fs::exists(out_file));
}

}  // namespace
}  // namespace advplan
