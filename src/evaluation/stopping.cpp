#include "advplan/evaluation/stopping.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "advplan/core/error.hpp"
#include "advplan/run/scenario_eval.hpp"
#include "advplan/run/trace_schema.hpp"
#include "advplan/stats/statistics.hpp"

namespace advplan {
using io::CsvTable;
using io::fmt_real;

std::vector<SequentialComparison> sequential_family(const EvaluateSpec& spec) {
  // The RED policies the policy meets, in the order evaluate plays them (its --red baselines, then each budget
  // greedy@k that is not one): evaluate_conditions is their one owner.
  std::vector<SequentialComparison> out;
  for (const Condition& cond : evaluate_conditions(spec)) {
    if (cond.blue != spec.blue) continue;
    for (const auto& ref : spec.references) {
      if (ref == spec.blue) continue;
      for (const auto& m : verdict_metrics()) out.push_back({cond.red, ref, m});
    }
  }
  return out;
}

std::size_t SequentialLook::decided() const {
  return static_cast<std::size_t>(
      std::count_if(comparisons.begin(), comparisons.end(), [](const ComparisonLook& c) { return c.decided; }));
}

namespace {

/// The verdict metrics' paired differences lie in [-1, 1]: each metric is bounded to [0, 1] by its definition
/// (docs/METRICS.md), and nothing tighter is known before the data (DECISIONS.md).
constexpr double kLo = -1, kHi = 1;

}  // namespace

SequentialMonitor::SequentialMonitor(std::string blue, std::vector<SequentialComparison> family, StoppingRule rule)
    : blue_(std::move(blue)), family_(std::move(family)), rule_(rule), sum_(family_.size(), 0) {
  const double tune = rule_.alpha / static_cast<double>(std::max<std::size_t>(1, family_.size()));
  cs_.assign(family_.size(), ConfidenceSequence(kLo, kHi, 0, tune));
}

/// One scenario's rows: for each comparison, the policy's and the reference's ok rows against its RED, and the
/// difference of the metric when both are numbers.
void SequentialMonitor::add_differences(const CsvTable& rows) {
  const auto cb = rows.col("blue_policy"), cr = rows.col("red_policy"), st = rows.col("status");
  const auto row_of = [&](const std::string& blue, const std::string& red) -> std::size_t {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows.rows()[i];
      if (r[cb] == blue && r[cr] == red && r[st] == "ok") return i;
    }
    return rows.size();
  };
  for (std::size_t j = 0; j < family_.size(); ++j) {
    const SequentialComparison& c = family_[j];
    const std::size_t a = row_of(blue_, c.red), b = row_of(c.reference, c.red);
    if (a == rows.size() || b == rows.size()) continue;
    const double d = rows.real(a, c.metric) - rows.real(b, c.metric);
    if (std::isnan(d)) continue;
    cs_[j].add(d);
    sum_[j] += d;
  }
}

const SequentialLook* SequentialMonitor::add_scenario(const std::vector<std::string>& header,
                                                      const std::vector<std::vector<std::string>>& rows) {
  CsvTable t(header);
  t.set_source("per_scenario.csv");
  for (const auto& r : rows) t.add(r);
  add_differences(t);
  ++scenarios_;
  if (scenarios_ % rule_.block != 0) return nullptr;
  return &look_now();
}

std::size_t SequentialMonitor::add_table(const CsvTable& per) {
  const auto cs = per.col("scenario_id");
  std::vector<std::vector<std::string>> rows;
  std::size_t added = 0;
  for (std::size_t i = 0; i < per.size(); ++i) {
    rows.push_back(per.rows()[i]);
    if (i + 1 < per.size() && per.rows()[i + 1][cs] == per.rows()[i][cs]) continue;
    add_scenario(per.header(), rows);
    rows.clear();
    ++added;
  }
  return added;
}

const SequentialLook& SequentialMonitor::look_now() {
  if (!looks_.empty() && looks_.back().scenarios == scenarios_) return looks_.back();
  const std::size_t m = family_.size();
  SequentialLook look{looks_.size() + 1, scenarios_, std::vector<ComparisonLook>(m), ""};
  std::vector<double> p(m);
  for (std::size_t j = 0; j < m; ++j) p[j] = cs_[j].p_value();
  const std::vector<bool> rejected = holm_rejections(p, rule_.alpha);
  bool all = m > 0, futile = m > 0 && rule_.futility > 0;
  for (std::size_t j = 0; j < m; ++j) {
    ComparisonLook& c = look.comparisons[j];
    c.n = cs_[j].size();
    c.mean = c.n == 0 ? std::numeric_limits<double>::quiet_NaN() : sum_[j] / static_cast<double>(c.n);
    std::tie(c.lo, c.hi) = cs_[j].interval(rule_.alpha / static_cast<double>(m));
    c.p = p[j];
    c.decided = rejected[j];
    all = all && c.decided;
    // Futility: the sequence at alpha/m (so all m cover at once with probability 1 - alpha) inside [-δ, δ].
    if (!c.decided) futile = futile && c.lo >= -rule_.futility && c.hi <= rule_.futility;
  }
  look.stop = all ? "decided" : futile ? "futility" : "";
  looks_.push_back(std::move(look));
  return looks_.back();
}

std::vector<SequentialLook> replay_looks(const CsvTable& per, const std::string& blue,
                                         const std::vector<SequentialComparison>& family, const StoppingRule& rule) {
  SequentialMonitor mon(blue, family, rule);
  mon.add_table(per);
  mon.look_now();
  return mon.looks();
}

void apply_anytime_verdicts(std::vector<Verdict>& verdicts, const std::vector<SequentialComparison>& family,
                            const SequentialLook& last) {
  std::vector<double> p;
  for (const auto& c : last.comparisons) p.push_back(c.p);
  const std::vector<double> adjusted = holm_adjust(p);
  for (Verdict& v : verdicts)
    for (std::size_t j = 0; j < family.size(); ++j) {
      const SequentialComparison& c = family[j];
      if (c.red != v.red || c.reference != v.reference || c.metric != v.metric) continue;
      v.p = last.comparisons[j].p;
      v.p_holm = adjusted[j];
      v.verdict = !last.comparisons[j].decided    ? "no detectable difference"
                  : last.comparisons[j].mean > 0 ? "better"
                                                 : "worse";
    }
}

CsvTable stopping_table(const std::string& blue, const std::vector<SequentialComparison>& family,
                        const std::vector<SequentialLook>& looks) {
  CsvTable t({"look", "scenarios", "blue_policy", "reference", "red_policy", "metric", "n", "mean_difference",
              "cs_lo", "cs_hi", "p_anytime", "decided", "stop"});
  for (const SequentialLook& l : looks)
    for (std::size_t j = 0; j < family.size(); ++j) {
      const ComparisonLook& c = l.comparisons[j];
      t.add({std::to_string(l.look), std::to_string(l.scenarios), blue, family[j].reference, family[j].red,
             family[j].metric, std::to_string(c.n), fmt_real(c.mean), fmt_real(c.lo), fmt_real(c.hi), fmt_real(c.p),
             c.decided ? "1" : "0", l.stop});
    }
  return t;
}

void stop_when_decided(const EvaluateSpec& spec, RunOptions& opts) {
  const StoppingRule& r = *spec.stopping;
  auto monitor = std::make_shared<SequentialMonitor>(spec.blue, sequential_family(spec), r);
  const bool progress = opts.progress && opts.progress_mode != "none";
  opts.stop_when = [monitor, progress](const RunOptions::StopCheck& c) {
    const auto& header = schema::per_scenario(false);
    if (c.outcome == nullptr) {  // before the first scenario of this invocation: a resumed run's rows first
      if (monitor->add_table(CsvTable::parse(c.kept_rows, "per_scenario.csv of the resumed run", header)) != c.done)
        throw IoError(fmt::format("per_scenario.csv of the resumed run: holds a different number of scenarios than "
                                  "its journal's {}",
                                  c.done));
      const auto& looks = monitor->looks();
      return !looks.empty() && looks.back().scenarios == c.done && !looks.back().stop.empty();
    }
    const SequentialLook* look = monitor->add_scenario(header, c.outcome->per_scenario);
    if (look == nullptr) return false;
    if (progress) fmt::print(stderr, "advplan: {}\n", look_line(*look));
    return !look->stop.empty();
  };
  opts.key_extra.emplace_back("stop_when_decided",
                              fmt::format("block={} futility={:.17g} alpha={:.17g}", r.block, r.futility, r.alpha));
}

std::string look_line(const SequentialLook& look) {
  const std::string stop = look.stop == "decided"    ? "stop: every verdict decided"
                           : look.stop == "futility" ? "stop for futility: every undecided one within the margin"
                                                     : "go on";
  return fmt::format("look {} after {} scenarios: {} of {} decided; {}", look.look, look.scenarios, look.decided(),
                     look.comparisons.size(), stop);
}

}  // namespace advplan
