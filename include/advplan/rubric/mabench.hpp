#pragma once
// Reading MA-Bench's released layout (docs/RUBRIC.md "MA-Bench files"): rubric_items.jsonl, verdicts.jsonl and
// MANIFEST.json. The files are untrusted: sizes, line lengths, JSON depth and list lengths are bounded, and every
// problem is an Error of one sentence naming the file and the line or field.
#include <cstddef>
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

/// When `dir`/MANIFEST.json exists: checks that each of `files` (paths) is listed in it and that its sha256
/// matches, and that every other listed file exists with its hash. The manifest maps relative file names to
/// lower-case hex sha256, either as a flat object, as {"files": {name: hash}} or as
/// {"files": [{"path": name, "sha256": hash}]}. Returns the number of files checked (0 without a manifest).
std::size_t check_manifest(const std::string& dir, const std::vector<std::string>& files);

}  // namespace advplan::rubric
