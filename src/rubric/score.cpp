#include "advplan/rubric/score.hpp"
#include "advplan/rubric/canaries.hpp"

#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <charconv>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <tuple>

#include "advplan/core/error.hpp"
#include "advplan/core/random.hpp"
#include "advplan/stats/text_table.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/stats/agreement.hpp"
#include "core/thread_buffer.hpp"
#include "stats/agreement_row.hpp"
#include "stats/weighted_rows.hpp"
#include "advplan/core/plan.hpp"

namespace advplan::rubric {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// The items of the verdict's case; an Error naming the verdict when there are none.
const std::vector<RubricItem>& case_items(const RubricSet& items, const Verdict& v) {
  const auto it = items.find(v.case_id);
  if (it == items.end() || it->second.empty())
    throw Error(fmt::format("verdict on brief '{}' by judge '{}': case '{}' has no rubric items", v.brief_id,
                            v.judge, v.case_id));
  return it->second;
}

std::vector<bool> passed_of(const std::vector<RubricItem>& items, const Verdict& v) { return verdict_passed(items, v); }

/// Whether `id` is one of the items' ids.
bool is_item(const std::vector<RubricItem>& items, std::string_view id) {
  for (const auto& it : items)
    if (same_id(it.item_id, id)) return true;
  return false;
}

std::size_t unknown_count(const std::vector<RubricItem>& items, const Verdict& v) {
  std::size_t n = v.unknown_ids.size();
  if (items.size() <= 64 && v.failed_items.size() <= 64) {  // a brief's few items: scans, no set
    for (const auto& f : v.failed_items) n += is_item(items, f) ? 0 : 1;
    return n;
  }
  std::set<std::string_view> ids;
  for (const auto& it : items) ids.insert(it.item_id);
  for (const auto& f : v.failed_items) n += ids.count(f) ? 0 : 1;
  return n;
}

std::string real(double v) { return io::fmt_real(v); }

/// score_verdicts' decomposition keys (judge, model, dimension, group), ordered as the strings are and found by
/// views, so a key's strings are copied only when it is first seen.
using DecoKey = std::tuple<std::string, std::string, std::string, std::string>;
using DecoView = std::tuple<std::string_view, std::string_view, std::string_view, std::string_view>;
struct DecoLess {
  using is_transparent = void;
  static DecoView view(const DecoKey& k) { return {std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k)}; }
  static const DecoView& view(const DecoView& v) { return v; }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return view(a) < view(b);
  }
};

std::pair<double, double> percent_bounds_copy(std::vector<double> v) { return percentile_bounds(v); }

/// Mean with a bootstrap interval; the interval is the point when there is one value.
Interval interval_of(const std::vector<double>& v, int resamples, std::uint64_t seed, const std::string& key) {
  return bootstrap_mean(v, resamples, seed, key);
}

}  // namespace

std::string_view severity_code(Severity s) {
  switch (s) {
    case Severity::CI: return "CI";
    case Severity::I: return "I";
    case Severity::SI: return "SI";
    case Severity::D: return "D";
    case Severity::CD: return "CD";
  }
  return "?";
}

std::optional<Severity> parse_severity(std::string_view code) {
  for (Severity s : {Severity::CI, Severity::I, Severity::SI, Severity::D, Severity::CD})
    if (severity_code(s) == code) return s;
  return std::nullopt;
}

double severity_weight(Severity s) {
  switch (s) {
    case Severity::CI: return 9;
    case Severity::I: return 5;
    case Severity::SI: return 2;
    case Severity::D: return -5;
    case Severity::CD: return -9;
  }
  return 0;
}

std::optional<MeanOver> parse_mean_over(std::string_view s) {
  if (s == "group" || s == "template" || s == "case") return MeanOver::group;
  if (s == "brief" || s == "scenario" || s == "plan") return MeanOver::brief;
  return std::nullopt;
}

std::vector<bool> verdict_passed(std::span<const RubricItem> items, const Verdict& v) {
  if (!v.error) return passed_from_failed(items, v.failed_items);
  std::vector<bool> passed(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) passed[i] = items[i].negative();
  return passed;
}

std::vector<bool> passed_from_failed(std::span<const RubricItem> items, std::span<const std::string> failed) {
  std::vector<bool> passed(items.size());
  if (items.size() <= 64 && failed.size() <= 64) {  // a brief's few items and failures: scans, no set
    for (std::size_t i = 0; i < items.size(); ++i)
      passed[i] = std::none_of(failed.begin(), failed.end(), [&](const std::string& f) { return same_id(f, items[i].item_id); });
    return passed;
  }
  const std::set<std::string_view> f(failed.begin(), failed.end());
  for (std::size_t i = 0; i < items.size(); ++i) passed[i] = f.count(items[i].item_id) == 0;
  return passed;
}

BriefScore score_brief(std::span<const RubricItem> items, const std::vector<bool>& passed) {
  if (passed.size() != items.size())
    throw Error(fmt::format("rubric score: {} verdicts for {} items", passed.size(), items.size()));
  BriefScore s;
  s.items = items.size();
  for (std::size_t i = 0; i < items.size(); ++i) {
    const double w = items[i].weight();
    if (items[i].negative()) {
      if (passed[i]) s.incurred_negative += w;  // the wrong move is present: charged
      else ++s.correct;                          // avoided
    } else {
      s.total_positive += w;
      if (passed[i]) {
        s.earned_positive += w;
        ++s.correct;
      }
    }
  }
  s.weighted = s.total_positive > 0 ? (s.earned_positive + s.incurred_negative) / s.total_positive : kNaN;
  s.items_correct = s.items > 0 ? static_cast<double>(s.correct) / static_cast<double>(s.items) : kNaN;
  return s;
}

std::vector<GroupScore> decompose(std::span<const RubricItem> items, const std::vector<bool>& passed) {
  const BriefScore whole = score_brief(items, passed);
  std::vector<GroupScore> out;
  // A brief has few groups per dimension: found by a scan of this dimension's groups (in first-seen order), then
  // put in key order, the order a map by key gives; each group's sums add its items in item order, as before.
  // A key is a view (into the item, or into `buf` for a tier's digits); a group's string is made once.
  auto add = [&](const char* dimension, auto key_of) {
    const std::size_t first = out.size();
    char buf[24];
    for (std::size_t i = 0; i < items.size(); ++i) {
      const std::string_view key = key_of(items[i], buf);
      auto it = std::find_if(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                             [&](const GroupScore& g) { return g.group == key; });
      if (it == out.end()) {
        out.emplace_back();
        it = out.end() - 1;
        it->dimension = dimension;
        it->group.assign(key);
      }
      GroupScore& g = *it;
      ++g.items;
      const bool correct = items[i].negative() ? !passed[i] : passed[i];
      g.correct += correct ? 1 : 0;
      if (passed[i]) (items[i].negative() ? g.incurred_negative : g.earned_positive) += items[i].weight();
    }
    std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
              [](const GroupScore& a, const GroupScore& b) { return a.group < b.group; });
    for (auto it = out.begin() + static_cast<std::ptrdiff_t>(first); it != out.end(); ++it)
      it->contribution =
          whole.total_positive > 0 ? (it->earned_positive + it->incurred_negative) / whole.total_positive : kNaN;
  };
  add("step", [](const RubricItem& it, char*) { return std::string_view(it.step); });
  add("tier", [](const RubricItem& it, char* b) {  // std::to_string's digits
    return std::string_view(b, static_cast<std::size_t>(std::to_chars(b, b + 24, it.tier).ptr - b));
  });
  add("severity", [](const RubricItem& it, char*) { return severity_code(it.severity); });
  return out;
}

ScoreReport score_verdicts(const RubricSet& items, std::span<const Verdict> verdicts, MeanOver mean_over, int resamples,
                           std::uint64_t seed) {
  ScoreReport rep;
  io::CsvTable briefs({"judge", "model", "group", "case_id", "brief_id", "items", "correct", "items_correct",
                       "earned_positive", "incurred_negative", "total_positive", "weighted_score", "unknown_ids",
                       "judge_error"});
  // About 10,000 item rows in a paper run: written as text row by row, not held as a table of strings first.
  std::string items_text;
  io::append_csv_row(items_text, {"judge", "model", "case_id", "brief_id", "item_id", "step", "tier", "severity",
                                  "weight", "passed", "correct"});
  // (judge, model) -> group -> brief scores; and decomposition sums per (judge, model, dimension, group).
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::vector<double>>> by_policy;
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::vector<double>>> correct_by_policy;
  struct DecoSum {
    double items = 0, correct = 0, contribution = 0, briefs = 0;
  };
  // Looked up by views (a transparent order: the views' order is the strings'), so a key's four strings are copied
  // once, when it is first seen.
  std::map<DecoKey, DecoSum, DecoLess> deco;
  // One verdict per (judge, brief), as judge_agreement requires: two would count the brief twice.
  std::set<std::tuple<std::string_view, std::string_view, std::string_view>> judged;
  for (const auto& v : verdicts) {
    if (!judged.emplace(v.judge, v.case_id, v.brief_id).second)
      throw Error(fmt::format("judge '{}' has two verdicts on brief '{}' of case '{}'", v.judge, v.brief_id, v.case_id));
    const auto& its = case_items(items, v);
    const auto passed = passed_of(its, v);
    const BriefScore s = score_brief(its, passed);
    const std::size_t unknown = unknown_count(its, v);
    rep.unknown_ids += unknown;
    rep.errors += v.error ? 1 : 0;
    ++rep.briefs;
    briefs.add({v.judge, v.model, v.group, v.case_id, v.brief_id, std::to_string(s.items), std::to_string(s.correct),
                real(s.items_correct), real(s.earned_positive), real(s.incurred_negative), real(s.total_positive),
                real(s.weighted), std::to_string(unknown), v.error ? "1" : "0"});
    for (std::size_t i = 0; i < its.size(); ++i) {
      const bool correct = its[i].negative() ? !passed[i] : passed[i];
      const std::string tier = std::to_string(its[i].tier), weight = real(its[i].weight());
      io::append_csv_row(items_text, {v.judge, v.model, v.case_id, v.brief_id, its[i].item_id, its[i].step, tier,
                                      severity_code(its[i].severity), weight, passed[i] ? "1" : "0",
                                      correct ? "1" : "0"});
    }
    const std::string unit = mean_over == MeanOver::group ? v.group : v.case_id + "\x1f" + v.brief_id;
    if (!std::isnan(s.weighted)) by_policy[{v.judge, v.model}][unit].push_back(s.weighted);
    correct_by_policy[{v.judge, v.model}][unit].push_back(s.items_correct);
    for (const auto& g : decompose(its, passed)) {
      const DecoView key{v.judge, v.model, g.dimension, g.group};
      auto at = deco.find(key);
      if (at == deco.end()) at = deco.emplace(std::tuple{v.judge, v.model, g.dimension, g.group}, DecoSum{}).first;
      auto& d = at->second;
      d.items += static_cast<double>(g.items);
      d.correct += static_cast<double>(g.correct);
      d.contribution += g.contribution;
      d.briefs += 1;
    }
  }
  io::CsvTable policy({"judge", "model", "mean_over", "units", "weighted_score", "weighted_lo", "weighted_hi",
                       "items_correct", "items_correct_lo", "items_correct_hi"});
  auto unit_means = [](const std::map<std::string, std::vector<double>>& m) {
    std::vector<double> out;
    for (const auto& [u, xs] : m) out.push_back(mean(xs));
    return out;
  };
  for (const auto& [key, units] : by_policy) {
    const auto w = interval_of(unit_means(units), resamples, seed, "rubric/weighted/" + key.first + "/" + key.second);
    const auto c = interval_of(unit_means(correct_by_policy[key]), resamples, seed,
                               "rubric/correct/" + key.first + "/" + key.second);
    policy.add({key.first, key.second, mean_over == MeanOver::group ? "group" : "brief", std::to_string(w.n),
                real(w.mean), real(w.lo), real(w.hi), real(c.mean), real(c.lo), real(c.hi)});
  }
  io::CsvTable deco_csv({"judge", "model", "dimension", "group", "briefs", "items_per_brief", "items_correct",
                         "mean_contribution"});
  for (const auto& [k, d] : deco)
    deco_csv.add({std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k),
                  std::to_string(static_cast<long long>(d.briefs)), real(d.items / d.briefs),
                  real(d.items > 0 ? d.correct / d.items : kNaN), real(d.contribution / d.briefs)});
  const TextTable md = scores_per_policy_table(policy, "scores_per_policy");
  rep.files = {{"scores_per_brief.csv", briefs.to_string()},
               {"scores_per_policy.csv", policy.to_string()},
               {"scores_per_policy.md", md.markdown()},
               {"scores_per_policy.tex", md.latex()},
               {"decomposition.csv", deco_csv.to_string()},
               {"item_verdicts.csv", std::move(items_text)}};
  rep.summary_markdown = md.markdown();
  return rep;
}

namespace {

using BriefKey = std::pair<std::string, std::string>;  // (case, brief)

/// The verdicts by brief: item verdicts, (case, brief) -> judge -> passed; brief scores, (case, brief) -> judge ->
/// score; each brief's model; the judges (sorted) and the cases (sorted).
struct Grades {
  std::vector<std::string> judges;
  std::map<BriefKey, std::map<std::string, std::vector<bool>>> verdict_of;
  std::map<BriefKey, std::map<std::string, double>> score_of;
  std::map<BriefKey, std::string> model_of;
  std::vector<std::string> cases;
};

Grades collect_grades(const RubricSet& items, std::span<const Verdict> verdicts) {
  Grades g;
  std::set<std::string> judge_set;
  for (const auto& v : verdicts) {
    const auto& its = case_items(items, v);
    const auto passed = passed_of(its, v);
    judge_set.insert(v.judge);
    const BriefKey key{v.case_id, v.brief_id};
    if (g.verdict_of[key].count(v.judge))
      throw Error(fmt::format("judge '{}' has two verdicts on brief '{}' of case '{}'", v.judge, v.brief_id, v.case_id));
    g.verdict_of[key][v.judge] = passed;
    g.score_of[key][v.judge] = score_brief(its, passed).weighted;
    g.model_of[key] = v.model;
  }
  g.judges.assign(judge_set.begin(), judge_set.end());
  for (const auto& [key, by_judge] : g.verdict_of)
    if (g.cases.empty() || g.cases.back() != key.first) g.cases.push_back(key.first);
  return g;
}

/// Every agreement interval, the pairs' and the panel's, comes from the same case multisets (docs/METRICS.md
/// "Judge agreement"): B resamples of all cases (sorted) from one stream, drawn once.
std::vector<std::vector<std::uint32_t>> case_draws(std::size_t cases, int resamples, std::uint64_t seed) {
  std::vector<std::vector<std::uint32_t>> draws;
  if (cases > 1 && resamples > 0) {
    Rng rng = Rng::keyed(seed, "rubric-agreement", "panel");
    draws.assign(static_cast<std::size_t>(resamples), std::vector<std::uint32_t>(cases));
    for (auto& d : draws) resample_counts(rng, d);
  }
  return draws;
}

// ------------------------------------------------------------------------------------------------ judge pairs

/// What two judges both graded, per case: the item verdicts (A's, B's) and, per model, the brief scores.
struct PairCases {
  std::map<std::string, std::pair<std::vector<int>, std::vector<int>>> items;
  std::map<std::string, std::map<std::string, std::pair<std::vector<double>, std::vector<double>>>> model_scores;
  std::vector<std::string> cases;   ///< sorted
  std::vector<std::string> models;  ///< sorted, distinct
};

PairCases pair_cases(const Grades& g, const std::string& judge_a, const std::string& judge_b) {
  PairCases pc;
  for (const auto& [key, by_judge] : g.verdict_of) {
    const auto ia = by_judge.find(judge_a), ib = by_judge.find(judge_b);
    if (ia == by_judge.end() || ib == by_judge.end()) continue;
    auto& it = pc.items[key.first];
    for (std::size_t i = 0; i < ia->second.size(); ++i) {
      it.first.push_back(ia->second[i] ? 1 : 0);
      it.second.push_back(ib->second[i] ? 1 : 0);
    }
    auto& ms = pc.model_scores[key.first][g.model_of.at(key)];
    ms.first.push_back(g.score_of.at(key).at(judge_a));
    ms.second.push_back(g.score_of.at(key).at(judge_b));
  }
  for (const auto& [c, it] : pc.items) pc.cases.push_back(c);
  for (const auto& [c, by_model] : pc.model_scores)
    for (const auto& [m, sc] : by_model) pc.models.push_back(m);
  std::sort(pc.models.begin(), pc.models.end());
  pc.models.erase(std::unique(pc.models.begin(), pc.models.end()), pc.models.end());
  return pc;
}

/// Per case, one row: its 2 x 2 table of (judge A, judge B) verdicts at 0..3, (A fails, B fails), (fails,
/// passes), (passes, fails), (passes, passes), then its sums per model (a, b, n for model m at 4 + 3 m; +0.0 where
/// the case lacks the model, a no-op for a sum that starts at +0.0). A replicate adds the drawn cases' rows in case
/// order, weighted by their counts (detail::add_weighted_rows): its table is the count-weighted sum of its cases'
/// tables, so percent and kappa come from sufficient statistics instead of the repeated item lists, and its model
/// sums are the per-model walk over the drawn cases. The cells are whole numbers, so every weighted sum of them is
/// exact in a double: the integer sums, and the kappa of the item lists.
struct PairRows {
  std::size_t stride = 0;
  std::vector<double> rows;
  std::uint64_t all_cells[4] = {0, 0, 0, 0};  ///< every case once: the point estimate's table
};

PairRows pair_rows(const PairCases& pc) {
  PairRows r;
  r.stride = (4 + 3 * pc.models.size() + 3) / 4 * 4;
  r.rows.assign(pc.cases.size() * r.stride, 0.0);
  for (std::size_t c = 0; c < pc.cases.size(); ++c) {
    const auto& it = pc.items.at(pc.cases[c]);
    for (std::size_t i = 0; i < it.first.size(); ++i) {
      const auto k = static_cast<std::size_t>(it.first[i] * 2 + it.second[i]);
      r.rows[c * r.stride + k] += 1.0;
      ++r.all_cells[k];
    }
    for (const auto& [m, sc] : pc.model_scores.at(pc.cases[c])) {
      double sa = 0, sb = 0;
      for (double x : sc.first) sa += x;
      for (double x : sc.second) sb += x;
      const auto mi =
          static_cast<std::size_t>(std::lower_bound(pc.models.begin(), pc.models.end(), m) - pc.models.begin());
      double* row = r.rows.data() + c * r.stride + 4 + 3 * mi;
      row[0] = sa;
      row[1] = sb;
      row[2] = static_cast<double>(sc.first.size());
    }
  }
  return r;
}

/// Percent agreement, kappa and the item count from a summed 2 x 2 table (the point estimate's: every case once;
/// a replicate's: the cells of its weighted row sum). `table` is scratch, reused by every replicate of the pair.
std::tuple<double, agreement::KappaResult, std::size_t> percent_kappa(const std::uint64_t (&cell)[4],
                                                                      agreement::Matrix& table) {
  for (std::size_t k = 0; k < 4; ++k) table[k / 2][k % 2] = static_cast<double>(cell[k]);
  const std::size_t items = cell[0] + cell[1] + cell[2] + cell[3], same = cell[0] + cell[3];
  const double pct = items == 0 ? std::nan("") : static_cast<double>(same) / static_cast<double>(items);
  const agreement::KappaResult kap = items == 0 ? agreement::KappaResult{std::nan(""), std::nan(""), std::nan(""), 0}
                                                : agreement::cohen_kappa_table(table, agreement::KappaWeights::none);
  return std::make_tuple(pct, kap, items);
}

/// Spearman's rho of the per-model means over the briefs of all the pair's cases, each model's scores averaged in
/// case order; and the number of models.
std::pair<double, std::size_t> point_rho(const PairCases& pc) {
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by_model;
  for (const auto& c : pc.cases)
    for (const auto& [m, sc] : pc.model_scores.at(c)) {
      auto& bm = by_model[m];
      bm.first.insert(bm.first.end(), sc.first.begin(), sc.first.end());
      bm.second.insert(bm.second.end(), sc.second.begin(), sc.second.end());
    }
  std::vector<double> ma, mb;
  for (const auto& [m, sc] : by_model) {
    ma.push_back(mean(sc.first));
    mb.push_back(mean(sc.second));
  }
  return std::make_pair(agreement::spearman(ma, mb), ma.size());
}

/// A replicate's Spearman's rho of the per-model means, from its summed row (per-case sums weighted by how often
/// the case was drawn). `ma` and `mb` are scratch.
double replicate_rho(const double* sums, std::size_t models, std::vector<double>& ma, std::vector<double>& mb) {
  ma.clear();
  mb.clear();
  for (std::size_t m = 0; m < models; ++m)
    if (const double* x = sums + 4 + 3 * m; x[2] > 0) {
      ma.push_back(x[0] / x[2]);
      mb.push_back(x[1] / x[2]);
    }
  return agreement::spearman(ma, mb);
}

/// One pair's replicates of percent agreement, kappa and rho (undefined values left out).
struct PairReplicates {
  std::vector<double> pct, kappa, rho;
};

PairReplicates pair_replicates(const PairCases& pc, const PairRows& pr, const std::vector<std::string>& all_cases,
                               const std::vector<std::vector<std::uint32_t>>& draws, agreement::Matrix& table) {
  PairReplicates out;
  const std::vector<std::string>& cases = pc.cases;
  if (cases.size() <= 1 || draws.empty()) return out;
  // The pair's cases among all cases (both sorted): a case the pair lacks adds nothing to its replicates.
  // When the pair has every case (the usual panel), its counts are the draw's own.
  const bool every_case = cases.size() == all_cases.size();
  std::vector<std::size_t> at(every_case ? 0 : cases.size());
  for (std::size_t c = 0; c < at.size(); ++c)
    at[c] = static_cast<std::size_t>(std::lower_bound(all_cases.begin(), all_cases.end(), cases[c]) -
                                     all_cases.begin());
  std::vector<std::uint32_t> counts(cases.size());
  std::vector<double> sums(pr.stride);
  std::vector<double> ma, mb;  // per-model means, reused by every replicate
  for (const auto& d : draws) {
    if (!every_case)
      for (std::size_t c = 0; c < cases.size(); ++c) counts[c] = d[at[c]];
    std::fill(sums.begin(), sums.end(), 0.0);
    detail::add_weighted_rows(every_case ? d.data() : counts.data(), pr.rows.data(), cases.size(), pr.stride,
                              sums.data());
    std::uint64_t cell[4];
    for (std::size_t k = 0; k < 4; ++k) cell[k] = static_cast<std::uint64_t>(sums[k]);
    const auto [p, k, n] = percent_kappa(cell, table);
    out.pct.push_back(p);
    if (!std::isnan(k.kappa)) out.kappa.push_back(k.kappa);
    if (const double r = replicate_rho(sums.data(), pc.models.size(), ma, mb); !std::isnan(r)) out.rho.push_back(r);
  }
  return out;
}

/// One row of agreement_pairs.csv: judges a and b.
std::vector<std::string> pair_row(const Grades& g, std::size_t a, std::size_t b,
                                  const std::vector<std::vector<std::uint32_t>>& draws) {
  const PairCases pc = pair_cases(g, g.judges[a], g.judges[b]);
  const PairRows pr = pair_rows(pc);
  agreement::Matrix table(2, std::vector<double>(2, 0.0));  // reused by every replicate of the pair
  const auto [pct, kap, n_items] = percent_kappa(pr.all_cells, table);
  PairReplicates reps = pair_replicates(pc, pr, g.cases, draws, table);
  const auto [p_lo, p_hi] = reps.pct.empty() ? std::pair{pct, pct} : percent_bounds_copy(reps.pct);
  const auto [k_lo, k_hi] = reps.kappa.empty() ? std::pair{kap.kappa, kap.kappa} : percent_bounds_copy(reps.kappa);
  const auto [rho, n_models] = point_rho(pc);
  // An undefined point estimate (NaN) has no interval either.
  const auto [r_lo, r_hi] = reps.rho.empty() || std::isnan(rho) ? std::pair{rho, rho} : percent_bounds_copy(reps.rho);
  return {g.judges[a], g.judges[b], std::to_string(pc.cases.size()), std::to_string(n_items), real(pct), real(p_lo),
          real(p_hi), real(kap.kappa), real(kap.se), real(k_lo), real(k_hi), std::to_string(n_models),
          real(rho), real(r_lo), real(r_hi)};
}

/// agreement_pairs.csv: every pair of judges. Pairs are independent (own keyed streams, read-only inputs):
/// computed in parallel, rows added in pair order.
io::CsvTable pairs_table(const Grades& g, const std::vector<std::vector<std::uint32_t>>& draws) {
  io::CsvTable pairs({"judge_a", "judge_b", "cases", "items", "percent_agreement", "percent_lo", "percent_hi", "kappa",
                      "kappa_se", "kappa_lo", "kappa_hi", "models", "spearman_model_means", "spearman_lo",
                      "spearman_hi"});
  std::vector<std::pair<std::size_t, std::size_t>> judge_pairs;
  for (std::size_t a = 0; a < g.judges.size(); ++a)
    for (std::size_t b = a + 1; b < g.judges.size(); ++b) judge_pairs.emplace_back(a, b);
  std::vector<std::vector<std::string>> pair_csv(judge_pairs.size());
  tbb::parallel_for(std::size_t{0}, judge_pairs.size(), [&](std::size_t pi) {
    pair_csv[pi] = pair_row(g, judge_pairs[pi].first, judge_pairs[pi].second, draws);
  });
  for (std::size_t pi = 0; pi < judge_pairs.size(); ++pi) pairs.add(pair_csv[pi]);
  return pairs;
}

// ------------------------------------------------------------------------------------------------ the panel

/// Per case, computed once: the Fleiss count rows of every item of the briefs every judge graded (for the whole
/// panel, d == J, and without judge d), each judge's item values and brief scores (NaN where the judge did not
/// grade), and the complete score rows. A replicate concatenates the cases it drew.
struct CaseData {
  std::vector<agreement::Matrix> counts;    // [d][item] {fails, passes}
  agreement::Matrix kalpha, kalpha_scores;  // [judge][...]
  agreement::Matrix scores;                 // [brief][judge]
  std::size_t briefs = 0;
  // The same, as sums additive over cases (a replicate adds the drawn cases' sums, weighted).
  std::vector<agreement::FleissSums> fleiss;
  agreement::AlphaSums alpha_items, alpha_scores;
  agreement::IccSums icc;
};

CaseData case_data_of(const Grades& g, const std::vector<BriefKey>& briefs) {
  const std::vector<std::string>& judges = g.judges;
  const std::size_t J = judges.size();
  CaseData cd;
  cd.counts.resize(J + 1);
  cd.kalpha.resize(J);
  cd.kalpha_scores.resize(J);
  for (const auto& key : briefs) {
    const auto& by_judge = g.verdict_of.at(key);
    const auto& scores = g.score_of.at(key);
    ++cd.briefs;
    const std::size_t n_items = by_judge.begin()->second.size();
    std::vector<const std::vector<bool>*> v(J, nullptr);
    for (std::size_t j = 0; j < J; ++j)
      if (const auto it = by_judge.find(judges[j]); it != by_judge.end()) v[j] = &it->second;
    for (std::size_t i = 0; i < n_items; ++i)
      for (std::size_t j = 0; j < J; ++j) cd.kalpha[j].push_back(v[j] ? ((*v[j])[i] ? 1.0 : 0.0) : kNaN);
    for (std::size_t j = 0; j < J; ++j) {
      const auto it = scores.find(judges[j]);
      cd.kalpha_scores[j].push_back(it == scores.end() ? kNaN : it->second);
    }
    if (by_judge.size() != J) continue;
    for (std::size_t i = 0; i < n_items; ++i) {
      double pass = 0;
      for (std::size_t j = 0; j < J; ++j) pass += (*v[j])[i] ? 1 : 0;
      cd.counts[J].push_back({static_cast<double>(J) - pass, pass});
      for (std::size_t d = 0; d < J; ++d) {
        const double p = pass - ((*v[d])[i] ? 1 : 0);
        cd.counts[d].push_back({static_cast<double>(J - 1) - p, p});
      }
    }
    std::vector<double> srow;
    for (const auto& j : judges) srow.push_back(scores.at(j));
    if (std::none_of(srow.begin(), srow.end(), [](double x) { return std::isnan(x); })) cd.scores.push_back(srow);
  }
  if (J >= 2) {
    for (std::size_t d = 0; d <= J; ++d)  // without a judge only from three judges on (one rating is no agreement)
      cd.fleiss.push_back(d == J || J >= 3 ? agreement::fleiss_sums(cd.counts[d]) : agreement::FleissSums{});
    cd.alpha_items = agreement::alpha_sums(cd.kalpha, agreement::AlphaLevel::nominal);
    cd.alpha_scores = agreement::alpha_sums(cd.kalpha_scores, agreement::AlphaLevel::interval);
    cd.icc = agreement::icc_sums(cd.scores);
  }
  return cd;
}

/// Every case's data, in case order.
std::vector<CaseData> panel_case_data(const Grades& g) {
  std::map<std::string, std::vector<BriefKey>> briefs_of_case;
  for (const auto& [key, by_judge] : g.verdict_of) briefs_of_case[key.first].push_back(key);
  std::vector<CaseData> case_data(g.cases.size());
  for (std::size_t c = 0; c < g.cases.size(); ++c) case_data[c] = case_data_of(g, briefs_of_case[g.cases[c]]);
  return case_data;
}

/// The panel's sums, flattened (stats/agreement_row.hpp): per case one row of the blocks [Fleiss per d][alpha
/// items, with every case's nominal categories][alpha scores][ICC] and the flags it sets. A replicate adds the
/// drawn cases' rows in case order, weighted by their counts.
struct PanelRows {
  detail::AgreementRow layout;
  std::vector<detail::AgreementRow::Fleiss> fleiss;  // [d]
  detail::AgreementRow::Alpha alpha_items, alpha_scores;
  detail::AgreementRow::Icc icc;
  std::vector<double> rows;                       // case c at c * layout.stride()
  std::vector<std::vector<std::uint32_t>> flags;  // [case]
};

PanelRows panel_rows(const std::vector<CaseData>& case_data, std::size_t J) {
  PanelRows pr;
  // A Fleiss block's raters and category count, from the first non-empty case (the others must agree).
  for (std::size_t d = 0; d <= J; ++d) {
    const auto it = std::find_if(case_data.begin(), case_data.end(), [&](const CaseData& cd) {
      return d < cd.fleiss.size() && cd.fleiss[d].subjects != 0;
    });
    pr.fleiss.push_back(it == case_data.end() ? pr.layout.add_fleiss(0, 0)
                                              : pr.layout.add_fleiss(it->fleiss[d].raters,
                                                                     it->fleiss[d].category_totals.size()));
  }
  std::vector<double> alpha_cats;  // every case's nominal item categories, sorted
  for (const CaseData& cd : case_data)
    for (double v : cd.alpha_items.categories)
      if (std::find(alpha_cats.begin(), alpha_cats.end(), v) == alpha_cats.end()) alpha_cats.push_back(v);
  std::sort(alpha_cats.begin(), alpha_cats.end());
  pr.alpha_items = pr.layout.add_alpha(
      case_data.empty() ? agreement::AlphaLevel::nominal : case_data.front().alpha_items.level, std::move(alpha_cats));
  pr.alpha_scores = pr.layout.add_alpha(
      case_data.empty() ? agreement::AlphaLevel::interval : case_data.front().alpha_scores.level, {});
  pr.icc = pr.layout.add_icc(J);
  const std::size_t stride = pr.layout.stride();
  pr.rows.assign(case_data.size() * stride, 0.0);
  pr.flags.resize(case_data.size());
  for (std::size_t c = 0; c < case_data.size(); ++c) {
    const CaseData& cd = case_data[c];
    double* row = pr.rows.data() + c * stride;
    for (std::size_t d = 0; d < cd.fleiss.size(); ++d) detail::AgreementRow::put(pr.fleiss[d], cd.fleiss[d], row, pr.flags[c]);
    detail::AgreementRow::put(pr.alpha_items, cd.alpha_items, row, pr.flags[c]);
    detail::AgreementRow::put(pr.alpha_scores, cd.alpha_scores, row, pr.flags[c]);
    detail::AgreementRow::put(pr.icc, cd.icc, row, pr.flags[c]);
  }
  return pr;
}

/// The panel statistics a replicate computes, in the order replicate_stats writes them.
std::vector<std::string> replicate_stat_names(const std::vector<std::string>& judges) {
  std::vector<std::string> names{"fleiss_kappa"};
  if (judges.size() >= 3)
    for (const auto& j : judges) names.push_back("fleiss_kappa_without:" + j);
  for (const char* name : {"krippendorff_alpha_nominal_items", "krippendorff_alpha_interval_scores", "icc2_1_scores",
                           "icc3_1_scores", "kendall_w_scores"})
    names.emplace_back(name);
  return names;
}

/// The replicate statistics of the panel: the drawn cases' sums; Kendall's W ranks, so it resamples the score
/// rows by case through a resampler that ranks each rater's presorted column in one pass.
class PanelReplicates {
 public:
  PanelReplicates(const std::vector<CaseData>& case_data, std::size_t judges)
      : case_data_(case_data), J_(judges), rows_(panel_rows(case_data, judges)) {
    agreement::Matrix rows;
    std::vector<std::size_t> block_end;
    for (const CaseData& cd : case_data) {
      rows.insert(rows.end(), cd.scores.begin(), cd.scores.end());
      block_end.push_back(rows.size());
    }
    if (!rows.empty()) kendall_.emplace(std::move(rows), std::move(block_end));
  }

  /// One replicate's statistics into out[0, n): NaN for one it does not have (fewer than two score rows drawn),
  /// which is then left out as a NaN value is.
  void stats(const std::vector<std::uint32_t>& counts, double* out, std::size_t n) const {
    using Row = detail::AgreementRow;
    thread_local std::vector<double> tls_acc;
    thread_local std::vector<char> tls_on;
    std::vector<double>& acc = detail::bound(tls_acc);  // src/core/thread_buffer.hpp
    std::vector<char>& on = detail::bound(tls_on);
    const std::size_t stride = rows_.layout.stride();
    acc.assign(stride, 0.0);
    on.assign(rows_.layout.flags(), 0);
    detail::add_weighted_rows(counts.data(), rows_.rows.data(), case_data_.size(), stride, acc.data());
    std::size_t score_rows = 0;
    for (std::size_t c = 0; c < case_data_.size(); ++c) {
      if (counts[c] == 0) continue;
      for (const std::uint32_t f : rows_.flags[c]) on[f] = 1;
      score_rows += counts[c] * case_data_[c].scores.size();
    }
    std::size_t k = 0;
    out[k++] = Row::fleiss(rows_.fleiss[J_], acc.data(), on.data()).kappa();
    if (J_ >= 3)
      for (std::size_t drop = 0; drop < J_; ++drop) out[k++] = Row::fleiss(rows_.fleiss[drop], acc.data(), on.data()).kappa();
    out[k++] = Row::alpha(rows_.alpha_items, acc.data(), on.data()).alpha();
    out[k++] = Row::alpha(rows_.alpha_scores, acc.data(), on.data()).alpha();
    if (score_rows >= 2) {
      const auto r = Row::icc(rows_.icc, acc.data(), on.data()).icc();
      out[k++] = r.icc2_1;
      out[k++] = r.icc3_1;
      out[k++] = kendall_->w(counts);
    } else {
      for (; k < n; ++k) out[k] = kNaN;
    }
  }

 private:
  const std::vector<CaseData>& case_data_;
  std::size_t J_;
  PanelRows rows_;
  std::optional<agreement::KendallWResampler> kendall_;
};

struct PanelStat {
  std::string name;
  std::size_t judges = 0, briefs = 0, items = 0;
  double value = kNaN;
};

/// The panel statistics' point estimates over every case, from the concatenated case data.
std::vector<PanelStat> panel_point_stats(const std::vector<CaseData>& case_data, const std::vector<std::string>& judges) {
  const std::size_t J = judges.size();
  std::vector<agreement::Matrix> fleiss(J + 1);
  agreement::Matrix kalpha(J), kalpha_scores(J), scores;
  std::size_t n_briefs = 0;
  for (const CaseData& cd : case_data) {
    n_briefs += cd.briefs;
    for (std::size_t d = 0; d <= J; ++d) fleiss[d].insert(fleiss[d].end(), cd.counts[d].begin(), cd.counts[d].end());
    for (std::size_t j = 0; j < J; ++j) {
      kalpha[j].insert(kalpha[j].end(), cd.kalpha[j].begin(), cd.kalpha[j].end());
      kalpha_scores[j].insert(kalpha_scores[j].end(), cd.kalpha_scores[j].begin(), cd.kalpha_scores[j].end());
    }
    scores.insert(scores.end(), cd.scores.begin(), cd.scores.end());
  }
  std::vector<PanelStat> out;
  auto add = [&](const std::string& name, std::size_t n_judges, std::size_t briefs, std::size_t items, double v) {
    out.push_back({name, n_judges, briefs, items, v});
  };
  const std::size_t n_labels = fleiss[J].size();
  if (J >= 2 && n_labels > 0) {
    add("fleiss_kappa", J, scores.size(), n_labels, agreement::fleiss_kappa(fleiss[J]));
    if (J >= 3)
      for (std::size_t drop = 0; drop < J; ++drop)
        add("fleiss_kappa_without:" + judges[drop], J - 1, scores.size(), n_labels,
            agreement::fleiss_kappa(fleiss[drop]));
    add("krippendorff_alpha_nominal_items", J, n_briefs, kalpha.front().size(),
        agreement::krippendorff_alpha(kalpha, agreement::AlphaLevel::nominal));
    add("krippendorff_alpha_interval_scores", J, n_briefs, 0,
        agreement::krippendorff_alpha(kalpha_scores, agreement::AlphaLevel::interval));
    if (scores.size() >= 2) {
      const auto r = agreement::icc(scores);
      add("icc2_1_scores", J, scores.size(), 0, r.icc2_1);
      add("icc3_1_scores", J, scores.size(), 0, r.icc3_1);
      add("kendall_w_scores", J, scores.size(), 0, agreement::kendall_w(scores));
    }
  }
  return out;
}

/// agreement_panel.csv: the panel statistics over the briefs every judge graded, each with a bootstrap interval
/// over cases (scenarios): a replicate draws the cases with replacement and takes every brief of a drawn case as
/// often as it was drawn.
io::CsvTable panel_table(const Grades& g, const std::vector<std::vector<std::uint32_t>>& draws, int resamples) {
  io::CsvTable panel({"statistic", "judges", "briefs", "items", "value", "lo", "hi"});
  const std::vector<CaseData> case_data = panel_case_data(g);
  const PanelReplicates replicates(case_data, g.judges.size());
  const std::vector<std::string> rep_names = replicate_stat_names(g.judges);
  const std::size_t n_rep_stats = rep_names.size();
  const std::vector<PanelStat> point = panel_point_stats(case_data, g.judges);
  std::map<std::string, std::vector<double>> panel_reps;
  if (g.cases.size() > 1 && !point.empty() && resamples > 0) {
    // The shared draws (of all cases); the replicates are computed in parallel into their slots, so the bytes do
    // not depend on the thread count.
    std::vector<double> reps(draws.size() * n_rep_stats);
    tbb::parallel_for(std::size_t{0}, draws.size(), [&](std::size_t r) {
      replicates.stats(draws[r], reps.data() + r * n_rep_stats, n_rep_stats);
    });
    std::vector<std::vector<double>> by_stat(n_rep_stats);
    for (std::size_t r = 0; r < draws.size(); ++r)
      for (std::size_t k = 0; k < n_rep_stats; ++k)
        if (const double value = reps[r * n_rep_stats + k]; std::isfinite(value)) by_stat[k].push_back(value);
    for (std::size_t k = 0; k < n_rep_stats; ++k) panel_reps[rep_names[k]] = std::move(by_stat[k]);
  }
  for (const auto& st : point) {
    auto reps = panel_reps.find(st.name);
    const auto [lo, hi] = reps == panel_reps.end() || reps->second.empty() || std::isnan(st.value)
                              ? std::pair{st.value, st.value}
                              : percent_bounds_copy(reps->second);
    panel.add({st.name, std::to_string(st.judges), std::to_string(st.briefs), std::to_string(st.items), real(st.value),
               real(lo), real(hi)});
  }
  return panel;
}

}  // namespace

AgreementReport judge_agreement(const RubricSet& items, std::span<const Verdict> verdicts, int resamples,
                                std::uint64_t seed) {
  const Grades g = collect_grades(items, verdicts);
  const auto draws = case_draws(g.cases.size(), resamples, seed);
  const io::CsvTable pairs = pairs_table(g, draws);
  const io::CsvTable panel = panel_table(g, draws, resamples);
  const TextTable pmd = agreement_pairs_table(pairs, "agreement_pairs"), qmd = agreement_panel_table(panel, "agreement_panel");
  AgreementReport rep;
  rep.files = {{"agreement_pairs.csv", pairs.to_string()}, {"agreement_pairs.md", pmd.markdown()},
               {"agreement_pairs.tex", pmd.latex()},       {"agreement_panel.csv", panel.to_string()},
               {"agreement_panel.md", qmd.markdown()},     {"agreement_panel.tex", qmd.latex()}};
  rep.markdown = pmd.markdown() + "\n" + qmd.markdown();
  return rep;
}

namespace {
std::string fixed3(double v) { return fmt::format("{:.3f}", v); }

/// The `canaries` cell of a judge: "passed/must_fail", with " FLAGGED" for a flagged judge; "n/a" when the judge
/// has no row in canary_judges.csv.
std::string canary_cell(const io::CsvTable& cj, const std::string& judge) {
  for (std::size_t i = 0; i < cj.size(); ++i)
    if (cj.at(i, "judge") == judge)
      return cj.at(i, "passed_must_fail") + "/" + cj.at(i, "must_fail") + (cj.at(i, "flagged") == "1" ? " FLAGGED" : "");
  return "n/a";
}
}  // namespace

TextTable scores_per_policy_table(const io::CsvTable& policy, const std::string& name, const io::CsvTable* canary_judges) {
  // The caption names what the scores are means over: the column mean_over (a file without rows: briefs).
  const bool groups = policy.size() > 0 && policy.at(0, "mean_over") == "group";
  TextTable t{name,
              fmt::format("Rubric score per judge and policy (mean over {}s of the mean brief score; 95% bootstrap "
                          "intervals)", groups ? "group" : "brief"),
              {"judge", "policy", "units", "weighted score", "items correct"},
              {}};
  for (std::size_t i = 0; i < policy.size(); ++i) {
    Interval w, c;
    const auto [end, ec] = std::from_chars(policy.at(i, "units").data(),
                                           policy.at(i, "units").data() + policy.at(i, "units").size(), w.n);
    if (ec != std::errc() || end != policy.at(i, "units").data() + policy.at(i, "units").size())
      throw CsvError(fmt::format("{}: line {}: column 'units' is not a count: '{}'", policy.source(), i + 2,
                                 policy.at(i, "units")));
    c.n = w.n;  // every unit of the weighted score has its items correct
    w.mean = policy.real(i, "weighted_score");
    w.lo = policy.real(i, "weighted_lo");
    w.hi = policy.real(i, "weighted_hi");
    c.mean = policy.real(i, "items_correct");
    c.lo = policy.real(i, "items_correct_lo");
    c.hi = policy.real(i, "items_correct_hi");
    t.rows.push_back({policy.at(i, "judge"), policy.at(i, "model"), policy.at(i, "units"), interval_cell(w), interval_cell(c)});
    if (canary_judges) t.rows.back().push_back(canary_cell(*canary_judges, policy.at(i, "judge")));
  }
  if (canary_judges) t.header.push_back("canaries");
  return t;
}

TextTable agreement_pairs_table(const io::CsvTable& pairs, const std::string& name) {
  TextTable t{name,
              "Judge agreement per pair on item verdicts (percent and Cohen's kappa with 95% bootstrap intervals "
              "over cases; Spearman of per-policy means, with its interval)",
              {"judge A", "judge B", "items", "percent", "kappa (ASE)", "kappa 95% CI", "Spearman [95% CI]"},
              {}};
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const double rho = pairs.real(i, "spearman_model_means");
    t.rows.push_back({pairs.at(i, "judge_a"), pairs.at(i, "judge_b"), pairs.at(i, "items"),
                      fixed3(pairs.real(i, "percent_agreement")),
                      fmt::format("{} ({})", fixed3(pairs.real(i, "kappa")), fixed3(pairs.real(i, "kappa_se"))),
                      fmt::format("[{}, {}]", fixed3(pairs.real(i, "kappa_lo")), fixed3(pairs.real(i, "kappa_hi"))),
                      std::isnan(rho) ? "n/a"
                                      : fmt::format("{} [{}, {}]", fixed3(rho), fixed3(pairs.real(i, "spearman_lo")),
                                                    fixed3(pairs.real(i, "spearman_hi")))});
  }
  return t;
}

TextTable agreement_panel_table(const io::CsvTable& panel, const std::string& name) {
  TextTable t{name, "Agreement across all judges (briefs every judge graded; 95% bootstrap intervals over cases)",
              {"statistic", "judges", "briefs", "value", "95% CI"}, {}};
  for (std::size_t i = 0; i < panel.size(); ++i) {
    const double value = panel.real(i, "value"), lo = panel.real(i, "lo"), hi = panel.real(i, "hi");
    t.rows.push_back({panel.at(i, "statistic"), panel.at(i, "judges"), panel.at(i, "briefs"),
                      std::isnan(value) ? "n/a" : fixed3(value),
                      std::isnan(lo) || std::isnan(hi) ? "n/a" : fmt::format("[{}, {}]", fixed3(lo), fixed3(hi))});
  }
  return t;
}

std::vector<std::pair<std::string, std::string>> rubric_tables(const std::string& run_dir) {
  std::vector<std::pair<std::string, std::string>> files;
  auto emit = [&](const TextTable& t) {
    files.emplace_back("rubric/" + t.name + ".md", t.markdown());
    files.emplace_back("rubric/" + t.name + ".tex", t.latex());
  };
  const std::string dir = run_dir + "/rubric/";
  auto present = [&](const char* f) { return std::filesystem::exists(dir + f); };
  std::optional<io::CsvTable> canaries;
  if (present("canary_judges.csv")) canaries = io::CsvTable::read(dir + "canary_judges.csv");
  if (present("scores_per_policy.csv"))
    emit(scores_per_policy_table(io::CsvTable::read(dir + "scores_per_policy.csv"), "scores_per_policy",
                                 canaries ? &*canaries : nullptr));
  if (present("agreement_pairs.csv"))
    emit(agreement_pairs_table(io::CsvTable::read(dir + "agreement_pairs.csv"), "agreement_pairs"));
  if (present("agreement_panel.csv"))
    emit(agreement_panel_table(io::CsvTable::read(dir + "agreement_panel.csv"), "agreement_panel"));
  if (canaries) emit(canary_judges_table(*canaries, "canary_judges"));
  return files;
}

}  // namespace advplan::rubric
