// End-to-end tests of `advplan run` (docs/TRACES.md, docs/ARCHITECTURE.md "Determinism"): the golden run of tests/data/small.yaml reproduced byte
// for byte at one and two threads, and bad inputs that must fail with one line on stderr and no complete-looking
// run directory. Regenerate the golden files with scripts/update_golden.sh (tests/golden/README.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "support/cli.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

using testing::kSource;
using testing::kBinary;
const std::string kConfig = kSource + "/tests/data/small.yaml";
const std::string kGolden = kSource + "/tests/golden/small";

using Exit = testing::CommandResult;
using testing::quote;

/// Runs `advplan run CONFIG --out OUT --threads N`, capturing stdout and stderr in `scratch`.
Exit advplan_run(const std::string& config, const std::string& out, int threads, const TempDir& scratch) {
  return testing::run_command(quote(kBinary) + " run " + quote(config) + " --out " + quote(out) + " --threads " +
                                  std::to_string(threads),
                              scratch);
}

/// Every regular file under `dir`, as paths relative to it, sorted.
std::vector<std::string> files_under(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) out.push_back(fs::relative(e.path(), dir).generic_string());
  std::sort(out.begin(), out.end());
  return out;
}

/// "" when equal; otherwise the first differing line, named.
std::string first_difference(const std::string& name, const std::string& expected, const std::string& actual) {
  if (expected == actual) return "";
  std::istringstream a(expected), b(actual);
  std::string la, lb;
  for (int line = 1;; ++line) {
    const bool ga = static_cast<bool>(std::getline(a, la)), gb = static_cast<bool>(std::getline(b, lb));
    if (!ga && !gb) return name + ": files differ only in their final newline";
    if (!ga || !gb || la != lb)
      return name + ":" + std::to_string(line) + ": golden has\n  " + (ga ? la : std::string("<end of file>")) +
             "\nbut the run wrote\n  " + (gb ? lb : std::string("<end of file>"));
  }
}

// ---- the golden run ---------------------------------------------------------------------------------------------

class GoldenRun : public ::testing::Test {
 protected:
  struct Run {
    std::unique_ptr<TempDir> dir;
    Exit exit;
    std::string out() const { return *dir / "run"; }
  };
  static void SetUpTestSuite() {
    for (int threads : {1, 2}) {
      Run r;
      r.dir = std::make_unique<TempDir>("golden-t" + std::to_string(threads));
      r.exit = advplan_run(kConfig, r.out(), threads, *r.dir);
      runs_->push_back(std::move(r));
    }
  }
  static void TearDownTestSuite() { runs_->clear(); }
  static std::vector<Run>* runs_;
};
std::vector<GoldenRun::Run>* GoldenRun::runs_ = new std::vector<GoldenRun::Run>;

TEST_F(GoldenRun, RunsSucceed) {
  for (const Run& r : *runs_) {
    EXPECT_EQ(r.exit.status, 0) << r.exit.err;
    EXPECT_TRUE(fs::exists(fs::path(r.out()) / "run_metadata.json"));
  }
}

TEST_F(GoldenRun, EveryGoldenFileIsReproducedByteForByteAtOneAndTwoThreads) {
  ASSERT_TRUE(fs::is_directory(kGolden)) << kGolden << " is missing: run scripts/update_golden.sh";
  const auto golden = files_under(kGolden);
  ASSERT_GT(golden.size(), 5u);
  EXPECT_NE(std::find(golden.begin(), golden.end(), "per_scenario.csv"), golden.end());
  EXPECT_TRUE(std::any_of(golden.begin(), golden.end(), [](const std::string& f) { return f.rfind("tables/", 0) == 0; }))
      << "the golden run must include the tables";
  for (std::size_t i = 0; i < runs_->size(); ++i) {
    const Run& r = (*runs_)[i];
    ASSERT_EQ(r.exit.status, 0) << r.exit.err;
    SCOPED_TRACE("--threads " + std::to_string(i + 1));
    for (const auto& f : golden) {
      const fs::path p = fs::path(r.out()) / f;
      ASSERT_TRUE(fs::exists(p)) << f << " is in the golden run but the run did not write it";
      const std::string diff = first_difference(f, read_file(kGolden + "/" + f), read_file(p.string()));
      ASSERT_TRUE(diff.empty()) << diff << "\n(regenerate with scripts/update_golden.sh only if the change is intended)";
    }
    // And nothing new: a new output file is a change of behaviour too.
    for (const auto& f : files_under(r.out())) {
      if (f == "run_metadata.json") continue;
      EXPECT_NE(std::find(golden.begin(), golden.end(), f), golden.end()) << f << " is written but not in the golden run";
    }
  }
}

TEST_F(GoldenRun, MetadataRecordsTheConfigHashAndNoKey) {
  for (const Run& r : *runs_) {
    const std::string text = read_file(r.out() + "/run_metadata.json");
    const auto j = nlohmann::json::parse(text, nullptr, false);
    ASSERT_TRUE(j.is_object()) << "run_metadata.json is not a JSON object";
    ASSERT_TRUE(j.contains("config_sha256"));
    EXPECT_TRUE(std::regex_match(j["config_sha256"].get<std::string>(), std::regex("[0-9a-f]{64}")));
    EXPECT_EQ(j["config_text"].get<std::string>(), read_file(kConfig));
    // Only the NAME of the environment variable holding the key may appear, never a key value.
    EXPECT_FALSE(std::regex_search(text, std::regex("\"api_key\"\\s*:"))) << "run_metadata.json holds an api_key value";
  }
  const auto t1 = nlohmann::json::parse(read_file((*runs_)[0].out() + "/run_metadata.json"));
  const auto t2 = nlohmann::json::parse(read_file((*runs_)[1].out() + "/run_metadata.json"));
  EXPECT_EQ(t1["config_sha256"], t2["config_sha256"]);
  EXPECT_EQ(t1["threads"], 1);
  EXPECT_EQ(t2["threads"], 2);
}

// ---- bad inputs -------------------------------------------------------------------------------------------------

/// small.yaml with its template_dir made absolute, so the copy works from a temp dir, and `edit` applied.
std::string small_config_with(const std::string& from, const std::string& to) {
  return from.empty() ? testing::small_config_text() : testing::small_config_text({{from, to}});
}

void expect_clean_failure(const Exit& x, const std::string& out_dir, const std::vector<std::string>& names) {
  EXPECT_NE(x.status, 0);
  EXPECT_GT(x.status, -1) << "the process must exit, not crash";
  ASSERT_FALSE(x.err.empty());
  EXPECT_EQ(std::count(x.err.begin(), x.err.end(), '\n'), 1) << "stderr must be one line:\n" << x.err;
  EXPECT_EQ(x.err.back(), '\n');
  for (const auto& n : names) EXPECT_THAT(x.err, HasSubstr(n));
  EXPECT_FALSE(fs::exists(fs::path(out_dir) / "run_metadata.json")) << "a failed run must not look complete";
}

struct BadConfig {
  std::string name, from, to;
  std::vector<std::string> must_name;
};
/// Test listings show the case's name, not the struct's bytes.
void PrintTo(const BadConfig& c, std::ostream* os) { *os << c.name << ": '" << c.from << "' -> '" << c.to << "'"; }

class BadRunInput : public ::testing::TestWithParam<BadConfig> {};

TEST_P(BadRunInput, FailsWithOneLineAndNoRunMetadata) {
  const BadConfig& bc = GetParam();
  TempDir dir("bad-" + bc.name);
  const std::string config = dir / "bad.yaml";
  write_file(config, small_config_with(bc.from, bc.to));
  const std::string out = dir / "out";
  const Exit x = advplan_run(config, out, 1, dir);
  std::vector<std::string> names = bc.must_name;
  names.push_back(config);  // every config error names the file
  expect_clean_failure(x, out, names);
}

INSTANTIATE_TEST_SUITE_P(
    Configs, BadRunInput,
    ::testing::Values(
        BadConfig{"unknown_policy", "conditions: [single,", "conditions: [nope, single,", {"conditions", "'nope'"}},
        BadConfig{"budget_k0", "budget_sweep: [1,", "budget_sweep: [0,", {"budget_sweep", "k must be at least 1"}},
        BadConfig{"lambda", "constraint: {lambda: 0.7}", "constraint: {lambda: 1.5}", {"lambda", "[0, 1]"}},
        BadConfig{"replications0", "replications: 50", "replications: 0", {"replications"}},
        BadConfig{"missing_template", "templates: [urban, air-defense]", "templates: [urban, nosuch]",
                  {"nosuch", "nosuch.yaml"}}),
    [](const ::testing::TestParamInfo<BadConfig>& p) { return p.param.name; });

TEST(BadRunOutput, UnwritableOutDirUnderProc) {
  TempDir dir("bad-out-proc");
  const std::string config = dir / "small.yaml";
  write_file(config, small_config_with("", ""));
  const std::string out = "/proc/advplan-x";
  expect_clean_failure(advplan_run(config, out, 1, dir), out, {out});
}

TEST(BadRunOutput, OutDirUnderARegularFile) {
  TempDir dir("bad-out-file");
  const std::string config = dir / "small.yaml";
  write_file(config, small_config_with("", ""));
  write_file(dir / "plain", "not a directory\n");
  const std::string out = (dir.path() / "plain" / "run").string();
  expect_clean_failure(advplan_run(config, out, 1, dir), out, {out});
  EXPECT_EQ(read_file(dir / "plain"), "not a directory\n") << "the file in the way must be left alone";
}

TEST(BadRunOutput, MissingConfigFile) {
  TempDir dir("bad-missing-config");
  const std::string config = dir / "absent.yaml";
  const std::string out = dir / "out";
  expect_clean_failure(advplan_run(config, out, 1, dir), out, {config});
}

}  // namespace
}  // namespace advplan
