// Run-time policy plug-ins and the version (cmake/AdvplanAddPolicy.cmake, src/io/plugins.cpp, src/cli/main.cpp):
// `advplan --plugin FILE` and ADVPLAN_PLUGINS load a module built with advplan_add_policy, after which its policy
// is selectable by name; a module that cannot be loaded is a one-sentence error naming the file; `--version`
// prints the version and commit from the generated version.cpp. The install + out-of-tree build is the ctest
// InstallAndOutOfTreePlugin (tests/out_of_tree/run_test.cmake).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "advplan/core/error.hpp"
#include "advplan/io/plugins.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/policy/registry.hpp"
#include "advplan/policy/blue_policy.hpp"
#include "advplan/policy/replan.hpp"
#include "advplan/run/config.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/version.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using ::testing::HasSubstr;
using testing::shell_quote;

const std::string kPlugin = ADVPLAN_EXAMPLE_PLUGIN;
const std::string kSmall = std::string(ADVPLAN_SOURCE_DIR) + "/tests/data/small.yaml";

testing::CommandResult run_cli(const std::string& args, const testing::TempDir& dir, const std::string& env = "") {
  return testing::run_command(env + shell_quote(ADVPLAN_BINARY) + " " + args, dir);
}

/// `evaluate` of example_cpp on the small config, against one RED baseline and no reference rows.
std::string evaluate_args(const testing::TempDir& dir) {
  return "evaluate --blue example_cpp --red single --no-reference --threads 2 --config " + shell_quote(kSmall) +
         " --out " + shell_quote(dir / "run");
}

TEST(Plugin, TheTestBinaryLoadedTheExamplePlugin) {
  // tests/test_main.cpp loads it before the suites are listed.
  EXPECT_TRUE(BlueRegistry::instance().contains("example_cpp"));
}

TEST(Plugin, TheExamplePluginReplansAtADecisionPoint) {
  // docs/POLICIES.md "6. Replanning", the C++ side: with replans: true it answers a decision point with the branch's
  // first option, then the remaining steps, protection first when it is weaker.
  ExperimentConfig cfg = default_experiment_config();
  Scenario sc;
  for (std::size_t i = 0; i < 20 && (sc.blue_seed_plans.empty() || sc.blue_seed_plans.front().branches.empty()); ++i)
    sc = corpus_scenario(cfg, i);
  const Plan& seed = sc.blue_seed_plans.front();
  ASSERT_FALSE(seed.branches.empty());
  DecisionPoint d;
  d.plan = &seed;
  d.own = 0.4;
  d.other = 0.9;
  for (const auto& id : seed.chain) (d.done.empty() || d.done.back() != seed.branches[0].at ? d.done : d.remaining).push_back(id);
  EXPECT_FALSE(make_blue_policy("example_cpp", policy_context(cfg))->replans());
  cfg.policy_params["example_cpp"]["replans"] = 1;
  const auto p = make_blue_policy("example_cpp", policy_context(cfg));
  ASSERT_TRUE(p->replans());
  const ReplanResult r = p->replan(sc, replan_request(sc, d));
  ASSERT_TRUE(r.plan) << r.failure;
  EXPECT_TRUE(validate_plan(*r.plan, sc, Side::Blue).empty());
  std::vector<std::string> want = seed.branches[0].options[0];
  for (const auto& id : d.remaining) want.push_back(id);
  std::stable_partition(want.begin(), want.end(), [&](const std::string& id) {
    return seed.actions[static_cast<std::size_t>(seed.find_action(id))].category == Category::protection;
  });
  EXPECT_EQ(r.plan->chain, want);
}

TEST(Plugin, LoadingAMissingFileNamesTheFileAndTheReason) {
  try {
    io::load_plugin("no-such-plugin.so");
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot load plug-in no-such-plugin.so ("));
    EXPECT_THAT(e.what(), HasSubstr("No such file"));
  }
}

TEST(Plugin, LoadingAFileThatIsNoSharedObjectFails) {
  testing::TempDir dir("plugin");
  testing::write_file(dir / "fake.so", "not an ELF file\n");
  EXPECT_THROW(io::load_plugin(dir / "fake.so"), IoError);
}

TEST(PluginCli, WithoutThePluginTheExamplePolicyIsUnknown) {
  testing::TempDir dir("plugin-cli");
  const auto r = run_cli(evaluate_args(dir), dir, "env -u ADVPLAN_PLUGINS ");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("unknown BLUE policy 'example_cpp'"));
}

TEST(PluginCli, PluginOptionMakesThePolicySelectableByName) {
  for (const std::string where : {"before", "after"}) {
    testing::TempDir dir("plugin-cli");
    const std::string plugin = "--plugin " + shell_quote(kPlugin);
    const std::string args = where == "before" ? plugin + " " + evaluate_args(dir) : evaluate_args(dir) + " " + plugin;
    const auto r = run_cli(args, dir);
    ASSERT_EQ(r.status, 0) << where << ": " << r.err;
    EXPECT_THAT(testing::read_file(dir / "run/per_scenario.csv"), HasSubstr("example_cpp"));
    EXPECT_THAT(r.err, HasSubstr("evaluated example_cpp on 6 scenarios"));
  }
}

TEST(PluginCli, EnvironmentVariableLoadsColonSeparatedPlugins) {
  testing::TempDir dir("plugin-cli");
  const auto r = run_cli(evaluate_args(dir), dir, "ADVPLAN_PLUGINS=" + shell_quote(":" + kPlugin + "::") + " ");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("evaluated example_cpp"));
}

TEST(PluginCli, AFileThatFailsToLoadIsOneSentenceNamingIt) {
  testing::TempDir dir("plugin-cli");
  const std::string missing = dir / "missing.so";
  const auto r = run_cli("--plugin " + shell_quote(kPlugin) + " --plugin " + shell_quote(missing) + " " +
                             evaluate_args(dir),
                         dir);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err, "advplan: cannot load plug-in " + missing + " (" + missing +
                       ": cannot open shared object file: No such file or directory)\n");
  EXPECT_FALSE(std::filesystem::exists(dir / "run"));  // nothing ran
}

TEST(Version, PrintsVersionAndCommit) {
  testing::TempDir dir("version");
  const auto r = run_cli("--version", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "advplan " + std::string(version_string()) + " (commit " + std::string(git_commit()) + ")\n");
  EXPECT_THAT(std::string(version_string()), ::testing::MatchesRegex("[0-9]+\\.[0-9]+\\.[0-9]+"));
  EXPECT_FALSE(git_commit().empty());
}

// A plug-in that registers the built-in's name is refused (the rows would still say blue_policy=seed); one that
// asks to override it is loaded, and the run records it by sha256 in run_metadata.json and in its run key, so its
// shard does not merge with a genuine one.
TEST(PluginCli, ADuplicateNameIsRefusedUnlessThePluginOverridesItAndTheRunRecordsIt) {
  testing::TempDir dir("plugin-dup");
  const std::string dup = ADVPLAN_TEST_DUPLICATE_PLUGIN, over = ADVPLAN_TEST_OVERRIDE_PLUGIN;
  const auto r = run_cli("--plugin " + shell_quote(dup) + " list", dir, "env -u ADVPLAN_PLUGINS ");
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("registers BLUE policy 'seed', a name already registered"));
  EXPECT_THAT(r.err, HasSubstr("ADVPLAN_OVERRIDE_BLUE_POLICY"));

  const std::string cfg = shell_quote(kSmall);
  const auto a = run_cli("--plugin " + shell_quote(over) + " run " + cfg + " --shard 0/2 --progress none --out " +
                             shell_quote(dir / "s0"),
                         dir, "env -u ADVPLAN_PLUGINS ");
  ASSERT_EQ(a.status, 0) << a.err;
  const auto b = run_cli("run " + cfg + " --shard 1/2 --progress none --out " + shell_quote(dir / "s1"), dir,
                         "env -u ADVPLAN_PLUGINS ");
  ASSERT_EQ(b.status, 0) << b.err;
  const auto meta = nlohmann::json::parse(testing::read_file(dir / "s0/run_metadata.json"));
  ASSERT_EQ(meta["plugins"].size(), 1u) << meta.dump();
  EXPECT_EQ(meta["plugins"][0]["path"], over);
  EXPECT_EQ(meta["plugins"][0]["sha256"], io::sha256_file(over));
  EXPECT_TRUE(nlohmann::json::parse(testing::read_file(dir / "s1/run_metadata.json"))["plugins"].empty());
  const auto m = run_cli("merge " + shell_quote(dir / "s0") + " " + shell_quote(dir / "s1") + " --out " +
                             shell_quote(dir / "merged"),
                         dir, "env -u ADVPLAN_PLUGINS ");
  EXPECT_EQ(m.status, 1) << m.err;
  EXPECT_THAT(m.err, HasSubstr("plugins_sha256"));
}

}  // namespace
}  // namespace advplan
