#include "advplan/sweeps/extrapolation.hpp"

#include "advplan/sweeps/sweep.hpp"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "advplan/core/error.hpp"
#include "advplan/core/random.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/run/run_reader.hpp"
#include "advplan/run/summaries.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/run/trace_schema.hpp"
#include "core/det_math.hpp"

namespace advplan {

namespace fs = std::filesystem;
using io::CsvTable;
using io::fmt_real;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr const char* kScope = "extrapolation";  // the joint bootstrap's scope

/// candidates.csv of `dir`, with the header a run writes.
CsvTable read_candidates(const std::string& dir) {
  CsvTable t = CsvTable::read((fs::path(dir) / "candidates.csv").string());
  if (t.header() != schema::candidates(false) && t.header() != schema::candidates(true))
    throw CsvError(fmt::format("{}: its header is not the one a run writes (docs/TRACES.md \"candidates.csv\")",
                               t.source()));
  return t;
}

std::string k_cell(double k) { return std::isinf(k) ? std::string("limit") : std::to_string(static_cast<long>(k)); }

/// An integer cell of k*, or "" when it is not finite (the advantage stays above the level on the whole grid).
std::string int_cell(double v) { return std::isfinite(v) ? std::to_string(static_cast<long>(v)) : std::string(); }

/// The first grid k at which curve(g) < level, +inf when none.
template <class Curve>
double first_below(const std::vector<int>& grid, double level, Curve curve) {
  for (std::size_t g = 0; g < grid.size(); ++g)
    if (curve(g) < level) return grid[g];
  return kInf;
}

}  // namespace

std::pair<double, double> ScenarioTail::prediction_interval(double k, double interval) const {
  return {model.max_quantile(k, (1 - interval) / 2), model.max_quantile(k, (1 + interval) / 2)};
}

const std::vector<std::string>& extrapolation_header() {
  static const std::vector<std::string> h{"statistic", "k", "level", "n", "observed", "estimate", "ci_lo", "ci_hi"};
  return h;
}

const std::vector<int>& k_star_grid() {
  static const std::vector<int> grid = [] {
    std::vector<int> g;
    for (int k = 1; k <= 64; ++k) g.push_back(k);
    for (int j = 1;; ++j) {
      // 64 * 2^(j/32) with the CPU-independent exp (core/det_math.hpp); whole powers of two exactly.
      const int whole = j / 32, frac = j % 32;
      const double k = std::ceil(std::ldexp(64.0 * (frac ? det::exp(frac / 32.0 * 0.69314718055994530942) : 1.0), whole));
      if (k > (1 << 20)) break;
      if (static_cast<int>(k) > g.back()) g.push_back(static_cast<int>(k));
    }
    return g;
  }();
  return grid;
}

ExtrapolationFit fit_extrapolation(const CsvTable& per_raw, const CsvTable& cand, const ExtrapolationOptions& opts) {
  ExtrapolationFit fit;
  const CsvTable per = sample_means(per_raw);
  fit.sweep = opts.budget.empty() ? sweep_conditions(per) : opts.budget;
  if (fit.sweep.empty()) return fit;
  fit.k = fit.sweep.back().first;
  fit.condition = fit.sweep.back().second;
  fit.draws = opts.fit_index > 0 ? std::min(fit.k, opts.fit_index) : fit.k;

  // The scenarios: ok rows of the fitted condition with a BLUE quality, in file order.
  std::unordered_map<std::string, std::size_t> unit_of;
  {
    const auto cc = per.col("condition"), cs = per.col("scenario_id"), cst = per.col("status"),
               cbq = per.col("blue_quality");
    for (std::size_t i = 0; i < per.size(); ++i) {
      const auto& r = per.rows()[i];
      if (r[cc] != fit.condition || r[cst] != "ok") continue;
      const double bq = per.real(i, cbq);
      if (std::isnan(bq) || unit_of.count(r[cs])) continue;
      unit_of.emplace(r[cs], fit.scenarios.size());
      ScenarioTail s;
      s.scenario_id = r[cs];
      s.blue_quality = bq;
      fit.scenarios.push_back(std::move(s));
    }
  }

  // Their candidates of that condition with index < draws.
  for (const char* c : {"scenario_id", "condition", "index", "quality"}) (void)cand.col(c);
  schema::check_ranges(cand, schema::candidates_ranges());
  const bool sampled = cand.has_col("sample");
  const auto cs = cand.col("scenario_id"), cc = cand.col("condition"), ci = cand.col("index"),
             cq = cand.col("quality");
  const std::size_t csm = sampled ? cand.col("sample") : 0;
  std::vector<std::vector<double>> draws(fit.scenarios.size());
  std::vector<std::set<std::string>> samples(fit.scenarios.size());
  std::set<std::tuple<std::size_t, std::string_view, long>> seen;  // (unit, sample, index)
  {  // A set is one (scenario, condition, sample): a run writes at most k <= 1024 rows of one.
    std::map<std::tuple<std::string_view, std::string_view, std::string_view>, std::size_t> set_rows;
    for (std::size_t i = 0; i < cand.size(); ++i) {
      const auto& r = cand.rows()[i];
      if (++set_rows[{r[cs], r[cc], sampled ? std::string_view(r[csm]) : std::string_view()}] > schema::kMaxCandidateSet)
        throw CsvError(fmt::format("{}: line {}: the candidate set of scenario {} and condition {} has more than {} "
                                   "rows, more than any run writes (k is at most 1024)",
                                   cand.source(), i + 2, untrusted::excerpt(r[cs], 40), untrusted::excerpt(r[cc], 40),
                                   schema::kMaxCandidateSet));
    }
  }
  for (std::size_t i = 0; i < cand.size(); ++i) {
    const auto& r = cand.rows()[i];
    if (r[cc] != fit.condition) continue;
    const std::string_view sample = sampled ? std::string_view(r[csm]) : std::string_view();
    const auto u = unit_of.find(r[cs]);
    if (u == unit_of.end()) continue;
    const double index = cand.real(i, ci), q = cand.real(i, cq);
    if (std::isnan(index) || std::isnan(q))
      throw CsvError(fmt::format("{}: line {}: column '{}' is empty: every candidate has an index and a quality",
                                 cand.source(), i + 2, std::isnan(index) ? "index" : "quality"));
    const auto idx = static_cast<long>(index);
    if (!seen.emplace(u->second, sample, idx).second)
      throw CsvError(fmt::format("{}: line {}: column 'index': candidate {} of scenario {} and condition {} appears "
                                 "twice",
                                 cand.source(), i + 2, idx, untrusted::excerpt(r[cs], 40), untrusted::excerpt(r[cc], 40)));
    samples[u->second].emplace(sample);
    if (idx >= fit.draws) continue;
    draws[u->second].push_back(std::clamp(q, 0.0, 1.0));  // the range check allows 1e-9 of rounding slack
  }

  // Scenarios without a valid candidate have no fit.
  std::vector<ScenarioTail> kept;
  std::vector<std::vector<double>> kept_draws;
  for (std::size_t s = 0; s < fit.scenarios.size(); ++s) {
    if (draws[s].empty()) continue;
    fit.scenarios[s].valid = draws[s].size();
    fit.scenarios[s].drawn = static_cast<std::size_t>(fit.draws) * samples[s].size();
    kept.push_back(std::move(fit.scenarios[s]));
    kept_draws.push_back(std::move(draws[s]));
  }
  fit.scenarios = std::move(kept);
  tbb::parallel_for(std::size_t{0}, fit.scenarios.size(), [&](std::size_t s) {
    auto& t = fit.scenarios[s];
    t.model = fit_tail(kept_draws[s], t.drawn, 0.0, 1.0, opts.rule);
  });
  return fit;
}

std::string extrapolation_csv(const ExtrapolationFit& fit, const CsvTable& per_raw, const BootstrapSettings& bs,
                              const ExtrapolationOptions& opts) {
  if (fit.scenarios.empty()) return {};
  const CsvTable per = sample_means(per_raw);
  const std::size_t units = fit.scenarios.size();

  // The ks: the sweep's, the extra ones, then the limit.
  std::vector<double> ks;
  for (const auto& [k, c] : fit.sweep) ks.push_back(k);
  for (int k : opts.extra_ks)
    if (k >= 1) ks.push_back(k);
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  ks.push_back(kInf);
  std::map<int, std::string> observed_condition(fit.sweep.begin(), fit.sweep.end());

  // Observed cells: (condition, scenario) -> ok row.
  std::map<std::pair<std::string_view, std::string_view>, std::size_t> row_of;
  {
    const auto cc = per.col("condition"), cs = per.col("scenario_id"), cst = per.col("status");
    for (std::size_t i = 0; i < per.size(); ++i) {
      const auto& r = per.rows()[i];
      if (r[cst] == "ok") row_of.emplace(std::make_pair(std::string_view(r[cc]), std::string_view(r[cs])), i);
    }
  }
  const auto c_rq = per.col("red_quality"), c_adv = per.col("advantage");

  // Columns: per k, predicted red quality and advantage, observed red quality and advantage; then xi.
  const std::size_t cols = 4 * ks.size() + 1;
  std::vector<double> values(units * cols, kNaN);
  tbb::parallel_for(std::size_t{0}, units, [&](std::size_t s) {
    const auto& t = fit.scenarios[s];
    double* row = values.data() + s * cols;
    for (std::size_t g = 0; g < ks.size(); ++g) {
      const double e = std::isinf(ks[g]) ? t.model.endpoint() : t.model.expected_max(ks[g]);
      row[4 * g] = e;
      row[4 * g + 1] = (1 + t.blue_quality - e) / 2;
    }
    if (t.model.method == TailMethod::gpd) row[cols - 1] = t.model.gpd.xi;
  });
  for (std::size_t g = 0; g + 1 < ks.size(); ++g) {
    const auto oc = observed_condition.find(static_cast<int>(ks[g]));
    if (oc == observed_condition.end()) continue;
    for (std::size_t s = 0; s < units; ++s) {
      const auto r = row_of.find({std::string_view(oc->second), std::string_view(fit.scenarios[s].scenario_id)});
      if (r == row_of.end()) continue;
      values[s * cols + 4 * g + 2] = per.real(r->second, c_rq);
      values[s * cols + 4 * g + 3] = per.real(r->second, c_adv);
    }
  }
  const auto iv = joint_bootstrap_means(values, cols, bs.resamples, bs.seed, kScope);

  // k*: each scenario's advantage on the grid, the mean's first crossing, and its bootstrap replicates drawn from
  // the same multisets as the joint bootstrap above (resample b: Rng::keyed(seed, "bootstrap-joint", scope, b)).
  // Each scenario's advantage is non-increasing in k (E[max of k] is non-decreasing), so every curve's first
  // crossing is found by one scan in increasing k; the grid's columns are computed as the scan reaches them and
  // the scan stops once the mean and every resample have crossed (on the paper run, after a few columns of ~500).
  const auto& grid = k_star_grid();
  std::vector<double> column(units);
  auto fill_column = [&](std::size_t g) {
    tbb::parallel_for(std::size_t{0}, units, [&](std::size_t s) {
      const auto& t = fit.scenarios[s];
      column[s] = (1 + t.blue_quality - t.model.expected_max(grid[g])) / 2;
    });
  };
  const bool with_resamples = units > 1 && bs.resamples >= 1;
  const std::size_t B = with_resamples ? static_cast<std::size_t>(bs.resamples) : 0;
  std::vector<std::uint32_t> counts(B * units);
  {
    const std::uint64_t prefix = Rng::key_prefix(bs.seed, "bootstrap-joint", kScope);
    tbb::parallel_for(std::size_t{0}, B, [&](std::size_t b) {
      Rng rng = Rng::keyed_at(prefix, b);
      std::vector<std::uint32_t> c(units);
      resample_counts(rng, c);
      std::copy(c.begin(), c.end(), counts.begin() + static_cast<std::ptrdiff_t>(b * units));
    });
  }
  double k_star = kInf;
  std::vector<double> rep(B, kInf);
  std::size_t open = B;  // resamples that have not crossed yet
  for (std::size_t g = 0; g < grid.size() && (std::isinf(k_star) || open > 0); ++g) {
    fill_column(g);
    if (std::isinf(k_star)) {
      double sum = 0;
      for (std::size_t s = 0; s < units; ++s) sum += column[s];
      if (sum / static_cast<double>(units) < opts.level) k_star = grid[g];
    }
    if (open == 0) continue;
    std::vector<char> crossed(B, 0);
    tbb::parallel_for(std::size_t{0}, B, [&](std::size_t b) {
      if (!std::isinf(rep[b])) return;
      double sum = 0, w = 0;
      const std::uint32_t* c = counts.data() + b * units;
      for (std::size_t s = 0; s < units; ++s) {
        sum += c[s] * column[s];
        w += c[s];
      }
      if (sum / w < opts.level) {
        rep[b] = grid[g];
        crossed[b] = 1;
      }
    });
    for (char x : crossed) open -= static_cast<std::size_t>(x);
  }
  double k_lo = k_star, k_hi = k_star;
  if (with_resamples) std::tie(k_lo, k_hi) = percentile_bounds(rep);
  // The observed k*: the first sweep k whose mean observed advantage is below the level.
  double k_obs = kInf;
  for (std::size_t g = 0; g + 1 < ks.size() && std::isinf(k_obs); ++g)
    if (iv[4 * g + 3].n > 0 && iv[4 * g + 3].mean < opts.level) k_obs = ks[g];

  CsvTable out(extrapolation_header());
  for (std::size_t g = 0; g < ks.size(); ++g) {
    for (int m = 0; m < 2; ++m) {
      const Interval& p = iv[4 * g + m];
      const Interval& o = iv[4 * g + m + 2];
      out.add({m == 0 ? "red_quality" : "advantage", k_cell(ks[g]), "", std::to_string(p.n),
               o.n > 0 ? fmt_real(o.mean) : std::string(), fmt_real(p.mean), fmt_real(p.lo), fmt_real(p.hi)});
    }
  }
  std::size_t gpd_fits = 0;
  for (const auto& t : fit.scenarios) gpd_fits += t.model.method == TailMethod::gpd ? 1 : 0;
  const Interval& xi = iv[cols - 1];
  out.add({"xi", "", "", std::to_string(xi.n), "", xi.n > 0 ? fmt_real(xi.mean) : std::string(),
           xi.n > 0 ? fmt_real(xi.lo) : std::string(), xi.n > 0 ? fmt_real(xi.hi) : std::string()});
  out.add({"gpd_share", std::to_string(fit.draws), "", std::to_string(units), "",
           fmt_real(static_cast<double>(gpd_fits) / static_cast<double>(units)), "", ""});
  out.add({"k_star", "", fmt_real(opts.level), std::to_string(units), int_cell(k_obs), int_cell(k_star),
           int_cell(k_lo), int_cell(k_hi)});
  return out.to_string();
}

std::vector<std::pair<int, std::string>> k_sweep_budget(const CsvTable& per, const SweepLayout& layout) {
  std::vector<std::pair<int, std::string>> out;
  if (layout.params != std::vector<std::string>{"k"}) return out;
  const auto cc = per.col("condition"), cr = per.col("red_policy");
  for (const auto& p : layout.points) {
    const auto it = std::find_if(per.rows().begin(), per.rows().end(), [&](const auto& r) { return r[cc] == p.label; });
    const int k = static_cast<int>(p.values.at(0));
    if (it == per.rows().end() || (*it)[cr] != fmt::format("greedy@{}", k)) return {};  // not a greedy sweep
    out.emplace_back(k, p.label);
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

class ExtrapolationObserver final : public RunObserver {
 public:
  std::string name() const override { return "extrapolation"; }
  std::vector<std::pair<std::string, std::string>> finish(const RunArtifacts& a) override {
    ExtrapolationOptions opts;
    if (sweep_conditions(a.run.per_scenario).empty())
      opts.budget = k_sweep_budget(a.run.per_scenario, sweep_layout(*a.plan.cfg));
    if (sweep_conditions(a.run.per_scenario).empty() && opts.budget.empty()) return {};
    const CsvTable cand = read_candidates(a.run.dir);
    const auto fit = fit_extrapolation(a.run.per_scenario, cand, opts);
    std::string text = extrapolation_csv(fit, a.run.per_scenario, a.bootstrap);
    if (text.empty()) return {};
    return {{"extrapolation.csv", std::move(text)}};
  }
};

}  // namespace

std::shared_ptr<RunObserver> make_extrapolation_observer() { return std::make_shared<ExtrapolationObserver>(); }

std::vector<std::pair<std::string, std::string>> extrapolation_files(const std::string& run_dir) {
  const RunTraces run = read_run_traces(run_dir);
  ExtrapolationOptions opts;
  if (sweep_conditions(run.per_scenario).empty()) opts.budget = k_sweep_budget(run.per_scenario, recorded_sweep_layout(run_dir));
  if (sweep_conditions(run.per_scenario).empty() && opts.budget.empty()) return {};
  const BootstrapSettings bs = recorded_bootstrap(run.bootstrap_summary);
  const CsvTable cand = read_candidates(run_dir);
  const auto fit = fit_extrapolation(run.per_scenario, cand, opts);
  std::string text = extrapolation_csv(fit, run.per_scenario, bs);
  if (text.empty()) return {};
  return {{"extrapolation.csv", std::move(text)}};
}

}  // namespace advplan
