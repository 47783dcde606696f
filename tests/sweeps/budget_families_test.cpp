// budget_families.csv (src/sweeps/budget_families.cpp): a budget sweep with search@k beside greedy@k writes one curve
// per attacker family, with search's paired difference from greedy at each k; `budget_sweep.attackers` is checked.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "advplan/io/csv.hpp"
#include "advplan/sweeps/budget_families.hpp"
#include "advplan/sweeps/extrapolation.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using ::testing::HasSubstr;
using io::CsvTable;
using testing::advplan;
using testing::quote;
using testing::TempDir;

const char* kConditions =
    "conditions: [single, greedy@8, constraint@8, llm_offline, {label: council, blue: council, red: greedy@8}]";
const char* kStudies = "studies: {rubric: true, framing: true, components: true}";

std::string family_config(const TempDir& dir, const std::string& budget, const std::string& conditions = "[single]") {
  return testing::small_config(dir, {{kConditions, "conditions: " + conditions},
                                     {"budget_sweep: [1, 2, 4, 8, 16]", "budget_sweep: " + budget},
                                     {kStudies, "studies: {rubric: false, framing: false, components: false}"}});
}

TEST(BudgetFamilies, ASweepWithSearchWritesOneCurvePerFamily) {
  TempDir dir("budget-families");
  const std::string cfg = family_config(dir, "{blue: seed, ks: [2, 4], attackers: [greedy, search]}");
  const std::string out = dir / "run";
  const auto x = advplan(fmt::format("run {} --out {} --threads 2", quote(cfg), quote(out)), dir);
  ASSERT_EQ(x.status, 0) << x.err;
  const CsvTable t = CsvTable::read(out + "/budget_families.csv");
  ASSERT_EQ(t.header(), budget_families_header());
  ASSERT_EQ(t.size(), 4u);
  const std::vector<std::pair<std::string, std::string>> want{{"greedy", "2"}, {"greedy", "4"}, {"search", "2"},
                                                              {"search", "4"}};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(t.at(i, "attacker"), want[i].first);
    EXPECT_EQ(t.at(i, "k"), want[i].second);
    EXPECT_EQ(t.at(i, "condition"), want[i].first + "@" + want[i].second);
    EXPECT_EQ(t.at(i, "n"), "6");
    EXPECT_LE(t.real(i, "red_quality_lo"), t.real(i, "red_quality"));
    EXPECT_GE(t.real(i, "red_quality_hi"), t.real(i, "red_quality"));
  }
  // greedy's rows have no difference from themselves; search's are paired over the six scenarios.
  EXPECT_EQ(t.at(0, "red_quality_minus_greedy"), "");
  EXPECT_EQ(t.at(2, "n_paired"), "6");
  EXPECT_NEAR(t.real(2, "red_quality_minus_greedy"), t.real(2, "red_quality") - t.real(0, "red_quality"), 1e-8);
  // search@2 scores greedy@2's two candidates (N <= beam): the same RED quality.
  EXPECT_NEAR(t.real(2, "red_quality_minus_greedy"), 0.0, 1e-12);
  // greedy's extrapolation is still written, and the rebuild from the finished run gives the same bytes.
  EXPECT_TRUE(std::filesystem::exists(out + "/extrapolation.csv"));
  for (const auto& [name, text] : extrapolation_files(out)) EXPECT_EQ(text, testing::read_file(out + "/" + name)) << name;
}

TEST(BudgetFamilies, AGreedyOnlySweepWritesNoFamilyFile) {
  TempDir dir("budget-families-greedy");
  const std::string out = dir / "run";
  // constraint@8 against the same BLUE plan is a main condition, not a family of the budget sweep.
  const std::string cfg = family_config(dir, "[2, 4]", "[single, constraint@8]");
  const auto x = advplan(fmt::format("run {} --out {}", quote(cfg), quote(out)), dir);
  ASSERT_EQ(x.status, 0) << x.err;
  EXPECT_FALSE(std::filesystem::exists(out + "/budget_families.csv"));
  EXPECT_TRUE(std::filesystem::exists(out + "/extrapolation.csv"));
}

TEST(BudgetFamilies, MalformedAttackersFailInOneLine) {
  TempDir dir("budget-families-bad");
  const std::vector<std::pair<std::string, std::string>> cases{
      {"[]", "the list of attackers is empty"},
      {"[greedy, greedy]", "the attacker 'greedy' is listed twice"},
      {"[search@4]", "'search@4' is not one"},
      {"[single]", "does not sample k candidates"},
      {"[nosuch]", "nosuch"}};
  for (const auto& [list, message] : cases) {
    const std::string cfg = family_config(dir, "{blue: seed, ks: [2], attackers: " + list + "}");
    const auto x = advplan(fmt::format("run {} --out {}", quote(cfg), quote(dir / "run")), dir);
    testing::expect_one_line_error(x);
    EXPECT_THAT(x.err, HasSubstr(message)) << list;
  }
}

}  // namespace
}  // namespace advplan
