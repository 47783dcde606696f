#include "advplan/rubric/model_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include "advplan/core/error.hpp"
#include "advplan/core/random.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/stats/agreement.hpp"
#include "advplan/stats/statistics.hpp"

namespace advplan::rubric {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// What one brief gives a model's row.
struct BriefNumbers {
  double weighted = kNaN, items_correct = 0, wrong_moves = 0, critical_omissions = 0, critical_wrong = 0;
  double positive_passed = 0, positive = 0;
};

BriefNumbers numbers_of(const std::vector<RubricItem>& items, const Verdict& v) {
  const auto passed = verdict_passed(items, v);
  const BriefScore s = score_brief(items, passed);
  BriefNumbers n;
  n.weighted = s.weighted;
  n.items_correct = s.items_correct;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const Severity sev = items[i].severity;
    if (items[i].negative()) {
      n.wrong_moves += passed[i] ? 1 : 0;  // the pass condition of a negative item is the wrong move
      n.critical_wrong += sev == Severity::CD && passed[i] ? 1 : 0;
    } else {
      n.positive += 1;
      n.positive_passed += passed[i] ? 1 : 0;
      n.critical_omissions += sev == Severity::CI && !passed[i] ? 1 : 0;
    }
  }
  return n;
}

/// A case's numbers: the mean over its briefs (its seeds); the weighted score over the briefs where it is defined.
struct CaseMeans {
  double weighted = kNaN, items_correct = 0, wrong_moves = 0, critical_omissions = 0, critical_wrong = 0;
  double positive_pass_rate = kNaN;
  std::size_t briefs = 0;
};

CaseMeans means_of(const std::vector<BriefNumbers>& bs) {
  CaseMeans c;
  c.briefs = bs.size();
  double w = 0, wn = 0, pp = 0, p = 0;
  for (const auto& b : bs) {
    if (!std::isnan(b.weighted)) w += b.weighted, wn += 1;
    c.items_correct += b.items_correct;
    c.wrong_moves += b.wrong_moves;
    c.critical_omissions += b.critical_omissions;
    c.critical_wrong += b.critical_wrong;
    pp += b.positive_passed;
    p += b.positive;
  }
  const double n = static_cast<double>(bs.size());
  c.weighted = wn > 0 ? w / wn : kNaN;
  c.items_correct /= n;
  c.wrong_moves /= n;
  c.critical_omissions /= n;
  c.critical_wrong /= n;
  c.positive_pass_rate = p > 0 ? pp / p : kNaN;
  return c;
}

double mean_defined(const std::vector<double>& v) {
  double s = 0, n = 0;
  for (double x : v)
    if (!std::isnan(x)) s += x, n += 1;
  return n > 0 ? s / n : kNaN;
}

std::string real(double v) { return io::fmt_real(v); }

using Unit = std::pair<std::string, std::string>;  // (model, condition)

/// judge -> (model, condition) -> case -> the briefs' numbers
using BriefsBy = std::map<std::string, std::map<Unit, std::map<std::string, std::vector<BriefNumbers>>>>;
/// (judge, unit) -> case -> weighted case mean, for the differences and the rank correlations
using CaseScores = std::map<std::string, std::map<Unit, std::map<std::string, double>>>;

/// The verdicts' numbers by judge, unit and case; an Error for a judge's second verdict on a brief or a case
/// without rubric items.
BriefsBy briefs_by(const RubricSet& items, std::span<const Verdict> verdicts) {
  BriefsBy by;
  std::set<std::pair<std::string, std::string>> judged;
  for (const Verdict& v : verdicts) {
    if (!judged.emplace(v.judge, v.brief_id).second)
      throw Error(fmt::format("judge '{}' has two verdicts on brief '{}'", v.judge, v.brief_id));
    const auto it = items.find(v.case_id);
    if (it == items.end() || it->second.empty())
      throw Error(fmt::format("verdict on brief '{}' by judge '{}': case '{}' has no rubric items", v.brief_id, v.judge,
                              v.case_id));
    by[v.judge][{v.model, v.condition}][v.case_id].push_back(numbers_of(it->second, v));
  }
  return by;
}

/// scores_per_model.csv; each case's weighted mean into `case_score`.
io::CsvTable scores_per_model(const BriefsBy& by, int resamples, std::uint64_t seed, CaseScores& case_score) {
  io::CsvTable sm({"judge", "model", "condition", "cases", "briefs", "weighted_score", "weighted_lo", "weighted_hi",
                   "items_correct", "wrong_moves_per_brief", "critical_omissions_per_brief",
                   "critical_wrong_moves_per_brief", "positive_pass_rate"});
  for (const auto& [judge, units] : by)
    for (const auto& [unit, cases] : units) {
      std::vector<double> w, ic, wm, co, cw, pr;
      std::size_t briefs = 0;
      for (const auto& [c, bs] : cases) {
        const CaseMeans m = means_of(bs);
        briefs += m.briefs;
        case_score[judge][unit][c] = m.weighted;
        if (!std::isnan(m.weighted)) w.push_back(m.weighted);
        ic.push_back(m.items_correct);
        wm.push_back(m.wrong_moves);
        co.push_back(m.critical_omissions);
        cw.push_back(m.critical_wrong);
        pr.push_back(m.positive_pass_rate);
      }
      const Interval s = bootstrap_mean(w, resamples, seed, "rubric-model/" + judge + "/" + unit.first + "/" + unit.second);
      sm.add({judge, unit.first, unit.second, fmt::format("{}", cases.size()), fmt::format("{}", briefs),
              real(w.empty() ? kNaN : s.mean), real(w.empty() ? kNaN : s.lo), real(w.empty() ? kNaN : s.hi),
              real(mean_defined(ic)), real(mean_defined(wm)), real(mean_defined(co)), real(mean_defined(cw)),
              real(mean_defined(pr))});
    }
  return sm;
}

/// condition_differences.csv: condition b minus condition a of one model and judge, paired by case.
io::CsvTable condition_differences(const CaseScores& case_score, int resamples, std::uint64_t seed) {
  io::CsvTable cd({"judge", "model", "condition_a", "condition_b", "cases", "score_a", "score_b", "difference",
                   "difference_lo", "difference_hi"});
  for (const auto& [judge, units] : case_score)
    for (auto a = units.begin(); a != units.end(); ++a)
      for (auto b = std::next(a); b != units.end() && b->first.first == a->first.first; ++b) {  // sorted by model
        std::vector<double> sa, sb;
        for (const auto& [c, x] : a->second) {
          const auto y = b->second.find(c);
          if (y == b->second.end() || std::isnan(x) || std::isnan(y->second)) continue;
          sa.push_back(x);
          sb.push_back(y->second);
        }
        if (sa.empty()) continue;
        const Interval d = bootstrap_paired_difference(sb, sa, resamples, seed,
                                                       "rubric-condition/" + judge + "/" + a->first.first + "/" +
                                                           a->first.second + "/" + b->first.second);
        cd.add({judge, a->first.first, a->first.second, b->first.second, fmt::format("{}", sa.size()),
                real(mean(sa)), real(mean(sb)), real(d.mean), real(d.lo), real(d.hi)});
      }
  return cd;
}

/// Each unit's mean over cases of its case means (`j`'s), a case counted wts[c] times (c's index in the sorted
/// `all_cases`), once each without weights.
void unit_means(const std::map<Unit, std::map<std::string, double>>& j, const std::vector<Unit>& units,
                const std::vector<std::string>& all_cases, const std::vector<double>* wts, std::vector<double>& out) {
  out.clear();
  for (const auto& u : units) {
    double s = 0, n = 0;
    for (const auto& [c, x] : j.at(u)) {
      if (std::isnan(x)) continue;
      const double w = wts ? (*wts)[static_cast<std::size_t>(
                                 std::lower_bound(all_cases.begin(), all_cases.end(), c) - all_cases.begin())]
                           : 1.0;
      s += w * x;
      n += w;
    }
    out.push_back(n > 0 ? s / n : kNaN);
  }
}

/// Spearman's rho over the positions where both are defined.
double rho_of(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> px, py;
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!std::isnan(x[i]) && !std::isnan(y[i])) px.push_back(x[i]), py.push_back(y[i]);
  return agreement::spearman(px, py);
}

using JudgeScores = CaseScores::value_type;

/// The row of judge_rank_correlation.csv of judges a and b.
std::vector<std::string> rank_correlation(const JudgeScores& a, const JudgeScores& b,
                                          const std::vector<std::string>& all_cases, int resamples, std::uint64_t seed) {
  std::vector<Unit> units;
  for (const auto& [u, cs] : a.second)
    if (b.second.count(u)) units.push_back(u);
  std::vector<double> ma, mb;
  unit_means(a.second, units, all_cases, nullptr, ma);
  unit_means(b.second, units, all_cases, nullptr, mb);
  const double rho = rho_of(ma, mb);
  std::vector<double> reps;
  if (all_cases.size() > 1 && resamples > 0) {
    Rng rng = Rng::keyed(seed, "rubric-rank", a.first + "\x1f" + b.first);
    std::vector<std::uint32_t> draw(all_cases.size());
    std::vector<double> wts(all_cases.size());
    for (int r = 0; r < resamples; ++r) {
      resample_counts(rng, draw);
      for (std::size_t i = 0; i < draw.size(); ++i) wts[i] = draw[i];
      unit_means(a.second, units, all_cases, &wts, ma);
      unit_means(b.second, units, all_cases, &wts, mb);
      reps.push_back(rho_of(ma, mb));
    }
  }
  const auto [lo, hi] = reps.empty() ? std::pair{rho, rho} : percentile_bounds(reps);
  return {a.first, b.first, fmt::format("{}", units.size()), real(rho), real(lo), real(hi)};
}

/// judge_rank_correlation.csv: Spearman's rho of two judges' (model, condition) mean scores, over the units both
/// scored, with a percentile bootstrap over cases (the sorted cases, drawn from one stream per pair).
io::CsvTable rank_correlations(const RubricSet& items, const CaseScores& case_score, int resamples, std::uint64_t seed) {
  io::CsvTable rc({"judge_a", "judge_b", "models", "spearman", "spearman_lo", "spearman_hi"});
  std::vector<std::string> all_cases;
  for (const auto& [c, its] : items) all_cases.push_back(c);  // RubricSet is ordered: sorted
  for (auto a = case_score.begin(); a != case_score.end(); ++a)
    for (auto b = std::next(a); b != case_score.end(); ++b) rc.add(rank_correlation(*a, *b, all_cases, resamples, seed));
  return rc;
}

/// scores_per_model.md: the three tables, the last two when they have rows, numbers to three decimals.
std::string model_markdown(const io::CsvTable& sm, const io::CsvTable& cd, const io::CsvTable& rc) {
  std::string md = "## Per model and condition\n\n| judge | model | condition | cases | score [95% CI] | items correct | "
                   "wrong moves / brief | critical omissions / brief | critical wrong moves / brief | positive pass rate |\n"
                   "|---|---|---|---:|---|---:|---:|---:|---:|---:|\n";
  const auto f3 = [](const std::string& cell) {
    if (cell.empty()) return std::string("–");
    return fmt::format("{:.3f}", std::strtod(cell.c_str(), nullptr));
  };
  for (const auto& r : sm.rows())
    md += fmt::format("| {} | {} | {} | {} | {} [{}, {}] | {} | {} | {} | {} | {} |\n", r[0], r[1], r[2], r[3], f3(r[5]),
                      f3(r[6]), f3(r[7]), f3(r[8]), f3(r[9]), f3(r[10]), f3(r[11]), f3(r[12]));
  if (cd.size() > 0) {
    md += "\n## Condition differences (b − a, paired by case)\n\n| judge | model | a | b | cases | difference [95% CI] |\n"
          "|---|---|---|---|---:|---|\n";
    for (const auto& r : cd.rows())
      md += fmt::format("| {} | {} | {} | {} | {} | {} [{}, {}] |\n", r[0], r[1], r[2], r[3], r[4], f3(r[7]), f3(r[8]), f3(r[9]));
  }
  if (rc.size() > 0) {
    md += "\n## Judges' model rankings (Spearman)\n\n| judge a | judge b | models | ρ [95% CI] |\n|---|---|---:|---|\n";
    for (const auto& r : rc.rows()) md += fmt::format("| {} | {} | {} | {} [{}, {}] |\n", r[0], r[1], r[2], f3(r[3]), f3(r[4]), f3(r[5]));
  }
  return md;
}

}  // namespace

ModelTables model_tables(const RubricSet& items, std::span<const Verdict> verdicts, int resamples, std::uint64_t seed) {
  const BriefsBy by = briefs_by(items, verdicts);
  CaseScores case_score;
  const io::CsvTable sm = scores_per_model(by, resamples, seed, case_score);
  const io::CsvTable cd = condition_differences(case_score, resamples, seed);
  const io::CsvTable rc = rank_correlations(items, case_score, resamples, seed);
  const std::string md = model_markdown(sm, cd, rc);
  ModelTables out;
  out.markdown = md;
  out.files = {{"scores_per_model.csv", sm.to_string()},
               {"condition_differences.csv", cd.to_string()},
               {"judge_rank_correlation.csv", rc.to_string()},
               {"scores_per_model.md", md}};
  return out;
}

}  // namespace advplan::rubric
