// `advplan tables` (the regenerate-from-CSVs issue): tables rebuilt byte for byte from the golden small run's
// CSVs alone, slicing, a run compared against itself, and malformed run directories that must fail with an
// error naming the file, with nothing written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "advplan/tables/tables.hpp"
#include "advplan/stats/cluster.hpp"
#include <cmath>
#include <map>
#include "advplan/io/csv.hpp"
#include "advplan/io/run_store.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::read_file;
using testing::TempDir;
using testing::write_file;

using testing::kBinary;
const std::string kGolden = std::string(ADVPLAN_SOURCE_DIR) + "/tests/golden/small";

/// Runs `advplan tables ARGS`, capturing stdout and stderr.
testing::CommandResult tables(const std::string& args, const TempDir& scratch) {
  return testing::run_command(kBinary + " tables " + args, scratch);
}

/// A copy of the golden run without its tables/.
std::string copy_golden(const TempDir& dir) {
  const std::string run = dir / "run";
  fs::copy(kGolden, run, fs::copy_options::recursive);
  fs::remove_all(fs::path(run) / "tables");
  return run;
}

TEST(Tables, RebuiltFromTheCsvsAloneAreByteIdenticalToTheGoldenRun) {
  TempDir dir("tables-rebuild");
  const std::string run = copy_golden(dir);
  const auto x = tables(run, dir);
  ASSERT_EQ(x.status, 0) << x.err;
  std::size_t compared = 0;
  for (const auto& e : fs::directory_iterator(fs::path(kGolden) / "tables")) {
    const fs::path rebuilt = fs::path(run) / "tables" / e.path().filename();
    ASSERT_TRUE(fs::exists(rebuilt)) << rebuilt;
    EXPECT_EQ(read_file(rebuilt.string()), read_file(e.path().string())) << e.path().filename();
    ++compared;
  }
  EXPECT_GE(compared, 18u);  // Tables 3-6, the candidate diagnostics, terrain and three studies, .md and .tex
}

TEST(Tables, AgainstItselfGivesZeroDifferences) {
  TempDir dir("tables-against");
  const std::string run = copy_golden(dir);
  const auto x = tables(run + " --against " + run + " --out " + (dir / "cmp"), dir);
  ASSERT_EQ(x.status, 0) << x.err;
  const auto cmp = io::CsvTable::read(dir / "cmp/comparison.csv");
  ASSERT_GT(cmp.size(), 0u);
  for (std::size_t i = 0; i < cmp.size(); ++i) {
    EXPECT_EQ(cmp.at(i, "blue_a"), cmp.at(i, "blue_b"));
    EXPECT_EQ(cmp.at(i, "difference"), "0.000000") << cmp.at(i, "blue_a") << " " << cmp.at(i, "red_policy") << " "
                                                   << cmp.at(i, "metric");
    EXPECT_EQ(cmp.at(i, "ci_lo"), "0.000000");
    EXPECT_EQ(cmp.at(i, "ci_hi"), "0.000000");
  }
}

// --cluster template: each condition's mean with its template-clustered inference, recomputed here from the run's
// rows with stats/cluster (whose own oracle is clubSandwich).
TEST(Tables, ClusteredByTemplateRecomputesFromTheRowsAndSaysHowFewTemplates) {
  TempDir dir("tables-cluster");
  const std::string run = copy_golden(dir);
  const auto x = tables(run + " --cluster template --out " + (dir / "cl"), dir);
  ASSERT_EQ(x.status, 0) << x.err;
  const auto cl = io::CsvTable::read(dir / "cl/table3_clustered.csv");
  const auto per = io::CsvTable::read(run + "/per_scenario.csv");
  ASSERT_GT(cl.size(), 0u);
  for (std::size_t r = 0; r < cl.size(); ++r) {
    std::vector<double> y;
    std::vector<std::size_t> g;
    std::map<std::string, std::size_t> ids;
    for (std::size_t i = 0; i < per.size(); ++i)
      if (per.at(i, "condition") == cl.at(r, "condition") && per.at(i, "status") == "ok" &&
          !std::isnan(per.real(i, cl.at(r, "metric")))) {
        y.push_back(per.real(i, cl.at(r, "metric")));
        g.push_back(ids.try_emplace(per.at(i, "template"), ids.size()).first->second);
      }
    const ClusteredMean c = clustered_mean(y, g, 1, 0, "unused");
    EXPECT_EQ(cl.at(r, "clusters"), std::to_string(ids.size()));
    EXPECT_EQ(cl.at(r, "cr2_se"), io::fmt_real(c.se)) << cl.at(r, "condition") << " " << cl.at(r, "metric");
    EXPECT_EQ(cl.at(r, "satterthwaite_df"), io::fmt_real(c.df));
  }
  EXPECT_THAT(testing::read_file(dir / "cl/table3_clustered.md"), ::testing::HasSubstr("the intervals are wide"));
}

TEST(Tables, PowerWithoutAgainstIsRefusedNotIgnored) {
  TempDir dir("tables-power");
  const auto x = tables(copy_golden(dir) + " --power 0.9", dir);
  EXPECT_NE(x.status, 0);
  EXPECT_THAT(x.err, ::testing::HasSubstr("--power needs --against"));
}

TEST(Tables, AgainstPairsRowsByBluePolicyThroughTheBlueMap) {
  TempDir dir("tables-against-map");
  const std::string run = copy_golden(dir);
  const auto x = tables(run + " --against " + run + " --blue-map council=seed --out " + (dir / "cmp"), dir);
  ASSERT_EQ(x.status, 0) << x.err;
  const auto cmp = io::CsvTable::read(dir / "cmp/comparison.csv");
  // The council's rows in run A meet the seed plan's rows in run B, scenario by scenario, against the same RED.
  const auto per = io::CsvTable::read(run + "/per_scenario.csv");
  auto mean_of = [&](const std::string& blue) {
    double s = 0;
    int n = 0;
    for (std::size_t i = 0; i < per.size(); ++i)
      if (per.at(i, "blue_policy") == blue && per.at(i, "red_policy") == "greedy@8" && per.at(i, "status") == "ok") {
        s += per.real(i, "advantage");
        ++n;
      }
    return s / n;
  };
  bool found = false;
  for (std::size_t i = 0; i < cmp.size(); ++i) {
    if (cmp.at(i, "blue_a") != "council") continue;
    EXPECT_EQ(cmp.at(i, "blue_b"), "seed");
    if (cmp.at(i, "red_policy") != "greedy@8" || cmp.at(i, "metric") != "advantage") continue;
    found = true;
    EXPECT_NEAR(cmp.real(i, "difference"), mean_of("council") - mean_of("seed"), 2e-6);
    EXPECT_GT(cmp.real(i, "difference"), 0.0);
  }
  EXPECT_TRUE(found);
}

TEST(Tables, AgainstWithNothingToPairFailsWithASentence) {
  TempDir dir("tables-against-none");
  const std::string run = copy_golden(dir);
  const auto x = tables(run + " --against " + run + " --blue-map seed=nobody --blue-map council=nobody --out " +
                            (dir / "cmp"),
                        dir);
  EXPECT_NE(x.status, 0);
  EXPECT_THAT(x.err, HasSubstr("no row pairs"));
  EXPECT_EQ(std::count(x.err.begin(), x.err.end(), '\n'), 1) << x.err;
  EXPECT_FALSE(fs::exists(dir / "cmp"));
}

TEST(Tables, SlicesByTemplateAndOnlyOneTemplate) {
  TempDir dir("tables-slice");
  const std::string run = copy_golden(dir);
  ASSERT_EQ(tables(run + " --by template --out " + (dir / "by"), dir).status, 0);
  EXPECT_TRUE(fs::exists(dir / "by/urban/table3_policy_comparison.md"));
  EXPECT_TRUE(fs::exists(dir / "by/air-defense/table3_policy_comparison.md"));
  ASSERT_EQ(tables(run + " --only template=urban --out " + (dir / "only"), dir).status, 0);
  // A sliced table is the same table over the subset: the --by and --only urban tables agree.
  EXPECT_EQ(read_file(dir / "only/table3_policy_comparison.md"), read_file(dir / "by/urban/table3_policy_comparison.md"));
  EXPECT_THAT(read_file(dir / "only/table3_policy_comparison.md"), HasSubstr("| single | 3 |"));
  const auto bad = tables(run + " --only template=nowhere --out " + (dir / "none"), dir);
  EXPECT_NE(bad.status, 0);
  EXPECT_THAT(bad.err, HasSubstr("no scenario has template 'nowhere'"));
  EXPECT_FALSE(fs::exists(dir / "none"));
}

/// Each malformed run directory: the error names the file and what is wrong, and nothing is written.
struct Malformed {
  std::string name;
  std::string file;                                        // relative to the run directory
  std::function<std::string(const std::string&)> mutate;  // original text -> damaged text ("" deletes the file)
  std::string expected;                                    // substring of the error
};
/// Test listings show the case's name, not the struct's bytes.
void PrintTo(const Malformed& m, std::ostream* os) { *os << m.name << " (" << m.file << ")"; }

class MalformedRun : public ::testing::TestWithParam<Malformed> {};

TEST_P(MalformedRun, FailsNamingTheFileAndWritesNothing) {
  const Malformed& m = GetParam();
  TempDir dir("tables-bad");
  const std::string run = copy_golden(dir);
  const std::string path = (fs::path(run) / m.file).string();
  const std::string damaged = m.mutate(read_file(path));
  if (damaged.empty())
    fs::remove(path);
  else
    write_file(path, damaged);
  // Re-sealed, as if the run itself had written the damaged file: the readers' own checks are under test here
  // (a file that does not match its MANIFEST is refused first: run/run_store_test.cpp).
  io::write_manifest(run);
  const std::string out = dir / "out";
  const auto x = tables(run + " --out " + out, dir);
  EXPECT_NE(x.status, 0);
  EXPECT_THAT(x.err, HasSubstr(m.file));
  EXPECT_THAT(x.err, HasSubstr(m.expected));
  EXPECT_EQ(std::count(x.err.begin(), x.err.end(), '\n'), 1) << x.err;
  EXPECT_FALSE(fs::exists(out));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, MalformedRun,
    ::testing::Values(
        Malformed{"missing_per_scenario", "per_scenario.csv", [](const std::string&) { return std::string(); }, "missing"},
        Malformed{"truncated_per_scenario", "per_scenario.csv",
                  [](const std::string& t) { return t.substr(0, t.size() / 2); }, "truncated"},
        Malformed{"wrong_columns", "bootstrap_summary.csv",
                  [](const std::string& t) { return "scope,cond" + t.substr(t.find(",condition") + 10); },
                  "unexpected columns"},
        Malformed{"wrong_field_count", "scenarios.csv",
                  [](const std::string& t) {
                    const auto second_line = t.find('\n') + 1;
                    return t.substr(0, second_line) + "extra," + t.substr(second_line);
                  },
                  "line 2: 13 fields where the header has 12"},
        Malformed{"council_trace_missing", "council_trace.csv", [](const std::string&) { return std::string(); },
                  "missing"}),
    [](const ::testing::TestParamInfo<Malformed>& i) { return i.param.name; });

}  // namespace
}  // namespace advplan
