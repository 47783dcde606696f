// What a resume reads back is what the run recorded (issue 47 item 11): a plan set a run replays ("plans:FILE") is
// part of its run key by sha256, so an interrupted or a complete run whose plan set was edited is refused naming the
// file; and a complete run is "already complete" only while its files match its MANIFEST and its MANIFEST the one
// its metadata recorded.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "advplan/core/error.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/interrupt.hpp"
#include "advplan/run/runner.hpp"
#include "support/cli.hpp"
#include "support/plan_sets.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::TempDir;

/// The small config with one condition: BLUE replays `spec`, RED is `single`.
ExperimentConfig replay_config(const TempDir& dir, const std::string& spec) {
  ExperimentConfig cfg = load_experiment_config(testing::small_config(dir));
  cfg.conditions = {{"replay", spec, "single", "main", {}}};
  cfg.budget_ks.clear();
  cfg.sweep = {};
  return cfg;
}

RunSummary run(const ExperimentConfig& cfg, const std::string& out, bool resume) {
  RunOptions ro;
  ro.out_dir = out;
  ro.threads = 1;
  ro.progress = false;
  ro.progress_mode = "none";
  ro.studies = false;
  ro.resume = resume;
  ro.checkpoint_every = 1;
  return run_experiment(prepare_run(cfg, cfg.conditions), ro);
}

/// Runs `f`, which must throw an advplan Error; its message.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(ResumeInputs, AnEditedPlanSetIsRefusedNamingItWhetherTheRunWasInterruptedOrComplete) {
  TempDir dir("resume-plan-set");
  const ExperimentConfig base = load_experiment_config(testing::small_config(dir));
  std::vector<Scenario> scenarios;
  for (std::size_t i = 0; i < corpus_size(base); ++i) scenarios.push_back(corpus_scenario(base, i));
  const std::string spec = testing::plan_set_spec(scenarios, policy_context(base));
  const std::string file = spec.substr(6);
  const ExperimentConfig cfg = replay_config(dir, spec);
  const std::string out = dir / "run";
  const std::string original = testing::read_file(file);
  // Any change of its bytes (here its last plan dropped).
  const std::string edited = original.substr(0, original.rfind('\n', original.size() - 2) + 1);
  ASSERT_NE(edited, original);

  // Interrupted before its first scenario: the work directory and its key are kept.
  request_run_interrupt();
  EXPECT_THROW(run(cfg, out, false), RunInterrupted);
  clear_run_interrupt();
  testing::write_file(file, edited);
  std::string why = error_of([&] { run(cfg, out, true); });
  EXPECT_THAT(why, HasSubstr(file + ": --resume: this plan set is not the one the interrupted run"));
  EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  testing::write_file(file, original);
  EXPECT_FALSE(run(cfg, out, true).already_complete);

  // Complete: the same, through its run_metadata.json.
  testing::write_file(file, edited);
  why = error_of([&] { run(cfg, out, true); });
  EXPECT_THAT(why, HasSubstr(file + ": --resume: this plan set is not the one the complete run"));
  testing::write_file(file, original);
  EXPECT_TRUE(run(cfg, out, true).already_complete);

  // A complete run whose traces changed is not "already complete".
  const std::string per = out + "/per_scenario.csv";
  testing::write_file(per, testing::read_file(per) + "\n");
  why = error_of([&] { run(cfg, out, true); });
  EXPECT_THAT(why, HasSubstr("per_scenario.csv: does not match its sha256 in MANIFEST"));
}

}  // namespace
}  // namespace advplan
