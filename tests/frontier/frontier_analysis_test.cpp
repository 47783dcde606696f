// Auditable candidates and the frontier analysis (docs/TRACES.md, docs/METRICS.md "Pareto frontier analysis"):
// - the traces carry what is needed to recompute the candidate diversity (categories) and to replay the
//   simulator (raw capability), checked on the golden run of tests/data/small.yaml;
// - candidate_plans.jsonl, opt-in by flag or config key, holds every candidate plan keyed like candidates.csv;
// - build_frontier and `advplan frontier` on the golden run: ranks, hypervolume, gains, selectors, attainment
//   surfaces and EAF differences against properties that must hold, and bad options as one-sentence errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "advplan/core/error.hpp"
#include "advplan/core/plan_json.hpp"
#include "advplan/run/config.hpp"
#include "advplan/frontier/frontier_analysis.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/metrics/frontier.hpp"
#include "advplan/stats/statistics.hpp"
#include "advplan/sim/wargame.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using io::CsvTable;
using io::fmt_real;
using testing::TempDir;

using testing::kSource;
using testing::kBinary;
const std::string kConfig = kSource + "/tests/data/small.yaml";
const std::string kGolden = kSource + "/tests/golden/small";

using testing::quote;

const CsvTable& golden(const std::string& name) {
  static std::map<std::string, CsvTable> cache;
  auto it = cache.find(name);
  if (it == cache.end()) it = cache.emplace(name, CsvTable::read(kGolden + "/" + name)).first;
  return it->second;
}

using Key = std::pair<std::string, std::string>;  // (scenario, condition)

// ---- the traces are enough to audit the candidates and the simulator ------------------------------------------

TEST(TraceAudit, DiversityRecomputedFromTheCategorySetsEqualsTheTrace) {
  const CsvTable& cands = golden("candidates.csv");
  const CsvTable& per = golden("per_scenario.csv");
  std::map<Key, std::vector<CategorySet>> sets;
  for (std::size_t i = 0; i < cands.size(); ++i) {
    const auto s = parse_category_set(cands.at(i, "categories"));
    ASSERT_TRUE(s.has_value()) << "candidates.csv line " << i + 2 << ": " << cands.at(i, "categories");
    sets[{cands.at(i, "scenario_id"), cands.at(i, "condition")}].push_back(*s);
  }
  std::size_t checked = 0, nonzero = 0;
  for (std::size_t i = 0; i < per.size(); ++i) {
    if (per.at(i, "status") != "ok") continue;
    const auto it = sets.find({per.at(i, "scenario_id"), per.at(i, "condition")});
    ASSERT_NE(it, sets.end()) << "no candidates for per_scenario.csv line " << i + 2;
    EXPECT_EQ(it->second.size(), static_cast<std::size_t>(per.real(i, "candidates_valid")));
    EXPECT_EQ(fmt_real(action_type_diversity(it->second)), per.at(i, "diversity"))
        << per.at(i, "scenario_id") << " " << per.at(i, "condition");
    ++checked;
    nonzero += per.real(i, "diversity") > 0 ? 1 : 0;
  }
  EXPECT_EQ(checked, per.size());
  EXPECT_GT(nonzero, checked / 2) << "the test must see sets with real diversity";
}

TEST(TraceAudit, SimulatorReplayedFromTheRawCapabilityColumnsGivesTheTracedWinRate) {
  const ExperimentConfig cfg = load_experiment_config(kConfig);
  const CsvTable& per = golden("per_scenario.csv");
  std::size_t checked = 0;
  std::set<std::string> rates;
  for (std::size_t i = 0; i < per.size(); ++i) {
    if (per.at(i, "status") != "ok") continue;
    const Force blue{per.real(i, "blue_raw_capability"), per.real(i, "blue_quality"), per.real(i, "blue_coherence")};
    const Force red{per.real(i, "red_raw_capability"), per.real(i, "red_quality"), per.real(i, "red_coherence")};
    const SimNoise noise = draw_noise(cfg.seed, per.at(i, "scenario_id"), cfg.sim);
    const SimResult r = simulate(blue, red, noise, cfg.sim);
    EXPECT_EQ(fmt_real(r.win_rate), per.at(i, "blue_win_rate")) << per.at(i, "scenario_id") << " " << per.at(i, "condition");
    // P from the 6-decimal cells: each factor carries a rounding error of at most 5e-7 (relative, at most ~2e-6).
    const double pb = effective_power(blue), pr = effective_power(red);
    EXPECT_NEAR(pb, per.real(i, "blue_effective_power"), 5e-6 * pb + 1e-6);
    EXPECT_NEAR(pr, per.real(i, "red_effective_power"), 5e-6 * pr + 1e-6);
    EXPECT_GT(blue.raw, 0);
    EXPECT_GT(red.raw, 0);
    rates.insert(per.at(i, "blue_win_rate"));
    ++checked;
  }
  EXPECT_EQ(checked, per.size());
  EXPECT_GT(rates.size(), 5u) << "the replay must cover varied outcomes";
}

TEST(TraceAudit, CandidateColumnsAgreeWithTheSelectedResponse) {
  // The selected candidate's raw capability is the RED raw capability of its row; costs lie in [0, 1].
  const CsvTable& cands = golden("candidates.csv");
  const CsvTable& per = golden("per_scenario.csv");
  std::map<Key, std::size_t> row_of;
  for (std::size_t i = 0; i < per.size(); ++i) row_of[{per.at(i, "scenario_id"), per.at(i, "condition")}] = i;
  std::size_t selected = 0;
  for (std::size_t i = 0; i < cands.size(); ++i) {
    EXPECT_GE(cands.real(i, "cost"), 0.0);
    EXPECT_LE(cands.real(i, "cost"), 1.0);
    EXPECT_GT(cands.real(i, "raw_capability"), 0.0);
    if (cands.at(i, "selected") != "1") continue;
    const std::size_t r = row_of.at({cands.at(i, "scenario_id"), cands.at(i, "condition")});
    EXPECT_EQ(cands.at(i, "raw_capability"), per.at(r, "red_raw_capability"));
    EXPECT_EQ(cands.at(i, "plan_id"), per.at(r, "red_plan_id"));
    ++selected;
  }
  EXPECT_EQ(selected, per.size());
}

// ---- candidate_plans.jsonl --------------------------------------------------------------------------------------

TEST(CandidatePlans, TheConfigKeyTurnsThemOnAndUnknownKeysAreRejected) {
  const std::string base = "name: t\ncorpus: {templates: [urban], seeds: [100, 100]}\n";
  EXPECT_FALSE(parse_experiment_config(base, "t.yaml", "").candidate_plans);
  EXPECT_TRUE(parse_experiment_config(base + "traces: {candidate_plans: true}\n", "t.yaml", "").candidate_plans);
  try {
    (void)parse_experiment_config(base + "traces: {candidate_plan: true}\n", "t.yaml", "");
    ADD_FAILURE() << "an unknown traces key must be rejected";
  } catch (const ConfigError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("t.yaml"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("candidate_plan"));
  }
}

TEST(CandidatePlans, TheFlagWritesEveryCandidatePlanKeyedLikeCandidatesCsvAndChangesNothingElse) {
  TempDir out("cand-plans");
  TempDir scratch("cand-plans-io");
  const auto x = testing::run_command(quote(kBinary) + " run " + quote(kConfig) + " --out " +
                                          quote(out.path().string()) + " --threads 2 --candidate-plans",
                                      scratch);
  ASSERT_EQ(x.status, 0) << x.err;
  // Every other file is the golden run's, byte for byte.
  for (const char* f : {"candidates.csv", "per_scenario.csv", "scenarios.csv", "bootstrap_summary.csv"})
    EXPECT_EQ(testing::read_file(out / f), testing::read_file(kGolden + "/" + f)) << f;
  const CsvTable cands = CsvTable::read(out / "candidates.csv");
  std::istringstream lines(testing::read_file(out / "candidate_plans.jsonl"));
  std::string line;
  std::size_t n = 0;
  while (std::getline(lines, line)) {
    ASSERT_LT(n, cands.size());
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j.at("scenario_id"), cands.at(n, "scenario_id"));
    EXPECT_EQ(j.at("condition"), cands.at(n, "condition"));
    EXPECT_EQ(std::to_string(j.at("index").get<int>()), cands.at(n, "index"));
    EXPECT_EQ(std::to_string(j.at("k").get<int>()), cands.at(n, "k"));
    EXPECT_EQ(j.at("plan_id"), cands.at(n, "plan_id"));
    EXPECT_EQ(j.at("selected").get<bool>(), cands.at(n, "selected") == "1");
    std::vector<Violation> v;
    const auto plan = plan_from_json(j.at("plan"), v);
    ASSERT_TRUE(plan.has_value());
    EXPECT_TRUE(v.empty()) << line.substr(0, 200);
    EXPECT_EQ(plan->plan_id, cands.at(n, "plan_id"));
    // The plan's categories are the category set written in candidates.csv.
    CategorySet s{};
    for (const auto& a : plan->actions) s[index(a.category)] = true;
    EXPECT_EQ(format_category_set(s), cands.at(n, "categories"));
    ++n;
  }
  EXPECT_EQ(n, cands.size());
  // Without the flag the file is not written (and a stale one is removed).
  const auto y = testing::run_command(quote(kBinary) + " run " + quote(kConfig) + " --out " +
                                          quote(out.path().string()) + " --threads 2 --force",
                                      scratch);
  ASSERT_EQ(y.status, 0) << y.err;
  EXPECT_FALSE(fs::exists(out / "candidate_plans.jsonl"));
}

// ---- the frontier analysis ---------------------------------------------------------------------------------------

const FrontierInputs& golden_inputs() {
  static const FrontierInputs in = read_frontier_inputs(kGolden);
  return in;
}

std::map<std::string, CsvTable> frontier_files(const FrontierOptions& opts, const FrontierInputs* against = nullptr) {
  std::map<std::string, CsvTable> out;
  for (const auto& [name, text] : build_frontier(golden_inputs(), opts, against))
    if (name.ends_with(".csv")) out.emplace(name, CsvTable::parse(text, name));
  return out;
}

TEST(FrontierObjectives, ParsesAliasesDirectionsAndRejectsBadLists) {
  const auto o = parse_frontier_objectives("q, D ,pressure,-cost");
  ASSERT_EQ(o.size(), 4u);
  EXPECT_EQ(o[0].column, "quality");
  EXPECT_EQ(o[1].column, "coherence");
  EXPECT_TRUE(o[2].maximise);
  EXPECT_EQ(o[3].column, "cost");
  EXPECT_FALSE(o[3].maximise);
  EXPECT_TRUE(parse_frontier_objectives("+pressure,raw_capability")[0].maximise);
  for (const char* bad : {"q", "q,D,pressure,cost,raw_capability", "q,,D", "q,quality", ""})
    EXPECT_THROW(parse_frontier_objectives(bad), ConfigError) << bad;
}

TEST(FrontierAnalysis, RanksAndHypervolumeAgreeWithTheTracesAndAHandComputedStaircase) {
  const auto files = frontier_files(FrontierOptions{});
  const CsvTable& cands = golden("candidates.csv");
  const CsvTable& ranks = files.at("ranks.csv");
  ASSERT_EQ(ranks.size(), cands.size());
  // On (q, D), rank 1 is exactly the traces' on_frontier flag (computed by the older pareto_front).
  std::map<std::tuple<std::string, std::string, std::string>, std::string> rank_of;
  for (std::size_t i = 0; i < ranks.size(); ++i)
    rank_of[{ranks.at(i, "scenario_id"), ranks.at(i, "condition"), ranks.at(i, "index")}] = ranks.at(i, "rank");
  std::map<Key, std::vector<std::pair<double, double>>> sets;
  for (std::size_t i = 0; i < cands.size(); ++i) {
    const std::string r = rank_of.at({cands.at(i, "scenario_id"), cands.at(i, "condition"), cands.at(i, "index")});
    EXPECT_EQ(r == "1", cands.at(i, "on_frontier") == "1") << "candidates.csv line " << i + 2;
    sets[{cands.at(i, "scenario_id"), cands.at(i, "condition")}].emplace_back(cands.real(i, "quality"),
                                                                              cands.real(i, "coherence"));
  }
  // Hypervolume on (q, D) with reference (0, 0): the area under the staircase of the set, by hand.
  const CsvTable& hv = files.at("hypervolume.csv");
  ASSERT_EQ(hv.size(), sets.size());
  for (std::size_t i = 0; i < hv.size(); ++i) {
    auto pts = sets.at({hv.at(i, "scenario_id"), hv.at(i, "condition")});
    std::sort(pts.begin(), pts.end(), [](auto& a, auto& b) { return a.first > b.first; });  // q descending
    double area = 0, ymax = 0;
    for (const auto& [x, y] : pts) {
      if (y > ymax) {
        area += x * (y - ymax);
        ymax = y;
      }
    }
    EXPECT_NEAR(hv.real(i, "hypervolume"), area, 1e-6) << hv.at(i, "scenario_id") << " " << hv.at(i, "condition");
  }
}

TEST(FrontierAnalysis, SummariesGainsAndSelectorsHoldTheirProperties) {
  const auto files = frontier_files(FrontierOptions{});
  const CsvTable& hv = files.at("hypervolume.csv");
  const CsvTable& sum = files.at("hypervolume_summary.csv");
  std::map<std::string, std::vector<double>> by_cond;
  std::map<Key, double> hv_of;
  for (std::size_t i = 0; i < hv.size(); ++i) {
    by_cond[hv.at(i, "condition")].push_back(hv.real(i, "hypervolume"));
    hv_of[{hv.at(i, "scenario_id"), hv.at(i, "condition")}] = hv.real(i, "hypervolume");
  }
  ASSERT_EQ(sum.size(), by_cond.size());
  for (std::size_t i = 0; i < sum.size(); ++i) {
    const auto& v = by_cond.at(sum.at(i, "condition"));
    EXPECT_EQ(sum.at(i, "n"), std::to_string(v.size()));
    EXPECT_EQ(sum.at(i, "hypervolume"), fmt_real(mean(v)));
    EXPECT_LE(sum.real(i, "hypervolume_lo"), sum.real(i, "hypervolume"));
    EXPECT_GE(sum.real(i, "hypervolume_hi"), sum.real(i, "hypervolume"));
    if (i > 0) {
      EXPECT_LE(sum.real(i - 1, "k"), sum.real(i, "k")) << "rows are ordered by k";
    }
  }
  // k -> 2k along the greedy sweep: greedy@2k's candidates extend greedy@k's, so the gain is never negative.
  const CsvTable& gain = files.at("hypervolume_gain.csv");
  ASSERT_EQ(gain.size(), 4u);  // 1->2, 2->4, 4->8, 8->16
  for (std::size_t i = 0; i < gain.size(); ++i) {
    EXPECT_EQ(gain.real(i, "k2"), 2 * gain.real(i, "k"));
    std::vector<double> d;
    for (const auto& [key, v] : hv_of)
      if (key.second == gain.at(i, "condition_2k")) d.push_back(v - hv_of.at({key.first, gain.at(i, "condition")}));
    for (double x : d) EXPECT_GE(x, -1e-12);
    EXPECT_NEAR(gain.real(i, "gain"), mean(d), 1e-6);
  }
  // On (q, D) both selectors' picks lie on the front (max q, and max of a positive weighting of q and D) unless
  // candidates tie on the greatest q; the golden run has no such tie.
  const CsvTable& sel = files.at("selectors.csv");
  ASSERT_EQ(sel.size(), 2 * sum.size());
  for (std::size_t i = 0; i < sel.size(); ++i) {
    EXPECT_EQ(sel.at(i, "rank"), "1.000000") << sel.at(i, "condition") << " " << sel.at(i, "selector");
    EXPECT_EQ(sel.at(i, "on_front"), "1.000000");
  }
  // On (pressure, -cost) the picks do leave the front in some sets: the rank is then above 1.
  FrontierOptions pc;
  pc.objectives = parse_frontier_objectives("pressure,-cost");
  const auto files2 = frontier_files(pc);
  double worst = 0;
  for (std::size_t i = 0; i < files2.at("selectors.csv").size(); ++i)
    worst = std::max(worst, files2.at("selectors.csv").real(i, "rank"));
  EXPECT_GT(worst, 1.0);
}

TEST(FrontierAnalysis, AttainmentSurfacesAreNestedAndTheDoublingDifferenceIsNeverNegative) {
  const auto files = frontier_files(FrontierOptions{});
  const CsvTable& att = files.at("attainment.csv");
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<double, double>>> surf;
  for (std::size_t i = 0; i < att.size(); ++i)
    surf[{att.at(i, "condition"), att.at(i, "level")}].emplace_back(att.real(i, "obj1"), att.real(i, "obj2"));
  ASSERT_FALSE(surf.empty());
  for (const auto& [key, pts] : surf) {
    for (std::size_t i = 1; i < pts.size(); ++i) {  // a staircase: obj1 ascending, obj2 descending
      EXPECT_GT(pts[i].first, pts[i - 1].first);
      EXPECT_LT(pts[i].second, pts[i - 1].second);
    }
    if (key.second != "90") continue;
    // Every point the 90% surface reaches, the 10% surface reaches too (normalised objectives are maximised).
    const auto& low = surf.at({key.first, "10"});
    for (const auto& p : pts)
      EXPECT_TRUE(std::any_of(low.begin(), low.end(), [&](auto& q) { return q.first >= p.first && q.second >= p.second; }))
          << key.first;
  }
  const CsvTable& diff = files.at("eaf_diff.csv");
  ASSERT_EQ(diff.size(), 4u * 51 * 51);  // the four doubling pairs on a 51 x 51 grid
  double most = 0;
  for (std::size_t i = 0; i < diff.size(); ++i) {
    EXPECT_GE(diff.real(i, "difference"), 0.0) << diff.at(i, "a") << " - " << diff.at(i, "b");
    EXPECT_NEAR(diff.real(i, "difference"), diff.real(i, "eaf_a") - diff.real(i, "eaf_b"), 2e-6);
    most = std::max(most, diff.real(i, "difference"));
  }
  EXPECT_GT(most, 0.0);
  // A run against itself differs nowhere.
  const auto self = frontier_files(FrontierOptions{}, &golden_inputs());
  for (std::size_t i = 0; i < self.at("eaf_diff.csv").size(); ++i)
    ASSERT_EQ(self.at("eaf_diff.csv").at(i, "difference"), "0.000000");
}

TEST(FrontierAnalysis, FiltersAndComparisonsAndTheirErrors) {
  FrontierOptions o;
  o.k = 8;
  const auto f8 = frontier_files(o);
  std::set<std::string> conds;
  for (std::size_t i = 0; i < f8.at("hypervolume_summary.csv").size(); ++i)
    conds.insert(f8.at("hypervolume_summary.csv").at(i, "condition"));
  EXPECT_EQ(conds, (std::set<std::string>{"greedy@8", "constraint@8", "council"}));
  EXPECT_EQ(f8.at("hypervolume_gain.csv").size(), 0u);
  FrontierOptions c;
  c.conditions = {"greedy@16", "single"};
  c.compare = {{"greedy@16", "single"}};
  const auto fc = frontier_files(c);
  EXPECT_EQ(fc.at("hypervolume_summary.csv").size(), 2u);
  EXPECT_EQ(fc.at("eaf_diff.csv").size(), 51u * 51);
  auto error_of = [](const FrontierOptions& opts) -> std::string {
    try {
      (void)build_frontier(golden_inputs(), opts);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  FrontierOptions bad;
  bad.conditions = {"greedy@3"};
  EXPECT_THAT(error_of(bad), HasSubstr("--condition greedy@3"));
  bad = {};
  bad.k = 3;
  EXPECT_THAT(error_of(bad), HasSubstr("--k 3"));
  bad = {};
  bad.objectives = {{"quality", true}, {"nonsense", true}};
  EXPECT_THAT(error_of(bad), HasSubstr("no column 'nonsense'"));
  bad.objectives = {{"quality", true}, {"index", true}};
  EXPECT_THAT(error_of(bad), HasSubstr("not an objective"));
  bad = {};
  bad.compare = {{"greedy@8", "greedy@99"}};
  EXPECT_THAT(error_of(bad), HasSubstr("greedy@99"));
}

TEST(FrontierCommand, WritesTheTablesAndFailsOnBadInputWithOneLine) {
  TempDir out("frontier-cli");
  TempDir scratch("frontier-cli-io");
  const auto x = testing::run_command(quote(kBinary) + " frontier " + quote(kGolden) + " --objectives q,D,pressure,-cost --out " +
                                          quote(out.path().string()),
                                      scratch);
  ASSERT_EQ(x.status, 0) << x.err;
  for (const char* f : {"objectives.csv", "ranks.csv", "hypervolume.csv", "hypervolume_summary.csv",
                        "hypervolume_gain.csv", "selectors.csv", "attainment.csv", "eaf_diff.csv",
                        "frontier_hypervolume.md", "frontier_hypervolume.tex", "frontier_selectors.md",
                        "frontier_selectors.tex"})
    EXPECT_TRUE(fs::is_regular_file(out / f)) << f;
  EXPECT_THAT(testing::read_file(out / "frontier_hypervolume.md"), HasSubstr("| greedy@16 | 16 | 6 |"));
  const CsvTable objs = CsvTable::read(out / "objectives.csv");
  ASSERT_EQ(objs.size(), 4u);
  EXPECT_EQ(objs.at(3, "direction"), "min");
  EXPECT_EQ(objs.at(3, "reference"), "1.000000");  // the worst cost
  // Repeatable options take one value each, so the run directory may follow them.
  const auto z = testing::run_command(quote(kBinary) + " frontier --condition greedy@8 --condition single " +
                                          quote(kGolden) + " --out " + quote(out / "two"),
                                      scratch);
  ASSERT_EQ(z.status, 0) << z.err;
  EXPECT_EQ(CsvTable::read(out / "two/hypervolume_summary.csv").size(), 2u);
  for (const std::string& args : {" frontier " + quote(kGolden) + " --objectives q",
                                 " frontier " + quote(kGolden + "/nonexistent"),
                                 " frontier " + quote(kGolden) + " --compare greedy@8"}) {
    const auto y = testing::run_command(quote(kBinary) + args + " --out " + quote(out / "bad"), scratch);
    EXPECT_EQ(y.status, 1) << args << ": " << y.err;
    EXPECT_EQ(std::count(y.err.begin(), y.err.end(), '\n'), 1) << y.err;
    EXPECT_FALSE(fs::exists(out / "bad")) << args;
  }
}

}  // namespace
}  // namespace advplan
