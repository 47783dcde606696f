#pragma once
// Judges checked against experts (docs/RUBRIC.md "Validating a judge against experts", docs/METRICS.md "Judge
// validation"): an expert study in MA-Bench's layout (one JSON line per item verdict, each expert's Pass or Fail,
// the majority, the production judge's verdict) and any other judge's verdicts on the same briefs give, per judge,
// agreement with the expert majority, Cohen's kappa, F1 on the fail class and the confusion matrix (overall, by
// tier, by severity); the panel's Fleiss' kappa with and without the judge (the "one more expert" admission gate);
// and a judge's self-preference for its own model family's briefs.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "advplan/rubric/score.hpp"

namespace advplan::rubric {

inline constexpr std::size_t kMaxExperts = 64;

/// One line of the study: one expert panel's verdicts on one item of one brief.
struct StudyLine {
  std::string brief, scenario, model;
  RubricItem item;               ///< case_id = scenario
  std::vector<bool> expert_fail; ///< expert_1 ... expert_N: true = Fail
  int majority = 0;              ///< 0 Pass, 1 Fail, 2 tie
  std::optional<bool> judge_fail;  ///< the production judge's judge_verdict (absent on the line: none)
};

struct ExpertStudy {
  std::vector<StudyLine> lines;  ///< file order
  std::size_t experts = 0;
};

/// Reads the study (untrusted; the bounds of MA-Bench files, docs/RUBRIC.md): string `brief`, `scenario`,
/// `item_id`, `step` (or an integer), integer `tier` 1..3, `severity` CI|I|SI|D|CD, `expert_1` ... `expert_N`
/// (`Pass` or `Fail`; the same N >= 2 on every line, at most kMaxExperts), `majority` (`Pass`, `Fail` or `tie`,
/// which must be the experts' majority), optional `model` ("all" when absent), `judge_verdict` (`Pass`/`Fail`),
/// `question`, `pass_condition`, `fail_condition` (and `polarity`, `weight` checked as in items files), `judge_note`. A (brief, item_id) repeated, or a brief in two
/// scenarios, is an error naming the line.
ExpertStudy parse_expert_study(const std::string& text, const std::string& source);
ExpertStudy read_expert_study(const std::string& path);

struct ValidationOptions {
  std::string production_judge = "judge";  ///< the name of the study's judge_verdict column's judge
  int resamples = 1000;                    ///< bootstrap resamples over scenarios
  std::uint64_t seed = 1;
  double margin = 0.05;  ///< admitted when the lower bound of kappa(panel + judge) - kappa(panel) >= -margin
  std::map<std::string, std::string> families;  ///< judge or model name -> family (over model_family())
};

/// The family of a judge or model name: an `llm_judge:` prefix dropped, lowercased, then the part before the
/// first '/' when there is one (a provider slug, "openai/gpt-5" -> "openai"), else before the first '-', '_',
/// ':' or '.' ("gpt-4o" -> "gpt", "claude-opus-4" -> "claude").
std::string model_family(const std::string& name);

struct ValidationReport {
  /// validation_judges.csv, validation_panel.csv, validation_self_preference.csv, validation.md
  std::vector<std::pair<std::string, std::string>> files;
  std::string markdown;
  std::size_t ignored_verdicts = 0;  ///< verdicts on briefs that are not in the study
  std::size_t unknown_ids = 0;       ///< failed ids that are not items of the brief in the study
};

/// `others`: verdicts of further judges (MA-Bench verdicts.jsonl; brief_id and case_id name the study's brief and
/// scenario). A verdict whose brief is in the study under another scenario is an Error; a judge named like the
/// production judge is an Error.
ValidationReport validate_judges(const ExpertStudy& study, std::span<const Verdict> others,
                                 const ValidationOptions& options);

}  // namespace advplan::rubric
