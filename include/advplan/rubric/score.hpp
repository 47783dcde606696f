#pragma once
// Severity-weighted rubric scoring in MA-Bench's form (docs/RUBRIC.md, docs/METRICS.md "Rubric scores"), and the
// judge-agreement tables over item verdicts. Pure functions of items and verdicts: the same code scores MA-Bench's
// released files (`advplan rubric score`) and the rule judges' verdicts on plans (the run's rubric/ directory).
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "advplan/io/csv.hpp"
#include "advplan/stats/statistics.hpp"
#include "advplan/stats/text_table.hpp"

namespace advplan::rubric {

/// CI critically important, I important, SI slightly important, D detrimental, CD critically detrimental.
enum class Severity { CI, I, SI, D, CD };
std::string_view severity_code(Severity s);
std::optional<Severity> parse_severity(std::string_view code);
/// CI +9, I +5, SI +2, D -5, CD -9.
double severity_weight(Severity s);
/// D and CD: the item names a wrong move; its pass condition is the presence of that move.
inline bool is_negative(Severity s) { return s == Severity::D || s == Severity::CD; }

struct RubricItem {
  std::string case_id;  ///< the scenario (MA-Bench: the case)
  std::string item_id;  ///< unique within the case
  std::string step;     ///< which part of the plan the item examines
  int tier = 1;         ///< 1 stated, 2 synthesis, 3 judgement
  Severity severity = Severity::I;
  std::string question, pass_condition, fail_condition;
  double weight() const { return severity_weight(severity); }
  bool negative() const { return is_negative(severity); }
};

/// One judge's verdict on one brief (plan): the items it failed; every item not listed passes.
struct Verdict {
  std::string brief_id, judge, case_id;
  std::string model;  ///< the policy or model that wrote the brief ("all" when the file does not say)
  std::string group;  ///< what the policy score averages over first (a template; MA-Bench: the case)
  std::string condition;  ///< the brief's condition (briefs.jsonl; "" when not known)
  std::vector<std::string> failed_items;
  std::vector<std::string> unknown_ids;  ///< listed ids that are not items of the case (recorded, ignored)
  bool error = false;  ///< the judge failed on this brief: recorded, and scored as nothing verified (every positive
                      ///< item failed, every negative item charged), never as a pass
};

/// The score of one brief.
struct BriefScore {
  double earned_positive = 0;   ///< sum of the weights of passed positive items
  double incurred_negative = 0; ///< sum of the (negative) weights of passed negative items: mistakes made
  double total_positive = 0;    ///< sum of the positive weights
  double weighted = 0;          ///< (earned + incurred) / total positive; unclamped; NaN when total is 0
  std::size_t items = 0, correct = 0;  ///< correct: a positive item passed or a negative item failed (avoided)
  double items_correct = 0;     ///< correct / items
};

/// Scores `items` with `passed[i]` the verdict on items[i].
BriefScore score_brief(std::span<const RubricItem> items, const std::vector<bool>& passed);
/// passed[i] = items[i] is not among `failed`.
std::vector<bool> passed_from_failed(std::span<const RubricItem> items, std::span<const std::string> failed);
/// The verdict on each item of its case: passed_from_failed, except that a judge error verifies nothing (every
/// positive item failed, every negative item passed: the mistake charged).
std::vector<bool> verdict_passed(std::span<const RubricItem> items, const Verdict& v);

/// One group of a decomposition: the items of a brief that share a step, a tier or a severity.
struct GroupScore {
  std::string dimension, group;
  std::size_t items = 0, correct = 0;
  double earned_positive = 0, incurred_negative = 0;
  double contribution = 0;  ///< (earned + incurred) / the brief's total positive weight; a dimension's groups sum to the score
};
std::vector<GroupScore> decompose(std::span<const RubricItem> items, const std::vector<bool>& passed);

/// The items of every case, in file order.
using RubricSet = std::map<std::string, std::vector<RubricItem>>;

enum class MeanOver { group, brief };
std::optional<MeanOver> parse_mean_over(std::string_view s);

/// Every file of a scoring: per brief, per (judge, model), the decomposition, the item verdicts; CSV text.
struct ScoreReport {
  std::vector<std::pair<std::string, std::string>> files;  ///< name -> content
  std::string summary_markdown;                            ///< the per-policy table
  std::size_t briefs = 0, unknown_ids = 0, errors = 0;
};
/// Scores every verdict against its case's items. A verdict whose case has no items is an Error naming it.
/// Policy score per (judge, model) = mean over groups (MeanOver::group) or briefs of the mean brief score,
/// with a bootstrap interval over the groups (or briefs).
ScoreReport score_verdicts(const RubricSet& items, std::span<const Verdict> verdicts, MeanOver mean_over,
                           int resamples = 1000, std::uint64_t seed = 1);

/// Agreement between the judges of `verdicts` on item verdicts (pass/fail of every item of every brief that both
/// judged): pairwise percent agreement and Cohen's kappa (with asymptotic SE and a bootstrap interval over
/// cases), Spearman of the per-model mean scores; across all judges Fleiss' kappa (with and without each judge:
/// the "one more expert" check), Krippendorff's alpha (nominal, on item verdicts; interval, on brief scores),
/// ICC(2,1), ICC(3,1) and Kendall's W of brief scores.
struct AgreementReport {
  std::vector<std::pair<std::string, std::string>> files;  ///< agreement_pairs.{csv,md,tex}, agreement_panel.{csv,md,tex}
  std::string markdown;                                    ///< both tables
};
AgreementReport judge_agreement(const RubricSet& items, std::span<const Verdict> verdicts, int resamples = 1000,
                                std::uint64_t seed = 1);

/// The rubric's Markdown and LaTeX tables, each rendered from its CSV alone (scores_per_policy.csv,
/// agreement_pairs.csv, agreement_panel.csv), so a run's tables can be rebuilt from its CSVs byte for byte;
/// `name` is the table's file stem. With `canary_judges` (rubric/canary_judges.csv of a run), the scores table has
/// a column `canaries`: the must-fail canary items the row's judge passed out of those it graded, and FLAGGED for a
/// flagged judge (docs/METRICS.md "Canary flag").
TextTable scores_per_policy_table(const io::CsvTable& scores_per_policy, const std::string& name,
                                  const io::CsvTable* canary_judges = nullptr);
TextTable agreement_pairs_table(const io::CsvTable& agreement_pairs, const std::string& name);
TextTable agreement_panel_table(const io::CsvTable& agreement_panel, const std::string& name);

/// The rubric layer's tables of a run (tables/rubric/scores_per_policy, agreement_pairs, agreement_panel and
/// canary_judges, .md and .tex; names relative to tables/), from the run's rubric/ CSVs, those present.
std::vector<std::pair<std::string, std::string>> rubric_tables(const std::string& run_dir);

}  // namespace advplan::rubric
