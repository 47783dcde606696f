#include "advplan/frontier/frontier_analysis.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_map>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/run/summaries.hpp"
#include "advplan/stats/text_table.hpp"
#include "advplan/run/trace_schema.hpp"
#include "advplan/metrics/frontier.hpp"
#include "advplan/metrics/frontier_indicators.hpp"
#include "advplan/stats/statistics.hpp"

namespace advplan {
using io::CsvTable;
using io::fmt_real;
namespace fs = std::filesystem;

namespace {

/// Columns whose range is [0, 1] by definition (docs/METRICS.md): normalised with those fixed bounds.
bool fixed_unit_range(const std::string& column) {
  return column == "quality" || column == "coherence" || column == "pressure" || column == "cost";
}

/// candidates.csv columns that identify or flag a candidate, so cannot be objectives.
bool identifying(const std::string& column) {
  static const std::set<std::string> ids{"scenario_id",     "condition",           "k",       "index",
                                         "plan_id",         "pressure_category",   "categories", "on_frontier",
                                         "selected_greedy", "selected_constraint", "selected"};
  return ids.contains(column);
}

constexpr double kLevels[] = {0.10, 0.50, 0.90};

int to_int(const std::string& s) {
  int v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

/// A value formatted as in the CSVs and read back, so intervals are computed on the cells as written.
double as_written(double v) { return std::isnan(v) ? v : std::stod(fmt_real(v)); }

std::string trim(std::string s) {
  const auto b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// Bounds of one objective in raw units.
struct Bounds {
  double lo = 0, hi = 1;
  bool fixed = true;
};

/// One RED candidate set: the candidates.csv rows of one (scenario, condition).
struct CandSet {
  std::string scenario, condition;
  int k = 0;
  std::vector<std::size_t> rows;
};

std::vector<CandSet> candidate_sets(const CsvTable& c) {
  std::vector<CandSet> sets;
  std::map<std::pair<std::string, std::string>, std::size_t> at;
  const auto cs = c.col("scenario_id"), cc = c.col("condition"), ck = c.col("k");
  for (std::size_t i = 0; i < c.size(); ++i) {
    const auto& r = c.rows()[i];
    auto [it, fresh] = at.emplace(std::make_pair(r[cs], r[cc]), sets.size());
    if (fresh) sets.push_back({r[cs], r[cc], to_int(r[ck]), {}});
    sets[it->second].rows.push_back(i);
  }
  return sets;
}

/// Normalised, maximised value z in [0, 1] (1 best) of a raw value.
double normalise(double x, const Bounds& b, bool maximise) {
  const double z = (x - b.lo) / (b.hi - b.lo);
  return maximise ? z : 1.0 - z;
}

/// What the analysis computes for one candidate set.
struct SetResult {
  std::vector<int> ranks;  ///< per row of the set; 0 for a candidate with a missing objective
  double hv = 0;
  int front = 0;
  int greedy_rank = 0, constraint_rank = 0;  ///< 0 when the set flags no such pick
  PointSet plane;  ///< the first two objectives, minimised (1 − z), for the attainment functions
  PointSet points;                  ///< every objective, minimised (1 − z), per row of the set
  std::vector<double> contribution;  ///< exclusive hypervolume contribution per row of the set
};

class Analysis {
 public:
  /// `reference`: the hypervolume reference point in normalised units z, one per objective (empty: 0 each).
  Analysis(const std::vector<FrontierObjective>& objs, std::vector<const CsvTable*> tables,
           const std::vector<double>& reference)
      : objs_(objs) {
    for (std::size_t j = 0; j < objs_.size(); ++j) ref_.push_back(1.0 - (reference.empty() ? 0.0 : reference[j]));
    for (const auto& o : objs_) {
      Bounds b;
      if (!fixed_unit_range(o.column)) {
        b.fixed = false;
        b.lo = INFINITY;
        b.hi = -INFINITY;
        for (const CsvTable* t : tables)
          for (std::size_t i = 0; i < t->size(); ++i) {
            const double x = t->real(i, o.column);
            if (std::isnan(x)) continue;
            b.lo = std::min(b.lo, x);
            b.hi = std::max(b.hi, x);
          }
        if (!(b.lo <= b.hi)) b.lo = b.hi = 0;    // no value at all
        if (b.hi == b.lo) b.lo = b.hi - 1.0;     // a constant column normalises to 1 (every candidate is best)
      }
      bounds_.push_back(b);
    }
  }

  const std::vector<Bounds>& bounds() const { return bounds_; }
  /// The reference point in minimised units (1 − z).
  const std::vector<double>& reference() const { return ref_; }

  /// The set's candidates, every objective minimised (1 − z), in the set's row order.
  PointSet points(const CsvTable& t, const CandSet& s) const {
    const std::size_t m = objs_.size();
    PointSet f;
    f.dim = m;
    std::vector<double> p(m);
    for (std::size_t row : s.rows) {
      for (std::size_t j = 0; j < m; ++j) {
        const double x = t.real(row, objs_[j].column);
        if (bounds_[j].fixed && !std::isnan(x) && (x < -1e-9 || x > 1 + 1e-9))
          throw CsvError(fmt::format("{}: line {}: column '{}' is {}, outside its range [0, 1]", t.source(), row + 2,
                                     objs_[j].column, x));
        p[j] = 1.0 - normalise(x, bounds_[j], objs_[j].maximise);
      }
      f.add(p);
    }
    return f;
  }

  SetResult evaluate(const CsvTable& t, const CandSet& s) const {
    SetResult res;
    res.points = points(t, s);  // minimised, reference 1 by default
    const PointSet& f = res.points;
    res.plane.dim = 2;
    for (std::size_t i = 0; i < f.size(); ++i)
      res.plane.add(std::span<const double>(f.v.data() + i * f.dim, 2));
    res.ranks = nondominated_ranks(f);
    res.hv = hypervolume(f, ref_);
    res.contribution = hypervolume_contributions(f, ref_);
    const auto cg = t.col("selected_greedy"), cc = t.col("selected_constraint");
    for (std::size_t i = 0; i < s.rows.size(); ++i) {
      res.front += res.ranks[i] == 1 ? 1 : 0;
      if (t.rows()[s.rows[i]][cg] == "1") res.greedy_rank = res.ranks[i];
      if (t.rows()[s.rows[i]][cc] == "1") res.constraint_rank = res.ranks[i];
    }
    return res;
  }

 private:
  std::vector<FrontierObjective> objs_;
  std::vector<Bounds> bounds_;
  std::vector<double> ref_;
};

/// The analysed conditions of one run, in file order, with their sets and results.
struct ConditionSets {
  std::string label;
  int k = 0;
  std::vector<const CandSet*> sets;
  std::vector<SetResult> results;
  std::vector<PointSet> planes() const {
    std::vector<PointSet> out;
    for (const auto& r : results) out.push_back(r.plane);
    return out;
  }
};

std::vector<ConditionSets> analyse(const CsvTable& cands, const std::vector<CandSet>& sets, const Analysis& a,
                                   const std::vector<std::string>& keep) {
  std::vector<ConditionSets> out;
  std::map<std::string, std::size_t> at;
  for (const auto& s : sets) {
    if (!keep.empty() && std::find(keep.begin(), keep.end(), s.condition) == keep.end()) continue;
    auto [it, fresh] = at.emplace(s.condition, out.size());
    if (fresh) out.push_back({s.condition, s.k, {}, {}});
    out[it->second].sets.push_back(&s);
    out[it->second].results.push_back(a.evaluate(cands, s));
  }
  // By k, keeping the file (config) order within a k.
  std::stable_sort(out.begin(), out.end(), [](const ConditionSets& x, const ConditionSets& y) { return x.k < y.k; });
  return out;
}

/// The conditions of the run that have candidates, in file order.
std::vector<std::string> condition_labels(const std::vector<CandSet>& sets) {
  std::vector<std::string> out;
  for (const auto& s : sets)
    if (std::find(out.begin(), out.end(), s.condition) == out.end()) out.push_back(s.condition);
  return out;
}

std::string objective_label(const FrontierObjective& o) { return (o.maximise ? "" : "-") + o.column; }

/// The exact EAF difference A − B: rows of eaf_diff_exact.csv, the rectangles where it is not 0, in normalised
/// units (obj in (lo, hi]).
void eaf_difference_exact(CsvTable& out, const std::string& a_label, const std::vector<PointSet>& a,
                          const std::string& b_label, const std::vector<PointSet>& b) {
  const double na = static_cast<double>(std::max<std::size_t>(1, a.size()));
  const double nb = static_cast<double>(std::max<std::size_t>(1, b.size()));
  const auto regions = eaf_difference_regions(a, b, 1.0, 1.0);
  for (std::size_t i = 0; i < regions.size(); ++i) {
    const EafRegion& r = regions[i];
    const double ea = r.count_a / na, eb = r.count_b / nb;
    out.add({a_label, b_label, std::to_string(i), fmt_real(1.0 - r.x_hi), fmt_real(1.0 - r.x_lo),
             fmt_real(1.0 - r.y_hi), fmt_real(1.0 - r.y_lo), std::to_string(r.count_a), std::to_string(r.count_b),
             fmt_real(ea), fmt_real(eb), fmt_real(ea - eb)});
  }
}

/// The EAF difference A − B on the grid: rows of eaf_diff.csv; and exactly, rows of eaf_diff_exact.csv.
void eaf_difference(CsvTable& out, CsvTable& exact, const std::string& a_label, const std::vector<PointSet>& a,
                    const std::string& b_label, const std::vector<PointSet>& b, double step) {
  eaf_difference_exact(exact, a_label, a, b_label, b);
  const int cells = static_cast<int>(std::lround(1.0 / step));
  std::vector<double> zs, fs;  // normalised values and their minimised form
  for (int i = 0; i <= cells; ++i) {
    const double z = std::min(1.0, i * step);
    zs.push_back(z);
    fs.push_back(1.0 - z);
  }
  const auto ca = attainment_counts(a, fs, fs), cb = attainment_counts(b, fs, fs);
  const double na = static_cast<double>(std::max<std::size_t>(1, a.size()));
  const double nb = static_cast<double>(std::max<std::size_t>(1, b.size()));
  for (std::size_t i = 0; i < zs.size(); ++i)
    for (std::size_t j = 0; j < zs.size(); ++j) {
      const double ea = ca[i * zs.size() + j] / na, eb = cb[i * zs.size() + j] / nb;
      out.add({a_label, b_label, fmt_real(zs[i]), fmt_real(zs[j]), fmt_real(ea), fmt_real(eb), fmt_real(ea - eb)});
    }
}

void add_table(std::vector<std::pair<std::string, std::string>>& files, const TextTable& t) {
  files.emplace_back(t.name + ".md", t.markdown());
  files.emplace_back(t.name + ".tex", t.latex());
}

}  // namespace

std::vector<FrontierObjective> parse_frontier_objectives(const std::string& spec) {
  std::vector<FrontierObjective> out;
  std::size_t start = 0;
  while (start <= spec.size()) {
    const auto comma = spec.find(',', start);
    std::string tok = trim(spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    FrontierObjective o;
    if (!tok.empty() && (tok[0] == '-' || tok[0] == '+')) {
      o.maximise = tok[0] == '+';
      tok = trim(tok.substr(1));
    }
    if (tok.empty())
      throw ConfigError(fmt::format("frontier: --objectives {}: an objective is empty (write e.g. q,D,pressure,-cost)",
                                    spec));
    o.column = tok == "q" ? "quality" : tok == "D" ? "coherence" : tok;
    for (const auto& p : out)
      if (p.column == o.column)
        throw ConfigError(fmt::format("frontier: --objectives {}: '{}' is named twice", spec, o.column));
    out.push_back(o);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (out.size() < 2 || out.size() > 4)
    throw ConfigError(fmt::format("frontier: --objectives {}: give 2 to 4 objectives, not {}", spec, out.size()));
  return out;
}

std::vector<double> parse_frontier_reference(const std::string& spec, std::size_t objectives) {
  std::vector<double> out;
  std::size_t start = 0;
  while (true) {
    const auto comma = spec.find(',', start);
    const std::string tok = trim(spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    double v = 0;
    const auto [ptr, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    if (tok.empty() || ec != std::errc() || ptr != tok.data() + tok.size() || !std::isfinite(v))
      throw ConfigError(fmt::format("frontier: --reference {}: '{}' is not a number (write one normalised value per "
                                    "objective, e.g. 0,0)",
                                    untrusted::excerpt(spec, 80), untrusted::excerpt(tok, 40)));
    if (!(v >= -1 && v < 1))
      throw ConfigError(fmt::format("frontier: --reference {}: {} is outside [-1, 1) (normalised units: 0 is the "
                                    "worst value of an objective, 1 the best)",
                                    untrusted::excerpt(spec, 80), tok));
    out.push_back(v);
    if (out.size() > 4)
      throw ConfigError(fmt::format("frontier: --reference {}: more values than objectives ({})",
                                    untrusted::excerpt(spec, 80), objectives));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (out.size() != objectives)
    throw ConfigError(fmt::format("frontier: --reference {}: give one value per objective ({}), not {}",
                                  untrusted::excerpt(spec, 80), objectives, out.size()));
  return out;
}

FrontierInputs read_frontier_inputs(const std::string& dir) {
  if (!fs::is_directory(dir)) throw CsvError(fmt::format("{}: not a run directory", dir));
  FrontierInputs in;
  in.dir = dir;
  auto path = [&](const char* f) { return (fs::path(dir) / f).string(); };
  // candidates.csv and per_scenario.csv are read by column name, so a run written before a column was added
  // still serves the objectives it has.
  in.candidates = CsvTable::read(path("candidates.csv"));
  if (in.candidates.has_col("sample"))  // docs/DECISIONS.md "Samples"
    throw CsvError(fmt::format("{}: a run of several samples (a sample column): the frontier analysis reads one "
                               "candidate set per (scenario, condition), so run it on a run of samples: 1",
                               in.candidates.source()));
  for (const char* c : {"scenario_id", "condition", "k", "index", "selected_greedy", "selected_constraint"})
    (void)in.candidates.col(c);
  schema::check_ranges(in.candidates, schema::candidates_ranges());
  // A set is one (scenario, condition): a run writes at most k <= 1024 rows of one, and the analysis holds a set's
  // points in memory, so a larger set is refused before any work (200,000 rows once took 4.7 GB).
  {
    const std::size_t cs = in.candidates.col("scenario_id"), cc = in.candidates.col("condition");
    std::unordered_map<std::string, std::size_t> rows_of;  // "scenario \x1f condition" -> rows so far
    for (std::size_t i = 0; i < in.candidates.size(); ++i) {
      const auto& row = in.candidates.rows()[i];
      if (++rows_of[row[cs] + '\x1f' + row[cc]] > schema::kMaxCandidateSet)
        throw CsvError(fmt::format("{}: line {}: the candidate set of scenario {} and condition {} has more than {} rows, "
                                   "more than any run writes (k is at most 1024)",
                                   in.candidates.source(), i + 2, untrusted::excerpt(row[cs], 40),
                                   untrusted::excerpt(row[cc], 40), schema::kMaxCandidateSet));
    }
  }
  in.per_scenario = CsvTable::read(path("per_scenario.csv"));
  for (const char* c : {"condition", "blue_policy", "red_policy", "k"}) (void)in.per_scenario.col(c);
  schema::check_ranges(in.per_scenario, schema::per_scenario_ranges());
  in.bootstrap_summary = CsvTable::read(path("bootstrap_summary.csv"), schema::bootstrap_summary());
  return in;
}

namespace {

using Files = std::vector<std::pair<std::string, std::string>>;

/// Refuses a bad objective list or grid step: 2 to 4 objectives, each a column of every table that is not an
/// identifying one.
void check_objectives(const FrontierOptions& opts, const std::vector<const CsvTable*>& tables) {
  const auto& objs = opts.objectives;
  if (objs.size() < 2 || objs.size() > 4) throw ConfigError("frontier: give 2 to 4 objectives");
  if (!opts.reference.empty() && opts.reference.size() != objs.size())
    throw ConfigError(fmt::format("frontier: --reference: give one value per objective ({}), not {}", objs.size(),
                                  opts.reference.size()));
  for (double z : opts.reference)
    if (!(z >= -1 && z < 1))
      throw ConfigError(fmt::format("frontier: --reference: {} is outside [-1, 1) (normalised units: 0 is the worst "
                                    "value of an objective, 1 the best)",
                                    z));
  if (!(opts.grid_step > 0 && opts.grid_step <= 0.5))
    throw ConfigError(fmt::format("frontier: the grid step must lie in (0, 0.5], not {}", opts.grid_step));
  for (const auto& o : objs) {
    if (identifying(o.column))
      throw ConfigError(fmt::format("frontier: --objectives: '{}' identifies a candidate and is not an objective "
                                    "(objectives: quality (q), coherence (D), pressure, cost, raw_capability)",
                                    o.column));
    for (const CsvTable* t : tables)
      if (!t->has_col(o.column))
        throw ConfigError(fmt::format("frontier: --objectives: {} has no column '{}' (objectives: quality (q), "
                                      "coherence (D), pressure, cost, raw_capability)",
                                      t->source(), o.column));
  }
}

/// Which conditions are analysed: --condition (every condition with candidates by default), then --k.
std::vector<std::string> analysed_labels(const FrontierInputs& run, const FrontierOptions& opts,
                                         const std::vector<CandSet>& sets) {
  const std::vector<std::string> all = condition_labels(sets);
  for (const auto& c : opts.conditions)
    if (std::find(all.begin(), all.end(), c) == all.end())
      throw ConfigError(fmt::format("frontier: --condition {}: {} has no candidates of that condition (conditions: {})",
                                    c, run.candidates.source(), fmt::join(all, ", ")));
  std::vector<std::string> keep = opts.conditions.empty() ? all : opts.conditions;
  if (opts.k > 0) {
    std::vector<std::string> with_k;
    for (const auto& c : keep)
      for (const auto& s : sets)
        if (s.condition == c) {
          if (s.k == opts.k) with_k.push_back(c);
          break;
        }
    if (with_k.empty())
      throw ConfigError(fmt::format("frontier: --k {}: no analysed condition has k = {}", opts.k, opts.k));
    keep = with_k;
  }
  return keep;
}

/// objectives.csv: what was analysed and how it was normalised.
std::string objectives_csv(const std::vector<FrontierObjective>& objs, const Analysis& analysis) {
  CsvTable objectives({"objective", "column", "direction", "lower", "upper", "bounds", "reference"});
  for (std::size_t j = 0; j < objs.size(); ++j) {
    const Bounds& b = analysis.bounds()[j];
    const double z = 1.0 - analysis.reference()[j];  // the reference point, normalised (0 by default)
    const double ref = objs[j].maximise ? b.lo + z * (b.hi - b.lo) : b.hi - z * (b.hi - b.lo);
    objectives.add({fmt::format("obj{}", j + 1), objs[j].column, objs[j].maximise ? "max" : "min", fmt_real(b.lo),
                    fmt_real(b.hi), b.fixed ? "fixed" : "observed", fmt_real(ref)});
  }
  return objectives.to_string();
}

/// ranks.csv and hypervolume.csv: one row per candidate and per candidate set.
void add_ranks_and_hypervolume(Files& files, const CsvTable& candidates, const std::vector<ConditionSets>& conds) {
  CsvTable ranks({"scenario_id", "condition", "k", "index", "rank"});
  CsvTable hv({"scenario_id", "condition", "k", "candidates", "front_size", "hypervolume"});
  const auto ci = candidates.col("index");
  for (const auto& c : conds)
    for (std::size_t s = 0; s < c.sets.size(); ++s) {
      const CandSet& set = *c.sets[s];
      const SetResult& r = c.results[s];
      for (std::size_t i = 0; i < set.rows.size(); ++i)
        ranks.add({set.scenario, set.condition, std::to_string(set.k), candidates.rows()[set.rows[i]][ci],
                   std::to_string(r.ranks[i])});
      hv.add({set.scenario, set.condition, std::to_string(set.k), std::to_string(set.rows.size()),
              std::to_string(r.front), fmt_real(r.hv)});
    }
  files.emplace_back("ranks.csv", ranks.to_string());
  files.emplace_back("hypervolume.csv", hv.to_string());
}

/// Per condition: hypervolume and front size with intervals over scenarios (hypervolume_summary.csv), and the
/// hypervolume intervals by condition.
struct HypervolumeSummary {
  CsvTable table{{"condition", "k", "n", "hypervolume", "hypervolume_lo", "hypervolume_hi", "front_size",
                  "front_size_lo", "front_size_hi"}};
  std::map<std::string, Interval> hv_of;
};
HypervolumeSummary hypervolume_summary(const std::vector<ConditionSets>& conds, const BootstrapSettings& bs) {
  HypervolumeSummary out;
  for (const auto& c : conds) {
    std::vector<double> h, fr;
    for (const auto& r : c.results) {
      h.push_back(as_written(r.hv));
      fr.push_back(r.front);
    }
    const Interval ih = bootstrap_mean(h, bs.resamples, bs.seed, fmt::format("frontier|{}|hypervolume", c.label));
    const Interval iff = bootstrap_mean(fr, bs.resamples, bs.seed, fmt::format("frontier|{}|front_size", c.label));
    out.hv_of[c.label] = ih;
    out.table.add({c.label, std::to_string(c.k), std::to_string(ih.n), fmt_real(ih.mean), fmt_real(ih.lo),
                   fmt_real(ih.hi), fmt_real(iff.mean), fmt_real(iff.lo), fmt_real(iff.hi)});
  }
  return out;
}

using Doubling = std::vector<std::pair<const ConditionSets*, const ConditionSets*>>;  // (k, 2k)

/// The pairs of conditions (k, 2k) with the same BLUE policy and the same RED policy family.
Doubling doubling_pairs(const CsvTable& per_scenario, const std::vector<ConditionSets>& conds) {
  std::map<std::string, std::pair<std::string, std::string>> policies;  // condition -> (blue, red family)
  const auto pc = per_scenario.col("condition"), pb = per_scenario.col("blue_policy"),
             pr = per_scenario.col("red_policy");
  for (const auto& r : per_scenario.rows()) {
    const auto at = r[pr].find('@');
    policies.emplace(r[pc], std::make_pair(r[pb], at == std::string::npos ? std::string() : r[pr].substr(0, at)));
  }
  Doubling doubling;
  for (const auto& lo : conds)
    for (const auto& hi : conds) {
      const auto pl = policies.find(lo.label), ph = policies.find(hi.label);
      if (pl == policies.end() || ph == policies.end() || pl->second.second.empty()) continue;
      if (pl->second == ph->second && hi.k == 2 * lo.k) doubling.emplace_back(&lo, &hi);
    }
  return doubling;
}

/// Hypervolume gain from k to 2k, paired over the scenarios both conditions have: hypervolume_gain.csv, and the
/// gains by the k condition.
std::map<std::string, Interval> add_hypervolume_gain(Files& files, const Doubling& doubling,
                                                     const BootstrapSettings& bs) {
  CsvTable gain({"condition", "condition_2k", "k", "k2", "n", "gain", "gain_lo", "gain_hi"});
  std::map<std::string, Interval> gain_of;  // by the k condition
  for (const auto& [lo, hi] : doubling) {
    std::map<std::string, double> hv_lo;
    for (std::size_t s = 0; s < lo->sets.size(); ++s) hv_lo[lo->sets[s]->scenario] = as_written(lo->results[s].hv);
    std::vector<double> a, b;  // paired over the scenarios both have
    for (std::size_t s = 0; s < hi->sets.size(); ++s)
      if (auto it = hv_lo.find(hi->sets[s]->scenario); it != hv_lo.end()) {
        a.push_back(as_written(hi->results[s].hv));
        b.push_back(it->second);
      }
    const Interval g = bootstrap_paired_difference(a, b, bs.resamples, bs.seed,
                                                   fmt::format("frontier|{}-{}|hypervolume_gain", hi->label, lo->label));
    gain_of[lo->label] = g;
    gain.add({lo->label, hi->label, std::to_string(lo->k), std::to_string(hi->k), std::to_string(g.n),
              fmt_real(g.mean), fmt_real(g.lo), fmt_real(g.hi)});
  }
  files.emplace_back("hypervolume_gain.csv", gain.to_string());
  return gain_of;
}

/// A selector's pick on the front: its mean rank and its share on the front.
struct SelCells {
  Interval rank, front;
};
using SelectorCells = std::map<std::pair<std::string, std::string>, SelCells>;  // (condition, selector)

/// The selectors on the front: rank of the quality-greedy and constraint-aware picks, and share on the front
/// (selectors.csv).
SelectorCells add_selectors(Files& files, const std::vector<ConditionSets>& conds, const BootstrapSettings& bs) {
  CsvTable sel({"condition", "k", "selector", "n", "rank", "rank_lo", "rank_hi", "on_front", "on_front_lo",
                "on_front_hi"});
  SelectorCells sel_of;
  for (const auto& c : conds)
    for (const char* who : {"greedy", "constraint"}) {
      std::vector<double> rk, on;
      for (const auto& r : c.results) {
        const int v = std::string_view(who) == "greedy" ? r.greedy_rank : r.constraint_rank;
        if (v <= 0) continue;
        rk.push_back(v);
        on.push_back(v == 1 ? 1.0 : 0.0);
      }
      const Interval ir = bootstrap_mean(rk, bs.resamples, bs.seed, fmt::format("frontier|{}|{}_rank", c.label, who));
      const Interval io = bootstrap_mean(on, bs.resamples, bs.seed, fmt::format("frontier|{}|{}_on_front", c.label, who));
      sel_of[{c.label, who}] = {ir, io};
      sel.add({c.label, std::to_string(c.k), who, std::to_string(ir.n), fmt_real(ir.mean), fmt_real(ir.lo),
               fmt_real(ir.hi), fmt_real(io.mean), fmt_real(io.lo), fmt_real(io.hi)});
    }
  files.emplace_back("selectors.csv", sel.to_string());
  return sel_of;
}

/// attainment.csv: the attainment surfaces of each condition over its scenarios, in the plane of the first two
/// objectives.
std::string attainment_csv(const std::vector<ConditionSets>& conds) {
  CsvTable att({"condition", "level", "runs", "attained_by", "point", "obj1", "obj2"});
  for (const auto& c : conds) {
    const auto planes = c.planes();
    if (planes.empty()) continue;
    for (double t : kLevels) {
      const std::size_t level = attainment_level(t, planes.size());
      const auto surface = attainment_surface(planes, level);
      // Minimised form sorted by obj1 ascending is normalised obj1 descending: list it by normalised obj1 ascending.
      for (std::size_t i = 0; i < surface.size(); ++i) {
        const Point2& p = surface[surface.size() - 1 - i];
        att.add({c.label, fmt::format("{}", static_cast<int>(std::lround(t * 100))), std::to_string(planes.size()),
                 std::to_string(level), std::to_string(i), fmt_real(1.0 - p[0]), fmt_real(1.0 - p[1])});
      }
    }
  }
  return att.to_string();
}

/// attainment_staircase.csv: each attainment surface of attainment.csv as its closed staircase, from the obj2 axis
/// (obj1 = 0) to the obj1 axis (obj2 = 0), normalised obj1 ascending; the corners alternate with the steps.
std::string attainment_staircase_csv(const std::vector<ConditionSets>& conds) {
  CsvTable st({"condition", "level", "runs", "attained_by", "vertex", "kind", "obj1", "obj2"});
  for (const auto& c : conds) {
    const auto planes = c.planes();
    if (planes.empty()) continue;
    for (double t : kLevels) {
      const std::size_t level = attainment_level(t, planes.size());
      const auto stair = attainment_staircase(planes, level, 1.0, 1.0);
      // Minimised: (c_1.x, 1), c_1, step, c_2, ..., c_m, (1, c_m.y); the corners are the odd positions.
      for (std::size_t i = 0; i < stair.size(); ++i) {
        const std::size_t at = stair.size() - 1 - i;
        const Point2& p = stair[at];
        const char* kind = at == 0 || at + 1 == stair.size() ? "end" : at % 2 == 1 ? "corner" : "step";
        st.add({c.label, fmt::format("{}", static_cast<int>(std::lround(t * 100))), std::to_string(planes.size()),
                std::to_string(level), std::to_string(i), kind, fmt_real(1.0 - p[0]), fmt_real(1.0 - p[1])});
      }
    }
  }
  return st.to_string();
}

/// hv_contributions.csv: each candidate's exclusive hypervolume contribution.
void add_contributions(Files& files, const CsvTable& candidates, const std::vector<ConditionSets>& conds) {
  CsvTable t({"scenario_id", "condition", "k", "index", "rank", "contribution"});
  const auto ci = candidates.col("index");
  for (const auto& c : conds)
    for (std::size_t s = 0; s < c.sets.size(); ++s) {
      const CandSet& set = *c.sets[s];
      const SetResult& r = c.results[s];
      for (std::size_t i = 0; i < set.rows.size(); ++i)
        t.add({set.scenario, set.condition, std::to_string(set.k), candidates.rows()[set.rows[i]][ci],
               std::to_string(r.ranks[i]), fmt_real(r.contribution[i])});
    }
  files.emplace_back("hv_contributions.csv", t.to_string());
}

/// The reference front of each scenario for the epsilon-indicator and IGD+: the non-dominated union of the
/// candidates of every condition of the run in that scenario (whatever --condition and --k keep), minimised.
std::map<std::string, PointSet> reference_fronts(const CsvTable& candidates, const std::vector<CandSet>& sets,
                                                 const Analysis& analysis) {
  std::map<std::string, PointSet> uni;
  for (const auto& s : sets) {
    const PointSet f = analysis.points(candidates, s);
    auto [it, fresh] = uni.try_emplace(s.scenario);
    if (fresh) it->second.dim = f.dim;
    it->second.v.insert(it->second.v.end(), f.v.begin(), f.v.end());
  }
  std::map<std::string, PointSet> out;
  for (const auto& [scenario, u] : uni) out.emplace(scenario, nondominated_points(u));
  return out;
}

/// indicators.csv (per candidate set) and indicators_summary.csv (per condition, with intervals over scenarios):
/// the additive epsilon-indicator and IGD+ against the scenario's reference front.
void add_indicators(Files& files, const std::vector<ConditionSets>& conds,
                    const std::map<std::string, PointSet>& fronts, const BootstrapSettings& bs) {
  CsvTable per({"scenario_id", "condition", "k", "candidates", "reference_size", "epsilon", "igd_plus"});
  CsvTable sum({"condition", "k", "n", "epsilon", "epsilon_lo", "epsilon_hi", "igd_plus", "igd_plus_lo",
                "igd_plus_hi"});
  for (const auto& c : conds) {
    std::vector<double> eps, igd;
    for (std::size_t s = 0; s < c.sets.size(); ++s) {
      const CandSet& set = *c.sets[s];
      const PointSet& ref = fronts.at(set.scenario);
      const double e = epsilon_additive(c.results[s].points, ref), g = igd_plus(c.results[s].points, ref);
      per.add({set.scenario, set.condition, std::to_string(set.k), std::to_string(set.rows.size()),
               std::to_string(ref.size()), fmt_real(e), fmt_real(g)});
      if (!std::isnan(e)) eps.push_back(as_written(e));
      if (!std::isnan(g)) igd.push_back(as_written(g));
    }
    const Interval ie = bootstrap_mean(eps, bs.resamples, bs.seed, fmt::format("frontier|{}|epsilon", c.label));
    const Interval ig = bootstrap_mean(igd, bs.resamples, bs.seed, fmt::format("frontier|{}|igd_plus", c.label));
    sum.add({c.label, std::to_string(c.k), std::to_string(ie.n), fmt_real(ie.mean), fmt_real(ie.lo), fmt_real(ie.hi),
             fmt_real(ig.mean), fmt_real(ig.lo), fmt_real(ig.hi)});
  }
  files.emplace_back("indicators.csv", per.to_string());
  files.emplace_back("indicators_summary.csv", sum.to_string());
}

/// The reference point as the hypervolume table's caption states it.
std::string reference_note(const FrontierOptions& opts) {
  const bool worst = std::all_of(opts.reference.begin(), opts.reference.end(), [](double z) { return z == 0; });
  if (worst) return "the worst value of each objective";
  std::vector<std::string> z;
  for (double v : opts.reference) z.push_back(fmt::format("{:g}", v));
  return fmt::format("z = ({}) in normalised units (0 = the worst value)", fmt::join(z, ", "));
}

/// eaf_diff.csv: the EAF differences against the other run's conditions of the same label (--against), of the
/// --compare pairs, or else of each (2k, k) pair.
std::pair<std::string, std::string> eaf_diff_csv(const std::vector<ConditionSets>& conds, const Analysis& analysis,
                                                 const std::vector<std::string>& keep, const FrontierOptions& opts,
                                                 const FrontierInputs* against, const Doubling& doubling) {
  CsvTable diff({"a", "b", "obj1", "obj2", "eaf_a", "eaf_b", "difference"});
  CsvTable exact({"a", "b", "region", "obj1_lo", "obj1_hi", "obj2_lo", "obj2_hi", "runs_a", "runs_b", "eaf_a",
                  "eaf_b", "difference"});
  auto find_cond = [&](const std::string& label) -> const ConditionSets* {
    for (const auto& c : conds)
      if (c.label == label) return &c;
    return nullptr;
  };
  if (against) {
    const std::vector<CandSet> bsets = candidate_sets(against->candidates);
    const auto bconds = analyse(against->candidates, bsets, analysis, keep);
    const std::string bname = fs::path(against->dir).filename().string();
    for (const auto& c : conds)
      for (const auto& bc : bconds)
        if (bc.label == c.label)
          eaf_difference(diff, exact, c.label, c.planes(), fmt::format("{} @ {}", bc.label, bname), bc.planes(),
                         opts.grid_step);
  } else if (!opts.compare.empty()) {
    for (const auto& [a, b] : opts.compare) {
      const ConditionSets *ca = find_cond(a), *cb = find_cond(b);
      for (const auto& [name, p] : {std::pair{a, ca}, std::pair{b, cb}})
        if (!p)
          throw ConfigError(fmt::format("frontier: --compare {},{}: '{}' is not an analysed condition (analysed: {})",
                                        a, b, name, fmt::join(keep, ", ")));
      eaf_difference(diff, exact, a, ca->planes(), b, cb->planes(), opts.grid_step);
    }
  } else {
    for (const auto& [lo, hi] : doubling)
      eaf_difference(diff, exact, hi->label, hi->planes(), lo->label, lo->planes(), opts.grid_step);
  }
  return {diff.to_string(), exact.to_string()};
}

/// The two text tables: hypervolume with its gain, and where the selectors' picks lie.
void add_frontier_tables(Files& files, const std::vector<FrontierObjective>& objs,
                         const std::vector<ConditionSets>& conds, HypervolumeSummary& hv,
                         const std::map<std::string, Interval>& gain_of, SelectorCells& sel_of,
                         const std::string& ref_note) {
  std::string objs_note;
  for (const auto& o : objs) objs_note += (objs_note.empty() ? "" : ", ") + objective_label(o);
  TextTable t1;
  t1.name = "frontier_hypervolume";
  t1.caption = fmt::format(
      "Hypervolume of the RED candidate sets on ({}), normalised, reference point at {}; mean over scenarios [95% "
      "bootstrap interval]",
      objs_note, ref_note);
  t1.header = {"condition", "k", "n", "hypervolume", "front size", "gain k to 2k"};
  for (const auto& c : conds) {
    const auto g = gain_of.find(c.label);
    std::string front;
    for (const auto& r : hv.table.rows())
      if (r[0] == c.label) front = fmt::format("{:.2f}", std::stod(r[6]));
    t1.rows.push_back({c.label, std::to_string(c.k), std::to_string(hv.hv_of[c.label].n),
                       interval_cell(hv.hv_of[c.label]), front, g == gain_of.end() ? "" : interval_cell(g->second)});
  }
  add_table(files, t1);
  TextTable t2;
  t2.name = "frontier_selectors";
  t2.caption = fmt::format(
      "Where the selectors' picks lie on the candidate front on ({}): mean non-domination rank (1 = on the front) "
      "and share of scenarios with the pick on the front [95% bootstrap interval]",
      objs_note);
  t2.header = {"condition", "k", "greedy rank", "greedy on front", "constraint-aware rank", "constraint-aware on front"};
  for (const auto& c : conds) {
    const auto& g = sel_of[{c.label, "greedy"}];
    const auto& d = sel_of[{c.label, "constraint"}];
    t2.rows.push_back({c.label, std::to_string(c.k), interval_cell(g.rank), interval_cell(g.front),
                       interval_cell(d.rank), interval_cell(d.front)});
  }
  add_table(files, t2);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> build_frontier(const FrontierInputs& run, const FrontierOptions& opts,
                                                                const FrontierInputs* against) {
  std::vector<const CsvTable*> tables{&run.candidates};
  if (against) tables.push_back(&against->candidates);
  check_objectives(opts, tables);
  const BootstrapSettings bs = recorded_bootstrap(run.bootstrap_summary);
  const std::vector<CandSet> sets = candidate_sets(run.candidates);
  const std::vector<std::string> keep = analysed_labels(run, opts, sets);
  const Analysis analysis(opts.objectives, tables, opts.reference);
  const std::vector<ConditionSets> conds = analyse(run.candidates, sets, analysis, keep);

  Files files;
  files.emplace_back("objectives.csv", objectives_csv(opts.objectives, analysis));
  add_ranks_and_hypervolume(files, run.candidates, conds);
  HypervolumeSummary hv = hypervolume_summary(conds, bs);
  files.emplace_back("hypervolume_summary.csv", hv.table.to_string());
  const Doubling doubling = doubling_pairs(run.per_scenario, conds);
  const std::map<std::string, Interval> gain_of = add_hypervolume_gain(files, doubling, bs);
  SelectorCells sel_of = add_selectors(files, conds, bs);
  files.emplace_back("attainment.csv", attainment_csv(conds));
  auto [diff, diff_exact] = eaf_diff_csv(conds, analysis, keep, opts, against, doubling);
  files.emplace_back("eaf_diff.csv", std::move(diff));
  add_frontier_tables(files, opts.objectives, conds, hv, gain_of, sel_of, reference_note(opts));
  // Files added by issue 35 (docs/DECISIONS.md "Frontier indicators"), after the older ones.
  add_contributions(files, run.candidates, conds);
  add_indicators(files, conds, reference_fronts(run.candidates, sets, analysis), bs);
  files.emplace_back("attainment_staircase.csv", attainment_staircase_csv(conds));
  if (opts.exact_eaf) files.emplace_back("eaf_diff_exact.csv", std::move(diff_exact));
  return files;
}

}  // namespace advplan
