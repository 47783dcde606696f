// End-to-end test of experiments/plot.py (the figures of a run, built from its CSVs alone): on the golden run
// directory it writes every figure as PNG and SVG, and a missing run directory fails with a non-zero exit status
// and one line on stderr. Skipped when /usr/bin/python3 cannot import matplotlib and numpy (Debian's
// python3-matplotlib and python3-numpy are optional for building and testing advplan).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "support/cli.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::read_file;
using testing::TempDir;

using testing::kSource;
const std::string kPython = "/usr/bin/python3";
const std::string kScript = kSource + "/experiments/plot.py";
const std::string kGolden = kSource + "/tests/golden/small";

using Exit = testing::CommandResult;
using testing::quote;

/// Runs `/usr/bin/python3 ARGS` (ARGS already quoted), capturing stdout and stderr in `scratch`.
Exit python(const std::string& args, const TempDir& scratch) { return testing::run_command(quote(kPython) + " " + args, scratch); }

/// True when /usr/bin/python3 can import matplotlib and numpy (probed once).
bool plotting_available() {
  static const bool available = [] {
    TempDir scratch("plot-probe");
    return python("-c " + quote("import matplotlib, numpy"), scratch).status == 0;
  }();
  return available;
}

constexpr const char* kSkipReason = "matplotlib/numpy not installed for /usr/bin/python3";

// ctest: slow
TEST(Plot, WritesEveryFigureOfTheGoldenRun) {
  if (!plotting_available()) GTEST_SKIP() << kSkipReason;
  ASSERT_TRUE(fs::is_directory(kGolden)) << kGolden;
  TempDir out("plot");
  TempDir scratch("plot-io");
  const auto x = python(quote(kScript) + " " + quote(kGolden) + " --out " + quote(out.path().string()) +
                            " --scenario urban-100",
                        scratch);
  ASSERT_EQ(x.status, 0) << x.err;
  for (const char* stem : {"budget_curve", "extrapolation", "frontier_urban-100", "template_slice", "council",
                           "robustness"}) {
    for (const char* ext : {".png", ".svg"}) {
      const std::string f = out / (std::string(stem) + ext);
      ASSERT_TRUE(fs::is_regular_file(f)) << f << " was not written; stderr: " << x.err;
      EXPECT_GT(fs::file_size(f), 0u) << f;
      EXPECT_THAT(x.out, HasSubstr(f)) << "plot.py prints every path it writes";
    }
  }
  // Nothing lands in the golden directory itself.
  EXPECT_FALSE(fs::exists(kGolden + "/figures"));
}

// ctest: slow
TEST(Plot, WritesEveryFigureOfAnEvaluateRun) {
  if (!plotting_available()) GTEST_SKIP() << kSkipReason;
  TempDir dir("plot-evaluate");
  TempDir scratch("plot-evaluate-io");
  const std::string run = dir / "run";
  const auto e = testing::run_command(quote(ADVPLAN_BINARY) + " evaluate --blue council --reference seed --red greedy@8,single " +
                                          "--budget 1,4 --config " + quote(kSource + "/tests/data/small.yaml") +
                                          " --out " + quote(run),
                                      scratch);
  ASSERT_EQ(e.status, 0) << e.err;
  const auto x = python(quote(kScript) + " " + quote(run) + " --out " + quote(dir / "figures"), scratch);
  ASSERT_EQ(x.status, 0) << x.err;
  for (const char* stem : {"budget_curve", "frontier_urban-100", "template_slice", "council", "robustness", "forest",
                           "scorecard"})
    for (const char* ext : {".png", ".svg"}) {
      const std::string f = dir / ("figures/" + std::string(stem) + ext);
      ASSERT_TRUE(fs::is_regular_file(f)) << f << " was not written; stderr: " << x.err;
      EXPECT_GT(fs::file_size(f), 0u) << f;
    }
}

// ctest: slow
TEST(Plot, SvgOutputIsDeterministic) {
  if (!plotting_available()) GTEST_SKIP() << kSkipReason;
  ASSERT_TRUE(fs::is_directory(kGolden)) << kGolden;
  TempDir a("plot-a"), b("plot-b"), scratch("plot-io");
  for (const TempDir* d : {&a, &b}) {
    const auto x = python(quote(kScript) + " " + quote(kGolden) + " --out " + quote(d->path().string()), scratch);
    ASSERT_EQ(x.status, 0) << x.err;
  }
  for (const char* f : {"budget_curve.svg", "frontier_urban-100.svg", "template_slice.svg", "council.svg"})
    EXPECT_EQ(read_file(a / f), read_file(b / f)) << f << " differs between two runs";
}

TEST(Plot, MissingRunDirectoryFails) {
  if (!plotting_available()) GTEST_SKIP() << kSkipReason;
  TempDir scratch("plot-io");
  const std::string missing = scratch / "no-such-run";
  const auto x = python(quote(kScript) + " " + quote(missing) + " --out " + quote(scratch / "figures"), scratch);
  EXPECT_NE(x.status, 0);
  EXPECT_THAT(x.err, HasSubstr(missing));
  EXPECT_FALSE(fs::exists(scratch / "figures"));
}

TEST(Plot, UnknownScenarioFailsListingAvailableIds) {
  if (!plotting_available()) GTEST_SKIP() << kSkipReason;
  ASSERT_TRUE(fs::is_directory(kGolden)) << kGolden;
  TempDir scratch("plot-io");
  const auto x = python(quote(kScript) + " " + quote(kGolden) + " --out " + quote(scratch / "figures") +
                            " --scenario no-such-scenario",
                        scratch);
  EXPECT_EQ(x.status, 1);
  EXPECT_THAT(x.err, HasSubstr("no-such-scenario"));
  EXPECT_THAT(x.err, HasSubstr("urban-100"));
  EXPECT_FALSE(fs::exists(scratch / "figures"));
}

}  // namespace
}  // namespace advplan
