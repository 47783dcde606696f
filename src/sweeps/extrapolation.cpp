#include "advplan/sweeps/extrapolation.hpp"

#include "advplan/sweeps/sweep.hpp"
#include "advplan/sweeps/budget_families.hpp"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
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

namespace {

/// The fit's scenarios: the ok rows of `condition` with a BLUE quality, in file order (the first row of each
/// scenario); unit_of maps each scenario id to its index.
std::vector<ScenarioTail> fitted_scenarios(const CsvTable& per, const std::string& condition,
                                           std::unordered_map<std::string, std::size_t>& unit_of) {
  std::vector<ScenarioTail> out;
  const auto cc = per.col("condition"), cs = per.col("scenario_id"), cst = per.col("status"),
             cbq = per.col("blue_quality");
  for (std::size_t i = 0; i < per.size(); ++i) {
    const auto& r = per.rows()[i];
    if (r[cc] != condition || r[cst] != "ok") continue;
    const double bq = per.real(i, cbq);
    if (std::isnan(bq) || unit_of.count(r[cs])) continue;
    unit_of.emplace(r[cs], out.size());
    ScenarioTail s;
    s.scenario_id = r[cs];
    s.blue_quality = bq;
    out.push_back(std::move(s));
  }
  return out;
}

/// Refuses a candidates.csv with a candidate set (scenario, condition, sample) of more rows than any run writes.
void check_set_sizes(const CsvTable& cand) {
  const bool sampled = cand.has_col("sample");
  const auto cs = cand.col("scenario_id"), cc = cand.col("condition");
  const std::size_t csm = sampled ? cand.col("sample") : 0;
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

/// Each unit's draws: the qualities (clamped to [0, 1]) of its candidates of `condition` with index < draws, and
/// the samples it has candidates in. Throws CsvError for an empty index or quality and a repeated candidate.
void read_draws(const CsvTable& cand, const std::string& condition, int draws,
                const std::unordered_map<std::string, std::size_t>& unit_of, std::vector<std::vector<double>>& out,
                std::vector<std::set<std::string>>& samples) {
  const bool sampled = cand.has_col("sample");
  const auto cs = cand.col("scenario_id"), cc = cand.col("condition"), ci = cand.col("index"),
             cq = cand.col("quality");
  const std::size_t csm = sampled ? cand.col("sample") : 0;
  std::set<std::tuple<std::size_t, std::string_view, long>> seen;  // (unit, sample, index)
  for (std::size_t i = 0; i < cand.size(); ++i) {
    const auto& r = cand.rows()[i];
    if (r[cc] != condition) continue;
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
    if (idx >= draws) continue;
    out[u->second].push_back(std::clamp(q, 0.0, 1.0));  // the range check allows 1e-9 of rounding slack
  }
}

}  // namespace

ExtrapolationFit fit_extrapolation(const CsvTable& per_raw, const CsvTable& cand, const ExtrapolationOptions& opts) {
  ExtrapolationFit fit;
  const CsvTable per = sample_means(per_raw);
  fit.sweep = opts.budget.empty() ? sweep_conditions(per) : opts.budget;
  if (fit.sweep.empty()) return fit;
  fit.k = fit.sweep.back().first;
  fit.condition = fit.sweep.back().second;
  fit.draws = opts.fit_index > 0 ? std::min(fit.k, opts.fit_index) : fit.k;
  std::unordered_map<std::string, std::size_t> unit_of;
  fit.scenarios = fitted_scenarios(per, fit.condition, unit_of);

  // Their candidates of that condition with index < draws; a set is one (scenario, condition, sample).
  for (const char* c : {"scenario_id", "condition", "index", "quality"}) (void)cand.col(c);
  schema::check_ranges(cand, schema::candidates_ranges());
  check_set_sizes(cand);
  std::vector<std::vector<double>> draws(fit.scenarios.size());
  std::vector<std::set<std::string>> samples(fit.scenarios.size());
  read_draws(cand, fit.condition, fit.draws, unit_of, draws, samples);

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

namespace {

/// extrapolation.csv's ks: the sweep's and the extra ones (>= 1), ascending without repeats, then the limit (+inf).
std::vector<double> predicted_ks(const ExtrapolationFit& fit, const ExtrapolationOptions& opts) {
  std::vector<double> ks;
  for (const auto& [k, c] : fit.sweep) ks.push_back(k);
  for (int k : opts.extra_ks)
    if (k >= 1) ks.push_back(k);
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  ks.push_back(kInf);
  return ks;
}

/// Each scenario's E[M_k] curve, built in parallel (each is its own scenario's).
std::vector<ExpectedMaxCurve> max_curves(const ExtrapolationFit& fit) {
  std::vector<std::optional<ExpectedMaxCurve>> built(fit.scenarios.size());
  tbb::parallel_for(std::size_t{0}, built.size(), [&](std::size_t s) { built[s].emplace(fit.scenarios[s].model); });
  std::vector<ExpectedMaxCurve> out;
  out.reserve(built.size());
  for (auto& c : built) out.push_back(std::move(*c));
  return out;
}

/// The predicted columns of each scenario's row: per k, E[M_k] (x_F at the limit) and A_k; then xi for a GPD fit.
void predicted_values(const ExtrapolationFit& fit, const std::vector<ExpectedMaxCurve>& curves,
                      const std::vector<double>& ks, std::size_t cols, std::vector<double>& values) {
  tbb::parallel_for(std::size_t{0}, fit.scenarios.size(), [&](std::size_t s) {
    const auto& t = fit.scenarios[s];
    double* row = values.data() + s * cols;
    for (std::size_t g = 0; g < ks.size(); ++g) {
      const double e = std::isinf(ks[g]) ? t.model.endpoint() : curves[s](ks[g]);
      row[4 * g] = e;
      row[4 * g + 1] = (1 + t.blue_quality - e) / 2;
    }
    if (t.model.method == TailMethod::gpd) row[cols - 1] = t.model.gpd.xi;
  });
}

/// The observed columns: at each k the sweep ran, the scenario's red_quality and advantage of that condition's ok
/// row (per_scenario.csv's parsed cells).
void observed_values(const ExtrapolationFit& fit, const CsvTable& per, const std::vector<double>& ks, std::size_t cols,
                     std::vector<double>& values) {
  std::map<std::pair<std::string_view, std::string_view>, std::size_t> row_of;  // (condition, scenario) -> ok row
  const auto cc = per.col("condition"), cs = per.col("scenario_id"), cst = per.col("status");
  for (std::size_t i = 0; i < per.size(); ++i) {
    const auto& r = per.rows()[i];
    if (r[cst] == "ok") row_of.emplace(std::make_pair(std::string_view(r[cc]), std::string_view(r[cs])), i);
  }
  const auto c_rq = per.col("red_quality"), c_adv = per.col("advantage");
  const std::map<int, std::string> observed_condition(fit.sweep.begin(), fit.sweep.end());
  for (std::size_t g = 0; g + 1 < ks.size(); ++g) {
    const auto oc = observed_condition.find(static_cast<int>(ks[g]));
    if (oc == observed_condition.end()) continue;
    for (std::size_t s = 0; s < fit.scenarios.size(); ++s) {
      const auto r = row_of.find({std::string_view(oc->second), std::string_view(fit.scenarios[s].scenario_id)});
      if (r == row_of.end()) continue;
      values[s * cols + 4 * g + 2] = per.real(r->second, c_rq);
      values[s * cols + 4 * g + 3] = per.real(r->second, c_adv);
    }
  }
}

/// The multiplicities of the joint bootstrap's resamples, B rows of `units` (resample b from
/// Rng::keyed(seed, "bootstrap-joint", scope, b), as joint_bootstrap_means draws them).
std::vector<std::uint32_t> resample_multiplicities(std::size_t units, std::size_t B, std::uint64_t seed) {
  std::vector<std::uint32_t> counts(B * units);
  const std::uint64_t prefix = Rng::key_prefix(seed, "bootstrap-joint", kScope);
  tbb::parallel_for(std::size_t{0}, B, [&](std::size_t b) {
    Rng rng = Rng::keyed_at(prefix, b);
    std::vector<std::uint32_t> c(units);
    resample_counts(rng, c);
    std::copy(c.begin(), c.end(), counts.begin() + static_cast<std::ptrdiff_t>(b * units));
  });
  return counts;
}

/// The advantage columns of k_star_grid(), each computed once, when a search first asks for it.
class GridColumns {
 public:
  GridColumns(const ExtrapolationFit& fit, const std::vector<ExpectedMaxCurve>& curves)
      : fit_(fit), curves_(curves), units_(fit.scenarios.size()), values_(k_star_grid().size() * units_),
        have_(k_star_grid().size(), 0) {}
  /// Computes the columns of `gs` not computed yet, in parallel over (column, scenario).
  void ensure(const std::vector<std::size_t>& gs) {
    std::vector<std::size_t> missing;
    for (std::size_t g : gs)
      if (!have_[g]) missing.push_back(g), have_[g] = 1;
    tbb::parallel_for(std::size_t{0}, missing.size() * units_, [&](std::size_t i) {
      const std::size_t g = missing[i / units_], s = i % units_;
      const auto& t = fit_.scenarios[s];
      values_[g * units_ + s] = (1 + t.blue_quality - curves_[s](k_star_grid()[g])) / 2;
    });
  }
  const double* column(std::size_t g) const { return values_.data() + g * units_; }
  /// Takes column g from `advantage` (one value per scenario, stride `stride`): the same expression of the same
  /// E[M_k], so the same bits.
  void take(std::size_t g, const double* advantage, std::size_t stride) {
    for (std::size_t s = 0; s < units_; ++s) values_[g * units_ + s] = advantage[s * stride];
    have_[g] = 1;
  }

 private:
  const ExtrapolationFit& fit_;
  const std::vector<ExpectedMaxCurve>& curves_;
  std::size_t units_;
  std::vector<double> values_;
  std::vector<char> have_;
};

/// Whether search i's mean advantage at grid column g is below the level: i = 0 the plain mean over scenarios,
/// i = b + 1 resample b's weighted mean sum_s c_s A_s / sum_s c_s (sums in scenario order).
bool mean_below(const GridColumns& columns, const std::vector<std::uint32_t>& counts, std::size_t units,
                std::size_t i, std::size_t g, double level) {
  const double* col = columns.column(g);
  double sum = 0, w = 0;
  if (i == 0) {
    for (std::size_t s = 0; s < units; ++s) sum += col[s];
    return sum / static_cast<double>(units) < level;
  }
  const std::uint32_t* c = counts.data() + (i - 1) * units;
  for (std::size_t s = 0; s < units; ++s) {
    sum += c[s] * col[s];
    w += c[s];
  }
  return sum / w < level;
}

/// One search's state: its first crossing lies in [lo, hi] (hi = G: none on the grid); while galloping it probes
/// the columns 0, 1, 3, 7, ..., 2^r - 1, then it bisects.
struct Search {
  std::size_t lo = 0, hi = 0, probe = 0;
  bool galloping = true;
  bool open() const { return galloping || lo < hi; }
  std::size_t next() const { return galloping ? probe : lo + (hi - lo) / 2; }
  void step(bool below, std::size_t G) {
    const std::size_t g = next();
    if (below) {
      hi = g;
      galloping = false;
    } else {
      lo = g + 1;
      if (galloping && (probe = 2 * probe + 1) >= G) galloping = false;
    }
  }
};

/// k* of the mean and of each resample: every scenario's A_k is non-increasing in k, so each mean is too, and its
/// first column below the level is found by galloping (columns 2^r - 1) then bisection, about 2 log2(k*'s index)
/// columns instead of a scan. The searches advance in lockstep, one column each per round, so that each round's
/// columns are computed together and shared; a search whose mean never falls below the level ends at +inf.
/// `known` holds advantage columns already computed: each k of `ks` that is on the grid is taken from it (row
/// s * cols + 4 g + 1, as extrapolation_csv lays them out) instead of being computed again.
KStarSearch bisect_k_star(const ExtrapolationFit& fit, const std::vector<ExpectedMaxCurve>& curves,
                          const BootstrapSettings& bs, double level, const std::vector<double>& ks = {},
                          const std::vector<double>& known = {}, std::size_t cols = 0) {
  const std::size_t units = fit.scenarios.size(), G = k_star_grid().size();
  const std::size_t B = units > 1 && bs.resamples >= 1 ? static_cast<std::size_t>(bs.resamples) : 0;
  const auto counts = resample_multiplicities(units, B, bs.seed);
  GridColumns columns(fit, curves);
  for (std::size_t g = 0; g < ks.size(); ++g) {
    const auto at = std::lower_bound(k_star_grid().begin(), k_star_grid().end(), ks[g]);
    if (at != k_star_grid().end() && *at == ks[g])
      columns.take(static_cast<std::size_t>(at - k_star_grid().begin()), known.data() + 4 * g + 1, cols);
  }
  std::vector<Search> searches(B + 1, Search{0, G, 0, true});  // 0: the mean; b + 1: resample b
  for (;;) {
    std::vector<std::size_t> wanted;
    for (const Search& q : searches)
      if (q.open()) wanted.push_back(q.next());
    if (wanted.empty()) break;
    std::sort(wanted.begin(), wanted.end());
    wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
    columns.ensure(wanted);
    tbb::parallel_for(std::size_t{0}, B + 1, [&](std::size_t i) {
      Search& q = searches[i];
      if (q.open()) q.step(mean_below(columns, counts, units, i, q.next(), level), G);
    });
  }
  auto k_at = [&](std::size_t g) { return g < G ? static_cast<double>(k_star_grid()[g]) : kInf; };
  KStarSearch out;
  out.k_star = k_at(searches[0].lo);
  out.replicates.resize(B);
  for (std::size_t b = 0; b < B; ++b) out.replicates[b] = k_at(searches[b + 1].lo);
  return out;
}

/// The observed k*: the first sweep k whose mean observed advantage is below the level.
double observed_k_star(const std::vector<Interval>& iv, const std::vector<double>& ks, double level) {
  for (std::size_t g = 0; g + 1 < ks.size(); ++g)
    if (iv[4 * g + 3].n > 0 && iv[4 * g + 3].mean < level) return ks[g];
  return kInf;
}

/// The file's rows: per k the predicted and observed red quality and advantage, then xi, gpd_share and k_star.
std::string extrapolation_rows(const ExtrapolationFit& fit, const std::vector<double>& ks,
                               const std::vector<Interval>& iv, const KStarSearch& ks_star, double k_obs,
                               double level) {
  const std::size_t units = fit.scenarios.size();
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
  const Interval& xi = iv.back();
  out.add({"xi", "", "", std::to_string(xi.n), "", xi.n > 0 ? fmt_real(xi.mean) : std::string(),
           xi.n > 0 ? fmt_real(xi.lo) : std::string(), xi.n > 0 ? fmt_real(xi.hi) : std::string()});
  out.add({"gpd_share", std::to_string(fit.draws), "", std::to_string(units), "",
           fmt_real(static_cast<double>(gpd_fits) / static_cast<double>(units)), "", ""});
  double k_lo = ks_star.k_star, k_hi = ks_star.k_star;
  std::vector<double> reps = ks_star.replicates;
  if (!reps.empty()) std::tie(k_lo, k_hi) = percentile_bounds(reps);
  out.add({"k_star", "", fmt_real(level), std::to_string(units), int_cell(k_obs), int_cell(ks_star.k_star),
           int_cell(k_lo), int_cell(k_hi)});
  return out.to_string();
}

}  // namespace

KStarSearch search_k_star(const ExtrapolationFit& fit, const BootstrapSettings& bs, double level) {
  if (fit.scenarios.empty()) return {};
  return bisect_k_star(fit, max_curves(fit), bs, level);
}

std::string extrapolation_csv(const ExtrapolationFit& fit, const CsvTable& per_raw, const BootstrapSettings& bs,
                              const ExtrapolationOptions& opts) {
  if (fit.scenarios.empty()) return {};
  const CsvTable per = sample_means(per_raw);
  const std::vector<double> ks = predicted_ks(fit, opts);
  const auto curves = max_curves(fit);
  // Columns: per k, predicted red quality and advantage, observed red quality and advantage; then xi.
  const std::size_t cols = 4 * ks.size() + 1;
  std::vector<double> values(fit.scenarios.size() * cols, kNaN);
  predicted_values(fit, curves, ks, cols, values);
  observed_values(fit, per, ks, cols, values);
  const auto iv = joint_bootstrap_means(values, cols, bs.resamples, bs.seed, kScope);
  const KStarSearch k_star = bisect_k_star(fit, curves, bs, opts.level, ks, values, cols);
  return extrapolation_rows(fit, ks, iv, k_star, observed_k_star(iv, ks, opts.level), opts.level);
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

/// budget_families.csv when the budget sweep has a family besides greedy (src/sweeps/budget_families.cpp).
std::vector<std::pair<std::string, std::string>> family_files(const CsvTable& per, const BootstrapSettings& bs) {
  std::string text = budget_families_csv(per, bs);
  if (text.empty()) return {};
  return {{"budget_families.csv", std::move(text)}};
}

class ExtrapolationObserver final : public RunObserver {
 public:
  std::string name() const override { return "extrapolation"; }
  std::vector<std::pair<std::string, std::string>> finish(const RunArtifacts& a) override {
    ExtrapolationOptions opts;
    if (sweep_conditions(a.run.per_scenario).empty())
      opts.budget = k_sweep_budget(a.run.per_scenario, sweep_layout(*a.plan.cfg));
    auto files = family_files(a.run.per_scenario, a.bootstrap);
    if (sweep_conditions(a.run.per_scenario).empty() && opts.budget.empty()) return files;
    const CsvTable cand = read_candidates(a.run.dir);
    const auto fit = fit_extrapolation(a.run.per_scenario, cand, opts);
    std::string text = extrapolation_csv(fit, a.run.per_scenario, a.bootstrap);
    if (!text.empty()) files.insert(files.begin(), {"extrapolation.csv", std::move(text)});
    return files;
  }
};

}  // namespace

std::shared_ptr<RunObserver> make_extrapolation_observer() { return std::make_shared<ExtrapolationObserver>(); }

std::vector<std::pair<std::string, std::string>> extrapolation_files(const std::string& run_dir) {
  const RunTraces run = read_run_traces(run_dir);
  ExtrapolationOptions opts;
  if (sweep_conditions(run.per_scenario).empty()) opts.budget = k_sweep_budget(run.per_scenario, recorded_sweep_layout(run_dir));
  const bool greedy_sweep = !sweep_conditions(run.per_scenario).empty() || !opts.budget.empty();
  if (!greedy_sweep && budget_families(sample_means(run.per_scenario)).empty()) return {};
  const BootstrapSettings bs = recorded_bootstrap(run.bootstrap_summary);
  auto files = family_files(run.per_scenario, bs);
  if (!greedy_sweep) return files;
  const CsvTable cand = read_candidates(run_dir);
  const auto fit = fit_extrapolation(run.per_scenario, cand, opts);
  std::string text = extrapolation_csv(fit, run.per_scenario, bs);
  if (!text.empty()) files.insert(files.begin(), {"extrapolation.csv", std::move(text)});
  return files;
}

}  // namespace advplan
