#pragma once
// The tool-use protocol for map questions (docs/GEO.md "Quiz"): a ReAct loop in which the agent sees the
// question and the tool list, calls one tool per step (each observation comes back with its call id) and ends
// with a boxed answer. Stateless on the wire: every request carries the whole transcript, so an agent may be a
// process (exec:), a model (llm:) or a script.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "advplan/geo/map.hpp"
#include "advplan/geo/questions.hpp"

namespace advplan::geo {

/// One agent reply (a JSON object text) or why there is none.
struct AgentReply {
  std::string line;
  std::string error;  ///< transport failure (timeout, crash, HTTP error): the question counts as incorrect
};

class QuizAgent {
 public:
  virtual ~QuizAgent() = default;
  /// `request` is {"question_id","question","tools","steps":[{"call":{id,name,arguments},"observation":
  /// {call_id,ok,result|error}}],"steps_left"}; the reply is {"tool_call":{"id","name","arguments"}} or
  /// {"answer":"... \\boxed{...}"}.
  virtual AgentReply step(const std::string& request) = 0;
  virtual std::string name() const = 0;
};

/// The offline scripted agent of the tests: it replays a question's evidence calls (at most budget - 1), then
/// answers the reference. `mode` breaks it on purpose: "oracle" (correct), "wrong" (answers "42"), "verbose"
/// (never answers), "badcall" (calls an unknown feature), "unboxed" (answers without \\boxed), "garbage" (replies
/// with text that is not JSON), "hedge" (boxes every option of a closed question joined by " or "; for a numeric
/// question the reference and a second number, or "unsolvable or 1" when the reference is unsolvable).
std::unique_ptr<QuizAgent> make_scripted_agent(const std::vector<Question>& questions, const std::string& mode);
/// An exec: agent: one JSON line per request over a process pool (bounded, timeouts), its program's environment
/// without `withheld_env` (the live model's key: ExecConfig::withheld_env).
std::unique_ptr<QuizAgent> make_exec_agent(const std::string& command, double timeout_s,
                                           std::vector<std::string> withheld_env);

/// How an answer is graded (docs/GEO.md "Grading"): strict (the default), containment (Mil-SCORE's published rule)
/// or an LLM grader.
enum class Grading { strict, containment, llm };
std::string grading_name(Grading g);
std::optional<Grading> parse_grading(std::string_view s);

struct QuizOutcome {
  std::string id;
  int tier = 1;
  std::vector<int> categories;
  Grading grading = Grading::strict;  ///< the mode `correct` and `reason` follow (--grading)
  bool correct = false;               ///< under `grading`
  bool answered = false;              ///< the agent gave an answer, boxed or not: there was something to grade
  bool boxed = false;                 ///< the answer is \\boxed{...}'s content; false: the whole final message
  bool correct_strict = false, correct_containment = false;
  std::optional<bool> correct_llm;    ///< set when an LLM grader graded the run
  bool unsolvable = false;            ///< the reference is unsolvable
  /// Whether the answer says "unsolvable", as each mode reads it (false when there was no answer).
  bool says_unsolvable_strict = false, says_unsolvable_containment = false, says_unsolvable_llm = false;
  int steps = 0;            ///< tool calls made
  std::string answer;       ///< the boxed content, or the final message when it has no box ("" when none)
  std::string reference;
  std::string reason;       ///< why it is incorrect: "wrong answer", "budget of 10 steps exhausted", "protocol: ...",
                            ///< "tool error: ...", "agent: ...", "grader: ..." (an LLM grading failure)
  std::string grader;       ///< the LLM grader's spec ("" when none ran)
  int grader_attempts = 0;  ///< the LLM grader's calls for this answer
  std::string grader_reason;  ///< the LLM grader's reason, or why it gave no verdict
};

/// Runs one question on its map and grades the answer strict and by containment (`correct` is strict's). Never
/// throws for anything the agent does.
QuizOutcome run_question(const GeoMap& m, const Question& q, QuizAgent& agent, int budget = 10);
/// Makes `g`'s verdict the outcome's `correct` and `reason` (an outcome with no answer keeps its reason).
void choose_grading(QuizOutcome& o, Grading g);

/// The first decimal number in `s`, as the pattern [-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)? finds it (the leftmost
/// match, each part greedy), or nullopt. A hand-written scan: answers and reference answers are untrusted, and
/// std::regex recurses per character (a 30,000-digit answer overflowed the stack).
std::optional<std::string_view> first_number_text(std::string_view s);
/// `\boxed{...}` content of an answer (the last one), or nullopt.
std::optional<std::string> boxed(const std::string& answer);
/// Lowercase, every character that is not a letter or a digit removed.
std::string normalise(const std::string& s);
/// The words of a text: its maximal runs of ASCII letters and digits, lowercased (normalise() joins them).
std::vector<std::string> answer_words(std::string_view s);
/// The options an answer names, in the order of `options`: an option is named where its words occur as
/// consecutive words of the answer, except inside an occurrence of a longer option ("red sector" inside "the red
/// sector north", when that is also an option). Options without a letter or digit name nothing.
std::vector<std::string> named_options(const std::vector<std::string>& options, std::string_view answer);
/// How many numbers `s` holds: first_number_text again and again, each time after the last match.
std::size_t count_numbers(std::string_view s);
/// Strict grading (docs/GEO.md "Grading"): an unsolvable reference needs exactly "unsolvable" after normalisation;
/// otherwise an answer containing "unsolvable" is wrong; a numeric answer must hold exactly one number, within the
/// tolerance; a closed answer must name exactly one option, the reference (filler words allowed), or equal the
/// reference after normalisation; an open text answer (no options) must equal the reference after normalisation.
bool grade_strict(const Question& q, const std::string& answer);
/// Mil-SCORE's published rule, for reproducing the paper: the normalised answer contains the normalised reference
/// ("unsolvable" for an unsolvable reference); numeric: the first number within the tolerance.
bool grade_containment(const Question& q, const std::string& answer);
/// "Says unsolvable" as strict reads it (exactly "unsolvable" after normalisation) and as containment does.
bool says_unsolvable_strict(const std::string& answer);
bool says_unsolvable_containment(const std::string& answer);

struct AccuracyRow {
  std::string group;  ///< "overall", "tier 1", "category 4", ...
  int n = 0, correct = 0;
  double accuracy = 0, lo = 0, hi = 0;  ///< Wilson 95% interval
  double mean_steps = 0;
  int exhausted = 0;  ///< questions that ran out of budget
};
/// Wilson score interval (z = 1.96) of k successes in n.
std::pair<double, double> wilson(int k, int n, double z = 1.959963984540054);
/// The accuracy table under one grading mode (an outcome without an LLM verdict counts as incorrect under llm).
std::vector<AccuracyRow> summarise(const std::vector<QuizOutcome>& outcomes, Grading g = Grading::strict);
std::string outcome_to_json(const QuizOutcome& o);

/// Precision, recall or F1 of "says unsolvable" (as one mode reads the answer) against "is unsolvable", over the
/// questions, with a 95% percentile-bootstrap interval (docs/METRICS.md "Quiz"). k / n is the ratio's count:
/// TP / (TP + FP), TP / (TP + FN), 2TP / (2TP + FP + FN); a ratio with n = 0 is 0, with the interval [0, 0], and
/// the resamples on which a ratio is undefined are left out of its bounds.
struct UnsolvableRow {
  Grading grading = Grading::strict;
  std::string metric;  ///< precision, recall, f1
  int k = 0, n = 0;
  double value = 0, lo = 0, hi = 0;
};
/// The bootstrap: kUnsolvableResamples resamples of the questions with replacement, all from the one stream
/// Rng::keyed(kUnsolvableSeed, "quiz", "unsolvable"), each used for every mode (the modes' intervals are paired).
inline constexpr int kUnsolvableResamples = 2000;
inline constexpr std::uint64_t kUnsolvableSeed = 7;
std::vector<UnsolvableRow> unsolvable_scores(const std::vector<QuizOutcome>& outcomes, const std::vector<Grading>& modes);

}  // namespace advplan::geo
