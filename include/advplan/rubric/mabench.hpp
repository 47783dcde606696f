#pragma once
// Reading MA-Bench's released layout (docs/RUBRIC.md "MA-Bench files"): rubric_items.jsonl, verdicts.jsonl and
// MANIFEST.json. The files are untrusted: sizes, line lengths, JSON depth and list lengths are bounded, and every
// problem is an Error of one sentence naming the file and the line or field.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "advplan/rubric/score.hpp"

namespace advplan::rubric {

/// Bounds on MA-Bench-format input.
inline constexpr std::size_t kMaxJsonlBytes = 256u << 20;   ///< a whole file
inline constexpr std::size_t kMaxJsonlLine = 1u << 20;      ///< one line
inline constexpr std::size_t kMaxJsonlRecords = 1'000'000;  ///< lines with a record
inline constexpr std::size_t kMaxListEntries = 10'000;      ///< failed_items, unknown_ids, failures
inline constexpr std::size_t kMaxIdBytes = 256;             ///< item_id, case_id, brief_id, judge, model, step

/// Reads rubric_items.jsonl: one item per line (blank lines skipped) with string `case_id`, `item_id`, `step`
/// (a number is accepted and written as text), integer `tier` in 1..3, `severity` one of CI, I, SI, D, CD,
/// optional `polarity` (positive|negative) and `weight`, which must agree with the severity, and optional text
/// `question`, `pass_condition`, `fail_condition`. A repeated item_id within a case is an error.
RubricSet read_rubric_items(const std::string& path);
RubricSet parse_rubric_items(const std::string& text, const std::string& source);

/// Reads verdicts.jsonl: string `brief_id`, `judge`, `case_id`, array of strings `failed_items`, optional arrays
/// `failures` (objects; counted) and `unknown_ids` (strings), optional `overall_rationale`, optional `model`
/// ("all" when absent), optional boolean `error` and optional `group` (advplan's extension: what a policy score
/// averages over first, the template in a run's rubric/verdicts.jsonl; the case when absent).
std::vector<Verdict> read_verdicts(const std::string& path);
std::vector<Verdict> parse_verdicts(const std::string& text, const std::string& source);

/// One line of MA-Bench's briefs.jsonl: who wrote the brief, under which condition, for which case.
struct BriefInfo {
  std::string brief_id, case_id, model, model_slug, condition, seed;
  std::string text;  ///< the brief itself (`text` or `brief`; "" when the file does not carry it)
  bool has_text = false;  ///< the line has `text` or `brief`
};
/// Reads briefs.jsonl: string `brief_id`, `model`, `case_id` (or `case`), optional `model_slug`, `condition`
/// ("default" when absent), `seed` (a string or an integer) and the brief's text in `text` or `brief`. A repeated
/// brief_id is an error naming the line. Returns brief_id -> info.
std::map<std::string, BriefInfo> read_briefs(const std::string& path);
std::map<std::string, BriefInfo> parse_briefs(const std::string& text, const std::string& source);
/// Gives each verdict its brief's model and condition from `briefs`. A verdict whose brief is not in `briefs`,
/// whose case differs from the brief's, or whose own `model` differs from the brief's is an Error naming it.
void attach_briefs(std::vector<Verdict>& verdicts, const std::map<std::string, BriefInfo>& briefs);

/// When `dir`/MANIFEST.json exists: checks that each of `files` (paths) is listed in it and that its sha256
/// matches, and that every other listed file exists with its hash. The manifest maps relative file names to
/// lower-case hex sha256, either as a flat object, as {"files": {name: hash}} or as
/// {"files": [{"path": name, "sha256": hash}]}. Returns the number of files checked (0 without a manifest).
std::size_t check_manifest(const std::string& dir, const std::vector<std::string>& files);

}  // namespace advplan::rubric
