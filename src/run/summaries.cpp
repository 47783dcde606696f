#include "advplan/run/summaries.hpp"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "advplan/core/error.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/trace_schema.hpp"

namespace advplan {
using io::CsvTable;
using io::fmt_real;

namespace {
using Row = std::vector<std::string>;

int k_of(const std::string& s) {
  int k = 0;
  std::from_chars(s.data(), s.data() + s.size(), k);
  return k;
}

}  // namespace

std::vector<std::string> distinct_values(const CsvTable& t, std::string_view col) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  const auto c = t.col(col);
  for (const auto& r : t.rows())
    if (seen.insert(r[c]).second) out.push_back(r[c]);
  return out;
}

std::string sweep_blue(const CsvTable& per) {
  const auto cg = per.col("condition_group"), cb = per.col("blue_policy");
  for (const auto& r : per.rows())
    if (r[cg] == "sweep") return r[cb];
  return "";
}

std::vector<std::pair<int, std::string>> sweep_conditions(const CsvTable& per) {
  const std::string blue = sweep_blue(per);
  std::map<int, std::string> by_k;
  if (blue.empty()) return {};
  const auto cc = per.col("condition"), cb = per.col("blue_policy"), cr = per.col("red_policy"), ck = per.col("k"),
             cg = per.col("condition_group");
  for (const auto& r : per.rows())  // (a sweep point plays under its own settings: not the budget sweep's)
    if (r[cb] == blue && r[cr].rfind("greedy@", 0) == 0 && !is_replay_group(r[cg])) by_k.emplace(k_of(r[ck]), r[cc]);
  return {by_k.begin(), by_k.end()};
}

CsvTable sample_means(const CsvTable& per) {
  if (!per.has_col("sample")) return per;
  std::vector<std::string> header;
  for (const auto& h : per.header())
    if (h != "sample") header.push_back(h);
  CsvTable out(header);
  out.set_source(per.source());
  const std::size_t c_sample = per.col("sample"), c_scenario = per.col("scenario_id"),
                    c_condition = per.col("condition"), c_status = per.col("status");
  std::vector<std::size_t> numeric;
  for (const auto& r : schema::per_scenario_ranges())
    if (std::string_view(r.column) != "k" && std::string_view(r.column) != "sample" && per.has_col(r.column))
      numeric.push_back(per.col(r.column));
  // The rows of each (scenario, condition), in order of first appearance.
  std::vector<std::vector<std::size_t>> groups;
  std::map<std::pair<std::string_view, std::string_view>, std::size_t> group_of;
  std::set<std::tuple<std::string_view, std::string_view, std::string_view>> seen;
  for (std::size_t i = 0; i < per.size(); ++i) {
    const auto& r = per.rows()[i];
    if (!seen.emplace(r[c_scenario], r[c_condition], r[c_sample]).second)
      throw CsvError(fmt::format("{}: line {}: scenario {} has two rows of condition {}, sample {}", per.source(),
                                 i + 2, r[c_scenario], r[c_condition], r[c_sample]));
    auto [it, fresh] = group_of.try_emplace({r[c_scenario], r[c_condition]}, groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(i);
  }
  for (const auto& g : groups) {
    std::vector<std::size_t> ok;
    for (std::size_t i : g)
      if (per.rows()[i][c_status] == "ok") ok.push_back(i);
    const std::size_t first = ok.empty() ? g.front() : ok.front();
    Row row = per.rows()[first];
    if (!ok.empty())
      for (std::size_t c : numeric) {
        double sum = 0;
        std::size_t n = 0;
        for (std::size_t i : ok)
          if (const double v = per.real(i, c); !std::isnan(v)) {
            sum += v;
            ++n;
          }
        row[c] = n == 0 ? std::string() : fmt_real(sum / static_cast<double>(n));
      }
    row.erase(row.begin() + static_cast<std::ptrdiff_t>(c_sample));
    out.add(std::move(row));
  }
  return out;
}

CsvTable ok_rows(const CsvTable& per) {
  CsvTable t(per.header());
  t.set_source(per.source());
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

CsvTable bootstrap_summary_table(const CsvTable& per_given, const BootstrapSettings& bs) {
  // A run of several samples: the samples' means within each scenario first, so n counts scenarios.
  CsvTable means;
  if (per_given.has_col("sample")) means = sample_means(per_given);
  const CsvTable& per_all = per_given.has_col("sample") ? means : per_given;
  CsvTable storage;
  const CsvTable& per = ok_rows(per_all, storage);
  CsvTable out(schema::bootstrap_summary());
  std::vector<std::string> scopes{"all"};
  for (const auto& t : distinct_values(per, "template")) scopes.push_back("template=" + t);
  auto families = distinct_values(per, "terrain_family");
  std::sort(families.begin(), families.end());
  for (const auto& f : families) scopes.push_back("terrain=" + f);
  const auto conds = distinct_values(per, "condition");
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
    const auto conds = distinct_values(*per_, "condition");
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
  auto families = distinct_values(per, "terrain_family");
  std::sort(families.begin(), families.end());
  // The conditions, less the replays of a listed condition under other settings (sweep points, attribution
  // combinations): their results are the sweep's and the study's files.
  std::vector<std::string> conds;
  {
    std::set<std::string> replays;
    if (per.has_col("condition_group")) {
      const auto cc = per.col("condition"), cg = per.col("condition_group");
      for (const auto& r : per.rows())
        if (is_replay_group(r[cg])) replays.insert(r[cc]);
    }
    for (auto& c : distinct_values(per, "condition"))
      if (!replays.contains(c)) conds.push_back(std::move(c));
  }
  for (const auto& fam : families) {
    const std::string scope = "terrain=" + fam;
    for (const auto& cond : conds) {
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
  if (s.resamples > 1000000)  // the config's bound on bootstrap.resamples: a larger B is not a run's
    throw CsvError(fmt::format("{}: line 2: resamples is {}, above the 1000000 a config allows", b.source(), s.resamples));
  return s;
}

}  // namespace advplan
