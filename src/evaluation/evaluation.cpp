#include "advplan/evaluation/evaluation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <tuple>
#include <nlohmann/json.hpp>
#include <set>
#include <tbb/parallel_for.h>

#include "advplan/core/random.hpp"
#include "advplan/evaluation/stopping.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/run/scenario_eval.hpp"
#include "advplan/stats/cluster.hpp"
#include "advplan/stats/power.hpp"
#include "advplan/stats/text_table.hpp"
#include "advplan/core/untrusted.hpp"
#include "core/det_math.hpp"

namespace advplan {
using io::CsvTable;
using io::fmt_real;

std::vector<Condition> evaluate_conditions(const EvaluateSpec& spec) {
  std::vector<std::string> blues{spec.blue};
  for (const auto& r : spec.references)
    if (std::find(blues.begin(), blues.end(), r) == blues.end()) blues.push_back(r);
  std::vector<Condition> conds;
  for (const auto& red : spec.reds)
    for (std::size_t b = 0; b < blues.size(); ++b)
      conds.push_back({blues[b] + " vs " + red, blues[b], red, b == 0 ? "evaluate" : "reference"});
  for (int k : spec.budget_ks) {
    const std::string red = fmt::format("greedy@{}", k);
    if (std::find(spec.reds.begin(), spec.reds.end(), red) != spec.reds.end()) continue;
    for (const auto& b : blues) conds.push_back({b + " vs " + red, b, red, "sweep"});
  }
  return conds;
}

const std::vector<std::string>& verdict_metrics() {
  static const std::vector<std::string> m{"advantage", "blue_win_rate", "blue_quality", "blue_coherence"};
  return m;
}

std::string Verdict::verdict_text() const {
  if (verdict != "no detectable difference") return verdict;
  if (std::isnan(mde)) return fmt::format("no detectable difference at n = {}", n);
  return fmt::format("no detectable difference at n = {} (MDE {:.3g} at {:g}% power)", n, mde, power * 100);
}

std::string Verdict::sentence() const {
  const std::string tail = verdict_text();
  return fmt::format("{} vs {} against {}: {} {:+.3f} [{:+.3f}, {:+.3f}], p = {:.3g}, Holm p = {:.3g}: {}", blue,
                     reference, red, metric, difference.mean, difference.lo, difference.hi, p, p_holm, tail);
}

namespace {

/// The ok rows of per_scenario.csv by (BLUE policy, RED policy) and scenario, with the scenario order of the file.
class RowIndex {
 public:
  explicit RowIndex(const CsvTable& per) : per_(per) {
    const auto cb = per.col("blue_policy"), cr = per.col("red_policy"), cs = per.col("scenario_id"),
               st = per.col("status");
    std::set<std::string> seen;
    for (std::size_t i = 0; i < per.size(); ++i) {
      const auto& r = per.rows()[i];
      if (seen.insert(r[cs]).second) scenarios_.push_back(r[cs]);
      if (r[st] != "ok") continue;
      auto& reds = reds_of_[r[cb]];
      if (std::find(reds.begin(), reds.end(), r[cr]) == reds.end()) reds.push_back(r[cr]);
      rows_[{r[cb], r[cr]}].emplace(r[cs], i);
    }
  }
  const std::vector<std::string>& scenarios() const { return scenarios_; }
  /// RED policies `blue` has ok rows against, in order of appearance.
  std::vector<std::string> reds_of(const std::string& blue) const {
    auto it = reds_of_.find(blue);
    return it == reds_of_.end() ? std::vector<std::string>{} : it->second;
  }
  /// scenario -> row, for one pairing (empty when absent).
  const std::map<std::string, std::size_t>& rows(const std::string& blue, const std::string& red) const {
    static const std::map<std::string, std::size_t> none;
    auto it = rows_.find({blue, red});
    return it == rows_.end() ? none : it->second;
  }
  /// Greedy budgets of `blue`: k -> RED label, ascending.
  std::map<int, std::string> greedy_ks(const std::string& blue) const {
    std::map<int, std::string> out;
    for (const auto& red : reds_of(blue))
      if (red.rfind("greedy@", 0) == 0) {
        int k = 0;
        std::from_chars(red.data() + 7, red.data() + red.size(), k);
        if (k > 0) out.emplace(k, red);
      }
    return out;
  }
  double value(std::size_t row, std::string_view metric) const { return per_.real(row, metric); }
  const std::string& cell(std::size_t row, std::string_view col) const { return per_.at(row, col); }

 private:
  const CsvTable& per_;
  std::vector<std::string> scenarios_;
  std::map<std::string, std::vector<std::string>> reds_of_;
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::size_t>> rows_;
};

/// Paired values of `metric` for two pairings over their common scenarios (file order), skipping NaN.
void paired_values(const RowIndex& ix, const std::map<std::string, std::size_t>& a,
                   const std::map<std::string, std::size_t>& b, const std::string& metric, std::vector<double>& va,
                   std::vector<double>& vb, std::vector<std::string>* templates = nullptr) {
  va.clear();
  vb.clear();
  if (templates) templates->clear();
  for (const auto& s : ix.scenarios()) {
    auto i = a.find(s), j = b.find(s);
    if (i == a.end() || j == b.end()) continue;
    const double x = ix.value(i->second, metric), y = ix.value(j->second, metric);
    if (std::isnan(x) || std::isnan(y)) continue;
    va.push_back(x);
    vb.push_back(y);
    if (templates) templates->push_back(ix.cell(i->second, "template"));
  }
}

/// The template-clustered inference of paired differences (docs/METRICS.md "Template-clustered intervals"):
/// clusters numbered in order of first appearance.
ClusteredMean clustered_difference(const std::vector<double>& a, const std::vector<double>& b,
                                   const std::vector<std::string>& templates, const BootstrapSettings& bs,
                                   const std::string& key) {
  std::vector<double> d(a.size());
  std::vector<std::size_t> g(a.size());
  std::map<std::string, std::size_t> ids;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d[i] = a[i] - b[i];
    g[i] = ids.try_emplace(templates[i], ids.size()).first->second;
  }
  return clustered_mean(d, g, bs.resamples, bs.seed, key);
}

std::vector<double> values_of(const RowIndex& ix, const std::map<std::string, std::size_t>& rows,
                              const std::string& metric) {
  std::vector<double> v;
  for (const auto& s : ix.scenarios())
    if (auto it = rows.find(s); it != rows.end())
      if (const double x = ix.value(it->second, metric); !std::isnan(x)) v.push_back(x);
  return v;
}

Interval point(double v, std::size_t n) { return Interval{v, v, v, n}; }

/// The greedy budgets `blue` was played against in the run, ok rows or failed (RowIndex::greedy_ks counts ok rows
/// only): whether a sweep ran, when no value came of it.
std::size_t swept_ks(const CsvTable& per, const std::string& blue) {
  std::set<std::string> ks;
  const auto cb = per.col("blue_policy"), cr = per.col("red_policy");
  for (const auto& r : per.rows())
    if (r[cb] == blue && r[cr].rfind("greedy@", 0) == 0) ks.insert(r[cr]);
  return ks.size();
}

}  // namespace

std::vector<Verdict> paired_verdicts(const CsvTable& per, const std::string& blue,
                                     const std::vector<std::string>& references, const BootstrapSettings& bs,
                                     double alpha, double power, bool cluster_by_template) {
  const RowIndex ix(per);
  std::vector<Verdict> out;
  std::vector<double> a, b;
  std::vector<std::string> templates;
  std::vector<std::vector<double>> diffs;  // per comparison, in out's order
  for (const auto& red : ix.reds_of(blue))
    for (const auto& ref : references) {
      if (ref == blue) continue;
      const auto& ra = ix.rows(blue, red);
      const auto& rb = ix.rows(ref, red);
      if (rb.empty()) continue;
      for (const auto& m : verdict_metrics()) {
        paired_values(ix, ra, rb, m, a, b, &templates);
        if (a.empty()) continue;
        Verdict v{blue, ref, red, m};
        v.n = a.size();
        v.mean_blue = mean(a);
        v.mean_reference = mean(b);
        const std::string key = fmt::format("verdict|{}|{}|{}|{}", blue, ref, red, m);
        v.difference = bootstrap_paired_difference(a, b, bs.resamples, bs.seed, key);
        if (cluster_by_template) v.clustered = clustered_difference(a, b, templates, bs, key);
        out.push_back(std::move(v));
        diffs.emplace_back(a.size());
        for (std::size_t i = 0; i < a.size(); ++i) diffs.back()[i] = a[i] - b[i];
      }
    }
  // Monte Carlo p-values have a floor of 1 / (B + 1); with m comparisons Holm multiplies it by m. B is chosen so
  // that the smallest attainable adjusted p is alpha / 20, whatever the family size.
  const auto m = static_cast<double>(out.size());
  const int sign_flips = std::max(bs.resamples, static_cast<int>(std::ceil(20.0 * m / alpha)));
  tbb::parallel_for(std::size_t{0}, out.size(), [&](std::size_t i) {
    const Verdict& v = out[i];
    out[i].p = sign_flip_p_value(diffs[i], sign_flips, bs.seed,
                                 fmt::format("verdict|{}|{}|{}|{}", v.blue, v.reference, v.red, v.metric));
  });
  std::vector<double> ps;
  for (const auto& v : out) ps.push_back(v.p);
  const auto adj = holm_adjust(ps);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i].p_holm = adj[i];
    out[i].verdict = adj[i] < alpha ? (out[i].difference.mean > 0 ? "better" : "worse") : "no detectable difference";
    out[i].alpha_holm = alpha / m;
    out[i].power = power;
    out[i].mde = minimum_detectable_effect(diffs[i], out[i].alpha_holm, power);
  }
  return out;
}

std::vector<RobustnessPoint> robustness_curves(const CsvTable& per, const BootstrapSettings& bs) {
  const RowIndex ix(per);
  std::vector<std::string> blues;
  const auto cb = per.col("blue_policy");
  for (const auto& r : per.rows())
    if (std::find(blues.begin(), blues.end(), r[cb]) == blues.end()) blues.push_back(r[cb]);
  std::vector<RobustnessPoint> out;
  for (const auto& blue : blues)
    for (const auto& [k, red] : ix.greedy_ks(blue)) {
      const auto& rows = ix.rows(blue, red);
      RobustnessPoint p{blue, k, {}, {}};
      p.advantage = bootstrap_mean(values_of(ix, rows, "advantage"), bs.resamples, bs.seed,
                                   fmt::format("robustness|{}|{}|advantage", blue, k));
      p.win_rate = bootstrap_mean(values_of(ix, rows, "blue_win_rate"), bs.resamples, bs.seed,
                                  fmt::format("robustness|{}|{}|blue_win_rate", blue, k));
      out.push_back(std::move(p));
    }
  return out;
}

RobustnessSummary robustness_summary(const CsvTable& per, const std::string& blue, const std::string& metric,
                                     const BootstrapSettings& bs) {
  const RowIndex ix(per);
  const auto ks = ix.greedy_ks(blue);
  RobustnessSummary out;
  out.drop = out.slope = Interval{std::nan(""), std::nan(""), std::nan(""), 0};
  if (ks.size() < 2) return out;
  // Scenarios with a value at every k: the matrix M (scenario x k).
  std::vector<double> x;
  for (const auto& [k, red] : ks) x.push_back(det::log2(static_cast<double>(k)));
  std::vector<std::vector<double>> m;
  for (const auto& s : ix.scenarios()) {
    std::vector<double> row;
    for (const auto& [k, red] : ks) {
      const auto& rows = ix.rows(blue, red);
      auto it = rows.find(s);
      const double v = it == rows.end() ? std::nan("") : ix.value(it->second, metric);
      if (std::isnan(v)) break;
      row.push_back(v);
    }
    if (row.size() == ks.size()) m.push_back(std::move(row));
  }
  const std::size_t n = m.size(), kk = ks.size();
  if (n == 0) return out;
  double xbar = 0, sxx = 0;
  for (double xi : x) xbar += xi / static_cast<double>(kk);
  for (double xi : x) sxx += (xi - xbar) * (xi - xbar);
  // Drop and slope of the per-k means under row weights w (multiplicities of a resample, or all 1).
  auto stats = [&](const std::vector<std::uint32_t>* w, double& drop, double& slope) {
    std::vector<double> means(kk, 0.0);
    double total = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double wi = w ? (*w)[i] : 1.0;
      total += wi;
      for (std::size_t j = 0; j < kk; ++j) means[j] += wi * m[i][j];
    }
    for (auto& v : means) v /= total;
    drop = means.front() - means.back();
    double sxy = 0, mbar = 0;
    for (double v : means) mbar += v / static_cast<double>(kk);
    for (std::size_t j = 0; j < kk; ++j) sxy += (x[j] - xbar) * (means[j] - mbar);
    slope = sxy / sxx;
  };
  double drop = 0, slope = 0;
  stats(nullptr, drop, slope);
  out.drop = point(drop, n);
  out.slope = point(slope, n);
  if (n < 2 || bs.resamples < 1) return out;
  Rng rng = Rng::keyed(bs.seed, "bootstrap", fmt::format("robustness|{}|{}", blue, metric));
  std::vector<std::uint32_t> counts(n);
  std::vector<double> drops(static_cast<std::size_t>(bs.resamples)), slopes(drops.size());
  for (std::size_t b = 0; b < drops.size(); ++b) {
    resample_counts(rng, counts);
    stats(&counts, drops[b], slopes[b]);
  }
  std::tie(out.drop.lo, out.drop.hi) = percentile_bounds(drops);
  std::tie(out.slope.lo, out.slope.hi) = percentile_bounds(slopes);
  return out;
}

std::string failure_cause(const std::string& reason) {
  const int parts = reason.starts_with("blue: ") || reason.starts_with("red: ") ? 3 : 2;
  std::size_t cut = reason.find(": ");
  for (int k = 1; k < parts && cut != std::string::npos; ++k) cut = reason.find(": ", cut + 2);
  std::string c = reason.substr(0, cut);
  for (char& ch : c)
    if (ch >= '0' && ch <= '9') ch = 'N';
  return untrusted::excerpt(c, 80);
}

/// Best RED candidate quality per (scenario, condition label): in a run of several samples, the mean over the
/// samples of each sample's best (docs/METRICS.md "Samples").
static std::map<std::pair<std::string, std::string>, double> best_red_quality(const CsvTable& candidates) {
  const bool sampled = candidates.has_col("sample");
  std::map<std::tuple<std::string, std::string, std::string>, double> best;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const double q = candidates.real(i, "quality");
    auto [it, fresh] = best.try_emplace(
        {candidates.at(i, "scenario_id"), candidates.at(i, "condition"), sampled ? candidates.at(i, "sample") : ""}, q);
    if (!fresh) it->second = std::max(it->second, q);
  }
  std::map<std::pair<std::string, std::string>, std::pair<double, int>> sums;
  for (const auto& [key, q] : best) {  // samples in the map's order: the sum is the same in any run
    auto& [sum, n] = sums[{std::get<0>(key), std::get<1>(key)}];
    sum += q;
    ++n;
  }
  std::map<std::pair<std::string, std::string>, double> out;
  for (const auto& [key, sn] : sums) out.emplace(key, sn.first / sn.second);
  return out;
}

std::vector<ScoreLine> scorecard(const CsvTable& per, const CsvTable& candidates, const CsvTable* reproducibility,
                                 const std::string& blue, const std::vector<std::string>& references,
                                 const BootstrapSettings& bs) {
  const RowIndex ix(per);
  std::vector<std::string> blues{blue};
  for (const auto& r : references)
    if (std::find(blues.begin(), blues.end(), r) == blues.end()) blues.push_back(r);
  const auto best_red = best_red_quality(candidates);
  std::vector<ScoreLine> out;
  auto interval_line = [&](const std::string& axis, const std::string& quantity, const std::string& policy,
                           const std::vector<double>& v, const std::string& key) {
    if (v.empty()) {  // no value is n/a, not a mean of 0
      out.push_back({axis, quantity, policy, 0, std::nan(""), std::nan(""), std::nan(""), "no scenario with a valid plan"});
      return;
    }
    const Interval i = bootstrap_mean(v, bs.resamples, bs.seed, key);
    out.push_back({axis, quantity, policy, i.n, i.mean, i.lo, i.hi, ""});
  };
  for (const auto& b : blues) {
    // Representation validity: scenarios where the policy's plan parsed and validated.
    std::map<std::string, bool> valid;
    std::map<std::string, std::size_t> causes;
    std::vector<std::string> cause_order;
    for (std::size_t i = 0; i < per.size(); ++i) {
      if (per.at(i, "blue_policy") != b) continue;
      const bool ok = per.at(i, "status") == "ok";
      const std::string& reason = per.at(i, "failure_reason");
      const bool blue_failed = !ok && reason.starts_with("blue: ");
      auto [it, fresh] = valid.try_emplace(per.at(i, "scenario_id"), !blue_failed);
      if (!fresh) it->second = it->second || !blue_failed;
      if (blue_failed && fresh) {
        const std::string c = failure_cause(reason);
        if (causes[c]++ == 0) cause_order.push_back(c);
      }
    }
    std::vector<double> v01;
    for (const auto& s : ix.scenarios())
      if (auto it = valid.find(s); it != valid.end()) v01.push_back(it->second ? 1.0 : 0.0);
    interval_line("representation validity", "valid plan share", b, v01, fmt::format("scorecard|{}|valid", b));
    if (b == blue)
      for (const auto& c : cause_order)
        out.push_back({"representation validity", "scenarios failed: " + c, b, causes[c],
                       static_cast<double>(causes[c]), static_cast<double>(causes[c]),
                       static_cast<double>(causes[c]), ""});
    // Plan structure: one value per scenario (the plan is the same in every condition of a scenario).
    const auto reds = ix.reds_of(b);
    for (const auto& [col, name] : {std::pair{"blue_O", "O"}, std::pair{"blue_PV", "P_V"}, std::pair{"blue_W", "W"}}) {
      std::vector<double> v;
      for (const auto& s : ix.scenarios())
        for (const auto& red : reds)
          if (auto it = ix.rows(b, red).find(s); it != ix.rows(b, red).end()) {
            v.push_back(ix.value(it->second, col));
            break;
          }
      interval_line("plan structure", name, b, v, fmt::format("scorecard|{}|{}", b, col));
    }
    // Adversarial robustness: drop and slope over the greedy budget.
    for (const auto& [metric, name] : {std::pair{"advantage", "advantage"}, std::pair{"blue_win_rate", "win rate"}}) {
      const RobustnessSummary r = robustness_summary(per, b, metric, bs);
      const std::string note = r.drop.n > 0               ? ""
                               : swept_ks(per, b) >= 2 ? "no scenario with a valid plan at every k of the greedy@k sweep"
                                                       : "no greedy@k sweep in the run";
      out.push_back({"adversarial robustness", fmt::format("{} drop (smallest k - largest k)", name), b, r.drop.n,
                     r.drop.mean, r.drop.lo, r.drop.hi, note});
      out.push_back({"adversarial robustness", fmt::format("{} slope per doubling of k", name), b, r.slope.n,
                     r.slope.mean, r.slope.lo, r.slope.hi, note});
    }
    // Frontier quality and constraint-sensitive selection: RED's candidate set at the largest greedy budget.
    const auto ks = ix.greedy_ks(b);
    if (!ks.empty()) {
      const auto& [k, red] = *ks.rbegin();
      const auto& rows = ix.rows(b, red);
      std::vector<double> best;
      for (const auto& s : ix.scenarios())
        if (auto it = rows.find(s); it != rows.end())
          if (auto q = best_red.find({s, ix.cell(it->second, "condition")}); q != best_red.end())
            best.push_back(q->second);
      interval_line("frontier quality", fmt::format("RED Pareto count at greedy@{}", k), b,
                    values_of(ix, rows, "pareto_count"), fmt::format("scorecard|{}|pareto|{}", b, k));
      interval_line("frontier quality", fmt::format("RED best candidate quality at greedy@{}", k), b, best,
                    fmt::format("scorecard|{}|best_red|{}", b, k));
      for (const auto& [col, name] : {std::pair{"changed_choice", "constraint selector changes the choice"},
                                      std::pair{"quality_regret", "quality regret"},
                                      std::pair{"structural_gain", "structural gain"}})
        interval_line("constraint-sensitive selection", fmt::format("{} at greedy@{}", name, k), b,
                      values_of(ix, rows, col), fmt::format("scorecard|{}|{}|{}", b, col, k));
    }
  }
  // Trace reproducibility: the rerun check of the whole run, reported with the policy under test.
  if (reproducibility && reproducibility->size() > 0) {
    std::vector<double> same;
    for (std::size_t i = 0; i < reproducibility->size(); ++i) same.push_back(reproducibility->real(i, "identical"));
    const double share = mean(same);
    out.push_back({"trace reproducibility", "rerun scenarios with identical rows (share)", blue, same.size(), share,
                   share, share, ""});
  } else {
    out.push_back({"trace reproducibility", "rerun scenarios with identical rows (share)", blue, 0, std::nan(""),
                   std::nan(""), std::nan(""), reproducibility ? "exempt" : "not checked"});
  }
  return out;
}

CsvTable check_reproducibility(const RunPlan& plan, const CsvTable& per, std::size_t sample,
                               std::string* exempt_reason) {
  CsvTable out({"scenario_id", "rows", "identical"});
  for (const auto* side : {&plan.blues})
    for (const auto& [spec, p] : *side)
      if (!p->info().reproducible) {
        if (exempt_reason) *exempt_reason = fmt::format("exempt: {} is a live model, whose server decides", spec);
        return out;
      }
  for (const auto& [spec, p] : plan.reds)
    if (!p->info().reproducible) {
      if (exempt_reason) *exempt_reason = fmt::format("exempt: {} is a live model, whose server decides", spec);
      return out;
    }
  std::map<std::string, std::vector<std::size_t>> rows_of;
  const auto cs = per.col("scenario_id");
  for (std::size_t i = 0; i < per.size(); ++i) rows_of[per.rows()[i][cs]].push_back(i);
  // The corpus prefix the run played: all of it, or where `--stop-when-decided` stopped it.
  const std::size_t n = std::min(corpus_size(*plan.cfg), rows_of.size());
  if (n == 0 || sample == 0) return out;
  const std::size_t step = (n + sample - 1) / sample;
  for (std::size_t i = 0; i < n; i += step) {
    const Scenario sc = corpus_scenario(*plan.cfg, i);
    const ScenarioOutcome again = evaluate_scenario(sc, plan);
    const auto& written = rows_of[sc.id];
    bool same = written.size() == again.per_scenario.size();
    for (std::size_t r = 0; same && r < written.size(); ++r) same = per.rows()[written[r]] == again.per_scenario[r];
    out.add({sc.id, std::to_string(again.per_scenario.size()), same ? "1" : "0"});
  }
  return out;
}

namespace {

std::string json_number_or_null(double v) { return std::isnan(v) ? "" : fmt_real(v); }

nlohmann::ordered_json jnum(double v) { return std::isnan(v) ? nlohmann::ordered_json() : nlohmann::ordered_json(v); }

nlohmann::ordered_json jinterval(const Interval& i) {
  return {{"n", i.n}, {"mean", jnum(i.mean)}, {"lo", jnum(i.lo)}, {"hi", jnum(i.hi)}};
}

std::string md_cell(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '`')
      out += '\'';
    else
      out += c;
  }
  return out;
}

std::string cell3(double v, double lo, double hi) {
  if (std::isnan(v)) return "n/a";
  if (lo == v && hi == v) return fmt::format("{:.3f}", v);
  return fmt::format("{:.3f} [{:.3f}, {:.3f}]", v, lo, hi);
}

}  // namespace

namespace {

/// summary.md and summary.json, built section by section.
struct Summary {
  std::string md;
  nlohmann::ordered_json j;
};

/// 1. Per RED baseline: advantage and win rate of every BLUE policy, with the run's own intervals.
void add_baselines(Summary& out, const CsvTable& per, const CsvTable& bootstrap_summary, const EvaluateSpec& spec,
                   const std::vector<std::string>& blues, const BootstrapSettings& bs) {
  const std::string& blue = spec.blue;
  TextTable base{"summary", fmt::format("Evaluation of BLUE policy `{}` against the fixed RED baselines", blue),
                 {"RED baseline", "BLUE policy", "plans", "failures", "BLUE advantage", "BLUE win rate"}, {}};
  out.j["baselines"] = nlohmann::ordered_json::array();
  // The run's own intervals (bootstrap_summary.csv, scope "all"), as the tables read them.
  CsvTable ok_storage;
  const CsvTable& ok = ok_rows(per, ok_storage);
  const SummaryIntervals intervals(bootstrap_summary, ok, bs);
  for (const auto& red : spec.reds)
    for (const auto& b : blues) {
      const std::string cond = b + " vs " + red;
      std::vector<double> adv, win;
      std::size_t failures = 0;
      for (std::size_t i = 0; i < per.size(); ++i) {
        if (per.at(i, "condition") != cond) continue;
        if (per.at(i, "status") != "ok") {
          ++failures;
          continue;
        }
        adv.push_back(per.real(i, "advantage"));
        win.push_back(per.real(i, "blue_win_rate"));
      }
      const auto a = intervals.get("all", cond, "advantage");
      const auto w = intervals.get("all", cond, "blue_win_rate");
      base.rows.push_back({red, b, std::to_string(adv.size()), std::to_string(failures), interval_cell(a), interval_cell(w)});
      out.j["baselines"].push_back({{"red", red}, {"blue", b}, {"plans", adv.size()}, {"failures", failures},
                                {"advantage", jinterval(a)}, {"win_rate", jinterval(w)}});
    }
  out.md = base.markdown();
}

/// 2. Paired verdicts of the policy minus each reference: verdicts.csv, and their Markdown and JSON.
/// With --stop-when-decided, the verdicts are the anytime ones of the last look (`looks`' last).
CsvTable add_verdicts(Summary& out, const CsvTable& per, const EvaluateSpec& spec, const BootstrapSettings& bs,
                      std::vector<Verdict>& verdicts, const std::vector<SequentialLook>& looks) {
  const std::string& blue = spec.blue;
  verdicts = paired_verdicts(per, blue, spec.references, bs, spec.alpha, spec.power, spec.cluster_by_template);
  if (spec.stopping && !looks.empty()) apply_anytime_verdicts(verdicts, sequential_family(spec), looks.back());
  CsvTable vcsv({"blue_policy", "reference", "red_policy", "metric", "n", "mean_blue", "mean_reference", "difference",
                 "ci_lo", "ci_hi", "p", "p_holm", "verdict", "alpha_holm", "power", "mde"});
  out.j["verdicts"] = nlohmann::ordered_json::array();
  if (verdicts.empty())  // a sentence, not an empty section
    out.md += spec.references.empty()
                  ? "\n**Paired verdicts**: none, no reference policy was run.\n"
                  : fmt::format("\n**Paired verdicts**: none, no scenario has a valid row of both `{}` and a reference "
                                "against the same RED policy.\n",
                                blue);
  else if (spec.stopping)
    out.md += fmt::format("\n**Paired verdicts**, anytime-valid (`{}` minus each reference on the same scenarios; "
                          "descriptive 95% paired bootstrap intervals; the verdicts, p and Holm p are the confidence "
                          "sequences' anytime p-values, Holm-corrected over the {} monitored comparisons, at the "
                          "last look; MDE: at the n played, for a fixed-n test at level {:.2g})\n\n",
                          blue, sequential_family(spec).size(), verdicts.front().alpha_holm) +
              "| RED | reference | metric | n | policy | reference | difference [95% CI] | Holm p | MDE | verdict |\n"
              "|---|---|---|---:|---:|---:|---:|---:|---:|---|\n";
  else
    out.md += fmt::format("\n**Paired verdicts** (`{}` minus each reference on the same scenarios; 95% paired "
                          "bootstrap intervals; sign-flip p-values, Holm-corrected over all {} comparisons; MDE: "
                          "the smallest difference detectable with {:g}% power at Holm's strictest level {:.2g})\n\n",
                          blue, verdicts.size(), spec.power * 100, verdicts.front().alpha_holm) +
              "| RED | reference | metric | n | policy | reference | difference [95% CI] | Holm p | MDE | verdict |\n"
          "|---|---|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& v : verdicts) {
    vcsv.add({v.blue, v.reference, v.red, v.metric, std::to_string(v.n), fmt_real(v.mean_blue),
              fmt_real(v.mean_reference), fmt_real(v.difference.mean), fmt_real(v.difference.lo),
              fmt_real(v.difference.hi), fmt_real(v.p), fmt_real(v.p_holm), v.verdict, fmt::format("{:.9g}", v.alpha_holm),
              fmt_real(v.power), fmt_real(v.mde)});
    out.md += fmt::format("| {} | {} | {} | {} | {:.3f} | {:.3f} | {:+.3f} [{:+.3f}, {:+.3f}] | {:.3g} | {} | {} |\n",
                      md_cell(v.red), md_cell(v.reference), v.metric, v.n, v.mean_blue, v.mean_reference,
                      v.difference.mean, v.difference.lo, v.difference.hi, v.p_holm,
                      std::isnan(v.mde) ? std::string("n/a") : fmt::format("{:.3f}", v.mde),
                      v.verdict == "no detectable difference" ? v.verdict_text() : "**" + v.verdict + "**");
    out.j["verdicts"].push_back({{"red", v.red}, {"reference", v.reference}, {"metric", v.metric}, {"n", v.n},
                             {"mean_blue", v.mean_blue}, {"mean_reference", v.mean_reference},
                             {"difference", jinterval(v.difference)}, {"p", v.p}, {"p_holm", v.p_holm},
                             {"verdict", v.verdict}, {"alpha_holm", v.alpha_holm}, {"power", v.power},
                             {"mde", jnum(v.mde)}, {"sentence", v.sentence()}});
  }
  return vcsv;
}

/// 2a. With --stop-when-decided: where the run stopped and why (summary.md, summary.json "stopping").
void add_stopping(Summary& out, const EvaluateSpec& spec, const std::vector<SequentialLook>& looks) {
  const StoppingRule& r = *spec.stopping;
  const SequentialLook& last = looks.back();
  const std::string why = last.stop == "decided" ? "every monitored verdict was decided"
                          : last.stop == "futility"
                              ? fmt::format("futility: every undecided difference's confidence sequence lay within "
                                            "±{:g}",
                                            r.futility)
                              : "the corpus ended before the looks decided";
  const std::string reason = last.stop.empty() ? "corpus" : last.stop;
  out.md += fmt::format("\n**Stopping** (`--stop-when-decided`, block {}, futility {}, α = {:g}; "
                        "evaluation/stopping.csv): {} {} of {} scenarios (look {}): {}; {} of {} monitored "
                        "comparisons decided. The verdicts above are the anytime-valid ones of that look.\n",
                        r.block, r.futility > 0 ? fmt::format("±{:g}", r.futility) : std::string("none"), r.alpha,
                        last.stop.empty() ? "played" : "stopped after", last.scenarios, spec.corpus, last.look, why,
                        last.decided(), last.comparisons.size());
  out.j["stopping"] = {{"block", r.block},       {"futility", r.futility},     {"alpha", r.alpha},
                       {"looks", looks.size()},  {"scenarios", last.scenarios}, {"corpus", spec.corpus},
                       {"stopped_early", !last.stop.empty() && last.scenarios < spec.corpus},
                       {"reason", reason},       {"decided", last.decided()},  {"comparisons", last.comparisons.size()},
                       {"verdicts", "anytime"}};
}

/// 2b. With --cluster template: each verdict's template-clustered inference, evaluation/verdicts_clustered.csv and
/// a Markdown table that says plainly how few clusters there are.
CsvTable add_clustered_verdicts(Summary& out, const std::vector<Verdict>& verdicts) {
  CsvTable csv({"blue_policy", "reference", "red_policy", "metric", "n", "clusters", "difference", "cr2_se",
                "satterthwaite_df", "t_lo", "t_hi", "wild_lo", "wild_hi", "wild_draws"});
  if (verdicts.empty()) return csv;
  std::size_t fewest = verdicts.front().clustered->clusters;
  for (const auto& v : verdicts) fewest = std::min(fewest, v.clustered->clusters);
  out.md += fmt::format(
      "\n**Clustered by template** (CR2 standard errors with Satterthwaite degrees of freedom, and wild cluster "
      "bootstrap-t intervals with Webb weights; docs/METRICS.md \"Template-clustered intervals\"). These treat the "
      "templates as a sample of the templates a claim should hold for. {}\n\n"
      "| RED | reference | metric | templates | difference | CR2 SE | df | 95% t interval | 95% wild interval |\n"
      "|---|---|---|---:|---:|---:|---:|---:|---:|\n",
      few_clusters_note(fewest));
  out.j["verdicts_clustered"] = nlohmann::ordered_json::array();
  for (const auto& v : verdicts) {
    const ClusteredMean& c = *v.clustered;
    csv.add({v.blue, v.reference, v.red, v.metric, std::to_string(c.n), std::to_string(c.clusters), fmt_real(c.mean),
             fmt_real(c.se), fmt_real(c.df), fmt_real(c.t_lo), fmt_real(c.t_hi), fmt_real(c.wild_lo),
             fmt_real(c.wild_hi), std::to_string(c.wild_draws)});
    auto bounds = [](double lo, double hi) {
      return std::isnan(lo) ? std::string("n/a") : fmt::format("[{:+.3f}, {:+.3f}]", lo, hi);
    };
    out.md += fmt::format("| {} | {} | {} | {} | {:+.3f} | {} | {} | {} | {} |\n", md_cell(v.red),
                          md_cell(v.reference), v.metric, c.clusters, c.mean,
                          std::isnan(c.se) ? "n/a" : fmt::format("{:.3f}", c.se),
                          std::isnan(c.df) ? "n/a" : fmt::format("{:.1f}", c.df), bounds(c.t_lo, c.t_hi),
                          bounds(c.wild_lo, c.wild_hi));
    out.j["verdicts_clustered"].push_back(
        {{"red", v.red}, {"reference", v.reference}, {"metric", v.metric}, {"n", c.n}, {"clusters", c.clusters},
         {"difference", c.mean}, {"cr2_se", jnum(c.se)}, {"satterthwaite_df", jnum(c.df)}, {"t_lo", jnum(c.t_lo)},
         {"t_hi", jnum(c.t_hi)}, {"wild_lo", jnum(c.wild_lo)}, {"wild_hi", jnum(c.wild_hi)},
         {"wild_draws", c.wild_draws}});
  }
  return csv;
}

/// 3. Robustness curves over the RED budget: robustness.csv, and their Markdown and JSON.
CsvTable add_robustness(Summary& out, const CsvTable& per, const BootstrapSettings& bs) {
  const auto curves = robustness_curves(per, bs);
  CsvTable rcsv({"blue_policy", "k", "n", "advantage", "advantage_lo", "advantage_hi", "blue_win_rate",
                 "blue_win_rate_lo", "blue_win_rate_hi"});
  out.j["robustness"] = nlohmann::ordered_json::array();
  if (!curves.empty()) {
    out.md += "\n**Robustness over the RED budget** (BLUE against greedy@k)\n\n| BLUE policy | k | n | BLUE advantage | BLUE win rate |\n|---|---:|---:|---:|---:|\n";
    for (const auto& p : curves) {
      rcsv.add({p.blue, std::to_string(p.k), std::to_string(p.advantage.n), fmt_real(p.advantage.mean),
                fmt_real(p.advantage.lo), fmt_real(p.advantage.hi), fmt_real(p.win_rate.mean), fmt_real(p.win_rate.lo),
                fmt_real(p.win_rate.hi)});
      out.md += fmt::format("| {} | {} | {} | {} | {} |\n", md_cell(p.blue), p.k, p.advantage.n, interval_cell(p.advantage),
                        interval_cell(p.win_rate));
      out.j["robustness"].push_back({{"blue", p.blue}, {"k", p.k}, {"advantage", jinterval(p.advantage)},
                                 {"win_rate", jinterval(p.win_rate)}});
    }
  }
  return rcsv;
}

/// 4. The scorecard: scorecard.csv, its JSON, and in Markdown one row per (axis, quantity), one column per policy.
CsvTable add_scorecard(Summary& out, const CsvTable& per, const CsvTable& candidates, const CsvTable& reproducibility,
                       const std::string& exempt_reason, const EvaluateSpec& spec,
                       const std::vector<std::string>& blues, const BootstrapSettings& bs) {
  const std::string& blue = spec.blue;
  const auto card = scorecard(per, candidates, &reproducibility, blue, spec.references, bs);
  CsvTable scsv({"axis", "quantity", "blue_policy", "n", "value", "ci_lo", "ci_hi", "note"});
  out.j["scorecard"] = nlohmann::ordered_json::array();
  // Markdown: one row per (axis, quantity), one column per policy.
  std::vector<std::pair<std::string, std::string>> keys;
  std::map<std::pair<std::string, std::string>, std::map<std::string, const ScoreLine*>> grid;
  for (const auto& l : card) {
    std::string note = l.note;
    if (l.axis == "trace reproducibility" && !exempt_reason.empty()) note = exempt_reason;
    scsv.add({l.axis, l.quantity, l.policy, std::to_string(l.n), json_number_or_null(l.value),
              json_number_or_null(l.lo), json_number_or_null(l.hi), note});
    out.j["scorecard"].push_back({{"axis", l.axis}, {"quantity", l.quantity}, {"blue", l.policy}, {"n", l.n},
                              {"value", jnum(l.value)}, {"lo", jnum(l.lo)}, {"hi", jnum(l.hi)}, {"note", note}});
    const auto key = std::make_pair(l.axis, l.quantity);
    if (!grid.contains(key)) keys.push_back(key);
    grid[key][l.policy] = &l;
  }
  out.md += "\n**Scorecard** (docs/METRICS.md \"Scorecard\")\n\n| axis | quantity |";
  for (const auto& b : blues) out.md += fmt::format(" {} |", md_cell(b));
  out.md += "\n|---|---|";
  for (std::size_t i = 0; i < blues.size(); ++i) out.md += "---:|";
  out.md += "\n";
  for (const auto& key : keys) {
    out.md += fmt::format("| {} | {} |", key.first, md_cell(key.second));
    for (const auto& b : blues) {
      auto it = grid[key].find(b);
      if (it == grid[key].end()) {
        out.md += " |";
        continue;
      }
      const ScoreLine& l = *it->second;
      std::string note = l.axis == "trace reproducibility" && !exempt_reason.empty() ? exempt_reason : l.note;
      out.md += fmt::format(" {}{} |", cell3(l.value, l.lo, l.hi), note.empty() ? "" : " (" + md_cell(note) + ")");
    }
    out.md += "\n";
  }
  return scsv;
}

/// 5. Failures of the policy by cause, each with its first reason quoted.
void add_failures(Summary& out, const CsvTable& per, const std::string& blue) {
  struct Cause {
    std::size_t rows = 0, first = 0;
  };
  std::vector<std::string> order;
  std::map<std::string, Cause> causes;
  std::size_t total = 0;
  for (std::size_t i = 0; i < per.size(); ++i) {
    if (per.at(i, "status") == "ok" || per.at(i, "blue_policy") != blue) continue;
    ++total;
    const std::string key = failure_cause(per.at(i, "failure_reason"));
    auto [it, fresh] = causes.try_emplace(key, Cause{0, i});
    if (fresh) order.push_back(key);
    ++it->second.rows;
  }
  out.md += fmt::format("\n**Failures of `{}`: {} row(s)** (per_scenario.csv, columns status and failure_reason)\n", blue,
                    total);
  out.j["failures"] = {{"rows", total}, {"causes", nlohmann::ordered_json::array()}};
  if (total > 0) {
    out.md += "\n| Cause | Rows | First scenario | RED | First reason |\n|---|---|---|---|---|\n";
    constexpr std::size_t kMaxCauses = 50;
    for (std::size_t k = 0; k < order.size(); ++k) {
      const Cause& c = causes.at(order[k]);
      const std::string first = untrusted::excerpt(per.at(c.first, "failure_reason"), 200);
      out.j["failures"]["causes"].push_back({{"cause", order[k]}, {"rows", c.rows},
                                         {"first_scenario", per.at(c.first, "scenario_id")},
                                         {"red", per.at(c.first, "red_policy")}, {"first_reason", first}});
      if (k < kMaxCauses)
        out.md += fmt::format("| {} | {} | {} | {} | `{}` |\n", md_cell(order[k]), c.rows,
                          md_cell(per.at(c.first, "scenario_id")), md_cell(per.at(c.first, "red_policy")),
                          md_cell(first));
    }
    if (order.size() > kMaxCauses)
      out.md += fmt::format("\n... and {} more causes in per_scenario.csv\n", order.size() - kMaxCauses);
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> evaluation_report(const CsvTable& per, const CsvTable& candidates,
                                                                   const CsvTable& bootstrap_summary,
                                                                   const CsvTable& reproducibility,
                                                                   const std::string& exempt_reason,
                                                                   const EvaluateSpec& spec,
                                                                   const BootstrapSettings& bs) {
  const std::string& blue = spec.blue;
  std::vector<std::string> blues{blue};
  for (const auto& r : spec.references)
    if (std::find(blues.begin(), blues.end(), r) == blues.end()) blues.push_back(r);
  Summary out;
  std::vector<SequentialLook> looks;
  if (spec.stopping) looks = replay_looks(per, blue, sequential_family(spec), *spec.stopping);
  out.j["blue"] = blue;
  out.j["red_baselines"] = spec.reds;
  out.j["references"] = spec.references;
  out.j["budget_ks"] = spec.budget_ks;
  out.j["bootstrap"] = {{"resamples", bs.resamples}, {"seed", bs.seed}};
  out.j["alpha"] = spec.alpha;
  out.j["power"] = spec.power;
  add_baselines(out, per, bootstrap_summary, spec, blues, bs);
  std::vector<Verdict> verdicts;
  const CsvTable vcsv = add_verdicts(out, per, spec, bs, verdicts, looks);
  if (spec.stopping) add_stopping(out, spec, looks);
  std::optional<CsvTable> clustered;
  if (spec.cluster_by_template) clustered = add_clustered_verdicts(out, verdicts);
  const CsvTable rcsv = add_robustness(out, per, bs);
  const CsvTable scsv = add_scorecard(out, per, candidates, reproducibility, exempt_reason, spec, blues, bs);
  add_failures(out, per, blue);
  std::vector<std::pair<std::string, std::string>> files{{"summary.md", out.md},
          {"summary.json", out.j.dump(2) + "\n"},
          {"evaluation/verdicts.csv", vcsv.to_string()},
          {"evaluation/robustness.csv", rcsv.to_string()},
          {"evaluation/scorecard.csv", scsv.to_string()},
          {"evaluation/reproducibility.csv", reproducibility.to_string()}};
  if (clustered) files.emplace_back("evaluation/verdicts_clustered.csv", clustered->to_string());
  if (spec.stopping)
    files.emplace_back("evaluation/stopping.csv", stopping_table(blue, sequential_family(spec), looks).to_string());
  return files;
}

std::vector<std::pair<std::string, std::string>> evaluation_report_of_run(const RunPlan& plan, const std::string& dir,
                                                                          std::size_t rerun, const EvaluateSpec& spec,
                                                                          const BootstrapSettings& bs) {
  namespace fs = std::filesystem;
  const CsvTable per = CsvTable::read((fs::path(dir) / "per_scenario.csv").string());
  const CsvTable cand = CsvTable::read((fs::path(dir) / "candidates.csv").string());
  const CsvTable boot = CsvTable::read((fs::path(dir) / "bootstrap_summary.csv").string());
  std::string exempt;
  const CsvTable repro = check_reproducibility(plan, per, rerun, &exempt);
  return evaluation_report(per.has_col("sample") ? sample_means(per) : per, cand, boot, repro, exempt, spec, bs);
}

}  // namespace advplan
