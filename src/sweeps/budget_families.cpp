#include "advplan/sweeps/budget_families.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "advplan/run/config.hpp"
#include "advplan/run/summaries.hpp"

namespace advplan {

using io::CsvTable;
using io::fmt_real;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr const char* kScope = "budget-families";  // the joint bootstrap's scope
constexpr const char* kMetrics[] = {"red_quality", "advantage", "blue_win_rate"};
constexpr std::size_t kPointCols = 5;  // the three metrics, then red_quality and advantage minus greedy's

/// "<family>@<k>" split, or false when the spec has no integer k.
bool split_spec(const std::string& red, std::string& family, int& k) {
  const auto at = red.find('@');
  if (at == std::string::npos || at == 0 || red.find(':') != std::string::npos) return false;
  const char* b = red.data() + at + 1;
  const char* e = red.data() + red.size();
  const auto [ptr, ec] = std::from_chars(b, e, k);
  family = red.substr(0, at);
  return ec == std::errc() && ptr == e && b != e;
}

using Families = std::vector<std::pair<std::string, std::vector<std::pair<int, std::string>>>>;

}  // namespace

const std::vector<std::string>& budget_families_header() {
  static const std::vector<std::string> h{
      "attacker",      "k",           "condition",        "n",
      "red_quality",   "red_quality_lo", "red_quality_hi", "advantage",
      "advantage_lo",  "advantage_hi", "blue_win_rate",    "blue_win_rate_lo",
      "blue_win_rate_hi", "n_paired",  "red_quality_minus_greedy", "red_quality_minus_greedy_lo",
      "red_quality_minus_greedy_hi", "advantage_minus_greedy", "advantage_minus_greedy_lo",
      "advantage_minus_greedy_hi"};
  return h;
}

Families budget_families(const CsvTable& per) {
  const std::string blue = sweep_blue(per);
  if (blue.empty()) return {};
  const auto cc = per.col("condition"), cb = per.col("blue_policy"), cr = per.col("red_policy"),
             cg = per.col("condition_group"), cs = per.col("status");
  std::map<std::string, std::map<int, std::string>> by_family;
  std::set<std::string> swept;  // the families of the budget sweep itself (group sweep)
  for (const auto& r : per.rows()) {
    std::string family;
    int k = 0;
    if (r[cb] != blue || r[cs] != "ok" || is_replay_group(r[cg]) || !split_spec(r[cr], family, k)) continue;
    by_family[family].emplace(k, r[cc]);
    if (r[cg] == "sweep") swept.insert(family);
  }
  std::erase_if(by_family, [&](const auto& f) { return !swept.contains(f.first); });
  Families out;
  if (const auto g = by_family.find("greedy"); g != by_family.end())
    out.emplace_back(g->first, std::vector<std::pair<int, std::string>>(g->second.begin(), g->second.end()));
  for (const auto& [family, ks] : by_family)
    if (family != "greedy") out.emplace_back(family, std::vector<std::pair<int, std::string>>(ks.begin(), ks.end()));
  return out;
}

namespace {

/// The units x columns matrix: per point (family, k) its three metrics and its two differences from greedy@k, by
/// scenario (NaN where a scenario has no ok row, or, for a difference, where either side has none).
std::vector<double> point_values(const CsvTable& per, const Families& fams, std::size_t cols, std::size_t& units) {
  std::unordered_map<std::string, std::size_t> unit_of;
  std::map<std::pair<std::string, std::string>, std::size_t> row_of;  // (condition, scenario) -> ok row
  const auto cc = per.col("condition"), cs = per.col("scenario_id"), cst = per.col("status");
  for (std::size_t i = 0; i < per.size(); ++i) {
    const auto& r = per.rows()[i];
    if (r[cst] != "ok") continue;
    unit_of.emplace(r[cs], unit_of.size());
    row_of.emplace(std::make_pair(r[cc], r[cs]), i);
  }
  units = unit_of.size();
  std::vector<double> v(units * cols, kNaN);
  std::map<int, std::string> greedy;
  if (!fams.empty() && fams.front().first == "greedy") greedy.insert(fams.front().second.begin(), fams.front().second.end());
  std::size_t point = 0;
  for (const auto& [family, ks] : fams)
    for (const auto& [k, cond] : ks) {
      const auto g = greedy.find(k);
      for (const auto& [scenario, u] : unit_of) {
        const auto own = row_of.find({cond, scenario});
        if (own == row_of.end()) continue;
        double* cell = v.data() + u * cols + point * kPointCols;
        for (std::size_t m = 0; m < 3; ++m) cell[m] = per.real(own->second, kMetrics[m]);
        if (family == "greedy" || g == greedy.end()) continue;
        const auto other = row_of.find({g->second, scenario});
        if (other == row_of.end()) continue;
        cell[3] = cell[0] - per.real(other->second, "red_quality");
        cell[4] = cell[1] - per.real(other->second, "advantage");
      }
      ++point;
    }
  return v;
}

void add_interval(std::vector<std::string>& row, const Interval& i, bool present) {
  for (double x : {i.mean, i.lo, i.hi}) row.push_back(present ? fmt_real(x) : std::string());
}

}  // namespace

std::string budget_families_csv(const CsvTable& per_raw, const BootstrapSettings& bs) {
  const CsvTable per = sample_means(per_raw);
  const Families fams = budget_families(per);
  if (std::none_of(fams.begin(), fams.end(), [](const auto& f) { return f.first != "greedy"; })) return {};
  std::size_t points = 0;
  for (const auto& f : fams) points += f.second.size();
  const std::size_t cols = points * kPointCols;
  std::size_t units = 0;
  const std::vector<double> v = point_values(per, fams, cols, units);
  const auto iv = joint_bootstrap_means(v, cols, bs.resamples, bs.seed, kScope);
  CsvTable out(budget_families_header());
  std::size_t point = 0;
  for (const auto& [family, ks] : fams)
    for (const auto& [k, cond] : ks) {
      const Interval* p = iv.data() + point++ * kPointCols;
      std::vector<std::string> row{family, std::to_string(k), cond, std::to_string(p[0].n)};
      for (std::size_t m = 0; m < 3; ++m) add_interval(row, p[m], p[m].n > 0);
      row.push_back(std::to_string(p[3].n));
      add_interval(row, p[3], p[3].n > 0);
      add_interval(row, p[4], p[4].n > 0);
      out.add(std::move(row));
    }
  return out.to_string();
}

}  // namespace advplan
