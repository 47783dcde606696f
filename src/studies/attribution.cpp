// The attribution study (docs/METRICS.md "Attribution"): each part's Shapley value of an effect, per scenario and
// on average, from the 2^m on/off combinations the run played (run/sweep_points.hpp attribution_conditions).
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>

#include "advplan/run/sweep_points.hpp"
#include "advplan/stats/shapley.hpp"
#include "advplan/stats/text_table.hpp"
#include "advplan/studies/studies.hpp"
#include "stats/joint_columns.hpp"

namespace advplan {
namespace {
using io::CsvTable;
using io::fmt_real;

/// The decimals of the written Shapley values and totals (docs/METRICS.md "Attribution").
constexpr int kGridDecimals = 9;

const std::vector<std::string>& attribution_metrics() {
  static const std::vector<std::string> m{"advantage", "blue_win_rate"};
  return m;
}

std::string fixed(double v) { return std::isnan(v) ? "" : fmt::format("{:.9f}", v); }

}  // namespace

namespace schema {
const std::vector<std::string>& attribution() {
  static const std::vector<std::string> c{"metric", "kind", "part", "n", "value", "ci_lo", "ci_hi"};
  return c;
}
const std::vector<std::string>& attribution_scenarios() {
  static const std::vector<std::string> c{"scenario_id", "metric", "part", "value"};
  return c;
}
}  // namespace schema

std::vector<std::pair<std::string, std::string>> attribution_files(const CsvTable& per, const ExperimentConfig& cfg,
                                                                   const BootstrapSettings& bs) {
  const std::vector<Condition> conds = attribution_conditions(cfg);
  if (conds.empty()) return {};
  const std::vector<std::string>& parts = cfg.studies.attribution_parts;
  const std::size_t m = parts.size(), n_masks = conds.size();
  std::map<std::string, std::size_t> mask_of;
  for (std::size_t i = 0; i < n_masks; ++i) mask_of.emplace(conds[i].label, i);
  const std::vector<std::string>& metrics = attribution_metrics();
  const std::size_t M = metrics.size();
  // Each scenario's game per metric: v[mask], NaN until its row is read; a scenario counts when every
  // combination has an ok row (a failed combination leaves its game undefined).
  const std::size_t cs = per.col("scenario_id"), cc = per.col("condition"), cst = per.col("status");
  std::vector<std::size_t> mc;
  for (const auto& x : metrics) mc.push_back(per.col(x));
  std::vector<std::string> order;
  std::map<std::string, std::vector<double>> games;  // scenario -> M x 2^m
  for (std::size_t i = 0; i < per.size(); ++i) {
    const auto& r = per.rows()[i];
    const auto it = mask_of.find(r[cc]);
    if (it == mask_of.end()) continue;
    auto [g, fresh] = games.try_emplace(r[cs], M * n_masks, std::numeric_limits<double>::quiet_NaN());
    if (fresh) order.push_back(r[cs]);
    if (r[cst] != "ok") continue;
    for (std::size_t k = 0; k < M; ++k) g->second[k * n_masks + it->second] = per.real(i, mc[k]);
  }
  std::vector<std::string> complete;
  for (const auto& s : order) {
    bool all = true;
    for (double v : games.at(s)) all = all && !std::isnan(v);
    if (all) complete.push_back(s);
  }
  const std::size_t U = complete.size();
  CsvTable by_scenario(schema::attribution_scenarios());
  CsvTable out(schema::attribution());
  const std::size_t pairs = m * (m - 1) / 2;
  // Joint bootstrap columns per metric: phi_0..phi_{m-1}, total, v(none), v(all), the interactions.
  const std::size_t per_metric = m + 3 + pairs;
  detail::JointColumns cols(U);
  std::vector<std::vector<double>> col_values(M * per_metric, std::vector<double>(U));
  for (std::size_t k = 0; k < M; ++k) {
    for (std::size_t u = 0; u < U; ++u) {
      const double* v = games.at(complete[u]).data() + k * n_masks;
      const std::span<const double> game(v, n_masks);
      const auto phi = shapley_values(game, m);
      const auto inter = shapley_interactions(game, m);
      const auto grid = shapley_on_grid(game, 1, m, kGridDecimals);
      for (std::size_t i = 0; i < m; ++i) {
        col_values[k * per_metric + i][u] = phi[i];
        by_scenario.add({complete[u], metrics[k], parts[i], grid_text(grid[i], kGridDecimals)});
      }
      by_scenario.add({complete[u], metrics[k], "total", grid_text(grid[m], kGridDecimals)});
      col_values[k * per_metric + m][u] = v[n_masks - 1] - v[0];
      col_values[k * per_metric + m + 1][u] = v[0];
      col_values[k * per_metric + m + 2][u] = v[n_masks - 1];
      for (std::size_t p = 0; p < pairs; ++p) col_values[k * per_metric + m + 3 + p][u] = inter[p];
    }
  }
  for (auto& c : col_values) cols.add(c);
  const std::vector<Interval> iv = cols.intervals(bs, "attribution");
  for (std::size_t k = 0; k < M; ++k) {
    std::vector<double> flat;
    for (const auto& s : complete) {
      const double* v = games.at(s).data() + k * n_masks;
      flat.insert(flat.end(), v, v + n_masks);
    }
    const auto grid = shapley_on_grid(flat, U, m, kGridDecimals);
    const std::string n = std::to_string(U);
    auto row = [&](const std::string& kind, const std::string& part, const std::string& value, std::size_t c) {
      const Interval& x = iv[k * per_metric + c];
      out.add({metrics[k], kind, part, n, value, U ? fmt_real(x.lo) : "", U ? fmt_real(x.hi) : ""});
    };
    row("baseline", "none", U ? fixed(iv[k * per_metric + m + 1].mean) : "", m + 1);
    for (std::size_t i = 0; i < m; ++i) row("shapley", parts[i], U ? grid_text(grid[i], kGridDecimals) : "", i);
    row("total", "total", U ? grid_text(grid[m], kGridDecimals) : "", m);
    row("full", "all", U ? fixed(iv[k * per_metric + m + 2].mean) : "", m + 2);
    std::size_t p = 0;
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = i + 1; j < m; ++j, ++p)
        row("interaction", parts[i] + ":" + parts[j], U ? fixed(iv[k * per_metric + m + 3 + p].mean) : "", m + 3 + p);
  }
  return {{"studies/attribution.csv", out.to_string()}, {"studies/attribution_scenarios.csv", by_scenario.to_string()}};
}

TextTable attribution_table(const CsvTable& a) {
  TextTable t{"study_attribution",
              "Attribution study: each part's Shapley value of the effect (all parts on minus all off), mean over "
              "scenarios with 95% joint-bootstrap intervals; interactions are Shapley interaction indices",
              {"Metric", "Kind", "Part", "n", "Value", "95% CI"},
              {}};
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto& r = a.rows()[i];
    const std::string value = r[a.col("value")].empty() ? "n/a" : fmt::format("{:+.4f}", std::stod(r[a.col("value")]));
    const std::string ci = r[a.col("ci_lo")].empty()
                               ? ""
                               : fmt::format("[{:+.4f}, {:+.4f}]", std::stod(r[a.col("ci_lo")]), std::stod(r[a.col("ci_hi")]));
    t.rows.push_back({r[a.col("metric")], r[a.col("kind")], r[a.col("part")], r[a.col("n")], value, ci});
  }
  return t;
}

}  // namespace advplan
