#include "advplan/geo/quiz.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "advplan/core/stop_error.hpp"
#include "advplan/core/random.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/geo/tools.hpp"
#include "advplan/io/process_pool.hpp"
#include "advplan/stats/statistics.hpp"

namespace advplan::geo {
namespace {
using J = nlohmann::json;

/// Every option of a closed question joined by " or "; a numeric one gets two numbers (or "unsolvable or 1").
std::string hedge(const Question& q) {
  if (!q.options.empty()) return fmt::format("{}", fmt::join(q.options, " or "));
  if (q.unsolvable) return "unsolvable or 1";
  if (q.format == "numeric") {
    const double r = std::strtod(q.answer.c_str(), nullptr);
    return fmt::format("{} or {:.3f}", q.answer, 2 * r + 1);
  }
  return q.answer;  // open text: nothing to hedge between
}

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
    if (mode_ == "hedge") return {J{{"answer", "Final answer: \\boxed{" + hedge(q) + "}"}}.dump(), ""};
    return {J{{"answer", "Final answer: \\boxed{" + q.answer + "}"}}.dump(), ""};
  }

 private:
  std::string mode_;
  std::map<std::string, Question> by_id_;
};

class ExecAgent final : public QuizAgent {
 public:
  ExecAgent(const std::string& command, double timeout_s, std::vector<std::string> withheld_env)
      : command_(command), pool_(ProcessPoolOptions{command, 1, timeout_s, 1 << 20, 3, 10.0, std::move(withheld_env)}) {}
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
  static const char* modes[] = {"oracle", "wrong", "verbose", "badcall", "unboxed", "garbage", "hedge"};
  if (std::find(std::begin(modes), std::end(modes), mode) == std::end(modes))
    throw std::invalid_argument(
        fmt::format("scripted:{}: modes are oracle, wrong, verbose, badcall, unboxed, garbage, hedge", mode));
  return std::make_unique<ScriptedAgent>(questions, mode);
}

std::unique_ptr<QuizAgent> make_exec_agent(const std::string& command, double timeout_s,
                                           std::vector<std::string> withheld_env) {
  return std::make_unique<ExecAgent>(command, timeout_s, std::move(withheld_env));
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

std::string grading_name(Grading g) {
  switch (g) {
    case Grading::strict: return "strict";
    case Grading::containment: return "containment";
    case Grading::llm: return "llm";
  }
  return "strict";
}

std::optional<Grading> parse_grading(std::string_view s) {
  for (Grading g : {Grading::strict, Grading::containment, Grading::llm})
    if (s == grading_name(g)) return g;
  return std::nullopt;
}

std::vector<std::string> answer_words(std::string_view s) {
  std::vector<std::string> out;
  std::string word;
  for (unsigned char c : s) {
    if (std::isalnum(c)) {
      word += static_cast<char>(std::tolower(c));
    } else if (!word.empty()) {
      out.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

std::vector<std::string> named_options(const std::vector<std::string>& options, std::string_view answer) {
  // The options as a trie over word ids; options with the same words are one (the first spelling is named).
  struct Node {
    std::map<int, std::size_t> next;
    std::optional<std::size_t> option;
  };
  std::vector<Node> trie(1);
  std::map<std::string, int, std::less<>> ids;
  for (std::size_t k = 0; k < options.size(); ++k) {
    const auto words = answer_words(options[k]);
    if (words.empty()) continue;  // names nothing
    std::size_t node = 0;
    for (const auto& w : words) {
      const int id = ids.emplace(w, static_cast<int>(ids.size())).first->second;
      auto it = trie[node].next.find(id);
      if (it == trie[node].next.end()) {
        it = trie[node].next.emplace(id, trie.size()).first;
        trie.emplace_back();
      }
      node = it->second;
    }
    if (!trie[node].option) trie[node].option = k;
  }
  std::vector<int> text;  // the answer's words as ids, -1 for a word no option has
  for (const auto& w : answer_words(answer)) {
    const auto it = ids.find(w);
    text.push_back(it == ids.end() ? -1 : it->second);
  }
  // At each position only the longest option starting there can count: the others lie inside it. It counts unless
  // an occurrence starting earlier reaches as far (the longest ones starting earlier are the ones that reach
  // furthest). The walk from a position is at most as long as the longest option, so the work is linear in the
  // answer for bounded options (kMaxOptionBytes).
  std::vector<bool> named(options.size(), false);
  std::size_t reach = 0;  // the furthest end of the occurrences starting before i
  for (std::size_t i = 0; i < text.size(); ++i) {
    std::size_t node = 0, end = 0;
    std::optional<std::size_t> option;
    for (std::size_t j = i; j < text.size(); ++j) {
      const auto it = trie[node].next.find(text[j]);
      if (it == trie[node].next.end()) break;
      node = it->second;
      if (trie[node].option) {
        option = trie[node].option;
        end = j + 1;
      }
    }
    if (!option) continue;
    if (end > reach) named[*option] = true;
    reach = std::max(reach, end);
  }
  std::vector<std::string> out;
  for (std::size_t k = 0; k < options.size(); ++k)
    if (named[k]) out.push_back(options[k]);
  return out;
}

std::size_t count_numbers(std::string_view s) {
  std::size_t n = 0;
  while (const auto t = first_number_text(s)) {
    ++n;
    s.remove_prefix(static_cast<std::size_t>(t->data() - s.data()) + t->size());
  }
  return n;
}

bool says_unsolvable_strict(const std::string& answer) { return normalise(answer) == "unsolvable"; }
bool says_unsolvable_containment(const std::string& answer) {
  return normalise(answer).find("unsolvable") != std::string::npos;
}

namespace {
bool within_tolerance(const Question& q, const std::string& answer) {
  double v = 0, r = 0;
  if (!first_number(answer, v).empty() || !first_number(q.answer, r).empty()) return false;
  return std::abs(v - r) <= q.tolerance + 1e-9;
}
}  // namespace

bool grade_strict(const Question& q, const std::string& answer) {
  if (q.unsolvable) return says_unsolvable_strict(answer);
  if (says_unsolvable_containment(answer)) return false;
  if (q.format == "numeric") return count_numbers(answer) == 1 && within_tolerance(q, answer);
  const std::string ref = normalise(q.answer);
  if (!ref.empty() && normalise(answer) == ref) return true;  // the reference itself, whatever the spacing
  if (q.options.empty()) return false;                         // an open answer: equality only
  const auto named = named_options(q.options, answer);
  return named.size() == 1 && normalise(named[0]) == ref;
}

bool grade_containment(const Question& q, const std::string& answer) {
  if (q.unsolvable) return says_unsolvable_containment(answer);
  if (q.format == "numeric") return within_tolerance(q, answer);
  const std::string ref = normalise(q.answer);
  return !ref.empty() && normalise(answer).find(ref) != std::string::npos;
}

QuizOutcome run_question(const GeoMap& m, const Question& q, QuizAgent& agent, int budget) {
  QuizOutcome o;
  o.id = q.id;
  o.tier = q.tier;
  o.categories = q.categories;
  o.reference = q.answer;
  o.unsolvable = q.unsolvable;
  J steps = J::array();
  const J tools = J::parse(tool_specs_json());
  while (true) {
    const J req{{"question_id", q.id}, {"question", q.question}, {"tools", tools}, {"steps", steps}, {"steps_left", budget - o.steps}};
    AgentReply rep;
    try {
      rep = agent.step(req.dump());
    } catch (const StopRunError&) {
      throw;  // the endpoint refused the key: the quiz stops
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
    // A null member counts as absent: a strict schema (docs/LLM.md "Structured output") makes both nullable.
    for (const char* k : {"answer", "tool_call"})
      if (r.contains(k) && r[k].is_null()) r.erase(k);
    if (r.contains("answer")) {
      if (!r["answer"].is_string()) {
        o.reason = "protocol: 'answer' is not a string";
        return o;
      }
      // Without a box, the whole final message is the answer (marked boxed: false).
      const std::string final_message = r["answer"].get<std::string>();
      const auto b = boxed(final_message);
      o.answered = true;
      o.boxed = b.has_value();
      o.answer = b ? *b : final_message;
      o.correct_strict = grade_strict(q, o.answer);
      o.correct_containment = grade_containment(q, o.answer);
      o.says_unsolvable_strict = says_unsolvable_strict(o.answer);
      o.says_unsolvable_containment = says_unsolvable_containment(o.answer);
      choose_grading(o, Grading::strict);
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

void choose_grading(QuizOutcome& o, Grading g) {
  o.grading = g;
  if (!o.answered) return;  // a protocol, tool or agent error: incorrect under every mode, with its own reason
  switch (g) {
    case Grading::strict: o.correct = o.correct_strict; break;
    case Grading::containment: o.correct = o.correct_containment; break;
    case Grading::llm: o.correct = o.correct_llm.value_or(false); break;
  }
  if (o.correct) o.reason.clear();
  else if (g == Grading::llm && !o.correct_llm) o.reason = "grader: " + o.grader_reason;
  else o.reason = "wrong answer";
}

std::pair<double, double> wilson(int k, int n, double z) {
  if (n <= 0) return {0, 1};
  const double p = static_cast<double>(k) / n, z2 = z * z;
  const double c = (p + z2 / (2 * n)) / (1 + z2 / n);
  const double h = z * std::sqrt(p * (1 - p) / n + z2 / (4.0 * n * n)) / (1 + z2 / n);
  return {std::max(0.0, c - h), std::min(1.0, c + h)};
}

namespace {
bool correct_under(const QuizOutcome& o, Grading g) {
  switch (g) {
    case Grading::strict: return o.correct_strict;
    case Grading::containment: return o.correct_containment;
    case Grading::llm: return o.correct_llm.value_or(false);
  }
  return false;
}
bool says_unsolvable_under(const QuizOutcome& o, Grading g) {
  switch (g) {
    case Grading::strict: return o.says_unsolvable_strict;
    case Grading::containment: return o.says_unsolvable_containment;
    case Grading::llm: return o.says_unsolvable_llm;
  }
  return false;
}
}  // namespace

std::vector<AccuracyRow> summarise(const std::vector<QuizOutcome>& outcomes, Grading mode) {
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
      row.correct += correct_under(o, mode) ? 1 : 0;
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
  nlohmann::ordered_json j{{"id", o.id},
                           {"tier", o.tier},
                           {"categories", o.categories},
                           {"correct", o.correct},
                           {"grading", grading_name(o.grading)},
                           {"correct_strict", o.correct_strict},
                           {"correct_containment", o.correct_containment}};
  if (!o.grader.empty()) j["correct_llm"] = o.correct_llm.value_or(false);
  j["steps"] = o.steps;
  j["boxed"] = o.boxed;
  j["answer"] = untrusted::to_valid_utf8(o.answer);
  j["reference"] = o.reference;
  j["reason"] = untrusted::to_valid_utf8(o.reason);
  if (!o.grader.empty()) {
    j["grader"] = untrusted::to_valid_utf8(o.grader);
    j["grader_attempts"] = o.grader_attempts;
    j["grader_reason"] = untrusted::to_valid_utf8(o.grader_reason);
  }
  return j.dump();
}

std::vector<UnsolvableRow> unsolvable_scores(const std::vector<QuizOutcome>& outcomes, const std::vector<Grading>& modes) {
  struct Counts {
    std::uint64_t tp = 0, fp = 0, fn = 0;
  };
  // The three ratios of a mode's counts, each with its numerator and denominator; 0 when the denominator is.
  const auto ratios = [](const Counts& c) {
    const std::array<std::pair<std::uint64_t, std::uint64_t>, 3> kn{
        {{c.tp, c.tp + c.fp}, {c.tp, c.tp + c.fn}, {2 * c.tp, 2 * c.tp + c.fp + c.fn}}};
    return kn;
  };
  const auto value = [](std::pair<std::uint64_t, std::uint64_t> kn) {
    return kn.second == 0 ? 0.0 : static_cast<double>(kn.first) / static_cast<double>(kn.second);
  };
  const auto count = [&](Grading g, const std::uint32_t* weights) {
    Counts c;
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
      const std::uint64_t w = weights ? weights[i] : 1;
      const bool says = says_unsolvable_under(outcomes[i], g), is = outcomes[i].unsolvable;
      c.tp += says && is ? w : 0;
      c.fp += says && !is ? w : 0;
      c.fn += !says && is ? w : 0;
    }
    return c;
  };
  static const char* metrics[] = {"precision", "recall", "f1"};
  // replicates[mode][metric][b], every mode's from the same resamples.
  std::vector<std::array<std::vector<double>, 3>> replicates(modes.size());
  if (outcomes.size() > 1) {
    Rng rng = Rng::keyed(kUnsolvableSeed, "quiz", "unsolvable");
    std::vector<std::uint32_t> counts(outcomes.size());
    for (int b = 0; b < kUnsolvableResamples; ++b) {
      resample_counts(rng, counts);
      for (std::size_t m = 0; m < modes.size(); ++m) {
        const auto kn = ratios(count(modes[m], counts.data()));
        // A ratio undefined on a resample (no question of its denominator drawn) is left out of the bounds.
        for (std::size_t k = 0; k < 3; ++k) replicates[m][k].push_back(kn[k].second == 0 ? std::nan("") : value(kn[k]));
      }
    }
  }
  std::vector<UnsolvableRow> rows;
  for (std::size_t m = 0; m < modes.size(); ++m) {
    const auto kn = ratios(count(modes[m], nullptr));
    for (std::size_t k = 0; k < 3; ++k) {
      UnsolvableRow r;
      r.grading = modes[m];
      r.metric = metrics[k];
      r.k = static_cast<int>(kn[k].first);
      r.n = static_cast<int>(kn[k].second);
      r.value = value(kn[k]);
      r.lo = r.hi = r.value;  // one question or none, or a ratio never defined: no interval
      if (r.n > 0 && !replicates[m][k].empty()) {
        const auto [lo, hi] = percentile_bounds(replicates[m][k]);
        if (!std::isnan(lo)) std::tie(r.lo, r.hi) = std::pair(lo, hi);
      }
      rows.push_back(r);
    }
  }
  return rows;
}

}  // namespace advplan::geo
