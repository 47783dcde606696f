#include "advplan/experiment/analysis.hpp"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <set>
#include <tuple>

#include "advplan/core/error.hpp"
#include "advplan/experiment/table_format.hpp"
#include "advplan/experiment/trace_schema.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/policy/blue_policy.hpp"
#include "advplan/metrics/statistics.hpp"

namespace advplan {
using io::CsvTable;
using io::fmt_real;
namespace fs = std::filesystem;

namespace {

/// Distinct values of a column in order of first appearance.
std::vector<std::string> distinct(const CsvTable& t, std::string_view col) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  const auto c = t.col(col);
  for (const auto& r : t.rows())
    if (seen.insert(r[c]).second) out.push_back(r[c]);
  return out;
}

std::string cell(const Interval& i) { return interval_cell(i); }
using Row = std::vector<std::string>;

int k_of(const std::string& s) {
  int k = 0;
  std::from_chars(s.data(), s.data() + s.size(), k);
  return k;
}

/// The BLUE policy of the budget sweep: the BLUE policy of the rows in group sweep, or "" without a sweep.
std::string sweep_blue(const CsvTable& per) {
  const auto cg = per.col("condition_group"), cb = per.col("blue_policy");
  for (const auto& r : per.rows())
    if (r[cg] == "sweep") return r[cb];
  return "";
}

/// Sweep conditions by k: every condition in which the sweep's BLUE policy meets greedy@k (the sweep group's
/// own conditions, and listed ones such as the main greedy@8).
std::vector<std::pair<int, std::string>> sweep_conditions(const CsvTable& per) {
  const std::string blue = sweep_blue(per);
  std::map<int, std::string> by_k;
  if (blue.empty()) return {};
  const auto cc = per.col("condition"), cb = per.col("blue_policy"), cr = per.col("red_policy"), ck = per.col("k");
  for (const auto& r : per.rows())
    if (r[cb] == blue && r[cr].rfind("greedy@", 0) == 0) by_k.emplace(k_of(r[ck]), r[cc]);
  return {by_k.begin(), by_k.end()};
}

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

CsvTable ok_rows(const CsvTable& per) {
  CsvTable t(per.header());
  const auto cs = per.col("status");
  for (const auto& r : per.rows())
    if (r[cs] == "ok") t.add(r);
  return t;
}

const CsvTable& ok_rows(const CsvTable& per, CsvTable& storage) {
  const auto cs = per.col("status");
  if (std::all_of(per.rows().begin(), per.rows().end(), [&](const auto& r) { return r[cs] == "ok"; })) return per;
  storage = ok_rows(per);
  return storage;
}

namespace {

/// The rows a scope covers: "all", "template=<t>" or "terrain=<family>".
std::pair<std::string_view, std::string_view> scope_filter(std::string_view scope) {
  for (std::string_view prefix : {"template=", "terrain="})
    if (scope.starts_with(prefix))
      return {prefix == "template=" ? "template" : "terrain_family", scope.substr(prefix.size())};
  return {"", ""};
}

/// One scope's joint bootstrap: units are the scope's scenarios (order of first appearance), columns are
/// condition x metric (condition-major). Returns the intervals in column order.
/// The metrics of every row, parsed once (row-major, rows x metrics), for the scopes that all read them.
std::vector<double> parse_metrics(const CsvTable& per, const std::vector<std::string>& metrics) {
  std::vector<std::size_t> col(metrics.size());
  for (std::size_t m = 0; m < metrics.size(); ++m) col[m] = per.col(metrics[m]);
  std::vector<double> out(per.size() * metrics.size());
  for (std::size_t i = 0; i < per.size(); ++i)
    for (std::size_t m = 0; m < metrics.size(); ++m) out[i * metrics.size() + m] = per.real(i, col[m]);
  return out;
}

std::vector<Interval> scope_intervals(const CsvTable& per, std::string_view scope, const std::vector<std::string>& conds,
                                      const std::vector<std::string>& metrics, const BootstrapSettings& bs,
                                      const std::vector<double>* parsed = nullptr) {
  const auto [fcol, fval] = scope_filter(scope);
  const std::size_t c_filter = fcol.empty() ? 0 : per.col(fcol);
  const auto cs = per.col("scenario_id"), cc = per.col("condition");
  std::unordered_map<std::string_view, std::size_t> cond_index, unit_index;
  for (std::size_t c = 0; c < conds.size(); ++c) cond_index.emplace(conds[c], c);
  const std::size_t columns = conds.size() * metrics.size();
  std::vector<std::size_t> metric_col(metrics.size());
  for (std::size_t m = 0; m < metrics.size(); ++m) metric_col[m] = per.col(metrics[m]);
  std::vector<double> values;
  std::vector<char> seen;
  for (std::size_t i = 0; i < per.size(); ++i) {
    const auto& r = per.rows()[i];
    if (!fcol.empty() && r[c_filter] != fval) continue;
    const auto ci = cond_index.find(r[cc]);
    if (ci == cond_index.end()) continue;
    auto [u, fresh] = unit_index.try_emplace(r[cs], unit_index.size());
    if (fresh) {
      values.resize(values.size() + columns, std::nan(""));
      seen.resize(seen.size() + conds.size(), 0);
    }
    if (seen[u->second * conds.size() + ci->second]++)
      throw CsvError(fmt::format("{}: scenario {} has two ok rows of condition {}", per.source(), r[cs], r[cc]));
    for (std::size_t m = 0; m < metrics.size(); ++m)
      values[u->second * columns + ci->second * metrics.size() + m] =
          parsed ? (*parsed)[i * metrics.size() + m] : per.real(i, metric_col[m]);
  }
  return joint_bootstrap_means(values, columns, bs.resamples, bs.seed, scope);
}

std::string interval_key(std::string_view scope, std::string_view cond, std::string_view metric) {
  return fmt::format("{}\x1f{}\x1f{}", scope, cond, metric);
}

}  // namespace

CsvTable bootstrap_summary_table(const CsvTable& per_all, const BootstrapSettings& bs) {
  CsvTable storage;
  const CsvTable& per = ok_rows(per_all, storage);
  CsvTable out(schema::bootstrap_summary());
  std::vector<std::string> scopes{"all"};
  for (const auto& t : distinct(per, "template")) scopes.push_back("template=" + t);
  auto families = distinct(per, "terrain_family");
  std::sort(families.begin(), families.end());
  for (const auto& f : families) scopes.push_back("terrain=" + f);
  const auto conds = distinct(per, "condition");
  const auto& metrics = schema::summarised_metrics();
  // Scopes are independent keyed bootstraps, computed in parallel and collected by index.
  const std::vector<double> parsed = parse_metrics(per, metrics);
  std::vector<std::vector<Interval>> res(scopes.size());
  tbb::parallel_for(std::size_t{0}, scopes.size(),
                    [&](std::size_t s) { res[s] = scope_intervals(per, scopes[s], conds, metrics, bs, &parsed); });
  for (std::size_t s = 0; s < scopes.size(); ++s)
    for (std::size_t c = 0; c < conds.size(); ++c)
      for (std::size_t m = 0; m < metrics.size(); ++m) {
        const Interval& i = res[s][c * metrics.size() + m];
        out.add({scopes[s], conds[c], metrics[m], std::to_string(i.n), fmt_real(i.mean), fmt_real(i.lo),
                 fmt_real(i.hi), std::to_string(bs.resamples), std::to_string(bs.seed)});
      }
  return out;
}

SummaryIntervals::SummaryIntervals(const CsvTable& summary, const CsvTable& ok_per, const BootstrapSettings& bs)
    : per_(&ok_per), bs_(bs) {
  const auto cs = summary.col("scope"), cc = summary.col("condition"), cm = summary.col("metric"), cn = summary.col("n");
  for (std::size_t i = 0; i < summary.size(); ++i) {
    const auto& r = summary.rows()[i];
    Interval v;
    const auto [end, ec] = std::from_chars(r[cn].data(), r[cn].data() + r[cn].size(), v.n);
    if (ec != std::errc() || end != r[cn].data() + r[cn].size())
      throw CsvError(fmt::format("{}: line {}, column n: '{}' is not a count", summary.source(), i + 2, r[cn]));
    v.mean = summary.real(i, "mean");
    v.lo = summary.real(i, "ci_lo");
    v.hi = summary.real(i, "ci_hi");
    by_key_[interval_key(r[cs], r[cc], r[cm])] = v;
    scopes_[r[cs]] = true;
  }
}

Interval SummaryIntervals::get(const std::string& scope, const std::string& cond, const std::string& metric) const {
  if (auto it = by_key_.find(interval_key(scope, cond, metric)); it != by_key_.end()) return it->second;
  if (!scopes_[scope]) {
    // A scope the file does not summarise: the same joint bootstrap over the rows, once.
    scopes_[scope] = true;
    const auto conds = distinct(*per_, "condition");
    const auto& metrics = schema::summarised_metrics();
    const auto res = scope_intervals(*per_, scope, conds, metrics, bs_);
    for (std::size_t c = 0; c < conds.size(); ++c)
      for (std::size_t m = 0; m < metrics.size(); ++m)
        by_key_[interval_key(scope, conds[c], metrics[m])] = res[c * metrics.size() + m];
    if (auto it = by_key_.find(interval_key(scope, cond, metric)); it != by_key_.end()) return it->second;
  }
  return Interval{};
}

CsvTable budget_curve_table(const CsvTable& per, const SummaryIntervals& iv) {
  CsvTable out(schema::budget_curve());
  for (const auto& [k, cond] : sweep_conditions(per)) {
    Row row{std::to_string(k), std::to_string(iv.get("all", cond, "advantage").n)};
    for (const char* m : {"advantage", "red_quality", "blue_win_rate", "pareto_count", "diversity"}) {
      const Interval i = iv.get("all", cond, m);
      row.push_back(fmt_real(i.mean));
      row.push_back(fmt_real(i.lo));
      row.push_back(fmt_real(i.hi));
    }
    out.add(row);
  }
  return out;
}

CsvTable terrain_summary_table(const CsvTable& per, const SummaryIntervals& iv) {
  CsvTable out(schema::terrain_summary());
  auto families = distinct(per, "terrain_family");
  std::sort(families.begin(), families.end());
  for (const auto& fam : families) {
    const std::string scope = "terrain=" + fam;
    for (const auto& cond : distinct(per, "condition")) {
      const auto adv = iv.get(scope, cond, "advantage");
      if (adv.n == 0) continue;
      const auto win = iv.get(scope, cond, "blue_win_rate");
      const auto rq = iv.get(scope, cond, "red_quality");
      const auto bq = iv.get(scope, cond, "blue_quality");
      out.add({fam, cond, std::to_string(adv.n), fmt_real(adv.mean), fmt_real(adv.lo), fmt_real(adv.hi),
               fmt_real(win.mean), fmt_real(win.lo), fmt_real(win.hi), fmt_real(rq.mean), fmt_real(bq.mean)});
    }
  }
  return out;
}

BootstrapSettings recorded_bootstrap(const CsvTable& b) {
  if (b.size() == 0) throw CsvError(fmt::format("{}: no rows, so the bootstrap seed is not recorded", b.source()));
  BootstrapSettings s;
  const std::string& r = b.at(0, "resamples");
  const std::string& sd = b.at(0, "seed");
  auto [p1, e1] = std::from_chars(r.data(), r.data() + r.size(), s.resamples);
  auto [p2, e2] = std::from_chars(sd.data(), sd.data() + sd.size(), s.seed);
  if (e1 == std::errc() && e2 == std::errc() && s.resamples == 0)
    throw CsvError(fmt::format("{}: resamples is 0: this run's summaries were streamed with normal-approximation "
                               "intervals (advplan run --summary streaming), so its tables are not rebuilt",
                               b.source()));
  if (e1 != std::errc() || e2 != std::errc() || s.resamples < 1)
    throw CsvError(fmt::format("{}: line 2: resamples/seed are not integers", b.source()));
  return s;
}

RunCsvs read_run(const std::string& dir) {
  // One complete run, as its MANIFEST lists it: no stale file of another run, no interrupted write.
  io::verify_run_directory(dir);
  RunCsvs r;
  r.dir = dir;
  auto path = [&](const char* f) { return (fs::path(dir) / f).string(); };
  r.scenarios = CsvTable::read(path("scenarios.csv"), schema::scenarios());
  r.per_scenario = CsvTable::read(path("per_scenario.csv"), schema::per_scenario());
  r.bootstrap_summary = CsvTable::read(path("bootstrap_summary.csv"), schema::bootstrap_summary());
  // Every numeric cell must parse: a malformed number is named now rather than mid-table.
  for (std::size_t i = 0; i < r.per_scenario.size(); ++i)
    for (const auto& m : schema::summarised_metrics()) (void)r.per_scenario.real(i, m);
  auto optional = [&](const char* f, const std::vector<std::string>& cols) -> std::optional<CsvTable> {
    if (!fs::exists(path(f))) return std::nullopt;
    return CsvTable::read(path(f), cols);
  };
  r.council_trace = optional("council_trace.csv", schema::council_trace());
  r.council_candidates = optional("council_candidates.csv", schema::council_candidates());
  r.rubric_records = optional("studies/rubric_records.csv", schema::rubric_records());
  r.rubric_sensitivity = optional("studies/rubric_sensitivity.csv", schema::rubric_sensitivity());
  r.framing = optional("studies/framing.csv", schema::framing());
  r.components = optional("studies/components.csv", schema::components());
  // A BLUE policy in per_scenario.csv that declares extra trace files (PolicyInfo::traces) means they must be
  // there.
  std::set<std::string> blues;
  const auto cb = r.per_scenario.col("blue_policy");
  for (const auto& row : r.per_scenario.rows()) blues.insert(row[cb]);
  for (const auto& spec : blues) {
    const std::string name = spec.substr(0, spec.find(':'));
    if (!BlueRegistry::instance().contains(name)) continue;
    for (const auto& f : BlueRegistry::instance().info(name, "BLUE").traces)
      if (!fs::exists(path(f.name.c_str())))
        throw CsvError(fmt::format("{}: missing (per_scenario.csv has rows of BLUE policy {}, which writes it)",
                                   path(f.name.c_str()), spec));
  }
  return r;
}

namespace {
CsvTable filter_rows(const CsvTable& t, std::string_view col, const std::set<std::string>& keep) {
  CsvTable out(t.header());
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
  if (run.rubric_records) out.rubric_records = filter_rows(*run.rubric_records, "scenario_id", ids);
  // Study summaries are corpus-level; they are not re-sliced.
  out.rubric_sensitivity.reset();
  out.framing.reset();
  out.components.reset();
  // The slice's intervals are the slice's own joint bootstrap, with the run's recorded settings.
  out.bootstrap_summary = bootstrap_summary_table(out.per_scenario, recorded_bootstrap(run.bootstrap_summary));
  return out;
}

std::vector<std::pair<std::string, std::string>> build_tables(const RunCsvs& run, const BootstrapSettings& bs) {
  CsvTable storage;
  const CsvTable& per = ok_rows(run.per_scenario, storage);
  const SummaryIntervals iv(run.bootstrap_summary, per, bs);
  std::vector<std::pair<std::string, std::string>> files;
  auto emit = [&](const TextTable& t) {
    files.emplace_back(t.name + ".md", t.markdown());
    files.emplace_back(t.name + ".tex", t.latex());
  };

  // Table 3: policy comparison. The title and the policy columns follow from the conditions in the run.
  {
    const auto conds = conditions_in_group(per, {"main", "evaluate", "reference"});
    const auto policies = condition_policies(per);
    std::set<std::string> blues;
    for (const auto& c : conds) blues.insert(policies.at(c).first);
    TextTable t{"table3_policy_comparison",
                blues.size() == 1 ? fmt::format("Table 3: RED policy comparison (BLUE {} against each RED policy)",
                                                *blues.begin())
                                  : "Table 3: policy comparison (each condition's BLUE policy against its RED policy)",
                {"Condition", "BLUE", "RED", "n", "BLUE advantage", "BLUE win rate", "RED quality", "RED coherence"},
                {}};
    for (const auto& cond : conds) {
      std::vector<std::string> row{cond, policies.at(cond).first, policies.at(cond).second};
      bool first = true;
      for (const char* m : {"advantage", "blue_win_rate", "red_quality", "red_coherence"}) {
        const auto i = iv.get("all", cond, m);
        if (first) row.push_back(std::to_string(i.n));
        first = false;
        row.push_back(cell(i));
      }
      t.rows.push_back(row);
    }
    emit(t);
  }
  // Candidate diagnostics beside Table 3.
  {
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
    emit(t);
  }
  // Table 4: response budget.
  {
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
    if (!sweep.empty()) emit(t);
  }
  // Table 5: template slice.
  {
    TextTable t{"table5_template_slice", "Table 5: policy comparison by scenario template",
                {"Template", "Condition", "n", "BLUE advantage", "BLUE win rate", "RED quality"}, {}};
    for (const auto& tpl : distinct(per, "template")) {
      const std::string scope = "template=" + tpl;
      for (const auto& cond : conditions_in_group(per, {"main", "evaluate", "reference"})) {
        const auto adv = iv.get(scope, cond, "advantage");
        if (adv.n == 0) continue;
        t.rows.push_back({tpl, cond, std::to_string(adv.n), cell(adv),
                          cell(iv.get(scope, cond, "blue_win_rate")),
                          cell(iv.get(scope, cond, "red_quality"))});
      }
    }
    emit(t);
  }
  // Terrain-family summary.
  {
    TextTable t{"terrain_summary", "Terrain-family summary",
                {"Terrain family", "Condition", "n", "BLUE advantage", "BLUE win rate"}, {}};
    const CsvTable ts = terrain_summary_table(per, iv);
    for (std::size_t i = 0; i < ts.size(); ++i) {
      Interval a{ts.real(i, "advantage"), ts.real(i, "advantage_lo"), ts.real(i, "advantage_hi"), 1};
      Interval w{ts.real(i, "blue_win_rate"), ts.real(i, "blue_win_rate_lo"), ts.real(i, "blue_win_rate_hi"), 1};
      t.rows.push_back({ts.at(i, "terrain_family"), ts.at(i, "condition"), ts.at(i, "n"), cell(a), cell(w)});
    }
    emit(t);
  }
  for (auto& f : build_extra_tables(run, per, iv, bs)) files.push_back(std::move(f));
  return files;
}

std::vector<std::pair<std::string, std::string>> build_comparison(const RunCsvs& a, const RunCsvs& b,
                                                                  const BootstrapSettings& bs,
                                                                  const std::map<std::string, std::string>& blue_map) {
  const CsvTable pa = ok_rows(a.per_scenario), pb = ok_rows(b.per_scenario);
  // Rows pair by (scenario, BLUE policy, RED policy); run A's BLUE policy is renamed through blue_map first.
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, std::size_t> ib;
  {
    const auto cs = pb.col("scenario_id"), cb = pb.col("blue_policy"), cr = pb.col("red_policy");
    for (std::size_t i = 0; i < pb.size(); ++i) ib.emplace(Key{pb.rows()[i][cs], pb.rows()[i][cb], pb.rows()[i][cr]}, i);
  }
  // Pairings of run A in order of appearance: (BLUE in A, BLUE in B, RED) -> row pairs.
  std::vector<std::tuple<std::string, std::string, std::string>> order;
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<std::pair<std::size_t, std::size_t>>> pairs;
  {
    const auto cs = pa.col("scenario_id"), cb = pa.col("blue_policy"), cr = pa.col("red_policy");
    for (std::size_t i = 0; i < pa.size(); ++i) {
      const auto& r = pa.rows()[i];
      auto m = blue_map.find(r[cb]);
      const std::string blue_b = m == blue_map.end() ? r[cb] : m->second;
      auto j = ib.find(Key{r[cs], blue_b, r[cr]});
      if (j == ib.end()) continue;
      const auto key = std::make_tuple(r[cb], blue_b, r[cr]);
      auto [it, fresh] = pairs.try_emplace(key);
      if (fresh) order.push_back(key);
      it->second.emplace_back(i, j->second);
    }
  }
  if (order.empty())
    throw CsvError(fmt::format("{} and {}: no row pairs: no (scenario, BLUE policy, RED policy) of the first run is in "
                               "the second{}",
                               a.dir, b.dir, blue_map.empty() ? " (--blue-map A=B pairs BLUE policies with other names)" : ""));
  CsvTable csv({"blue_a", "blue_b", "red_policy", "metric", "n", "mean_a", "mean_b", "difference", "ci_lo", "ci_hi"});
  TextTable t{"comparison", fmt::format("Paired differences, run A ({}) minus run B ({}), by scenario, BLUE and RED policy", a.dir, b.dir),
              {"BLUE in A", "BLUE in B", "RED", "Metric", "n", "A", "B", "A - B [95% CI]"}, {}};
  for (const auto& key : order) {
    const auto& [blue_a, blue_b, red] = key;
    for (const char* m : {"advantage", "blue_win_rate", "blue_quality", "red_quality", "blue_coherence", "red_coherence"}) {
      std::vector<double> va, vb;
      for (const auto& [i, j] : pairs.at(key)) {
        const double x = pa.real(i, m), y = pb.real(j, m);
        if (std::isnan(x) || std::isnan(y)) continue;
        va.push_back(x);
        vb.push_back(y);
      }
      if (va.empty()) continue;
      const auto d = bootstrap_paired_difference(va, vb, bs.resamples, bs.seed,
                                                 fmt::format("paired|{}|{}|{}|{}", blue_a, blue_b, red, m));
      csv.add({blue_a, blue_b, red, m, std::to_string(d.n), fmt_real(mean(va)), fmt_real(mean(vb)), fmt_real(d.mean),
               fmt_real(d.lo), fmt_real(d.hi)});
      t.rows.push_back({blue_a, blue_b, red, m, std::to_string(d.n), fmt::format("{:.3f}", mean(va)),
                        fmt::format("{:.3f}", mean(vb)), fmt::format("{:+.3f} [{:+.3f}, {:+.3f}]", d.mean, d.lo, d.hi)});
    }
  }
  return {{"comparison.csv", csv.to_string()}, {"comparison.md", t.markdown()}, {"comparison.tex", t.latex()}};
}

void write_files(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IoError(fmt::format("{}: cannot create directory ({})", dir, ec.message()));
  for (const auto& [name, content] : files) {
    const fs::path target = fs::path(dir) / name;
    fs::create_directories(target.parent_path(), ec);
    if (ec) throw IoError(fmt::format("{}: cannot create directory ({})", target.parent_path().string(), ec.message()));
    io::write_file_atomic(target.string(), content);
  }
}

}  // namespace advplan
