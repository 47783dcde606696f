// End-to-end test of `plot.py frontier` (experiments/plot.py): on the golden run and the output of
// `advplan frontier`, it writes the four frontier figures as PNG and SVG, picks by default the scenario where the
// two selectors' picks lie furthest apart, and fails with one line on stderr on a bad option or a missing
// frontier/ directory. Skipped when /usr/bin/python3 cannot import matplotlib and numpy.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include "advplan/io/csv.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::TempDir;

using testing::kSource;
using testing::kBinary;
const std::string kPython = "/usr/bin/python3";
const std::string kScript = kSource + "/experiments/plot.py";
const std::string kGolden = kSource + "/tests/golden/small";

using testing::quote;

bool plotting_available() {
  static const bool available = [] {
    TempDir scratch("frontier-plot-probe");
    return testing::run_command(quote(kPython) + " -c " + quote("import matplotlib, numpy"), scratch).status == 0;
  }();
  return available;
}

/// The scenario of greedy@8 whose two picks are furthest apart in (q, D), first in file order on ties.
std::string most_disagreeing_scenario() {
  const auto c = io::CsvTable::read(kGolden + "/candidates.csv");
  std::map<std::string, std::pair<double, double>> g, d;
  std::vector<std::string> order;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (c.at(i, "condition") != "greedy@8") continue;
    const std::string s = c.at(i, "scenario_id");
    if (order.empty() || order.back() != s) order.push_back(s);
    if (c.at(i, "selected_greedy") == "1") g[s] = {c.real(i, "quality"), c.real(i, "coherence")};
    if (c.at(i, "selected_constraint") == "1") d[s] = {c.real(i, "quality"), c.real(i, "coherence")};
  }
  std::string best;
  double far = -1;
  for (const auto& s : order) {
    const double dist = std::hypot(g[s].first - d[s].first, g[s].second - d[s].second);
    if (dist > far) {
      far = dist;
      best = s;
    }
  }
  return best;
}

// ctest: slow
TEST(FrontierPlot, WritesTheFrontierFiguresForTheMostDisagreeingScenario) {
  if (!plotting_available()) GTEST_SKIP() << "matplotlib/numpy not installed for /usr/bin/python3";
  TempDir work("frontier-plot");
  TempDir scratch("frontier-plot-io");
  const std::string fdir = work / "frontier", figs = work / "figures";
  const auto a = testing::run_command(quote(kBinary) + " frontier " + quote(kGolden) + " --out " + quote(fdir), scratch);
  ASSERT_EQ(a.status, 0) << a.err;
  const auto x = testing::run_command(
      quote(kPython) + " " + quote(kScript) + " frontier " + quote(kGolden) + " --frontier " + quote(fdir) + " --out " +
          quote(figs),
      scratch);
  ASSERT_EQ(x.status, 0) << x.err;
  const std::string scenario = most_disagreeing_scenario();
  ASSERT_FALSE(scenario.empty());
  EXPECT_THAT(x.err, HasSubstr("candidate cloud of " + scenario + " under greedy@8"));
  for (const std::string& stem : {"frontier_cloud_" + scenario + "_greedy@8", std::string("frontier_attainment"),
                                 std::string("frontier_hypervolume"), std::string("frontier_eaf_diff")})
    for (const char* ext : {".png", ".svg"}) {
      const std::string f = figs + "/" + stem + ext;
      ASSERT_TRUE(fs::is_regular_file(f)) << f << " was not written; stderr: " << x.err;
      EXPECT_GT(fs::file_size(f), 0u) << f;
      EXPECT_THAT(x.out, HasSubstr(f)) << "plot.py prints every path it writes";
    }
  // A chosen k and scenario.
  const auto y = testing::run_command(quote(kPython) + " " + quote(kScript) + " frontier " + quote(kGolden) +
                                          " --frontier " + quote(fdir) + " --out " + quote(figs) +
                                          " --k 16 --scenario urban-101",
                                      scratch);
  ASSERT_EQ(y.status, 0) << y.err;
  EXPECT_TRUE(fs::is_regular_file(figs + "/frontier_cloud_urban-101_greedy@16.png"));
}

TEST(FrontierPlot, BadOptionsAndAMissingAnalysisFailWithOneLine) {
  if (!plotting_available()) GTEST_SKIP() << "matplotlib/numpy not installed for /usr/bin/python3";
  TempDir work("frontier-plot-bad");
  TempDir scratch("frontier-plot-bad-io");
  const std::string base = quote(kPython) + " " + quote(kScript) + " frontier " + quote(kGolden) + " --out " +
                           quote(work / "figs");
  // No frontier/ analysis at the given place: the message says what to run.
  auto x = testing::run_command(base + " --frontier " + quote(work / "none"), scratch);
  EXPECT_EQ(x.status, 1);
  EXPECT_THAT(x.err, HasSubstr("advplan frontier"));
  EXPECT_EQ(std::count(x.err.begin(), x.err.end(), '\n'), 1) << x.err;
  const std::string fdir = work / "frontier";
  ASSERT_EQ(testing::run_command(quote(kBinary) + " frontier " + quote(kGolden) + " --out " + quote(fdir), scratch).status, 0);
  for (const char* bad : {" --condition greedy@3", " --k 3", " --scenario nowhere-1"}) {
    x = testing::run_command(base + " --frontier " + quote(fdir) + bad, scratch);
    EXPECT_EQ(x.status, 1) << bad << ": " << x.err;
    EXPECT_EQ(std::count(x.err.begin(), x.err.end(), '\n'), 1) << bad << ": " << x.err;
  }
  EXPECT_FALSE(fs::exists(work / "figs"));
}

}  // namespace
}  // namespace advplan
