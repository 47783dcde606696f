#include "advplan/geo/quiz.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "advplan/core/untrusted.hpp"
#include "advplan/geo/tools.hpp"
#include "advplan/io/process_pool.hpp"

namespace advplan::geo {
namespace {
using J = nlohmann::json;

class ScriptedAgent final : public QuizAgent {
 public:
  ScriptedAgent(const std::vector<Question>& qs, std::string mode) : mode_(std::move(mode)) {
    for (const auto& q : qs) by_id_[q.id] = q;
  }
  std::string name() const override { return "scripted:" + mode_; }
  AgentReply step(const std::string& request) override {
    const J req = J::parse(request);
    const auto it = by_id_.find(req["question_id"].get<std::string>());
    if (it == by_id_.end()) return {R"({"answer":"\\boxed{unknown}"})", ""};
    const Question& q = it->second;
    const std::size_t done = req["steps"].size();
    const int left = req["steps_left"].get<int>();
    if (mode_ == "garbage") return {"I think the answer is 7", ""};
    if (mode_ == "verbose") return {J{{"tool_call", {{"id", fmt::format("c{}", done + 1)}, {"name", "list_features"}, {"arguments", J::object()}}}}.dump(), ""};
    if (mode_ == "badcall")
      return {J{{"tool_call", {{"id", "c1"}, {"name", "feature"}, {"arguments", {{"id", "no-such-feature"}}}}}}.dump(), ""};
    if (done < q.evidence.size() && left > 1) {
      const auto& e = q.evidence[done];
      return {J{{"tool_call", {{"id", fmt::format("c{}", done + 1)}, {"name", e.tool}, {"arguments", J::parse(e.args)}}}}.dump(), ""};
    }
    if (mode_ == "wrong") return {R"({"answer":"The answer is \\boxed{42}"})", ""};
    if (mode_ == "unboxed") return {J{{"answer", q.answer}}.dump(), ""};
    return {J{{"answer", "Final answer: \\boxed{" + q.answer + "}"}}.dump(), ""};
  }

 private:
  std::string mode_;
  std::map<std::string, Question> by_id_;
};

class ExecAgent final : public QuizAgent {
 public:
  ExecAgent(const std::string& command, double timeout_s)
      : command_(command), pool_(ProcessPoolOptions{command, 1, timeout_s, 1 << 20, 3, 10.0}) {}
  std::string name() const override { return "exec:" + command_; }
  AgentReply step(const std::string& request) override {
    const PoolReply r = pool_.request(request);
    if (!r.ok()) return {"", r.error};
    return {*r.line, ""};
  }

 private:
  std::string command_;
  ProcessPool pool_;
};

std::string first_number(const std::string& s, double& v) {
  const auto text = first_number_text(s);
  if (!text) return "no number";
  v = std::strtod(std::string(*text).c_str(), nullptr);
  return "";
}

}  // namespace

std::unique_ptr<QuizAgent> make_scripted_agent(const std::vector<Question>& questions, const std::string& mode) {
  static const char* modes[] = {"oracle", "wrong", "verbose", "badcall", "unboxed", "garbage"};
  if (std::find(std::begin(modes), std::end(modes), mode) == std::end(modes))
    throw std::invalid_argument(fmt::format("scripted:{}: modes are oracle, wrong, verbose, badcall, unboxed, garbage", mode));
  return std::make_unique<ScriptedAgent>(questions, mode);
}

std::unique_ptr<QuizAgent> make_exec_agent(const std::string& command, double timeout_s) {
  return std::make_unique<ExecAgent>(command, timeout_s);
}

std::optional<std::string_view> first_number_text(std::string_view s) {
  // One pass from each start, no backtracking beyond the one character the pattern can give back: linear in the
  // text for a match, and quadratic at worst only over runs of signs and dots, which an answer cap bounds.
  const auto digit = [&](std::size_t i) { return i < s.size() && s[i] >= '0' && s[i] <= '9'; };
  for (std::size_t i = 0; i < s.size(); ++i) {
    std::size_t j = i;
    if (s[j] == '+' || s[j] == '-') ++j;
    const std::size_t int_begin = j;
    while (digit(j)) ++j;
    std::size_t end;
    if (j < s.size() && s[j] == '.' && digit(j + 1)) {  // [0-9]*\.[0-9]+
      j += 1;
      while (digit(j)) ++j;
      end = j;
    } else if (j > int_begin) {  // [0-9]+, giving back a trailing '.' as the pattern's backtracking does
      end = j;
    } else {
      continue;  // no digit here: the match starts later
    }
    if (end < s.size() && (s[end] == 'e' || s[end] == 'E')) {  // (?:[eE][-+]?[0-9]+)?, greedy
      std::size_t k = end + 1;
      if (k < s.size() && (s[k] == '+' || s[k] == '-')) ++k;
      const std::size_t exp_begin = k;
      while (digit(k)) ++k;
      if (k > exp_begin) end = k;
    }
    return s.substr(i, end - i);
  }
  return std::nullopt;
}

std::optional<std::string> boxed(const std::string& answer) {
  const auto pos = answer.rfind("\\boxed{");
  if (pos == std::string::npos) return std::nullopt;
  int depth = 1;
  std::string out;
  for (std::size_t i = pos + 7; i < answer.size(); ++i) {
    if (answer[i] == '{') ++depth;
    if (answer[i] == '}' && --depth == 0) return out;
    out += answer[i];
  }
  return std::nullopt;
}

std::string normalise(const std::string& s) {
  std::string out;
  for (unsigned char c : s)
    if (std::isalnum(c)) out += static_cast<char>(std::tolower(c));
  return out;
}

bool answer_matches(const Question& q, const std::string& answer) {
  const std::string a = normalise(answer), ref = normalise(q.answer);
  const bool says_unsolvable = a.find("unsolvable") != std::string::npos;
  if (q.unsolvable) return a == "unsolvable";
  if (says_unsolvable) return false;
  if (q.format == "numeric") {
    double v = 0, r = 0;
    if (!first_number(answer, v).empty() || !first_number(q.answer, r).empty()) return false;
    return std::abs(v - r) <= q.tolerance + 1e-9;
  }
  if (q.format == "boolean" || q.format == "choice") return a == ref;  // one option, nothing else
  return !ref.empty() && a.find(ref) != std::string::npos;
}

QuizOutcome run_question(const GeoMap& m, const Question& q, QuizAgent& agent, int budget) {
  QuizOutcome o;
  o.id = q.id;
  o.tier = q.tier;
  o.categories = q.categories;
  o.reference = q.answer;
  J steps = J::array();
  const J tools = J::parse(tool_specs_json());
  while (true) {
    const J req{{"question_id", q.id}, {"question", q.question}, {"tools", tools}, {"steps", steps}, {"steps_left", budget - o.steps}};
    AgentReply rep;
    try {
      rep = agent.step(req.dump());
    } catch (const std::exception& e) {
      rep.error = e.what();
    }
    if (!rep.error.empty()) {
      o.reason = "agent: " + untrusted::excerpt(rep.error, 200);
      return o;
    }
    J r;
    if (const std::size_t bad = untrusted::first_invalid_utf8(rep.line); bad != std::string::npos) {
      o.reason = fmt::format("protocol: the reply is not valid UTF-8 (byte {})", bad);
      return o;
    }
    if (auto err = untrusted::parse_json_bounded(rep.line, r, 16); !err.empty() || !r.is_object()) {
      o.reason = !err.empty() && err.find("deeper") != std::string::npos
                     ? fmt::format("protocol: the reply {}", err)
                     : fmt::format("protocol: the reply is not a JSON object ({})", untrusted::excerpt(rep.line, 80));
      return o;
    }
    if (r.contains("answer")) {
      if (!r["answer"].is_string()) {
        o.reason = "protocol: 'answer' is not a string";
        return o;
      }
      const auto b = boxed(r["answer"].get<std::string>());
      if (!b) {
        o.reason = "protocol: the answer is not boxed (\\boxed{...})";
        return o;
      }
      o.answer = *b;
      o.correct = answer_matches(q, *b);
      if (!o.correct) o.reason = "wrong answer";
      return o;
    }
    if (!r.contains("tool_call") || !r["tool_call"].is_object()) {
      o.reason = "protocol: the reply has neither 'tool_call' nor 'answer'";
      return o;
    }
    if (o.steps >= budget) {
      o.reason = fmt::format("budget of {} steps exhausted", budget);
      return o;
    }
    const J& call = r["tool_call"];
    if (!call.contains("name") || !call["name"].is_string()) {
      o.reason = "protocol: tool_call has no string 'name'";
      return o;
    }
    const std::string id = call.contains("id") && call["id"].is_string() ? call["id"].get<std::string>()
                                                                         : fmt::format("call-{}", o.steps + 1);
    const J args = call.contains("arguments") ? call["arguments"] : J::object();
    // Arguments may come as an object or as its JSON text (the OpenAI tool-call convention).
    const std::string args_text = args.is_string() ? args.get<std::string>() : args.dump();
    ++o.steps;
    const ToolResult tr = call_tool(m, call["name"].get<std::string>(), args_text);
    J obs{{"call_id", id}, {"ok", tr.ok}};
    if (tr.ok) obs["result"] = J::parse(tr.json);
    else obs["error"] = tr.error;
    steps.push_back({{"call", {{"id", id}, {"name", call["name"]}, {"arguments", args}}}, {"observation", obs}});
    if (!tr.ok) {
      o.reason = "tool error: " + tr.error;
      return o;
    }
  }
}

std::pair<double, double> wilson(int k, int n, double z) {
  if (n <= 0) return {0, 1};
  const double p = static_cast<double>(k) / n, z2 = z * z;
  const double c = (p + z2 / (2 * n)) / (1 + z2 / n);
  const double h = z * std::sqrt(p * (1 - p) / n + z2 / (4.0 * n * n)) / (1 + z2 / n);
  return {std::max(0.0, c - h), std::min(1.0, c + h)};
}

std::vector<AccuracyRow> summarise(const std::vector<QuizOutcome>& outcomes) {
  std::vector<std::string> groups{"overall", "tier 1", "tier 2", "tier 3"};
  for (int c = 1; c <= 7; ++c) groups.push_back(fmt::format("category {}", c));
  std::vector<AccuracyRow> rows;
  for (const auto& g : groups) {
    AccuracyRow row;
    row.group = g;
    double steps = 0;
    for (const auto& o : outcomes) {
      bool in = g == "overall" || g == fmt::format("tier {}", o.tier);
      for (int c : o.categories) in = in || g == fmt::format("category {}", c);
      if (!in) continue;
      ++row.n;
      row.correct += o.correct ? 1 : 0;
      steps += o.steps;
      row.exhausted += o.reason.starts_with("budget") ? 1 : 0;
    }
    if (row.n > 0) {
      row.accuracy = static_cast<double>(row.correct) / row.n;
      std::tie(row.lo, row.hi) = wilson(row.correct, row.n);
      row.mean_steps = steps / row.n;
    }
    rows.push_back(row);
  }
  return rows;
}

std::string outcome_to_json(const QuizOutcome& o) {
  nlohmann::ordered_json j{{"id", o.id},         {"tier", o.tier},     {"categories", o.categories},
                           {"correct", o.correct}, {"steps", o.steps}, {"answer", untrusted::to_valid_utf8(o.answer)},
                           {"reference", o.reference}, {"reason", untrusted::to_valid_utf8(o.reason)}};
  return j.dump();
}

}  // namespace advplan::geo
