#include "advplan/sweeps/sweep.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/run/sweep_points.hpp"
#include "advplan/stats/text_table.hpp"

namespace advplan {
namespace {
namespace fs = std::filesystem;
using io::CsvTable;
using io::fmt_real;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// The percentile bounds of replicates, or {NaN, NaN} when none is present.
std::pair<double, double> bounds_of(std::vector<double> reps) { return percentile_bounds(reps); }

std::string value_text(double v) { return setting_value_text(v); }

}  // namespace

const std::vector<std::string>& sweep_metrics() {
  static const std::vector<std::string> m{"advantage",       "blue_win_rate", "blue_quality",
                                          "red_quality",     "red_coherence", "red_pressure"};
  return m;
}

SweepLayout sweep_layout(const ExperimentConfig& cfg) {
  SweepLayout l;
  if (cfg.sweep.empty()) return l;
  l.condition = cfg.sweep.condition;
  l.params = cfg.sweep.params;
  const std::vector<Condition> conds = sweep_point_conditions(cfg);
  for (std::size_t i = 0; i < conds.size(); ++i) l.points.push_back({conds[i].label, cfg.sweep.points[i]});
  l.reference = cfg.sweep.reference;
  return l;
}

SweepLayout recorded_sweep_layout(const std::string& run_dir) {
  SweepLayout l;
  const std::string path = (fs::path(run_dir) / io::kMetadataFile).string();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return l;  // tables of traces alone
  nlohmann::json meta;
  if (const std::string why = untrusted::parse_json_bounded(io::read_text_file(path, io::kMaxDocumentBytes), meta);
      !why.empty())
    throw CsvError(fmt::format("{}: {}", path, why));
  if (!meta.is_object() || !meta.contains("sweep")) return l;
  const nlohmann::json& s = meta["sweep"];
  auto bad = [&](const std::string& field, const std::string& why) {
    return CsvError(fmt::format("{}: sweep{}{}: {}", path, field.empty() ? "" : ".", field, why));
  };
  if (!s.is_object()) throw bad("", "not an object");
  l.condition = untrusted::string_member(s, "condition");
  if (!s.contains("settings") || !s["settings"].is_array() || s["settings"].empty() ||
      s["settings"].size() > kMaxSweepParams)
    throw bad("settings", fmt::format("not a list of 1 to {} setting paths", kMaxSweepParams));
  for (const auto& p : s["settings"]) {
    if (!p.is_string()) throw bad("settings", "a path that is not a text");
    l.params.push_back(p.get<std::string>());
  }
  if (!s.contains("points") || !s["points"].is_array() || s["points"].empty() || s["points"].size() > kMaxSweepPoints)
    throw bad("points", fmt::format("not a list of 1 to {} points", kMaxSweepPoints));
  std::set<std::string> labels;
  for (const auto& p : s["points"]) {
    SweepLayout::Point pt;
    pt.label = untrusted::string_member(p, "label");
    if (pt.label.empty() || !labels.insert(pt.label).second) throw bad("points", "a point without a label of its own");
    if (!p.contains("values") || !p["values"].is_array() || p["values"].size() != l.params.size())
      throw bad("points", fmt::format("the point '{}' has not one value per setting", untrusted::excerpt(pt.label, 80)));
    for (const auto& v : p["values"]) {
      if (!v.is_number()) throw bad("points", "a value that is not a number");
      pt.values.push_back(v.get<double>());
    }
    l.points.push_back(std::move(pt));
  }
  {
    std::set<std::vector<double>> seen;
    for (const auto& p : l.points)
      if (!seen.insert(p.values).second)
        throw bad("points", fmt::format("the point '{}' repeats another's values", untrusted::excerpt(p.label, 80)));
  }
  const std::string ref = untrusted::string_member(s, "reference");
  const auto it = std::find_if(l.points.begin(), l.points.end(), [&](const auto& p) { return p.label == ref; });
  if (it == l.points.end()) throw bad("reference", "not one of the points");
  l.reference = static_cast<std::size_t>(it - l.points.begin());
  return l;
}

namespace {

/// The sweep's metric values per unit (a scenario of the points' rows, in the order they first appear) and column
/// (point p, metric m at p * M + m; NaN where the unit has no ok row), their joint-bootstrap replicates (column c's
/// B values from c * B) and each column's interval.
struct SweepValues {
  std::size_t P = 0, M = 0, U = 0, C = 0, B = 0;
  std::vector<double> values, reps;
  std::vector<Interval> iv;
  std::size_t col(std::size_t p, std::size_t m) const { return p * M + m; }
  double rep(std::size_t c, std::size_t b) const { return reps[c * B + b]; }
  double value(std::size_t u, std::size_t c) const { return values[u * C + c]; }
};

/// The points' ok rows of per_scenario.csv as the units' values.
void unit_values(const CsvTable& per, const SweepLayout& l, SweepValues& v) {
  const std::vector<std::string>& metrics = sweep_metrics();
  std::map<std::string, std::size_t> point_of;
  for (std::size_t p = 0; p < v.P; ++p) point_of.emplace(l.points[p].label, p);
  const std::size_t cs = per.col("scenario_id"), cc = per.col("condition"), cst = per.col("status");
  std::vector<std::size_t> mc;
  for (const auto& m : metrics) mc.push_back(per.col(m));
  std::map<std::string, std::size_t> unit_of;
  std::vector<std::pair<std::size_t, std::size_t>> cells;  // (row, point)
  for (std::size_t i = 0; i < per.size(); ++i) {
    const auto& r = per.rows()[i];
    const auto it = point_of.find(r[cc]);
    if (it == point_of.end()) continue;
    unit_of.try_emplace(r[cs], unit_of.size());
    if (r[cst] == "ok") cells.emplace_back(i, it->second);
  }
  v.U = unit_of.size();
  v.values.assign(v.U * v.C, kNaN);
  for (const auto& [i, p] : cells) {
    const std::size_t u = unit_of.at(per.rows()[i][cs]);
    for (std::size_t m = 0; m < v.M; ++m) v.values[u * v.C + p * v.M + m] = per.real(i, mc[m]);
  }
}

SweepValues sweep_values(const CsvTable& per, const SweepLayout& l, const BootstrapSettings& bs) {
  SweepValues v;
  v.P = l.points.size();
  v.M = sweep_metrics().size();
  v.C = v.P * v.M;
  unit_values(per, l, v);
  const std::string key = "sweep|" + l.condition;
  // The replicates once; each column's interval from them, as joint_bootstrap_means gives it (the same resamples,
  // bit for bit): the mean and n of the present values, the percentile bounds when n > 1.
  v.reps = joint_bootstrap_replicates(v.values, v.C, bs.resamples, bs.seed, key);
  v.B = bs.resamples > 0 ? static_cast<std::size_t>(bs.resamples) : 0;
  v.iv.assign(v.C, Interval{});
  for (std::size_t c = 0; c < v.C; ++c) {
    Interval& x = v.iv[c];
    double sum = 0;
    for (std::size_t u = 0; u < v.U; ++u)
      if (const double d = v.value(u, c); !std::isnan(d)) {
        sum += d;
        ++x.n;
      }
    x.mean = x.n == 0 ? 0.0 : sum / static_cast<double>(x.n);
    x.lo = x.hi = x.mean;
    if (x.n > 1 && v.B > 0)
      std::tie(x.lo, x.hi) = bounds_of(std::vector<double>(v.reps.begin() + static_cast<std::ptrdiff_t>(c * v.B),
                                                           v.reps.begin() + static_cast<std::ptrdiff_t>((c + 1) * v.B)));
  }
  return v;
}

/// sweep.csv: each point's metrics.
CsvTable points_table(const SweepLayout& l, const SweepValues& v) {
  const std::vector<std::string>& metrics = sweep_metrics();
  std::vector<std::string> header{"point"};
  for (const auto& p : l.params) header.push_back(p);
  for (const char* h : {"metric", "n", "mean", "ci_lo", "ci_hi", "reference"}) header.push_back(h);
  CsvTable points(header);
  for (std::size_t p = 0; p < v.P; ++p)
    for (std::size_t m = 0; m < v.M; ++m) {
      const Interval& x = v.iv[v.col(p, m)];
      std::vector<std::string> row{l.points[p].label};
      for (double d : l.points[p].values) row.push_back(value_text(d));
      const bool none = x.n == 0;
      row.insert(row.end(), {metrics[m], std::to_string(x.n), none ? "" : fmt_real(x.mean), none ? "" : fmt_real(x.lo),
                             none ? "" : fmt_real(x.hi), p == l.reference ? "1" : "0"});
      points.add(std::move(row));
    }
  return points;
}

/// The rows of point b minus point a in sweep_differences.csv: the means' difference with the interval of the
/// replicates' differences.
void add_difference(CsvTable& diffs, const SweepLayout& l, const SweepValues& v, const std::string& kind,
                    const std::string& setting, std::size_t b, std::size_t a) {
  const std::vector<std::string>& metrics = sweep_metrics();
  for (std::size_t m = 0; m < v.M; ++m) {
    const std::size_t cb = v.col(b, m), ca = v.col(a, m);
    std::size_t n = 0;
    for (std::size_t u = 0; u < v.U; ++u) n += !std::isnan(v.value(u, cb)) && !std::isnan(v.value(u, ca));
    std::string d, lo, hi;
    if (v.iv[cb].n > 0 && v.iv[ca].n > 0) {
      const double mean = v.iv[cb].mean - v.iv[ca].mean;
      double l0 = mean, h0 = mean;
      if (v.B > 0 && n > 1) {
        std::vector<double> r(v.B);
        for (std::size_t k = 0; k < v.B; ++k) r[k] = v.rep(cb, k) - v.rep(ca, k);
        std::tie(l0, h0) = bounds_of(std::move(r));
      }
      d = fmt_real(mean);
      lo = fmt_real(l0);
      hi = fmt_real(h0);
    }
    diffs.add({kind, setting, l.points[b].label, l.points[a].label, metrics[m], std::to_string(n), d, lo, hi});
  }
}

}  // namespace

std::optional<std::size_t> next_sweep_neighbour(const SweepLayout& l, std::size_t a, std::size_t s) {
  std::optional<std::size_t> next;
  for (std::size_t b = 0; b < l.points.size(); ++b) {
    if (b == a) continue;
    bool others_same = true;
    for (std::size_t t = 0; t < l.params.size(); ++t)
      if (t != s && l.points[b].values[t] != l.points[a].values[t]) others_same = false;
    if (!others_same || !(l.points[b].values[s] > l.points[a].values[s])) continue;
    if (!next || l.points[b].values[s] < l.points[*next].values[s]) next = b;
  }
  return next;
}

namespace {

/// sweep_differences.csv: each point minus its neighbour along each setting, then each point minus the reference.
CsvTable differences_table(const SweepLayout& l, const SweepValues& v) {
  CsvTable diffs({"kind", "setting", "point", "minus", "metric", "n", "difference", "ci_lo", "ci_hi"});
  for (std::size_t a = 0; a < v.P; ++a)
    for (std::size_t s = 0; s < l.params.size(); ++s)
      if (const auto next = next_sweep_neighbour(l, a, s)) add_difference(diffs, l, v, "neighbour", l.params[s], *next, a);
  for (std::size_t p = 0; p < v.P; ++p)
    if (p != l.reference) add_difference(diffs, l, v, "reference", "", p, l.reference);
  return diffs;
}

/// Per metric, the point of the largest mean (nullopt when no point has a value).
std::vector<std::optional<std::size_t>> best_points(const SweepValues& v) {
  std::vector<std::optional<std::size_t>> best(v.M);
  for (std::size_t m = 0; m < v.M; ++m)
    for (std::size_t p = 0; p < v.P; ++p)
      if (v.iv[v.col(p, m)].n > 0 && (!best[m] || v.iv[v.col(p, m)].mean > v.iv[v.col(*best[m], m)].mean)) best[m] = p;
  return best;
}

/// sweep_argmax.csv: the point of the largest mean, and its share of the resamples' argmax.
CsvTable argmax_table(const SweepLayout& l, const SweepValues& v, const std::vector<std::optional<std::size_t>>& best) {
  const std::vector<std::string>& metrics = sweep_metrics();
  std::vector<std::string> ah{"metric", "point"};
  for (const auto& p : l.params) ah.push_back(p);
  for (const char* h : {"mean", "share", "resamples"}) ah.push_back(h);
  CsvTable argmax(ah);
  for (std::size_t m = 0; m < v.M; ++m) {
    if (!best[m]) continue;
    std::size_t hits = 0, counted = 0;
    for (std::size_t b = 0; b < v.B; ++b) {
      std::optional<std::size_t> top;
      for (std::size_t p = 0; p < v.P; ++p) {
        const double x = v.rep(v.col(p, m), b);
        if (!std::isnan(x) && (!top || x > v.rep(v.col(*top, m), b))) top = p;
      }
      if (!top) continue;
      ++counted;
      hits += *top == *best[m];
    }
    std::vector<std::string> row{metrics[m], l.points[*best[m]].label};
    for (double d : l.points[*best[m]].values) row.push_back(value_text(d));
    row.insert(row.end(), {fmt_real(v.iv[v.col(*best[m], m)].mean),
                           counted ? fmt_real(static_cast<double>(hits) / static_cast<double>(counted)) : "",
                           std::to_string(counted)});
    argmax.add(std::move(row));
  }
  return argmax;
}

/// The heat map of a two-setting sweep (rows the first setting, columns the second) of the BLUE win rate when a
/// simulator setting is swept (the advantage does not read the wargame) and of the BLUE advantage otherwise.
void heat_map(const SweepLayout& l, const SweepValues& v, const std::vector<std::optional<std::size_t>>& best,
              TextTable& t) {
  const bool sim = l.params[0].rfind("simulator.", 0) == 0 || l.params[1].rfind("simulator.", 0) == 0;
  const std::size_t hm = sim ? 1 : 0;  // sweep_metrics(): advantage, blue_win_rate, ...
  std::vector<double> xs, ys;
  for (const auto& p : l.points) {
    if (std::find(xs.begin(), xs.end(), p.values[0]) == xs.end()) xs.push_back(p.values[0]);
    if (std::find(ys.begin(), ys.end(), p.values[1]) == ys.end()) ys.push_back(p.values[1]);
  }
  t.caption = fmt::format("Sweep of {} over {} and {}: mean {} (rows {}, columns {}; * the argmax point)",
                          l.condition, l.params[0], l.params[1], sim ? "BLUE win rate" : "BLUE advantage",
                          setting_name(l.params[0]), setting_name(l.params[1]));
  t.header.push_back(setting_name(l.params[0]) + " \\ " + setting_name(l.params[1]));
  for (double y : ys) t.header.push_back(value_text(y));
  for (double x : xs) {
    std::vector<std::string> row{value_text(x)};
    for (double y : ys) {
      std::string cell = "";
      for (std::size_t p = 0; p < v.P; ++p)
        if (l.points[p].values[0] == x && l.points[p].values[1] == y && v.iv[v.col(p, hm)].n > 0)
          cell = fmt::format("{:.3f}{}", v.iv[v.col(p, hm)].mean, best[hm] && *best[hm] == p ? " *" : "");
      row.push_back(cell);
    }
    t.rows.push_back(std::move(row));
  }
}

/// A row per point with every metric's interval.
void point_rows(const SweepLayout& l, const SweepValues& v, const std::vector<std::optional<std::size_t>>& best,
                TextTable& t) {
  t.caption = fmt::format("Sweep of {} over {}: means with 95% joint-bootstrap intervals over scenarios (* the "
                          "argmax point, R the reference)",
                          l.condition, [&] {
                            std::string s;
                            for (const auto& p : l.params) s += (s.empty() ? "" : ", ") + p;
                            return s;
                          }());
  for (const auto& p : l.params) t.header.push_back(setting_name(p));
  t.header.push_back("n");
  for (const auto& m : sweep_metrics()) t.header.push_back(m);
  for (std::size_t p = 0; p < v.P; ++p) {
    std::vector<std::string> row;
    for (double d : l.points[p].values) row.push_back(value_text(d));
    row.back() += p == l.reference ? " R" : "";
    row.push_back(std::to_string(v.iv[v.col(p, 0)].n));
    for (std::size_t m = 0; m < v.M; ++m)
      row.push_back(interval_cell(v.iv[v.col(p, m)]) + (best[m] && *best[m] == p ? " *" : ""));
    t.rows.push_back(std::move(row));
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> sweep_tables(const CsvTable& per, const SweepLayout& l,
                                                              const BootstrapSettings& bs) {
  if (l.points.empty()) return {};
  const SweepValues v = sweep_values(per, l, bs);
  const CsvTable points = points_table(l, v);
  const CsvTable diffs = differences_table(l, v);
  const std::vector<std::optional<std::size_t>> best = best_points(v);
  const CsvTable argmax = argmax_table(l, v, best);
  // sweep.md / .tex: the curve of a one-setting sweep (a row per point), the heat map of a two-setting one, a row
  // per point beyond.
  TextTable t;
  t.name = "sweep";
  if (l.params.size() == 2)
    heat_map(l, v, best, t);
  else
    point_rows(l, v, best, t);
  return {{"sweep.csv", points.to_string()},
          {"sweep_differences.csv", diffs.to_string()},
          {"sweep_argmax.csv", argmax.to_string()},
          {"sweep.md", t.markdown()},
          {"sweep.tex", t.latex()}};
}

std::vector<std::pair<std::string, std::string>> sweep_tables(const RunTraces& run, const BootstrapSettings& bs) {
  const SweepLayout l = recorded_sweep_layout(run.dir);
  if (l.points.empty()) return {};
  // run_metadata.json is not in the MANIFEST: its points must be the grid conditions per_scenario.csv has.
  std::set<std::string> grid;
  {
    const auto cc = run.per_scenario.col("condition"), cg = run.per_scenario.col("condition_group");
    for (const auto& r : run.per_scenario.rows())
      if (r[cg] == "grid") grid.insert(r[cc]);
  }
  for (const auto& p : l.points)
    if (!grid.contains(p.label))
      throw CsvError(fmt::format("{}: sweep.points: '{}' is not a grid condition of per_scenario.csv",
                                 (fs::path(run.dir) / io::kMetadataFile).string(), untrusted::excerpt(p.label, 80)));
  if (grid.size() != l.points.size())
    throw CsvError(fmt::format("{}: sweep.points: {} points, while per_scenario.csv has {} grid conditions",
                               (fs::path(run.dir) / io::kMetadataFile).string(), l.points.size(), grid.size()));
  return sweep_tables(run.per_scenario, l, bs);
}

namespace {

class SweepObserver final : public RunObserver {
 public:
  std::string name() const override { return "sweep"; }
  std::vector<std::pair<std::string, std::string>> finish(const RunArtifacts& a) override {
    // Only a run that played the points (advplan evaluate, say, does not).
    if (std::none_of(a.plan.conditions.begin(), a.plan.conditions.end(),
                     [](const Condition& c) { return c.group == "grid"; }))
      return {};
    auto files = sweep_tables(a.run.per_scenario, sweep_layout(*a.plan.cfg), a.bootstrap);
    for (auto& f : files) f.first = "tables/" + f.first;
    return files;
  }
};

}  // namespace

std::shared_ptr<RunObserver> make_sweep_observer() { return std::make_shared<SweepObserver>(); }

}  // namespace advplan
