#include "advplan/tables/tables.hpp"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <set>
#include <tuple>

#include "advplan/core/error.hpp"
#include "advplan/stats/text_table.hpp"
#include "advplan/council/council.hpp"
#include "advplan/run/trace_schema.hpp"
#include "advplan/stats/cluster.hpp"
#include "advplan/stats/power.hpp"
#include "advplan/stats/statistics.hpp"

namespace advplan {
using io::CsvTable;
using io::fmt_real;
namespace fs = std::filesystem;

namespace {


std::string cell(const Interval& i) { return interval_cell(i); }
using Row = std::vector<std::string>;




/// The BLUE and RED policy of each condition, from its first row.
std::map<std::string, std::pair<std::string, std::string>> condition_policies(const CsvTable& per) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  const auto cc = per.col("condition"), cb = per.col("blue_policy"), cr = per.col("red_policy");
  for (const auto& r : per.rows()) out.emplace(r[cc], std::make_pair(r[cb], r[cr]));
  return out;
}

std::vector<std::string> conditions_in_group(const CsvTable& per, std::initializer_list<std::string_view> groups) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  const auto cc = per.col("condition"), cg = per.col("condition_group");
  for (const auto& r : per.rows())
    for (auto g : groups)
      if (r[cg] == g && seen.insert(r[cc]).second) out.push_back(r[cc]);
  return out;
}

}  // namespace


namespace {
/// The council's trace files into `r`, those present in r.dir.
void read_council_traces(RunCsvs& r) {
  auto optional = [&](const TraceFile& f) -> std::optional<CsvTable> {
    const std::string path = (fs::path(r.dir) / f.name).string();
    if (!fs::exists(path)) return std::nullopt;
    return CsvTable::read(path, f.header);
  };
  r.council_trace = optional(council_trace_file());
  r.council_candidates = optional(council_candidates_file());
}
}  // namespace

RunCsvs read_run(const std::string& dir) {
  RunCsvs r;
  static_cast<RunTraces&>(r) = read_run_traces(dir);
  read_council_traces(r);
  return r;
}

namespace {
CsvTable filter_rows(const CsvTable& t, std::string_view col, const std::set<std::string>& keep) {
  CsvTable out(t.header());
  out.set_source(t.source());
  const auto c = t.col(col);
  for (const auto& r : t.rows())
    if (keep.contains(r[c])) out.add(r);
  return out;
}
}  // namespace

RunCsvs slice_run(const RunCsvs& run, const std::string& column, const std::string& value) {
  if (column != "template" && column != "terrain_family")
    throw CsvError(fmt::format("cannot slice by '{}' (accepted: template, terrain_family)", column));
  std::set<std::string> ids;
  const auto cc = run.scenarios.col(column), ci = run.scenarios.col("scenario_id");
  for (const auto& r : run.scenarios.rows())
    if (r[cc] == value) ids.insert(r[ci]);
  RunCsvs out = run;
  out.scenarios = filter_rows(run.scenarios, "scenario_id", ids);
  out.per_scenario = filter_rows(run.per_scenario, "scenario_id", ids);
  if (run.council_trace) out.council_trace = filter_rows(*run.council_trace, "scenario_id", ids);
  if (run.council_candidates) out.council_candidates = filter_rows(*run.council_candidates, "scenario_id", ids);
  // The slice's intervals are the slice's own joint bootstrap, with the run's recorded settings.
  out.bootstrap_summary = bootstrap_summary_table(out.per_scenario, recorded_bootstrap(run.bootstrap_summary));
  return out;
}

std::vector<std::pair<std::string, std::string>> build_tables(const RunCsvs& run, const BootstrapSettings& bs) {
  return build_tables(run, run.council_trace, bs);
}

namespace {

/// Table 3: policy comparison. The title and the policy columns follow from the conditions in the run.
TextTable policy_comparison_table(const CsvTable& per, const SummaryIntervals& iv) {
  const auto conds = conditions_in_group(per, {"main", "evaluate", "reference"});
  const auto policies = condition_policies(per);
  std::set<std::string> blues;
  for (const auto& c : conds) blues.insert(policies.at(c).first);
  TextTable t{"table3_policy_comparison",
              blues.size() == 1 ? fmt::format("Table 3: RED policy comparison (BLUE {} against each RED policy)",
                                              *blues.begin())
                                : "Table 3: policy comparison (each condition's BLUE policy against its RED policy)",
              {"Condition", "BLUE", "RED", "n", "BLUE advantage", "BLUE win rate", "RED quality", "RED coherence",
               "Nash gap"},
              {}};
  for (const auto& cond : conds) {
    std::vector<std::string> row{cond, policies.at(cond).first, policies.at(cond).second};
    bool first = true;
    for (const char* m : {"advantage", "blue_win_rate", "red_quality", "red_coherence", "nash_gap"}) {
      const auto i = iv.get("all", cond, m);
      if (first) row.push_back(std::to_string(i.n));
      first = false;
      row.push_back(cell(i));
    }
    t.rows.push_back(row);
  }
  return t;
}

/// The structure diagnostics of the BLUE plans beside Table 3 (the paper's structure paragraph): O, P_V and W.
TextTable structure_table(const CsvTable& per, const SummaryIntervals& iv) {
  const auto conds = conditions_in_group(per, {"main", "evaluate", "reference"});
  const auto policies = condition_policies(per);
  TextTable t{"table3c_structure", "Structure diagnostics of the BLUE plans per condition (O, P_V, W)",
              {"Condition", "BLUE", "O (path optionality)", "P_V (vertex parsimony)", "W (worldline completion)"},
              {}};
  for (const auto& cond : conds) {
    std::vector<std::string> row{cond, policies.at(cond).first};
    for (const char* m : {"blue_O", "blue_PV", "blue_W"}) row.push_back(cell(iv.get("all", cond, m)));
    t.rows.push_back(row);
  }
  return t;
}

/// Candidate diagnostics beside Table 3.
TextTable candidate_diagnostics_table(const CsvTable& per, const SummaryIntervals& iv) {
  TextTable t{"table3b_candidate_diagnostics", "Candidate-set diagnostics per condition",
              {"Condition", "Diversity", "Quality spread", "Pareto count", "Changed choice", "Quality regret",
               "Structural gain"},
              {}};
  for (const auto& cond : conditions_in_group(per, {"main", "sweep", "evaluate", "reference"})) {
    std::vector<std::string> row{cond};
    for (const char* m : {"diversity", "quality_spread", "pareto_count", "changed_choice", "quality_regret",
                          "structural_gain"})
      row.push_back(cell(iv.get("all", cond, m)));
    t.rows.push_back(row);
  }
  return t;
}

/// Table 4: response budget (none without a sweep).
std::optional<TextTable> response_budget_table(const CsvTable& per, const SummaryIntervals& iv) {
  TextTable t{"table4_response_budget",
              fmt::format("Table 4: response-budget sweep (BLUE {} against greedy@k)", sweep_blue(per)),
              {"k", "n", "BLUE advantage", "RED quality", "Pareto count", "Diversity", "BLUE win rate"}, {}};
  const auto sweep = sweep_conditions(per);
  for (const auto& [k, cond] : sweep) {
    std::vector<std::string> row{std::to_string(k)};
    const auto adv = iv.get("all", cond, "advantage");
    row.push_back(std::to_string(adv.n));
    row.push_back(cell(adv));
    for (const char* m : {"red_quality", "pareto_count", "diversity", "blue_win_rate"})
      row.push_back(cell(iv.get("all", cond, m)));
    t.rows.push_back(row);
  }
  if (sweep.empty()) return std::nullopt;
  return t;
}

/// Table 5: template slice.
TextTable template_slice_table(const CsvTable& per, const SummaryIntervals& iv) {
  TextTable t{"table5_template_slice", "Table 5: policy comparison by scenario template",
              {"Template", "Condition", "n", "BLUE advantage", "BLUE win rate", "RED quality"}, {}};
  for (const auto& tpl : distinct_values(per, "template")) {
    const std::string scope = "template=" + tpl;
    for (const auto& cond : conditions_in_group(per, {"main", "evaluate", "reference"})) {
      const auto adv = iv.get(scope, cond, "advantage");
      if (adv.n == 0) continue;
      t.rows.push_back({tpl, cond, std::to_string(adv.n), cell(adv),
                        cell(iv.get(scope, cond, "blue_win_rate")),
                        cell(iv.get(scope, cond, "red_quality"))});
    }
  }
  return t;
}

/// Terrain-family summary.
TextTable terrain_family_table(const CsvTable& per, const SummaryIntervals& iv) {
  TextTable t{"terrain_summary", "Terrain-family summary",
              {"Terrain family", "Condition", "n", "BLUE advantage", "BLUE win rate"}, {}};
  const CsvTable ts = terrain_summary_table(per, iv);
  for (std::size_t i = 0; i < ts.size(); ++i) {
    Interval a{ts.real(i, "advantage"), ts.real(i, "advantage_lo"), ts.real(i, "advantage_hi"), 1};
    Interval w{ts.real(i, "blue_win_rate"), ts.real(i, "blue_win_rate_lo"), ts.real(i, "blue_win_rate_hi"), 1};
    t.rows.push_back({ts.at(i, "terrain_family"), ts.at(i, "condition"), ts.at(i, "n"), cell(a), cell(w)});
  }
  return t;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> build_tables(const RunTraces& run,
                                                              const std::optional<CsvTable>& council_trace,
                                                              const BootstrapSettings& bs) {
  CsvTable storage;
  const CsvTable& per = ok_rows(run.per_scenario, storage);
  const SummaryIntervals iv(run.bootstrap_summary, per, bs);
  std::vector<std::pair<std::string, std::string>> files;
  auto emit = [&](const TextTable& t) {
    files.emplace_back(t.name + ".md", t.markdown());
    files.emplace_back(t.name + ".tex", t.latex());
  };
  emit(policy_comparison_table(per, iv));
  emit(structure_table(per, iv));
  emit(candidate_diagnostics_table(per, iv));
  if (const auto t = response_budget_table(per, iv)) emit(*t);
  emit(template_slice_table(per, iv));
  emit(terrain_family_table(per, iv));
  for (auto& f : build_extra_tables(council_trace, per, iv, bs)) files.push_back(std::move(f));
  return files;
}

std::vector<std::pair<std::string, std::string>> build_clustered_tables(const RunCsvs& run, const BootstrapSettings& bs) {
  const CsvTable per = ok_rows(run.per_scenario);
  CsvTable csv({"condition", "metric", "n", "clusters", "mean", "cr2_se", "satterthwaite_df", "t_lo", "t_hi",
                "wild_lo", "wild_hi", "wild_draws"});
  TextTable t{"table3_clustered",
              "Table 3 clustered by template: CR2 standard errors, Satterthwaite df, 95% t and wild cluster bootstrap "
              "intervals",
              {"Condition", "Metric", "n", "Templates", "Mean", "CR2 SE", "df", "95% t interval", "95% wild interval"},
              {}};
  std::size_t fewest = 0;
  for (const auto& cond : conditions_in_group(per, {"main", "evaluate", "reference"}))
    for (const char* m : {"advantage", "blue_win_rate"}) {
      std::vector<double> y;
      std::vector<std::size_t> g;
      std::map<std::string, std::size_t> ids;
      for (std::size_t i = 0; i < per.size(); ++i)
        if (per.at(i, "condition") == cond && !std::isnan(per.real(i, m))) {
          y.push_back(per.real(i, m));
          g.push_back(ids.try_emplace(per.at(i, "template"), ids.size()).first->second);
        }
      if (y.empty()) continue;
      const ClusteredMean c = clustered_mean(y, g, bs.resamples, bs.seed, fmt::format("clustered|{}|{}", cond, m));
      fewest = fewest == 0 ? c.clusters : std::min(fewest, c.clusters);
      csv.add({cond, m, std::to_string(c.n), std::to_string(c.clusters), fmt_real(c.mean), fmt_real(c.se),
               fmt_real(c.df), fmt_real(c.t_lo), fmt_real(c.t_hi), fmt_real(c.wild_lo), fmt_real(c.wild_hi),
               std::to_string(c.wild_draws)});
      auto num = [](double v, const char* f) { return std::isnan(v) ? std::string("n/a") : fmt::format(fmt::runtime(f), v); };
      auto bounds = [](double lo, double hi) {
        return std::isnan(lo) ? std::string("n/a") : fmt::format("[{:.3f}, {:.3f}]", lo, hi);
      };
      t.rows.push_back({cond, m, std::to_string(c.n), std::to_string(c.clusters), fmt::format("{:.3f}", c.mean),
                        num(c.se, "{:.3f}"), num(c.df, "{:.1f}"), bounds(c.t_lo, c.t_hi), bounds(c.wild_lo, c.wild_hi)});
    }
  t.caption += ". " + few_clusters_note(fewest);
  return {{"table3_clustered.csv", csv.to_string()}, {"table3_clustered.md", t.markdown()},
          {"table3_clustered.tex", t.latex()}};
}

namespace {

constexpr double kComparisonAlpha = 0.05;

/// Row pairs of two runs by (scenario, BLUE policy, RED policy), run A's BLUE policy renamed through blue_map first:
/// the pairings (BLUE in A, BLUE in B, RED) in A's order of appearance, and each pairing's (row in A, row in B).
struct RowPairs {
  using Key = std::tuple<std::string, std::string, std::string>;
  std::vector<Key> order;
  std::map<Key, std::vector<std::pair<std::size_t, std::size_t>>> pairs;
};

RowPairs pair_rows(const CsvTable& pa, const CsvTable& pb, const std::map<std::string, std::string>& blue_map) {
  std::map<RowPairs::Key, std::size_t> ib;
  const auto cs = pb.col("scenario_id"), cb = pb.col("blue_policy"), cr = pb.col("red_policy");
  for (std::size_t i = 0; i < pb.size(); ++i) ib.emplace(RowPairs::Key{pb.rows()[i][cs], pb.rows()[i][cb], pb.rows()[i][cr]}, i);
  RowPairs out;
  const auto as = pa.col("scenario_id"), ab = pa.col("blue_policy"), ar = pa.col("red_policy");
  for (std::size_t i = 0; i < pa.size(); ++i) {
    const auto& r = pa.rows()[i];
    auto m = blue_map.find(r[ab]);
    const std::string blue_b = m == blue_map.end() ? r[ab] : m->second;
    auto j = ib.find(RowPairs::Key{r[as], blue_b, r[ar]});
    if (j == ib.end()) continue;
    const RowPairs::Key key{r[ab], blue_b, r[ar]};
    auto [it, fresh] = out.pairs.try_emplace(key);
    if (fresh) out.order.push_back(key);
    it->second.emplace_back(i, j->second);
  }
  return out;
}

/// One paired difference of the comparison table, with its per-scenario differences.
struct PairedDifference {
  std::string blue_a, blue_b, red, metric;
  double mean_a = 0, mean_b = 0;
  Interval d;
  std::vector<double> diffs;
};

std::vector<PairedDifference> paired_differences(const CsvTable& pa, const CsvTable& pb, const RowPairs& rp,
                                                 const BootstrapSettings& bs) {
  std::vector<PairedDifference> rows;
  for (const auto& key : rp.order) {
    const auto& [blue_a, blue_b, red] = key;
    for (const char* m : {"advantage", "blue_win_rate", "blue_quality", "red_quality", "blue_coherence", "red_coherence"}) {
      std::vector<double> va, vb;
      for (const auto& [i, j] : rp.pairs.at(key)) {
        const double x = pa.real(i, m), y = pb.real(j, m);
        if (std::isnan(x) || std::isnan(y)) continue;
        va.push_back(x);
        vb.push_back(y);
      }
      if (va.empty()) continue;
      PairedDifference r{blue_a, blue_b, red, m, mean(va), mean(vb),
                         bootstrap_paired_difference(va, vb, bs.resamples, bs.seed,
                                                     fmt::format("paired|{}|{}|{}|{}", blue_a, blue_b, red, m)),
                         {}};
      for (std::size_t i = 0; i < va.size(); ++i) r.diffs.push_back(va[i] - vb[i]);
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> build_comparison(const RunCsvs& a, const RunCsvs& b,
                                                                  const BootstrapSettings& bs,
                                                                  const std::map<std::string, std::string>& blue_map,
                                                                  double power) {
  const CsvTable pa = ok_rows(a.per_scenario), pb = ok_rows(b.per_scenario);
  const RowPairs rp = pair_rows(pa, pb, blue_map);
  if (rp.order.empty())
    throw CsvError(fmt::format("{} and {}: no row pairs: no (scenario, BLUE policy, RED policy) of the first run is in "
                               "the second{}",
                               a.dir, b.dir, blue_map.empty() ? " (--blue-map A=B pairs BLUE policies with other names)" : ""));
  const auto rows = paired_differences(pa, pb, rp, bs);
  if (rows.empty())
    throw CsvError(fmt::format("{} and {}: the rows pair, but no metric has a value in both runs", a.dir, b.dir));
  // The minimum detectable effect of each difference at Holm's strictest level over the table's family.
  const double alpha_holm = kComparisonAlpha / static_cast<double>(rows.size());
  CsvTable csv({"blue_a", "blue_b", "red_policy", "metric", "n", "mean_a", "mean_b", "difference", "ci_lo", "ci_hi",
                "alpha_holm", "power", "mde"});
  TextTable t{"comparison",
              fmt::format("Paired differences, run A ({}) minus run B ({}), by scenario, BLUE and RED policy; MDE at "
                          "{:g}% power and Holm's strictest level {:.2g} over the {} rows",
                          a.dir, b.dir, power * 100, alpha_holm, rows.size()),
              {"BLUE in A", "BLUE in B", "RED", "Metric", "n", "A", "B", "A - B [95% CI]", "MDE"}, {}};
  for (const auto& r : rows) {
    const double mde = minimum_detectable_effect(r.diffs, alpha_holm, power);
    csv.add({r.blue_a, r.blue_b, r.red, r.metric, std::to_string(r.d.n), fmt_real(r.mean_a), fmt_real(r.mean_b),
             fmt_real(r.d.mean), fmt_real(r.d.lo), fmt_real(r.d.hi), fmt::format("{:.9g}", alpha_holm),
             fmt_real(power), fmt_real(mde)});
    t.rows.push_back({r.blue_a, r.blue_b, r.red, r.metric, std::to_string(r.d.n), fmt::format("{:.3f}", r.mean_a),
                      fmt::format("{:.3f}", r.mean_b), fmt::format("{:+.3f} [{:+.3f}, {:+.3f}]", r.d.mean, r.d.lo, r.d.hi),
                      std::isnan(mde) ? std::string("n/a") : fmt::format("{:.3f}", mde)});
  }
  return {{"comparison.csv", csv.to_string()}, {"comparison.md", t.markdown()}, {"comparison.tex", t.latex()}};
}

namespace {

class TablesObserver final : public RunObserver {
 public:
  std::string name() const override { return "tables"; }
  std::vector<std::pair<std::string, std::string>> finish(const RunArtifacts& a) override {
    RunCsvs council;  // the council's traces alone: the run's own traces are read already
    council.dir = a.run.dir;
    read_council_traces(council);
    auto files = build_tables(a.run, council.council_trace, a.bootstrap);
    for (auto& f : files) f.first = "tables/" + f.first;
    return files;
  }
};

}  // namespace

std::shared_ptr<RunObserver> make_tables_observer() { return std::make_shared<TablesObserver>(); }

}  // namespace advplan
