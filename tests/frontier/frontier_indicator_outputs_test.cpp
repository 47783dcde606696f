// The frontier indicators as `advplan frontier` writes them (docs/TRACES.md "frontier/"), on the golden run of
// tests/data/small.yaml: hv_contributions.csv, indicators.csv and indicators_summary.csv, attainment_staircase.csv,
// eaf_diff_exact.csv against the gridded eaf_diff.csv, and the --reference option with its errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "advplan/core/error.hpp"
#include "advplan/frontier/frontier_analysis.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/metrics/frontier.hpp"
#include "advplan/stats/statistics.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using io::CsvTable;
using io::fmt_real;
using testing::kBinary;
using testing::kSource;
using testing::TempDir;

const std::string kGolden = kSource + "/tests/golden/small";

const FrontierInputs& inputs() {
  static const FrontierInputs in = read_frontier_inputs(kGolden);
  return in;
}

std::map<std::string, std::string> texts(const FrontierOptions& opts) {
  std::map<std::string, std::string> out;
  for (auto& [name, text] : build_frontier(inputs(), opts)) out.emplace(name, text);
  return out;
}

std::map<std::string, CsvTable> tables(const FrontierOptions& opts) {
  std::map<std::string, CsvTable> out;
  for (const auto& [name, text] : texts(opts))
    if (name.ends_with(".csv")) out.emplace(name, CsvTable::parse(text, name));
  return out;
}

std::string quote(const std::string& s) { return testing::shell_quote(s); }

TEST(FrontierIndicatorOutputs, TheDefaultReferenceIsTheWorstValueAndAnExplicitZeroChangesNothing) {
  FrontierOptions zero;
  zero.reference = {0, 0};
  EXPECT_EQ(texts(FrontierOptions{}), texts(zero));
  FrontierOptions wide;
  wide.reference = {-0.1, -0.1};
  const auto w = tables(wide), d = tables(FrontierOptions{});
  EXPECT_EQ(w.at("objectives.csv").at(0, "reference"), "-0.100000");
  for (std::size_t i = 0; i < d.at("hypervolume.csv").size(); ++i)  // a farther reference adds volume
    EXPECT_GT(w.at("hypervolume.csv").real(i, "hypervolume"), d.at("hypervolume.csv").real(i, "hypervolume"));
  EXPECT_THAT(texts(wide).at("frontier_hypervolume.md"), HasSubstr("z = (-0.1, -0.1)"));
  EXPECT_EQ(parse_frontier_reference(" -0.1, 0.25 ", 2), (std::vector<double>{-0.1, 0.25}));
  for (const char* bad : {"0", "0,0,0", "1,0", "-1.5,0", "x,0", "0,", "nan,0", "0,0,0,0,0,0"})
    EXPECT_THROW(parse_frontier_reference(bad, 2), ConfigError) << bad;
  FrontierOptions mismatch;
  mismatch.reference = {0};
  EXPECT_THROW(build_frontier(inputs(), mismatch), ConfigError);
}

TEST(FrontierIndicatorOutputs, ContributionsAreExclusiveVolumesOfFrontCandidates) {
  const auto f = tables(FrontierOptions{});
  const CsvTable& c = f.at("hv_contributions.csv");
  ASSERT_EQ(c.size(), f.at("ranks.csv").size());
  std::map<std::pair<std::string, std::string>, double> sum, hv;
  for (std::size_t i = 0; i < c.size(); ++i) {
    EXPECT_EQ(c.at(i, "rank"), f.at("ranks.csv").at(i, "rank"));
    if (c.at(i, "rank") != "1") {
      EXPECT_EQ(c.at(i, "contribution"), "0.000000") << "line " << i + 2;
    }
    EXPECT_GE(c.real(i, "contribution"), 0.0);
    sum[{c.at(i, "scenario_id"), c.at(i, "condition")}] += c.real(i, "contribution");
  }
  // Each contribution is HV(S) − HV(S without the candidate), recomputed from candidates.csv's (q, D) with
  // pagmo2's hypervolume (reference (1, 1) in 1 − z).
  const CsvTable& cands = inputs().candidates;
  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> rows;
  for (std::size_t i = 0; i < cands.size(); ++i) rows[{cands.at(i, "scenario_id"), cands.at(i, "condition")}].push_back(i);
  const std::vector<double> ref{1, 1};
  std::size_t row = 0;  // hv_contributions.csv lists the candidates in ranks.csv's order
  std::map<std::tuple<std::string, std::string, std::string>, double> contribution;
  for (std::size_t i = 0; i < c.size(); ++i)
    contribution[{c.at(i, "scenario_id"), c.at(i, "condition"), c.at(i, "index")}] = c.real(i, "contribution");
  for (const auto& [key, rs] : rows) {
    auto set_without = [&](std::size_t skip) {
      PointSet p;
      for (std::size_t r : rs)
        if (r != skip) p.add(std::vector<double>{1 - cands.real(r, "quality"), 1 - cands.real(r, "coherence")});
      return p;
    };
    const double all = hypervolume(set_without(cands.size()), ref);
    for (std::size_t r : rs) {
      EXPECT_NEAR(contribution.at({key.first, key.second, cands.at(r, "index")}),
                  all - hypervolume(set_without(r), ref), 1.5e-6)
          << key.first << " " << key.second << " " << cands.at(r, "index");
      ++row;
    }
  }
  EXPECT_EQ(row, c.size());
  const CsvTable& h = f.at("hypervolume.csv");
  for (std::size_t i = 0; i < h.size(); ++i) {
    const auto key = std::make_pair(h.at(i, "scenario_id"), h.at(i, "condition"));
    EXPECT_LE(sum.at(key), h.real(i, "hypervolume") + 1e-5) << key.first << " " << key.second;
    if (h.at(i, "candidates") == "1") {
      EXPECT_NEAR(sum.at(key), h.real(i, "hypervolume"), 1e-6);
    }
  }
}

TEST(FrontierIndicatorOutputs, EpsilonAndIgdPlusAgainstTheUnionFrontShrinkAsTheSetGrows) {
  const auto f = tables(FrontierOptions{});
  const CsvTable& t = f.at("indicators.csv");
  std::map<std::pair<std::string, std::string>, std::pair<double, double>> v;
  std::map<std::string, std::vector<double>> eps_of;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const double e = t.real(i, "epsilon"), g = t.real(i, "igd_plus");
    EXPECT_GE(e, 0.0);  // every set is part of the union its reference front comes from
    EXPECT_LE(e, 1.0);
    EXPECT_GE(g, 0.0);
    EXPECT_EQ(e == 0, g == 0) << "both vanish exactly when the set covers the front";
    v[{t.at(i, "scenario_id"), t.at(i, "condition")}] = {e, g};
    eps_of[t.at(i, "condition")].push_back(e);
  }
  // Recomputed from candidates.csv: the reference front is the non-dominated union of every condition's (q, D) in
  // the scenario, each point once; ε and IGD+ by their definitions on 1 − z.
  const CsvTable& cands = inputs().candidates;
  std::map<std::string, std::set<std::pair<double, double>>> uni;
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<double, double>>> set_of;
  for (std::size_t i = 0; i < cands.size(); ++i) {
    const std::pair<double, double> p{1 - cands.real(i, "quality"), 1 - cands.real(i, "coherence")};
    uni[cands.at(i, "scenario_id")].insert(p);
    set_of[{cands.at(i, "scenario_id"), cands.at(i, "condition")}].push_back(p);
  }
  for (std::size_t i = 0; i < t.size(); ++i) {
    std::vector<std::pair<double, double>> front;
    const auto& u = uni.at(t.at(i, "scenario_id"));
    for (const auto& p : u)
      if (std::none_of(u.begin(), u.end(), [&](auto& q) { return q != p && q.first <= p.first && q.second <= p.second; }))
        front.push_back(p);
    EXPECT_EQ(t.at(i, "reference_size"), std::to_string(front.size()));
    double eps = -1, igd = 0;
    for (const auto& r : front) {
      double e_min = 1e9, d_min = 1e9;
      for (const auto& a : set_of.at({t.at(i, "scenario_id"), t.at(i, "condition")})) {
        e_min = std::min(e_min, std::max(a.first - r.first, a.second - r.second));
        d_min = std::min(d_min, std::hypot(std::max(a.first - r.first, 0.0), std::max(a.second - r.second, 0.0)));
      }
      eps = std::max(eps, e_min);
      igd += d_min / static_cast<double>(front.size());
    }
    EXPECT_NEAR(t.real(i, "epsilon"), eps, 1e-6) << "indicators.csv line " << i + 2;
    EXPECT_NEAR(t.real(i, "igd_plus"), igd, 1e-6) << "indicators.csv line " << i + 2;
  }
  // greedy@16's candidates extend greedy@8's: against the same front it is never farther.
  int pairs = 0;
  for (const auto& [key, ev] : v)
    if (key.second == "greedy@16") {
      const auto lo = v.at({key.first, "greedy@8"});
      EXPECT_LE(ev.first, lo.first + 1e-12);
      EXPECT_LE(ev.second, lo.second + 1e-12);
      ++pairs;
    }
  EXPECT_GT(pairs, 0);
  // greedy@1's single candidate cannot cover the union's front in every scenario.
  EXPECT_GT(*std::max_element(eps_of.at("greedy@1").begin(), eps_of.at("greedy@1").end()), 0.0);
  const CsvTable& s = f.at("indicators_summary.csv");
  ASSERT_EQ(s.size(), f.at("hypervolume_summary.csv").size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    EXPECT_EQ(s.at(i, "epsilon"), fmt_real(mean(eps_of.at(s.at(i, "condition")))));
    EXPECT_LE(s.real(i, "epsilon_lo"), s.real(i, "epsilon"));
    EXPECT_GE(s.real(i, "igd_plus_hi"), s.real(i, "igd_plus"));
  }
}

TEST(FrontierIndicatorOutputs, StaircasesThreadTheCornersOfAttainmentCsv) {
  const auto f = tables(FrontierOptions{});
  const CsvTable &st = f.at("attainment_staircase.csv"), &att = f.at("attainment.csv");
  std::vector<std::string> corners, from_stairs;
  for (std::size_t i = 0; i < att.size(); ++i)
    corners.push_back(att.at(i, "condition") + att.at(i, "level") + att.at(i, "obj1") + att.at(i, "obj2"));
  for (std::size_t i = 0; i < st.size(); ++i)
    if (st.at(i, "kind") == "corner")
      from_stairs.push_back(st.at(i, "condition") + st.at(i, "level") + st.at(i, "obj1") + st.at(i, "obj2"));
  EXPECT_EQ(corners, from_stairs);
  for (std::size_t i = 0; i < st.size(); ++i)
    if (st.at(i, "kind") == "end") {
      EXPECT_TRUE(st.at(i, "obj1") == "0.000000" || st.at(i, "obj2") == "0.000000");
    }
}

TEST(FrontierIndicatorOutputs, TheExactDifferenceAgreesWithTheGridAwayFromCandidateValues) {
  FrontierOptions exact;
  exact.exact_eaf = true;
  const auto f = tables(exact);
  EXPECT_FALSE(tables(FrontierOptions{}).contains("eaf_diff_exact.csv"));  // asked for only
  const CsvTable &ex = f.at("eaf_diff_exact.csv"), &grid = f.at("eaf_diff.csv");
  ASSERT_GT(ex.size(), 0u);
  std::set<double> coords;
  const CsvTable& cands = inputs().candidates;
  for (std::size_t i = 0; i < cands.size(); ++i) {
    coords.insert(cands.real(i, "quality"));
    coords.insert(cands.real(i, "coherence"));
  }
  auto near_coord = [&](double z) {
    const auto it = coords.lower_bound(z - 1e-7);
    return it != coords.end() && *it < z + 1e-7;
  };
  std::size_t checked = 0;
  for (std::size_t i = 0; i < grid.size(); ++i) {
    const double z1 = grid.real(i, "obj1"), z2 = grid.real(i, "obj2");
    if (near_coord(z1) || near_coord(z2) || z1 == 0 || z2 == 0) continue;
    double d = 0;
    int hits = 0;
    for (std::size_t r = 0; r < ex.size(); ++r)
      if (ex.at(r, "a") == grid.at(i, "a") && ex.at(r, "b") == grid.at(i, "b") && ex.real(r, "obj1_lo") < z1 &&
          z1 <= ex.real(r, "obj1_hi") && ex.real(r, "obj2_lo") < z2 && z2 <= ex.real(r, "obj2_hi")) {
        d = ex.real(r, "difference");
        ++hits;
      }
    ASSERT_LE(hits, 1);
    EXPECT_NEAR(d, grid.real(i, "difference"), 2e-6) << grid.at(i, "a") << " at (" << z1 << ", " << z2 << ")";
    ++checked;
  }
  EXPECT_GT(checked, 1000u);
  for (std::size_t r = 0; r < ex.size(); ++r) EXPECT_GT(ex.real(r, "difference"), 0.0);  // the doubling pairs
}

TEST(FrontierIndicatorOutputs, TheCommandTakesReferenceAndRefusesABadOneWithOneLine) {
  TempDir out("frontier-ind");
  TempDir scratch("frontier-ind-io");
  const auto x = testing::run_command(
      quote(kBinary) + " frontier " + quote(kGolden) + " --reference=-0.1,-0.1 --exact-eaf --out " +
          quote(out.path().string()),
      scratch);
  ASSERT_EQ(x.status, 0) << x.err;
  for (const char* file : {"hv_contributions.csv", "indicators.csv", "indicators_summary.csv",
                           "attainment_staircase.csv", "eaf_diff_exact.csv"})
    EXPECT_TRUE(fs::is_regular_file(out / file)) << file;
  EXPECT_EQ(CsvTable::read(out / "objectives.csv").at(1, "reference"), "-0.100000");
  for (const std::string ref : {"0", "2,0", "q,D"}) {
    const auto y = testing::run_command(quote(kBinary) + " frontier " + quote(kGolden) + " --reference " + ref +
                                            " --out " + quote(out / "bad"),
                                        scratch);
    EXPECT_EQ(y.status, 1) << ref << ": " << y.err;
    EXPECT_EQ(std::count(y.err.begin(), y.err.end(), '\n'), 1) << y.err;
    EXPECT_THAT(y.err, HasSubstr("--reference"));
    EXPECT_FALSE(fs::exists(out / "bad")) << ref;
  }
}

}  // namespace
}  // namespace advplan
