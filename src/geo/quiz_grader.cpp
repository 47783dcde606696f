#include "advplan/geo/quiz_grader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/core/stop_error.hpp"
#include "advplan/core/random.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/geo/quiz.hpp"
#include "advplan/io/embedded_files.hpp"
#include "advplan/io/sha256.hpp"

namespace advplan::geo {
namespace {
using J = nlohmann::json;

constexpr const char* kPromptPath = "configs/prompts/quiz_grader.txt";
constexpr std::string_view kGradeBegin = "GRADE:\n";
constexpr std::string_view kGradeEnd = "\nEND GRADE\n";
/// The longest reply echoed back to the grader when it is asked again, and the longest reason kept.
constexpr std::size_t kMaxEchoedReply = 2000;
constexpr std::size_t kMaxReasonChars = 300;

bool blank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
}

/// The reply's JSON text: the whole reply, or the inside of a ``` fence that is all the reply holds.
std::string_view json_text_of(std::string_view text) {
  const auto f = text.find("```");
  if (f == std::string_view::npos || !blank(text.substr(0, f))) return text;
  const auto start = text.find('\n', f);
  const auto end = start == std::string_view::npos ? std::string_view::npos : text.find("```", start);
  if (end == std::string_view::npos || !blank(text.substr(end + 3))) return text;
  return text.substr(start + 1, end - start - 1);
}

}  // namespace

const std::string& quiz_grader_prompt() {
  static const std::string text(io::embedded_text(kPromptPath));
  return text;
}

const std::string& quiz_grader_prompt_sha256() {
  static const std::string sha = io::sha256_hex(quiz_grader_prompt());
  return sha;
}

std::vector<GraderMessage> grader_messages(const Question& q, const std::string& answer) {
  // The answer is cut and made valid UTF-8 (control characters become spaces); the JSON text has no raw newline,
  // so the first "\nEND GRADE\n" ends the section.
  nlohmann::ordered_json j{{"question", untrusted::to_valid_utf8(q.question)},
                           {"format", untrusted::to_valid_utf8(q.format)},
                           {"reference", untrusted::to_valid_utf8(q.answer)},
                           {"tolerance", q.tolerance},
                           {"options", q.options},
                           {"answer", untrusted::excerpt(answer, kMaxGradedAnswerChars)}};
  return {{"system", quiz_grader_prompt()},
          {"user", fmt::format("{}{}{}Grade the answer. Reply with the JSON object only.", kGradeBegin,
                               j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace), kGradeEnd)}};
}

GraderReply parse_grader_reply(std::string_view text) {
  GraderReply out;
  if (blank(text)) {
    out.error = "the reply is empty";
    return out;
  }
  J j;
  if (const std::string err = untrusted::parse_json_bounded(json_text_of(text), j, 4); !err.empty()) {
    out.error = "the reply is not one JSON object (" + untrusted::excerpt(err, 120) + ")";
    return out;
  }
  if (!j.is_object()) {
    out.error = "the reply is not a JSON object";
    return out;
  }
  for (const auto& [k, v] : j.items())
    if (k != "correct" && k != "says_unsolvable" && k != "reason") {
      out.error = fmt::format("the reply has the key '{}'; the keys are correct, says_unsolvable and reason",
                              untrusted::excerpt(k, 40));
      return out;
    }
  const auto c = j.find("correct"), u = j.find("says_unsolvable"), r = j.find("reason");
  if (c == j.end() || !c->is_boolean() || u == j.end() || !u->is_boolean() || r == j.end() || !r->is_string()) {
    out.error = "the reply needs the booleans correct and says_unsolvable and the string reason";
    return out;
  }
  out.correct = c->get<bool>();
  out.says_unsolvable = u->get<bool>();
  out.reason = untrusted::excerpt(r->get<std::string>(), kMaxReasonChars);
  return out;
}

LlmVerdict grade_with_llm(const GraderTransport& call, const Question& q, const std::string& answer, int attempts) {
  LlmVerdict out;
  if (answer.size() > kMaxGradedAnswerChars) {  // the grader would see only a prefix: a hedge could hide past the cut
    out.ok = true;
    out.reason = fmt::format("the answer has {} bytes, more than the {} the grader reads: incorrect, not graded",
                             answer.size(), kMaxGradedAnswerChars);
    return out;
  }
  std::vector<GraderMessage> messages = grader_messages(q, answer);
  for (int attempt = 0; attempt < std::max(1, attempts); ++attempt) {
    ++out.attempts;
    GraderCall c;
    try {
      c = call(messages);
    } catch (const StopRunError&) {
      throw;  // the endpoint refused the key: the quiz stops
    } catch (const std::exception& e) {
      c = {false, "", e.what()};
    }
    if (!c.ok) {
      out.reason = "transport: " + untrusted::excerpt(c.error, kMaxReasonChars);
      continue;  // asked again as it stands
    }
    GraderReply r = parse_grader_reply(c.text);
    if (r.error.empty()) {
      out.ok = true;
      out.correct = r.correct;
      out.says_unsolvable = r.says_unsolvable;
      out.reason = std::move(r.reason);
      return out;
    }
    out.reason = "malformed reply: " + r.error;
    messages.push_back({"assistant", untrusted::excerpt(c.text, kMaxEchoedReply)});
    messages.push_back({"user", fmt::format("That reply does not follow the schema: {}. Reply again with the JSON "
                                            "object only: {{\"correct\": true or false, \"says_unsolvable\": true or "
                                            "false, \"reason\": \"...\"}}.",
                                            r.error)});
  }
  out.reason = fmt::format("{} after {} attempt{}", out.reason, out.attempts, out.attempts == 1 ? "" : "s");
  return out;
}

GraderCall offline_grader_reply(const std::vector<GraderMessage>& messages) {
  GraderCall out;
  const GraderMessage* first_user = nullptr;
  int users = 0;
  for (const auto& m : messages)
    if (m.role == "user" && users++ == 0) first_user = &m;
  if (!first_user) {
    out.error = "offline grader: the request has no user message";
    return out;
  }
  const std::string& text = first_user->content;
  const auto b = text.find(kGradeBegin);
  const auto e = b == std::string::npos ? b : text.find(kGradeEnd, b + kGradeBegin.size());
  J j;
  if (e == std::string::npos ||
      !untrusted::parse_json_bounded(std::string_view(text).substr(b + kGradeBegin.size(), e - b - kGradeBegin.size()),
                                     j, 4)
           .empty() ||
      !j.is_object()) {
    out.error = "offline grader: the request has no GRADE section";
    return out;
  }
  Question q;
  std::string answer;
  try {
    q.question = j.at("question").get<std::string>();
    q.format = j.at("format").get<std::string>();
    q.answer = j.at("reference").get<std::string>();
    q.tolerance = j.at("tolerance").get<double>();
    q.options = j.at("options").get<std::vector<std::string>>();
    q.unsolvable = q.answer == "unsolvable";
    answer = j.at("answer").get<std::string>();
  } catch (const std::exception& ex) {
    out.error = fmt::format("offline grader: {}", untrusted::excerpt(ex.what(), 200));
    return out;
  }
  const bool correct = grade_strict(q, answer);
  std::string reply = J{{"correct", correct},
                        {"says_unsolvable", says_unsolvable_strict(answer)},
                        {"reason", correct ? "the strict verdict: correct" : "the strict verdict: not correct"}}
                          .dump();
  if (users == 1) {  // first attempt: reply as real models sometimes do
    const std::uint64_t h = fnv1a(text) % 6;
    if (h == 0) reply = "Verdict:\n" + reply + "\nHope this helps.";  // prose around the JSON
    else if (h == 3) reply = reply.substr(0, reply.size() / 2);      // cut in half
  }
  out.ok = true;
  out.text = std::move(reply);
  return out;
}

}  // namespace advplan::geo
