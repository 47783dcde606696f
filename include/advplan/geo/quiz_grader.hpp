#pragma once
// The quiz's LLM grader (docs/GEO.md "Grading"): a frozen prompt (configs/prompts/quiz_grader.txt, compiled in),
// one question, its reference, its options and the agent's answer per request, and a reply of one small JSON object
// read with the bounded parser. A malformed reply is asked again a bounded number of times, then counted as a
// grading failure (the question incorrect under llm, the reason recorded). The transport is a function, so this
// layer needs no HTTP client: the CLI passes the live client, the tests and `--grader llm_offline` the offline one.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "advplan/geo/questions.hpp"

namespace advplan::geo {

struct GraderMessage {
  std::string role;  ///< system, user, assistant
  std::string content;
};
/// One call's result: the reply text, or why there is none (a transport failure).
struct GraderCall {
  bool ok = false;
  std::string text;
  std::string error;
};
using GraderTransport = std::function<GraderCall(const std::vector<GraderMessage>& messages)>;

/// Attempts per answer: the first call and two more after a malformed reply or a transport failure.
inline constexpr int kGraderAttempts = 3;
/// The longest answer the grader is shown; a longer one is cut (untrusted::excerpt).
inline constexpr std::size_t kMaxGradedAnswerChars = 4000;

/// The frozen system prompt, and its SHA-256 (lowercase hex), recorded in the summary.
const std::string& quiz_grader_prompt();
const std::string& quiz_grader_prompt_sha256();

/// The first request: the system prompt and one user message holding the question, its format, reference,
/// tolerance, options and the answer as one JSON object between "GRADE:\n" and "\nEND GRADE\n".
std::vector<GraderMessage> grader_messages(const Question& q, const std::string& answer);

/// A reply read: exactly the keys correct (boolean), says_unsolvable (boolean) and reason (string), as the whole
/// text or the whole inside of one ``` fence; `error` says what is wrong with it otherwise.
struct GraderReply {
  bool correct = false;
  bool says_unsolvable = false;
  std::string reason;
  std::string error;
};
GraderReply parse_grader_reply(std::string_view text);

struct LlmVerdict {
  bool ok = false;  ///< a verdict was read; false: a grading failure, `reason` says why
  bool correct = false;
  bool says_unsolvable = false;
  int attempts = 0;
  std::string reason;
};
/// Grades one answer, re-asking after a malformed reply (the reply and the problem are appended to the messages)
/// or a transport failure (asked again as it stands), at most `attempts` calls in all. Never throws.
LlmVerdict grade_with_llm(const GraderTransport& call, const Question& q, const std::string& answer,
                          int attempts = kGraderAttempts);

/// The offline stand-in (`--grader llm_offline`): deterministic, no network. It reads the question back from the
/// user message and replies with strict grading's verdict; on the first attempt of about one request in three
/// (FNV-1a of the user message mod 3 == 0) it first replies malformed (prose around the JSON, or the JSON cut in
/// half), so the retry path runs.
GraderCall offline_grader_reply(const std::vector<GraderMessage>& messages);

}  // namespace advplan::geo
