#include "advplan/run/stream_summary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <vector>

#include "advplan/core/error.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/trace_schema.hpp"
#include "advplan/io/csv.hpp"

namespace advplan {
using io::fmt_real;

namespace {

/// Sum (for the mean, in file order as metrics::mean) and Welford's running variance.
struct Acc {
  std::size_t n = 0;
  double sum = 0, wmean = 0, m2 = 0;
  void add(double x) {
    ++n;
    sum += x;
    const double d = x - wmean;
    wmean += d / static_cast<double>(n);
    m2 += d * (x - wmean);
  }
  double mean() const { return n ? sum / static_cast<double>(n) : 0.0; }
  /// [mean, lo, hi]: the normal approximation; one value (or none) gives lo = hi = mean, as the bootstrap does.
  std::array<double, 3> interval() const {
    const double m = mean();
    if (n <= 1) return {m, m, m};
    const double half = 1.959963984540054 * std::sqrt(m2 / static_cast<double>(n - 1)) / std::sqrt(static_cast<double>(n));
    return {m, m - half, m + half};
  }
};

/// RFC 4180 rows from a stream, one at a time (quoted fields may hold commas, quotes and newlines).
class RowReader {
 public:
  RowReader(std::istream& in, std::string source) : in_(in), source_(std::move(source)) {}
  bool next(std::vector<std::string>& row) {
    row.clear();
    std::string field;
    bool quoted = false, any = false;
    for (int ci; (ci = in_.get()) != EOF;) {
      const char c = static_cast<char>(ci);
      any = true;
      if (quoted) {
        if (c == '"') {
          if (in_.peek() == '"') {
            in_.get();
            field += '"';
          } else {
            quoted = false;
          }
        } else {
          field += c;
        }
      } else if (c == '"') {
        quoted = true;
      } else if (c == ',') {
        row.push_back(std::move(field));
        field.clear();
      } else if (c == '\n') {
        row.push_back(std::move(field));
        ++line_;
        return true;
      } else {
        field += c;
      }
    }
    if (any) throw CsvError(fmt::format("{}: line {}: truncated (no final newline)", source_, line_ + 1));
    return false;
  }
  std::size_t line() const { return line_; }

 private:
  std::istream& in_;
  std::string source_;
  std::size_t line_ = 0;
};

double number(const std::string& s, const std::string& source, std::size_t line, const std::string& col) {
  if (s.empty()) return std::nan("");
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size())
    throw CsvError(fmt::format("{}: line {}: column '{}' is not a number: '{}'", source, line, col, s));
  return v;
}

/// Index of `v` in `order`, appending it when new (order of first appearance).
std::size_t intern(std::vector<std::string>& order, std::map<std::string, std::size_t>& index, const std::string& v) {
  auto [it, fresh] = index.emplace(v, order.size());
  if (fresh) order.push_back(v);
  return it->second;
}

int k_of(const std::string& s) {
  int k = 0;
  std::from_chars(s.data(), s.data() + s.size(), k);
  return k;
}

/// The columns of per_scenario.csv the summaries read, and the summarised metrics' indices of the four that
/// terrain_summary.csv reports.
struct Columns {
  std::size_t status, reason, templ, cond, group, blue, red, k, terrain;
  std::vector<std::size_t> metric;  ///< per summarised metric
  std::size_t adv, win, rq, bq;     ///< indices into the summarised metrics
};

Columns columns_of(const std::vector<std::string>& header, const std::vector<std::string>& metrics) {
  auto col = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  auto metric = [&](const char* name) {
    return static_cast<std::size_t>(std::find(metrics.begin(), metrics.end(), name) - metrics.begin());
  };
  Columns c{col("status"), col("failure_reason"), col("template"),     col("condition"),
            col("condition_group"), col("blue_policy"), col("red_policy"), col("k"),
            col("terrain_family"), {}, metric("advantage"), metric("blue_win_rate"), metric("red_quality"),
            metric("blue_quality")};
  for (const auto& m : metrics) c.metric.push_back(col(m));
  return c;
}

/// The accumulators of the ok rows: per scope (all, then each template) and condition, per terrain family and
/// condition, with the templates, conditions and families in order of first appearance.
struct Accumulated {
  std::vector<std::string> templates, conds, families;
  std::map<std::string, std::size_t> tpl_index, cond_index, fam_index;
  struct CondInfo {
    std::string blue, red, group;
    int k = 0;
  };
  std::vector<CondInfo> info;
  // [scope 0 = all, 1 + template][condition][metric]
  std::vector<std::vector<std::vector<Acc>>> acc = std::vector<std::vector<std::vector<Acc>>>(1);
  std::map<std::pair<std::size_t, std::size_t>, std::array<Acc, 4>> terrain;  // (family, condition)
  std::vector<std::vector<std::vector<Acc>>> tacc;  // [family][condition][metric]

  const Acc& cell(std::size_t scope, std::size_t c, std::size_t m) const {
    static const Acc empty;
    return scope < acc.size() && c < acc[scope].size() ? acc[scope][c][m] : empty;
  }
  /// Adds one ok row's metric values `x`.
  void add(const std::vector<std::string>& row, const Columns& cols, const std::vector<double>& x) {
    const std::size_t nm = x.size();
    const std::size_t t = intern(templates, tpl_index, row[cols.templ]);
    const std::size_t c = intern(conds, cond_index, row[cols.cond]);
    const std::size_t f = intern(families, fam_index, row[cols.terrain]);
    if (info.size() < conds.size()) info.push_back({row[cols.blue], row[cols.red], row[cols.group], k_of(row[cols.k])});
    if (acc.size() < templates.size() + 1) acc.resize(templates.size() + 1);
    for (std::size_t scope : {std::size_t{0}, t + 1}) {
      auto& byc = acc[scope];
      if (byc.size() < conds.size()) byc.resize(conds.size(), std::vector<Acc>(nm));
      for (std::size_t m = 0; m < nm; ++m)
        if (!std::isnan(x[m])) byc[c][m].add(x[m]);
    }
    if (tacc.size() < families.size()) tacc.resize(families.size());
    auto& tc = tacc[f];
    if (tc.size() < conds.size()) tc.resize(conds.size(), std::vector<Acc>(nm));
    for (std::size_t m = 0; m < nm; ++m)
      if (!std::isnan(x[m])) tc[c][m].add(x[m]);
    auto& ta = terrain[{f, c}];
    const std::size_t picks[4] = {cols.adv, cols.win, cols.rq, cols.bq};
    for (std::size_t j = 0; j < 4; ++j)
      if (!std::isnan(x[picks[j]])) ta[j].add(x[picks[j]]);
  }
};

/// bootstrap_summary.csv: scope all, then template=<t> in order of first appearance; conditions likewise; then
/// terrain=<family>, families in `fam_order` (sorted).
std::string bootstrap_summary_csv(const Accumulated& a, const std::vector<std::string>& metrics,
                                  const std::vector<std::size_t>& fam_order, const BootstrapSettings& bs) {
  const std::string resamples = "0", seed = std::to_string(bs.seed);
  io::CsvTable boot(schema::bootstrap_summary());
  for (std::size_t scope = 0; scope <= a.templates.size(); ++scope)
    for (std::size_t c = 0; c < a.conds.size(); ++c)
      for (std::size_t m = 0; m < metrics.size(); ++m) {
        const Acc& x = a.cell(scope, c, m);
        const auto [mean, lo, hi] = x.interval();
        boot.add({scope == 0 ? "all" : "template=" + a.templates[scope - 1], a.conds[c], metrics[m],
                  std::to_string(x.n), fmt_real(mean), fmt_real(lo), fmt_real(hi), resamples, seed});
      }
  // Then terrain=<family>, families sorted (as analysis.cpp's bootstrap_summary_table).
  for (const std::size_t f : fam_order)
    for (std::size_t c = 0; c < a.conds.size(); ++c)
      for (std::size_t m = 0; m < metrics.size(); ++m) {
        static const Acc empty;
        const Acc& x = f < a.tacc.size() && c < a.tacc[f].size() ? a.tacc[f][c][m] : empty;
        const auto [mean, lo, hi] = x.interval();
        boot.add({"terrain=" + a.families[f], a.conds[c], metrics[m], std::to_string(x.n), fmt_real(mean),
                  fmt_real(lo), fmt_real(hi), resamples, seed});
      }
  return boot.to_string();
}

/// budget_curve.csv: the sweep's BLUE policy against greedy@k, by k (as analysis.cpp's sweep_conditions).
std::string budget_curve_csv(const Accumulated& a, const std::vector<std::string>& metrics, std::size_t i_adv) {
  io::CsvTable budget(schema::budget_curve());
  std::string sweep_blue;
  for (const auto& ci : a.info)
    if (ci.group == "sweep") {
      sweep_blue = ci.blue;
      break;
    }
  if (!sweep_blue.empty()) {
    std::map<int, std::size_t> by_k;
    for (std::size_t c = 0; c < a.info.size(); ++c)
      if (a.info[c].blue == sweep_blue && a.info[c].red.rfind("greedy@", 0) == 0 && !is_replay_group(a.info[c].group))
        by_k.emplace(a.info[c].k, c);
    for (const auto& [k, c] : by_k) {
      std::vector<std::string> r{std::to_string(k), std::to_string(a.cell(0, c, i_adv).n)};
      for (const char* name : {"advantage", "red_quality", "blue_win_rate", "pareto_count", "diversity"}) {
        const std::size_t m = std::find(metrics.begin(), metrics.end(), name) - metrics.begin();
        const auto [mean, lo, hi] = a.cell(0, c, m).interval();
        r.push_back(fmt_real(mean));
        r.push_back(fmt_real(lo));
        r.push_back(fmt_real(hi));
      }
      budget.add(r);
    }
  }
  return budget.to_string();
}

/// terrain_summary.csv: families in `fam_order` (sorted), conditions in order of first appearance.
std::string terrain_summary_csv(const Accumulated& a, const std::vector<std::size_t>& fam_order) {
  io::CsvTable ts(schema::terrain_summary());
  for (std::size_t f : fam_order)
    for (std::size_t c = 0; c < a.conds.size(); ++c) {
      if (is_replay_group(a.info[c].group)) continue;  // a sweep point, an attribution combination
      auto it = a.terrain.find({f, c});
      if (it == a.terrain.end() || it->second[0].n == 0) continue;
      const auto& x = it->second;
      const auto adv = x[0].interval(), win = x[1].interval();
      ts.add({a.families[f], a.conds[c], std::to_string(x[0].n), fmt_real(adv[0]), fmt_real(adv[1]),
              fmt_real(adv[2]), fmt_real(win[0]), fmt_real(win[1]), fmt_real(win[2]), fmt_real(x[2].mean()),
              fmt_real(x[3].mean())});
    }
  return ts.to_string();
}

}  // namespace

StreamedSummaries stream_summaries(const std::string& path, const BootstrapSettings& bs) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CsvError(fmt::format("{}: missing", path));
  RowReader reader(in, path);
  std::vector<std::string> row;
  if (!reader.next(row) || row != schema::per_scenario())
    throw CsvError(fmt::format("{}: line 1: the header is not the per_scenario.csv header", path));
  const auto& header = schema::per_scenario();
  const auto& metrics = schema::summarised_metrics();
  const Columns cols = columns_of(header, metrics);

  StreamedSummaries out;
  Accumulated a;
  std::vector<double> x(metrics.size());
  while (reader.next(row)) {
    if (row.size() != header.size())
      throw CsvError(fmt::format("{}: line {}: {} fields, expected {}", path, reader.line(), row.size(), header.size()));
    ++out.rows;
    if (row[cols.status] != "ok") {
      if (out.failed_rows++ == 0) out.first_failure = row[cols.reason];
      continue;
    }
    for (std::size_t m = 0; m < metrics.size(); ++m) x[m] = number(row[cols.metric[m]], path, reader.line(), metrics[m]);
    a.add(row, cols, x);
  }
  std::vector<std::size_t> fam_order(a.families.size());
  for (std::size_t i = 0; i < fam_order.size(); ++i) fam_order[i] = i;
  std::sort(fam_order.begin(), fam_order.end(),
            [&](std::size_t i, std::size_t j) { return a.families[i] < a.families[j]; });
  out.bootstrap_summary = bootstrap_summary_csv(a, metrics, fam_order, bs);
  out.budget_curve = budget_curve_csv(a, metrics, cols.adv);
  out.terrain_summary = terrain_summary_csv(a, fam_order);
  return out;
}

}  // namespace advplan
