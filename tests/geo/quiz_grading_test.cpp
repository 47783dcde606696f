// Quiz grading that cannot be gamed (docs/GEO.md "Grading"): strict grading's option, hedge and number rules, the
// containment rule kept for Mil-SCORE, the hedging scripted agent against both, the unboxed fallback, the
// unsolvable precision/recall/F1 against a brute force, the offline LLM grader, and the questions' options.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/core/random.hpp"
#include "advplan/geo/map.hpp"
#include "advplan/geo/questions.hpp"
#include "advplan/geo/quiz.hpp"
#include "advplan/geo/quiz_grader.hpp"
#include "advplan/run/config.hpp"

namespace {
using namespace advplan;
using namespace advplan::geo;

Question closed(const std::string& answer, std::vector<std::string> options, const std::string& format = "text") {
  Question q;
  q.format = format;
  q.answer = answer;
  q.options = std::move(options);
  return q;
}

/// The questions and maps of a few paper scenarios, with a scripted agent's outcomes on them.
struct Corpus {
  std::vector<GeoMap> maps;
  std::vector<Question> qs;
  explicit Corpus(std::size_t scenarios) {
    const auto cfg = default_experiment_config();
    for (std::size_t i = 0; i < scenarios; ++i) {
      maps.push_back(generate_map(corpus_scenario(cfg, i * 25)));
      for (auto& q : generate_questions(maps.back())) qs.push_back(q);
    }
  }
  std::vector<QuizOutcome> run(const std::string& mode) const {
    auto agent = make_scripted_agent(qs, mode);
    std::vector<QuizOutcome> out;
    for (const auto& q : qs)
      for (const auto& m : maps)
        if (m.scenario_id == q.scenario) out.push_back(run_question(m, q, *agent, 10));
    return out;
  }
};

const Corpus& corpus() {
  static const Corpus c(6);
  return c;
}

TEST(GeoGrading, StrictTakesOneOptionWithFillerAndRefusesHedges) {
  const Question sector = closed("blue sector", {"blue sector", "red sector"});
  EXPECT_TRUE(grade_strict(sector, "blue sector"));
  EXPECT_TRUE(grade_strict(sector, "Blue sector."));
  EXPECT_TRUE(grade_strict(sector, "the blue sector")) << "filler words are allowed";
  EXPECT_TRUE(grade_strict(sector, "BLUESECTOR")) << "the reference itself, whatever the spacing";
  EXPECT_FALSE(grade_strict(sector, "blue sector or red sector"));
  EXPECT_FALSE(grade_strict(sector, "the blue sector, not the red sector")) << "naming another option is a hedge";
  EXPECT_FALSE(grade_strict(sector, "red sector"));
  EXPECT_FALSE(grade_strict(sector, "blue")) << "an option is named by all of its words";
  EXPECT_FALSE(grade_strict(sector, "bluesector or redsector"));
  EXPECT_FALSE(grade_strict(sector, "blue sector, or unsolvable"));
  EXPECT_TRUE(grade_containment(sector, "blue sector or red sector")) << "Mil-SCORE's rule is gamed by the hedge";

  const Question yn = closed("no", {"yes", "no"}, "boolean");
  EXPECT_TRUE(grade_strict(yn, "No."));
  EXPECT_TRUE(grade_strict(yn, "No, a ridge is in the way"));
  EXPECT_FALSE(grade_strict(yn, "not sure")) << "words, not letters: 'not' does not name 'no'";
  EXPECT_FALSE(grade_strict(yn, "unknown"));
  EXPECT_FALSE(grade_strict(yn, "yes or no"));
  EXPECT_TRUE(grade_containment(yn, "yes or no"));

  // One option inside a longer one: only the longer counts where they overlap.
  const Question nested = closed("red sector north", {"red sector", "red sector north", "blue sector"});
  EXPECT_EQ(named_options(nested.options, "the Red Sector North"), std::vector<std::string>{"red sector north"});
  EXPECT_TRUE(grade_strict(nested, "the Red Sector North"));
  EXPECT_EQ(named_options(nested.options, "red sector north or red sector"),
            (std::vector<std::string>{"red sector", "red sector north"}));
  EXPECT_FALSE(grade_strict(nested, "red sector north or red sector"));
  EXPECT_EQ(named_options({"sector north", "red sector north"}, "the red sector north"),
            std::vector<std::string>{"red sector north"})
      << "an option starting later inside a longer one does not count either";
  EXPECT_EQ(named_options({"sector north", "red sector"}, "red sector north"),
            (std::vector<std::string>{"sector north", "red sector"}))
      << "overlapping options, neither inside the other, both count";
  const Question inner = closed("red sector", nested.options);
  EXPECT_FALSE(grade_strict(inner, "red sector north")) << "the shorter option is inside the longer one";
  EXPECT_TRUE(grade_strict(inner, "red sector"));
  // Ids with digits are words: threat-red-1 is not inside threat-red-12.
  const Question ids = closed("threat-red-1", {"threat-red-1", "threat-red-12"}, "choice");
  EXPECT_TRUE(grade_strict(ids, "Threat-Red-1"));
  EXPECT_FALSE(grade_strict(ids, "threat-red-12"));
  EXPECT_TRUE(grade_containment(ids, "threat-red-12")) << "containment: 'threatred1' is inside 'threatred12'";
  EXPECT_TRUE(named_options({"", "---"}, "anything -- at all").empty()) << "an option without words names nothing";
}

// A hostile question file (256 options of 128 words, alike but for the last) against a hostile answer (200,000
// words that match every option's first 127): the option walk is bounded by the longest option, not quadratic.
TEST(GeoGrading, NamingOptionsIsLinearInTheAnswer) {
  std::vector<std::string> options;
  std::string a127;
  for (int w = 0; w < 127; ++w) a127 += "a ";
  for (int k = 0; k < 256; ++k) options.push_back(a127 + "b" + std::to_string(k));
  std::string answer;
  for (int w = 0; w < 200000; ++w) answer += "a ";
  EXPECT_TRUE(named_options(options, answer).empty());
  EXPECT_EQ(named_options(options, answer + "b7 or b8"), std::vector<std::string>{options[7]});
  Question q = closed(options[7], options);
  EXPECT_TRUE(grade_strict(q, answer + "b7"));
}

TEST(GeoGrading, StrictNumbersAndUnsolvable) {
  Question num;
  num.format = "numeric";
  num.answer = "12.500";
  num.tolerance = numeric_tolerance(12.5);
  EXPECT_TRUE(grade_strict(num, "12.5"));
  EXPECT_TRUE(grade_strict(num, "about 12.6 km"));
  EXPECT_FALSE(grade_strict(num, "13"));
  EXPECT_FALSE(grade_strict(num, "12.5 or 13")) << "two numbers are a hedge";
  EXPECT_FALSE(grade_strict(num, "3 or 4"));
  EXPECT_FALSE(grade_strict(num, "unsolvable, else 12.5"));
  EXPECT_TRUE(grade_containment(num, "12.5 or 13")) << "containment takes the first number";
  EXPECT_EQ(count_numbers("12.5 or 13"), 2u);
  EXPECT_EQ(count_numbers("1e3 km"), 1u);
  EXPECT_EQ(count_numbers("none"), 0u);

  Question un = num;
  un.answer = "unsolvable";
  un.unsolvable = true;
  EXPECT_TRUE(grade_strict(un, "Unsolvable."));
  EXPECT_TRUE(grade_strict(un, " UNSOLVABLE "));
  EXPECT_FALSE(grade_strict(un, "it is unsolvable"));
  EXPECT_FALSE(grade_strict(un, "unsolvable or 1"));
  EXPECT_TRUE(grade_containment(un, "unsolvable or 1"));
  EXPECT_TRUE(says_unsolvable_strict("Unsolvable!"));
  EXPECT_FALSE(says_unsolvable_strict("it is unsolvable"));
  EXPECT_TRUE(says_unsolvable_containment("it is unsolvable"));
}

// The hedging agent: every option of a closed question joined by " or " (two numbers for a numeric one). Strict
// gives it nothing; containment gives it every sector question (category 1) and more.
TEST(GeoGrading, AHedgingAgentScoresNothingUnderStrictAndMoreUnderContainment) {
  const auto& c = corpus();
  const auto out = c.run("hedge");
  ASSERT_EQ(out.size(), c.qs.size());
  int closed_questions = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const Question& q = c.qs[i];
    EXPECT_FALSE(out[i].correct_strict) << q.id << ": " << out[i].answer;
    EXPECT_TRUE(out[i].answered && out[i].boxed) << q.id << ": " << out[i].reason;
    if (q.options.size() >= 2) {
      ++closed_questions;
      EXPECT_EQ(named_options(q.options, out[i].answer).size(), q.options.size()) << q.id << ": " << out[i].answer;
    }
    if (q.format == "numeric" && !q.unsolvable) {
      EXPECT_EQ(count_numbers(out[i].answer), 2u) << out[i].answer;
    }
  }
  EXPECT_GT(closed_questions, 20);
  const auto strict = summarise(out, Grading::strict), containment = summarise(out, Grading::containment);
  ASSERT_EQ(strict[4].group, "category 1");
  EXPECT_EQ(strict[4].n, 6);
  EXPECT_EQ(strict[4].correct, 0);
  EXPECT_EQ(containment[4].correct, 6) << "every sector question, under Mil-SCORE's rule";
  EXPECT_EQ(strict[0].correct, 0);
  EXPECT_GT(containment[0].correct, containment[0].n / 2);
  // The oracle scores everything under both.
  for (const auto& o : c.run("oracle")) EXPECT_TRUE(o.correct_strict && o.correct_containment) << o.id;
}

TEST(GeoGrading, AnUnboxedAnswerIsGradedFromTheFinalMessage) {
  const auto& c = corpus();
  const auto out = c.run("unboxed");
  for (std::size_t i = 0; i < out.size(); ++i) {
    EXPECT_TRUE(out[i].answered) << out[i].id << ": " << out[i].reason;
    EXPECT_FALSE(out[i].boxed) << out[i].id;
    EXPECT_EQ(out[i].answer, c.qs[i].answer) << "the whole final message";
    EXPECT_TRUE(out[i].correct) << out[i].id << ": " << out[i].reason;
    const auto j = nlohmann::json::parse(outcome_to_json(out[i]));
    EXPECT_EQ(j["boxed"], false);
    EXPECT_EQ(j["correct_strict"], true);
  }
  EXPECT_TRUE(nlohmann::json::parse(outcome_to_json(c.run("oracle")[0]))["boxed"].get<bool>());
}

TEST(GeoGrading, ChoosingAModeSetsCorrectAndReason) {
  QuizOutcome o;
  o.answered = true;
  o.correct_strict = false;
  o.correct_containment = true;
  choose_grading(o, Grading::containment);
  EXPECT_TRUE(o.correct);
  EXPECT_EQ(o.reason, "");
  choose_grading(o, Grading::strict);
  EXPECT_FALSE(o.correct);
  EXPECT_EQ(o.reason, "wrong answer");
  o.grader_reason = "malformed reply: x after 3 attempts";
  choose_grading(o, Grading::llm);
  EXPECT_FALSE(o.correct);
  EXPECT_EQ(o.reason, "grader: malformed reply: x after 3 attempts");
  QuizOutcome err;
  err.reason = "protocol: the reply has neither 'tool_call' nor 'answer'";
  err.correct_containment = true;  // never graded: stays incorrect with its reason
  choose_grading(err, Grading::containment);
  EXPECT_FALSE(err.correct);
  EXPECT_EQ(err.reason, "protocol: the reply has neither 'tool_call' nor 'answer'");
  EXPECT_EQ(parse_grading("containment"), Grading::containment);
  EXPECT_EQ(parse_grading("lenient"), std::nullopt);
}

// Precision, recall and F1 of "says unsolvable" against "is unsolvable", recomputed by brute force, and the
// bootstrap interval recomputed from the documented stream with a plain sort.
TEST(GeoGrading, UnsolvablePrecisionRecallAndF1MatchABruteForce) {
  Rng rng(5);
  std::vector<QuizOutcome> out(97);
  for (auto& o : out) {
    o.unsolvable = rng.bernoulli(0.3);
    o.says_unsolvable_strict = rng.bernoulli(o.unsolvable ? 0.6 : 0.1);
    o.says_unsolvable_containment = o.says_unsolvable_strict || rng.bernoulli(0.3);
  }
  const std::vector<Grading> modes{Grading::strict, Grading::containment, Grading::llm};  // llm: never says it
  const auto rows = unsolvable_scores(out, modes);
  ASSERT_EQ(rows.size(), 9u);
  auto says = [](const QuizOutcome& o, Grading g) {
    return g == Grading::strict ? o.says_unsolvable_strict
                                : g == Grading::containment ? o.says_unsolvable_containment : o.says_unsolvable_llm;
  };
  // Brute force: the three ratios of one multiset of questions (weights w), NaN where undefined.
  auto scores = [&](Grading g, const std::vector<int>& w) {
    double tp = 0, fp = 0, fn = 0;
    for (std::size_t i = 0; i < out.size(); ++i) {
      if (says(out[i], g) && out[i].unsolvable) tp += w[i];
      if (says(out[i], g) && !out[i].unsolvable) fp += w[i];
      if (!says(out[i], g) && out[i].unsolvable) fn += w[i];
    }
    const double nan = std::nan("");
    const double p = tp + fp == 0 ? nan : tp / (tp + fp), r = tp + fn == 0 ? nan : tp / (tp + fn);
    const double f1 = tp + fp + fn == 0 ? nan : tp == 0 ? 0.0 : 2 * p * r / (p + r);
    return std::array<double, 3>{p, r, f1};
  };
  const std::vector<int> ones(out.size(), 1);
  std::vector<std::vector<int>> resamples;
  Rng boot = Rng::keyed(kUnsolvableSeed, "quiz", "unsolvable");
  for (int b = 0; b < kUnsolvableResamples; ++b) {
    std::vector<int> w(out.size(), 0);
    for (std::size_t i = 0; i < out.size(); ++i) ++w[static_cast<std::size_t>(boot.uniform_int(0, 96))];
    resamples.push_back(std::move(w));
  }
  for (std::size_t m = 0; m < modes.size(); ++m) {
    const auto point = scores(modes[m], ones);
    std::array<std::vector<double>, 3> reps;
    for (const auto& w : resamples) {
      const auto s = scores(modes[m], w);
      for (int k = 0; k < 3; ++k)
        if (!std::isnan(s[k])) reps[k].push_back(s[k]);  // undefined on this resample: left out
    }
    for (int k = 0; k < 3; ++k) {
      const auto& row = rows[m * 3 + k];
      const double value = std::isnan(point[k]) ? 0.0 : point[k];
      EXPECT_EQ(row.grading, modes[m]);
      EXPECT_EQ(row.metric, (std::array<const char*, 3>{"precision", "recall", "f1"})[k]);
      EXPECT_NEAR(row.value, value, 1e-12) << row.metric;
      std::sort(reps[k].begin(), reps[k].end());
      // the sorted defined replicates at (0-based) floor(.025 B) and ceil(.975 B) - 1: 50 and 1949 for B = 2000
      const std::size_t b = reps[k].size();
      const double lo = b == 0 || std::isnan(point[k]) ? value : reps[k][static_cast<std::size_t>(std::floor(0.025 * b))];
      const double hi = b == 0 || std::isnan(point[k]) ? value : reps[k][static_cast<std::size_t>(std::ceil(0.975 * b)) - 1];
      EXPECT_NEAR(row.lo, lo, 1e-12) << grading_name(modes[m]) << " " << row.metric;
      EXPECT_NEAR(row.hi, hi, 1e-12) << grading_name(modes[m]) << " " << row.metric;
      EXPECT_LE(row.lo, row.value);
      EXPECT_GE(row.hi, row.value);
    }
  }
  EXPECT_GT(rows[0].value, 0.3);  // the strict rows are informative
  EXPECT_LT(rows[0].lo, rows[0].hi);
  EXPECT_EQ(rows[6].value, 0.0) << "precision with no question said unsolvable is 0";
  EXPECT_EQ(rows[6].n, 0);
  EXPECT_EQ(rows[6].hi, 0.0);
  // A resample without an unsolvable question leaves recall undefined: it is left out, not counted as 0.
  std::vector<QuizOutcome> few(40);
  few[0].unsolvable = few[0].says_unsolvable_strict = true;
  const auto sparse = unsolvable_scores(few, {Grading::strict});
  EXPECT_EQ(sparse[1].value, 1.0);
  EXPECT_EQ(sparse[1].lo, 1.0) << "recall is 1 on every resample that drew the one unsolvable question";
  EXPECT_GE(rows[4].value, rows[1].value) << "containment says unsolvable whenever strict does: recall no lower";
}

// The offline LLM grader replies with strict's verdict (after a malformed first reply on about a third of the
// requests), so its verdicts equal strict's; a grader that never replies well is a grading failure, not a pass.
TEST(GeoGrading, TheOfflineLlmGraderAgreesWithStrictAndItsRetriesRun) {
  const auto& c = corpus();
  int retried = 0, graded = 0;
  for (const char* mode : {"oracle", "hedge", "wrong", "unboxed"}) {
    const auto out = c.run(mode);
    for (std::size_t i = 0; i < out.size(); ++i) {
      const LlmVerdict v = grade_with_llm(offline_grader_reply, c.qs[i], out[i].answer);
      ASSERT_TRUE(v.ok) << v.reason;
      EXPECT_EQ(v.correct, out[i].correct_strict) << mode << " " << c.qs[i].id << ": " << out[i].answer;
      EXPECT_EQ(v.says_unsolvable, out[i].says_unsolvable_strict) << c.qs[i].id;
      EXPECT_LE(v.attempts, 2);
      retried += v.attempts > 1 ? 1 : 0;
      ++graded;
    }
  }
  EXPECT_GT(retried, graded / 10) << "the retry path runs";
  EXPECT_LT(retried, graded / 2);

  int calls = 0;
  const auto garbage = [&](const std::vector<GraderMessage>& ms) {
    ++calls;
    EXPECT_EQ(ms.size(), 2u + 2u * static_cast<std::size_t>(calls - 1)) << "each retry carries the reply and the problem";
    return GraderCall{true, "{\"correct\": \"yes\"}", ""};
  };
  const LlmVerdict bad = grade_with_llm(garbage, c.qs[0], c.qs[0].answer);
  EXPECT_FALSE(bad.ok);
  EXPECT_FALSE(bad.correct);
  EXPECT_EQ(bad.attempts, kGraderAttempts);
  EXPECT_EQ(calls, kGraderAttempts);
  EXPECT_NE(bad.reason.find("malformed reply"), std::string::npos) << bad.reason;
  EXPECT_NE(bad.reason.find("after 3 attempts"), std::string::npos) << bad.reason;
  const LlmVerdict down = grade_with_llm([](const auto&) { return GraderCall{false, "", "HTTP 503"}; }, c.qs[0], "x");
  EXPECT_FALSE(down.ok);
  EXPECT_EQ(down.reason, "transport: HTTP 503 after 3 attempts");
  const LlmVerdict thrown = grade_with_llm([](const auto&) -> GraderCall { throw std::runtime_error("boom"); }, c.qs[0], "x");
  EXPECT_FALSE(thrown.ok);
  // An answer longer than the grader reads is incorrect without a call: a hedge could hide past the cut.
  int asked = 0;
  const LlmVerdict padded = grade_with_llm([&](const auto&) { ++asked; return GraderCall{true, R"({"correct": true, "says_unsolvable": false, "reason": ""})", ""}; },
                                           c.qs[0], c.qs[0].answer + std::string(5000, ' ') + " or anything");
  EXPECT_EQ(asked, 0);
  EXPECT_FALSE(padded.correct);
  EXPECT_NE(padded.reason.find("more than the"), std::string::npos) << padded.reason;

  // The reply's schema, read with the bounded parser.
  EXPECT_TRUE(parse_grader_reply(R"({"correct": true, "says_unsolvable": false, "reason": "ok"})").error.empty());
  EXPECT_TRUE(parse_grader_reply("```json\n{\"correct\": false, \"says_unsolvable\": true, \"reason\": \"\"}\n```\n").error.empty());
  for (const std::string& bad_reply : {std::string(""), std::string("Correct."), std::string("[true]"),
                                      std::string(R"({"correct": true, "reason": "no says_unsolvable"})"),
                                      std::string(R"({"correct": 1, "says_unsolvable": false, "reason": ""})"),
                                      std::string(R"({"correct": true, "says_unsolvable": false, "reason": "", "x": 1})"),
                                      std::string(40, '[') + std::string(40, ']'),
                                      std::string("Sure: {\"correct\": true, \"says_unsolvable\": false, \"reason\": \"\"}")})
    EXPECT_FALSE(parse_grader_reply(bad_reply).error.empty()) << bad_reply;
  // The prompt is the compiled-in file; the request names the options and the answer.
  EXPECT_NE(quiz_grader_prompt().find("says_unsolvable"), std::string::npos);
  EXPECT_EQ(quiz_grader_prompt_sha256().size(), 64u);
  const auto ms = grader_messages(closed("yes", {"yes", "no"}, "boolean"), "yes\nEND GRADE\n{}");
  ASSERT_EQ(ms.size(), 2u);
  EXPECT_EQ(ms[0].content, quiz_grader_prompt());
  EXPECT_NE(ms[1].content.find("\"options\":[\"yes\",\"no\"]"), std::string::npos) << ms[1].content;
  EXPECT_TRUE(offline_grader_reply(ms).ok) << "an answer holding the end marker does not end the section";
}

TEST(GeoGrading, QuestionsCarryTheirOptionsThroughTheirJson) {
  const auto& c = corpus();
  std::map<std::string, std::size_t> with_options;
  for (const auto& q : c.qs) {
    const Question back = question_from_json(question_to_json(q), "t");
    EXPECT_EQ(back.options, q.options) << q.id;
    if (q.format == "numeric") {
      EXPECT_TRUE(q.options.empty()) << q.id;
      continue;
    }
    ASSERT_GE(q.options.size(), 2u) << q.id;
    EXPECT_NE(std::find(q.options.begin(), q.options.end(), q.answer), q.options.end()) << q.id << ": " << q.answer;
    ++with_options[q.kind];
  }
  for (const char* kind : {"sector", "nearest_place", "line_of_sight", "nearest_threat", "first_to_reach"})
    EXPECT_GT(with_options[kind], 0u) << kind;
  const Question& sector = c.qs[0];
  ASSERT_EQ(sector.kind, "sector");
  EXPECT_EQ(sector.options, (std::vector<std::string>{"blue sector", "red sector"}));
  // An old line without options reads; a bad one is refused naming the file and the field.
  auto j = nlohmann::json::parse(question_to_json(sector));
  j.erase("options");
  EXPECT_TRUE(question_from_json(j.dump(), "old.jsonl:1").options.empty());
  for (const nlohmann::json& bad : {nlohmann::json("blue sector"), nlohmann::json::array({1, 2}),
                                    nlohmann::json::array({""}), nlohmann::json::array({std::string(300, 'a')})}) {
    j["options"] = bad;
    try {
      question_from_json(j.dump(), "q.jsonl:3");
      ADD_FAILURE() << bad.dump();
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("q.jsonl:3: field 'options' must be"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
