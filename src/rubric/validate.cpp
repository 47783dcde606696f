#include "advplan/rubric/validate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "advplan/core/error.hpp"
#include "advplan/core/random.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/stats/agreement.hpp"
#include "advplan/stats/statistics.hpp"
#include "rubric/jsonl_reader.hpp"

namespace advplan::rubric {
namespace {

using nlohmann::json;
using detail::id_field;
using detail::text_field;
using detail::where;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kZ = 1.959963984540054;  // the normal quantile at 0.975, as statsmodels' cohens_kappa uses

/// "Pass" -> false, "Fail" -> true (also lower case); nullopt otherwise.
std::optional<bool> fail_of(const json& v) {
  if (!v.is_string()) return std::nullopt;
  const std::string s = v.get<std::string>();
  if (s == "Pass" || s == "pass" || s == "PASS") return false;
  if (s == "Fail" || s == "fail" || s == "FAIL") return true;
  return std::nullopt;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

/// The experts' columns of a line: expert_1 ... expert_N, in index order; an Error unless they are exactly 1..N.
std::vector<bool> expert_verdicts(const json& j, const std::string& source, std::size_t line) {
  std::map<std::size_t, const json*> by_index;
  for (const auto& [key, value] : j.items()) {
    if (!key.starts_with("expert_")) continue;
    const std::string digits = key.substr(7);
    if (digits.empty() || digits.size() > 3 || digits[0] == '0' ||
        !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw Error(fmt::format("{}: an expert column is expert_ and a number from 1, without leading zeros", where(source, line, untrusted::excerpt(key, 40))));
    by_index[std::stoul(digits)] = &value;
  }
  if (by_index.size() < 2)
    throw Error(fmt::format("{}: the study needs at least two experts (expert_1, expert_2, ...)", where(source, line, "expert_1")));
  if (by_index.size() > kMaxExperts)
    throw Error(fmt::format("{}: more than {} experts", where(source, line, "expert_1"), kMaxExperts));
  std::vector<bool> out;
  std::size_t want = 1;
  for (const auto& [k, v] : by_index) {
    if (k != want) throw Error(fmt::format("{}: missing (the experts are numbered from 1 without gaps)",
                                           where(source, line, fmt::format("expert_{}", want))));
    const auto f = fail_of(*v);
    if (!f) throw Error(fmt::format("{}: expected \"Pass\" or \"Fail\", got {}", where(source, line, fmt::format("expert_{}", k)),
                                    untrusted::json_excerpt(*v, 40)));
    out.push_back(*f);
    ++want;
  }
  return out;
}

// ------------------------------------------------------------------------------------------------ statistics

/// A 2x2 table of a judge against the expert majority on items where the majority is not a tie; Fail is the
/// positive class: tp judge Fail / majority Fail, fp Fail / Pass, fn Pass / Fail, tn Pass / Pass.
struct Table {
  double tp = 0, fp = 0, fn = 0, tn = 0;
  double n() const { return tp + fp + fn + tn; }
  void add(const Table& o, double w) {
    tp += w * o.tp;
    fp += w * o.fp;
    fn += w * o.fn;
    tn += w * o.tn;
  }
};

double ratio(double a, double b) { return b > 0 ? a / b : kNaN; }
double agreement_of(const Table& t) { return ratio(t.tp + t.tn, t.n()); }
double f1_of(const Table& t) { return ratio(2 * t.tp, 2 * t.tp + t.fp + t.fn); }
agreement::KappaResult kappa_of(const Table& t) {
  // rows: the judge's category (Fail, Pass); columns: the majority's
  return agreement::cohen_kappa_table({{t.tp, t.fp}, {t.fn, t.tn}});
}

/// The groups every judge is reported by: all items, each tier, each severity.
constexpr std::size_t kGroups = 1 + 3 + 5;
std::pair<std::string, std::string> group_name(std::size_t g) {
  if (g == 0) return {"all", "all"};
  if (g <= 3) return {"tier", std::to_string(g)};
  return {"severity", std::string(severity_code(static_cast<Severity>(g - 4)))};
}
std::array<std::size_t, 3> groups_of(const RubricItem& it) {
  return {0, static_cast<std::size_t>(it.tier), 4 + static_cast<std::size_t>(it.severity)};
}

/// One judge's verdicts, aligned with the study's lines.
struct JudgeColumn {
  std::string name;
  std::vector<std::optional<bool>> fail;  ///< per study line
};

/// Per (group, scenario): the judge's table, and the tie items' agreement when ties are read as Pass / as Fail.
struct JudgeCounts {
  std::vector<std::array<Table, kGroups>> tables;  ///< per scenario
  std::array<double, kGroups> ties{}, ties_pass_agree{}, ties_fail_agree{}, all_items{}, all_agree_nontie{};
};

std::string real(double v) { return io::fmt_real(v); }

/// The percentile bounds of a copy (percentile_bounds reorders).
std::pair<double, double> bounds(std::vector<double> v) { return percentile_bounds(v); }

}  // namespace

std::string model_family(const std::string& name) {
  std::string s = name;
  if (s.starts_with("llm_judge:")) s = s.substr(10);
  s = lower(s);
  const auto slash = s.find('/');
  if (slash != std::string::npos) return s.substr(0, slash);
  return s.substr(0, std::min(s.size(), s.find_first_of("-_:.")));
}

ExpertStudy parse_expert_study(const std::string& text, const std::string& source) {
  ExpertStudy study;
  std::set<std::pair<std::string, std::string>> seen;
  std::map<std::string, std::string> scenario_of;
  detail::for_each_record(text, source, [&](const json& j, std::size_t line) {
    StudyLine l;
    l.brief = id_field(j, "brief", source, line, /*number_ok=*/true);
    l.scenario = id_field(j, "scenario", source, line, /*number_ok=*/true);
    l.model = j.contains("model") && !j["model"].is_null() ? id_field(j, "model", source, line) : "all";
    RubricItem& it = l.item;
    it.case_id = l.scenario;
    it.item_id = id_field(j, "item_id", source, line, /*number_ok=*/true);
    it.step = j.contains("step") && !j["step"].is_null() ? id_field(j, "step", source, line, /*number_ok=*/true) : "";
    detail::read_item_grading(j, source, line, it);
    (void)text_field(j, "judge_note", source, line);
    l.expert_fail = expert_verdicts(j, source, line);
    if (study.experts == 0) study.experts = l.expert_fail.size();
    if (l.expert_fail.size() != study.experts)
      throw Error(fmt::format("{}: {} experts on this line, {} on the first", where(source, line, "expert_1"),
                              l.expert_fail.size(), study.experts));
    const auto fails = static_cast<std::size_t>(std::count(l.expert_fail.begin(), l.expert_fail.end(), true));
    const int expected = 2 * fails > study.experts ? 1 : 2 * fails < study.experts ? 0 : 2;
    const auto maj = j.find("majority");
    if (maj == j.end()) throw Error(fmt::format("{}: missing", where(source, line, "majority")));
    const std::string m = maj->is_string() ? lower(maj->get<std::string>()) : "";
    const int given = m == "pass" ? 0 : m == "fail" ? 1 : m == "tie" ? 2 : -1;
    if (given < 0)
      throw Error(fmt::format("{}: expected \"Pass\", \"Fail\" or \"tie\", got {}", where(source, line, "majority"),
                              untrusted::json_excerpt(*maj, 40)));
    if (given != expected)
      throw Error(fmt::format("{}: {} is not the experts' majority ({} of {} say Fail)", where(source, line, "majority"),
                              untrusted::json_excerpt(*maj, 40), fails, study.experts));
    l.majority = given;
    if (const auto jv = j.find("judge_verdict"); jv != j.end() && !jv->is_null()) {
      l.judge_fail = fail_of(*jv);
      if (!l.judge_fail)
        throw Error(fmt::format("{}: expected \"Pass\" or \"Fail\", got {}", where(source, line, "judge_verdict"),
                                untrusted::json_excerpt(*jv, 40)));
    }
    if (!seen.insert({l.brief, it.item_id}).second)
      throw Error(fmt::format("{}: item '{}' of brief '{}' is repeated", where(source, line, "item_id"), it.item_id, l.brief));
    const auto [sc, fresh] = scenario_of.emplace(l.brief, l.scenario);
    if (!fresh && sc->second != l.scenario)
      throw Error(fmt::format("{}: brief '{}' is in scenario '{}' on an earlier line", where(source, line, "scenario"),
                              l.brief, sc->second));
    study.lines.push_back(std::move(l));
  });
  if (study.lines.empty()) throw Error(fmt::format("{}: no item verdicts", source));
  return study;
}

ExpertStudy read_expert_study(const std::string& path) { return parse_expert_study(detail::read_bounded(path), path); }

namespace {

/// The study's scenarios (the bootstrap's units), sorted, and each line's index among them.
struct ScenarioIndex {
  std::vector<std::string> names;
  std::vector<std::size_t> of_line;
};

ScenarioIndex index_scenarios(const std::vector<StudyLine>& lines) {
  ScenarioIndex x;
  for (const auto& l : lines) x.names.push_back(l.scenario);
  std::sort(x.names.begin(), x.names.end());
  x.names.erase(std::unique(x.names.begin(), x.names.end()), x.names.end());
  x.of_line.resize(lines.size());
  for (std::size_t i = 0; i < lines.size(); ++i)
    x.of_line[i] =
        static_cast<std::size_t>(std::lower_bound(x.names.begin(), x.names.end(), lines[i].scenario) - x.names.begin());
  return x;
}

using LinesOfBrief = std::map<std::string, std::vector<std::size_t>>;

/// One further judge's verdict on a study brief (its lines `idx`) entered in its column; the failed ids the brief
/// does not have are counted in rep.unknown_ids.
void enter_verdict(const Verdict& v, const std::vector<StudyLine>& lines, const std::vector<std::size_t>& idx,
                   JudgeColumn& col, ValidationReport& rep) {
  col.name = v.judge;
  col.fail.resize(lines.size());
  const std::set<std::string> failed(v.failed_items.begin(), v.failed_items.end());
  std::set<std::string> known;
  for (std::size_t i : idx) {
    const RubricItem& it = lines[i].item;
    known.insert(it.item_id);
    // A judge failure verifies nothing: every positive item failed, every mistake charged (never a pass).
    col.fail[i] = v.error ? !it.negative() : failed.count(it.item_id) > 0;
  }
  for (const auto& f : failed) rep.unknown_ids += known.count(f) ? 0 : 1;
}

/// The judges: the study's production judge (when any line has its verdict), then the others by name. Verdicts on
/// briefs outside the study are counted in rep.ignored_verdicts.
std::vector<JudgeColumn> judge_columns(const std::vector<StudyLine>& lines, const LinesOfBrief& lines_of_brief,
                                       std::span<const Verdict> others, const ValidationOptions& options,
                                       ValidationReport& rep) {
  std::vector<JudgeColumn> judges;
  if (std::any_of(lines.begin(), lines.end(), [](const StudyLine& l) { return l.judge_fail.has_value(); })) {
    JudgeColumn c{options.production_judge, {}};
    for (const auto& l : lines) c.fail.push_back(l.judge_fail);
    judges.push_back(std::move(c));
  }
  std::map<std::string, JudgeColumn> other;
  std::set<std::pair<std::string, std::string>> graded;
  for (const Verdict& v : others) {
    if (!judges.empty() && v.judge == options.production_judge)
      throw Error(fmt::format("verdict on brief '{}': judge '{}' is the study's production judge (judge_verdict); "
                              "name it otherwise", v.brief_id, v.judge));
    const auto b = lines_of_brief.find(v.brief_id);
    if (b == lines_of_brief.end()) {
      ++rep.ignored_verdicts;
      continue;
    }
    if (lines[b->second.front()].scenario != v.case_id)
      throw Error(fmt::format("verdict on brief '{}' by judge '{}': case '{}', while the study has the brief in scenario '{}'",
                              v.brief_id, v.judge, v.case_id, lines[b->second.front()].scenario));
    if (!graded.insert({v.judge, v.brief_id}).second)
      throw Error(fmt::format("judge '{}' has two verdicts on brief '{}'", v.judge, v.brief_id));
    enter_verdict(v, lines, b->second, other[v.judge], rep);
  }
  for (auto& [name, col] : other) judges.push_back(std::move(col));
  if (judges.empty()) throw Error("no judge to validate: the study has no judge_verdict and no verdicts file was given");
  return judges;
}

/// One judge's counts: tables per scenario and group, tie sensitivity, Fleiss sums per scenario (the panel, the panel
/// with the judge), the experts' pairwise kappas over the items it graded.
struct JudgeTally {
  JudgeCounts counts;
  std::vector<agreement::FleissSums> panel, with;  ///< per scenario
  double pair_kappa_sum = 0, pair_kappa_n = 0, items = 0;
};

/// The line's verdict by the judge (fail `jf`) entered in the tables and tie counts of each of its groups.
void count_line(const StudyLine& l, bool jf, std::size_t scenario, JudgeCounts& c) {
  for (std::size_t g : groups_of(l.item)) {
    c.all_items[g] += 1;
    if (l.majority == 2) {
      c.ties[g] += 1;
      c.ties_pass_agree[g] += jf ? 0 : 1;
      c.ties_fail_agree[g] += jf ? 1 : 0;
      continue;
    }
    const bool mf = l.majority == 1;
    Table& t = c.tables[scenario][g];
    (jf ? (mf ? t.tp : t.fp) : (mf ? t.fn : t.tn)) += 1;
    c.all_agree_nontie[g] += jf == mf ? 1 : 0;
  }
}

JudgeTally tally_judge(const JudgeColumn& judge, const std::vector<StudyLine>& lines, const ScenarioIndex& scen,
                       std::size_t E) {
  const std::size_t S = scen.names.size();
  JudgeTally x;
  JudgeCounts& c = x.counts;
  c.tables.assign(S, {});
  std::vector<agreement::Matrix> p(S), w(S);
  std::vector<std::vector<int>> expert_codes(E);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!judge.fail[i]) continue;
    const bool jf = *judge.fail[i];
    const StudyLine& l = lines[i];
    x.items += 1;
    count_line(l, jf, scen.of_line[i], c);
    const auto fails = static_cast<double>(std::count(l.expert_fail.begin(), l.expert_fail.end(), true));
    p[scen.of_line[i]].push_back({fails, static_cast<double>(E) - fails});
    w[scen.of_line[i]].push_back({fails + (jf ? 1 : 0), static_cast<double>(E) - fails + (jf ? 0 : 1)});
    for (std::size_t e = 0; e < E; ++e) expert_codes[e].push_back(l.expert_fail[e] ? 1 : 0);
  }
  x.panel.resize(S);
  x.with.resize(S);
  for (std::size_t s = 0; s < S; ++s) {
    x.panel[s] = agreement::fleiss_sums(p[s]);
    x.with[s] = agreement::fleiss_sums(w[s]);
  }
  for (std::size_t a = 0; a < E; ++a)
    for (std::size_t b = a + 1; b < E; ++b) {
      const double k = expert_codes[a].empty() ? kNaN : agreement::cohen_kappa(expert_codes[a], expert_codes[b], 2).kappa;
      if (std::isnan(k)) continue;
      x.pair_kappa_sum += k;
      x.pair_kappa_n += 1;
    }
  return x;
}

/// One judge's bootstrap replicates: per group agreement, kappa and F1; the panel kappa's change when it joins.
struct JudgeReplicates {
  std::array<std::vector<double>, kGroups> agree, kappa, f1;
  std::vector<double> diff;
};

/// One resample (scenario s drawn draw[s] times) of a judge's statistics, appended to its replicates.
void add_replicate(const JudgeTally& x, const std::vector<std::uint32_t>& draw, JudgeReplicates& r) {
  const std::size_t S = draw.size();
  for (std::size_t g = 0; g < kGroups; ++g) {
    Table t;
    for (std::size_t s = 0; s < S; ++s)
      if (draw[s]) t.add(x.counts.tables[s][g], draw[s]);
    r.agree[g].push_back(agreement_of(t));
    r.kappa[g].push_back(t.n() > 0 ? kappa_of(t).kappa : kNaN);
    r.f1[g].push_back(f1_of(t));
  }
  agreement::FleissSums p, w;
  for (std::size_t s = 0; s < S; ++s) {
    if (!draw[s]) continue;
    p.add(x.panel[s], draw[s]);
    w.add(x.with[s], draw[s]);
  }
  r.diff.push_back(w.kappa() - p.kappa());
}

/// The bootstrap: B multisets of the scenarios from one stream, shared by every statistic, so all are paired.
std::vector<JudgeReplicates> bootstrap_judges(const std::vector<JudgeTally>& tallies, std::size_t S, int B,
                                              const ValidationOptions& options) {
  std::vector<JudgeReplicates> reps(tallies.size());
  if (B <= 0) return reps;
  Rng rng = Rng::keyed(options.seed, "rubric-validate", "scenarios");
  std::vector<std::uint32_t> draw(S);
  for (int b = 0; b < B; ++b) {
    resample_counts(rng, draw);
    for (std::size_t j = 0; j < tallies.size(); ++j) add_replicate(tallies[j], draw, reps[j]);
  }
  return reps;
}

/// What the report's tables are made of.
struct ValidationInputs {
  const ExpertStudy& study;
  const std::vector<JudgeColumn>& judges;
  const std::vector<JudgeTally>& tallies;
  const std::vector<JudgeReplicates>& reps;
  std::size_t S;
  int B;
  /// The replicates' percentile interval, or the point itself when there are no resamples.
  std::pair<double, double> interval(const std::vector<double>& r, double point) const {
    if (B == 0) return {point, point};
    return bounds(r);
  }
};

/// validation_judges.csv, and its table of all items in `md`.
io::CsvTable judges_table(const ValidationInputs& in, std::string& md) {
  io::CsvTable jt({"judge", "dimension", "group", "items", "agreement", "agreement_lo", "agreement_hi", "kappa", "kappa_se",
                   "kappa_lo", "kappa_hi", "kappa_boot_lo", "kappa_boot_hi", "f1_fail", "f1_lo", "f1_hi",
                   "precision_fail", "recall_fail", "tp", "fp", "fn", "tn", "ties", "agreement_ties_pass",
                   "agreement_ties_fail"});
  md += "## Judges against the expert majority (ties excluded)\n\n"
        "| judge | items | agreement | κ [95% CI] | F1 (fail) | TP | FP | FN | TN |\n"
        "|---|---:|---:|---|---:|---:|---:|---:|---:|\n";
  for (std::size_t j = 0; j < in.judges.size(); ++j) {
    const JudgeCounts& c = in.tallies[j].counts;
    const JudgeReplicates& r = in.reps[j];
    for (std::size_t g = 0; g < kGroups; ++g) {
      if (c.all_items[g] == 0) continue;
      Table t;
      for (std::size_t s = 0; s < in.S; ++s) t.add(c.tables[s][g], 1);
      const auto k = t.n() > 0 ? kappa_of(t) : agreement::KappaResult{kNaN, kNaN, kNaN, 0};
      const double agree = agreement_of(t), f1 = f1_of(t);
      const auto [alo, ahi] = in.interval(r.agree[g], agree);
      const auto [kblo, kbhi] = in.interval(r.kappa[g], k.kappa);
      const auto [flo, fhi] = in.interval(r.f1[g], f1);
      const double all = c.all_items[g], ties = c.ties[g];
      const auto [dim, grp] = group_name(g);
      jt.add({in.judges[j].name, dim, grp, fmt::format("{}", t.n()), real(agree), real(alo), real(ahi), real(k.kappa),
              real(k.se), real(k.kappa - kZ * k.se), real(k.kappa + kZ * k.se), real(kblo), real(kbhi), real(f1),
              real(flo), real(fhi), real(ratio(t.tp, t.tp + t.fp)), real(ratio(t.tp, t.tp + t.fn)),
              fmt::format("{}", t.tp), fmt::format("{}", t.fp), fmt::format("{}", t.fn), fmt::format("{}", t.tn),
              fmt::format("{}", ties), real(ratio(c.all_agree_nontie[g] + c.ties_pass_agree[g], all)),
              real(ratio(c.all_agree_nontie[g] + c.ties_fail_agree[g], all))});
      if (g == 0)
        md += fmt::format("| {} | {} | {:.3f} | {:.3f} [{:.3f}, {:.3f}] | {:.3f} | {} | {} | {} | {} |\n",
                          in.judges[j].name, t.n(), agree, k.kappa, k.kappa - kZ * k.se, k.kappa + kZ * k.se, f1, t.tp,
                          t.fp, t.fn, t.tn);
    }
  }
  return jt;
}

/// validation_panel.csv: the "one more expert" gate; its table in `md`.
io::CsvTable panel_table(const ValidationInputs& in, const ValidationOptions& options, std::string& md) {
  const std::size_t E = in.study.experts;
  io::CsvTable pt({"judge", "items", "experts", "mean_pairwise_expert_kappa", "fleiss_panel", "fleiss_with_judge",
                   "difference", "difference_lo", "difference_hi", "margin", "admitted"});
  md += fmt::format("\n## One more expert: Fleiss' κ of the {} experts with and without the judge\n\n"
                    "| judge | items | panel κ | with judge | difference [95% CI] | admitted (lower bound ≥ −{}) |\n"
                    "|---|---:|---:|---:|---|---|\n", E, options.margin);
  for (std::size_t j = 0; j < in.judges.size(); ++j) {
    const JudgeTally& x = in.tallies[j];
    agreement::FleissSums p, w;
    for (std::size_t s = 0; s < in.S; ++s) {
      p.add(x.panel[s], 1);
      w.add(x.with[s], 1);
    }
    const double diff = w.kappa() - p.kappa();
    const auto [lo, hi] = in.interval(in.reps[j].diff, diff);
    // Admission needs an interval: with one scenario or no resamples there is none, so no judge is admitted.
    const bool admitted = in.B > 0 && !std::isnan(lo) && lo >= -options.margin;
    pt.add({in.judges[j].name, fmt::format("{}", x.items), fmt::format("{}", E),
            real(ratio(x.pair_kappa_sum, x.pair_kappa_n)), real(p.kappa()), real(w.kappa()), real(diff), real(lo),
            real(hi), real(options.margin), admitted ? "yes" : "no"});
    md += fmt::format("| {} | {} | {:.3f} | {:.3f} | {:+.3f} [{:+.3f}, {:+.3f}] | {} |\n", in.judges[j].name, x.items,
                      p.kappa(), w.kappa(), diff, lo, hi, admitted ? "yes" : "no");
  }
  return pt;
}

/// score[j][b]: brief b's weighted score under judge j (NaN when j did not grade every line of it).
std::vector<std::vector<double>> brief_scores(const ValidationInputs& in, const LinesOfBrief& lines_of_brief,
                                              const std::vector<std::string>& briefs) {
  const auto& lines = in.study.lines;
  const auto& judges = in.judges;
  std::vector<std::vector<double>> score(judges.size(), std::vector<double>(briefs.size(), kNaN));
  for (std::size_t j = 0; j < judges.size(); ++j)
    for (std::size_t b = 0; b < briefs.size(); ++b) {
      const auto& idx = lines_of_brief.at(briefs[b]);
      std::vector<RubricItem> items;
      std::vector<bool> passed;
      bool complete = true;
      for (std::size_t i : idx) {
        if (!judges[j].fail[i]) complete = false;
        items.push_back(lines[i].item);
        passed.push_back(judges[j].fail[i] && !*judges[j].fail[i]);
      }
      if (complete) score[j][b] = score_brief(items, passed).weighted;
    }
  return score;
}

/// validation_self_preference.csv: a judge's score of its own family's briefs minus the other judges' mean score;
/// its table in `md` when it has rows.
io::CsvTable self_preference_table(const ValidationInputs& in, const LinesOfBrief& lines_of_brief,
                                   const ValidationOptions& options, std::string& md) {
  std::vector<std::string> briefs;
  for (const auto& [b, idx] : lines_of_brief) briefs.push_back(b);
  const auto family = [&](const std::string& name) {
    const auto it = options.families.find(name);
    return it != options.families.end() ? it->second : model_family(name);
  };
  const std::vector<std::vector<double>> score = brief_scores(in, lines_of_brief, briefs);
  const std::size_t J = in.judges.size();
  io::CsvTable st({"judge", "family", "briefs", "judge_score", "others_score", "difference", "difference_lo", "difference_hi"});
  for (std::size_t j = 0; j < J; ++j) {
    const std::string fam = family(in.judges[j].name);
    std::vector<double> own, rest;
    for (std::size_t b = 0; b < briefs.size(); ++b) {
      if (family(in.study.lines[lines_of_brief.at(briefs[b]).front()].model) != fam || std::isnan(score[j][b])) continue;
      double sum = 0, n = 0;
      for (std::size_t o = 0; o < J; ++o)
        if (o != j && !std::isnan(score[o][b])) sum += score[o][b], n += 1;
      if (n == 0) continue;
      own.push_back(score[j][b]);
      rest.push_back(sum / n);
    }
    if (own.empty()) continue;
    const Interval d =
        bootstrap_paired_difference(own, rest, options.resamples, options.seed, "self-preference/" + in.judges[j].name);
    st.add({in.judges[j].name, fam, fmt::format("{}", own.size()), real(mean(own)), real(mean(rest)), real(d.mean),
            real(d.lo), real(d.hi)});
  }
  if (st.size() > 0) {
    md += "\n## Self-preference: own family's briefs, the judge's score minus the other judges' mean\n\n"
          "| judge | family | briefs | difference [95% CI] |\n|---|---|---:|---|\n";
    for (const auto& r : st.rows())
      md += fmt::format("| {} | {} | {} | {} [{}, {}] |\n", r[0], r[1], r[2], r[5], r[6], r[7]);
  }
  return st;
}

}  // namespace

ValidationReport validate_judges(const ExpertStudy& study, std::span<const Verdict> others,
                                 const ValidationOptions& options) {
  ValidationReport rep;
  const auto& lines = study.lines;
  const ScenarioIndex scen = index_scenarios(lines);
  const std::size_t S = scen.names.size();
  LinesOfBrief lines_of_brief;
  for (std::size_t i = 0; i < lines.size(); ++i) lines_of_brief[lines[i].brief].push_back(i);
  const std::vector<JudgeColumn> judges = judge_columns(lines, lines_of_brief, others, options, rep);
  std::vector<JudgeTally> tallies;
  for (const auto& j : judges) tallies.push_back(tally_judge(j, lines, scen, study.experts));
  const int B = S > 1 ? std::max(0, options.resamples) : 0;
  const std::vector<JudgeReplicates> reps = bootstrap_judges(tallies, S, B, options);
  const ValidationInputs in{study, judges, tallies, reps, S, B};
  std::string md;
  const io::CsvTable jt = judges_table(in, md);
  const io::CsvTable pt = panel_table(in, options, md);
  const io::CsvTable st = self_preference_table(in, lines_of_brief, options, md);
  rep.markdown = md;
  rep.files = {{"validation_judges.csv", jt.to_string()},
               {"validation_panel.csv", pt.to_string()},
               {"validation_self_preference.csv", st.to_string()},
               {"validation.md", md}};
  return rep;
}

}  // namespace advplan::rubric
