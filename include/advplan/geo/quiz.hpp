#pragma once
// The tool-use protocol for map questions (docs/GEO.md "Quiz"): a ReAct loop in which the agent sees the
// question and the tool list, calls one tool per step (each observation comes back with its call id) and ends
// with a boxed answer. Stateless on the wire: every request carries the whole transcript, so an agent may be a
// process (exec:), a model (llm:) or a script.
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
/// with text that is not JSON).
std::unique_ptr<QuizAgent> make_scripted_agent(const std::vector<Question>& questions, const std::string& mode);
/// An exec: agent: one JSON line per request over a process pool (bounded, timeouts).
std::unique_ptr<QuizAgent> make_exec_agent(const std::string& command, double timeout_s);

struct QuizOutcome {
  std::string id;
  int tier = 1;
  std::vector<int> categories;
  bool correct = false;
  int steps = 0;            ///< tool calls made
  std::string answer;       ///< the boxed content ("" when none)
  std::string reference;
  std::string reason;       ///< why it is incorrect: "wrong answer", "budget of 10 steps exhausted", "protocol: ...",
                            ///< "tool error: ...", "agent: ..."
};

/// Runs one question on its map. Never throws for anything the agent does.
QuizOutcome run_question(const GeoMap& m, const Question& q, QuizAgent& agent, int budget = 10);

/// The first decimal number in `s`, as the pattern [-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)? finds it (the leftmost
/// match, each part greedy), or nullopt. A hand-written scan: answers and reference answers are untrusted, and
/// std::regex recurses per character (a 30,000-digit answer overflowed the stack).
std::optional<std::string_view> first_number_text(std::string_view s);
/// `\boxed{...}` content of an answer (the last one), or nullopt.
std::optional<std::string> boxed(const std::string& answer);
/// Lowercase, every character that is not a letter or a digit removed.
std::string normalise(const std::string& s);
/// Mil-SCORE's comparison: "unsolvable" exactly (after normalisation) for unsolvable references, the first
/// number within the tolerance for numeric ones, yes/no and multiple choice by equality, containment for text.
bool answer_matches(const Question& q, const std::string& answer);

struct AccuracyRow {
  std::string group;  ///< "overall", "tier 1", "category 4", ...
  int n = 0, correct = 0;
  double accuracy = 0, lo = 0, hi = 0;  ///< Wilson 95% interval
  double mean_steps = 0;
  int exhausted = 0;  ///< questions that ran out of budget
};
/// Wilson score interval (z = 1.96) of k successes in n.
std::pair<double, double> wilson(int k, int n, double z = 1.959963984540054);
std::vector<AccuracyRow> summarise(const std::vector<QuizOutcome>& outcomes);
std::string outcome_to_json(const QuizOutcome& o);

}  // namespace advplan::geo
