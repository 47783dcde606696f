#pragma once
// Grading free-text briefs as MA-Bench grades them (docs/RUBRIC.md "Grading free-text briefs"): a frozen prompt
// (configs/prompts/brief_judge.txt, compiled in) with the case header, the task, the case's rubric items as JSON
// and the brief, never the packet; the brief cut at a word cap before grading, its counts recorded; a
// failures-only reply read and re-asked as the plan judge's is (judge.hpp), with at least one failure required of an
// empty brief; MA-Bench-format verdicts out.
#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "advplan/policy/llm_contract.hpp"
#include "advplan/rubric/judge.hpp"
#include "advplan/rubric/mabench.hpp"
#include "advplan/run/config.hpp"

namespace advplan::rubric {

/// The frozen brief-judge prompt (the system message) and the lower-case hex SHA-256 of its text.
const std::string& brief_judge_prompt();
const std::string& brief_judge_prompt_sha256();

/// A text cut at a word cap: words are maximal runs of characters other than ASCII whitespace (space, tab, newline,
/// carriage return, form feed, vertical tab); `text` is the original up to the end of the cap-th word.
struct CappedText {
  std::string text;
  std::size_t words = 0;  ///< in the original
  std::size_t kept = 0;   ///< min(words, cap)
};
CappedText cap_words(std::string_view text, std::size_t cap);

/// The request: the frozen prompt, then `CASE: <case_id>`, TASK, ITEMS (a JSON array of {item_id, question,
/// pass_condition, fail_condition, polarity}) and BRIEF, each section between marker lines.
CompletionRequest build_brief_prompt(std::span<const RubricItem> items, const std::string& case_id,
                                     const std::string& task, const std::string& brief);

/// The offline stand-in of a brief judge (tests; no network): it lists every item whose item_id does not occur in
/// the brief (case-insensitively), so a brief "passes" exactly the items it names; on the first attempt of some
/// prompts (by a hash of the prompt) it replies malformed or with an unknown id, as the plan judge's stand-in does.
class OfflineBriefJudgeClient final : public CompletionClient {
 public:
  Completion complete(const CompletionRequest& req) const override;
  std::string name() const override { return "offline-brief-judge"; }
};

struct BriefGradingOptions {
  std::string judge;             ///< the judge spec, written in the verdicts' `judge` field
  std::size_t word_cap = 3000;   ///< MA-Bench's cap
  int retries = 2;
  TranscriptsMode transcripts = TranscriptsMode::errors;
  const GenerationSettings* generation = nullptr;
  std::string default_task = "Write the mission analysis brief for this case.";
};

struct BriefGrading {
  /// verdicts.jsonl (MA-Bench's layout, plus model, condition and error), judge_calls.csv, transcripts.jsonl
  std::vector<std::pair<std::string, std::string>> files;
  std::size_t briefs = 0, failed = 0, truncated = 0;
};

/// Reads a tasks file: one JSON line per case, string `case_id` (or `case`) and `task`; returns case -> task.
std::map<std::string, std::string> read_tasks(const std::string& path);

/// Grades every brief of `briefs` whose case has items (a brief of a case without items is an Error naming it), in
/// parallel, written in brief_id order; `tasks` gives a case's task (else options.default_task).
BriefGrading grade_briefs(const RubricSet& items, const std::map<std::string, BriefInfo>& briefs,
                          const std::map<std::string, std::string>& tasks, const CompletionClient& client,
                          const BriefGradingOptions& options);

}  // namespace advplan::rubric
