// End to end: `advplan map`, `tool`, `questions` and `quiz` (docs/GEO.md), with the offline scripted agent and
// the example Python exec: agent (experiments/geo_agent.py).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <set>
#include <mutex>

#include <atomic>
#include <chrono>
#include <thread>

#include <nlohmann/json.hpp>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>
#include <vector>

#include <sys/stat.h>

#include "advplan/io/sha256.hpp"
#include "support/chat_server.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {
using nlohmann::json;
using testing::shell_quote;
using ::testing::HasSubstr;
using ::testing::Not;

testing::CommandResult cli(const std::string& args, const testing::TempDir& dir) {
  return testing::run_command(shell_quote(ADVPLAN_BINARY) + " " + args, dir);
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}

TEST(GeoCli, MapWritesGeoJsonAndToolAnswersOrFailsWithASentence) {
  testing::TempDir dir("geo-cli");
  const auto m = cli("map maritime-103 --out " + shell_quote(dir / "m.geojson"), dir);
  ASSERT_EQ(m.status, 0) << m.err;
  const json g = json::parse(testing::read_file(dir / "m.geojson"));
  EXPECT_EQ(g["type"], "FeatureCollection");
  EXPECT_GT(g["features"].size(), 20u);

  const auto ok = cli("tool route --scenario maritime-103 --args " +
                          shell_quote(R"({"from":"b-frg-1","to":"place-1","avoid":["RED"]})"),
                      dir);
  ASSERT_EQ(ok.status, 0) << ok.err;
  const json r = json::parse(ok.out);
  EXPECT_TRUE(r["ok"].get<bool>());
  EXPECT_TRUE(r["result"].contains("feasible"));

  const auto bad = cli("tool route --scenario maritime-103 --args " + shell_quote(R"({"from":"b-frg-1","to":"atlantis"})"), dir);
  EXPECT_EQ(bad.status, 1);
  EXPECT_FALSE(json::parse(bad.out)["ok"].get<bool>());
  EXPECT_NE(bad.err.find("atlantis"), std::string::npos) << bad.err;
  EXPECT_EQ(lines(bad.err).size(), 1u) << bad.err;

  const auto unknown = cli("map nowhere-7", dir);
  EXPECT_NE(unknown.status, 0);
  EXPECT_NE(unknown.err.find("nowhere-7"), std::string::npos) << unknown.err;
}

TEST(GeoCli, PlotDrawsAMap) {
  testing::TempDir dir("geo-plot");
  if (testing::run_command("/usr/bin/python3 -c 'import matplotlib, numpy'", dir).status != 0)
    GTEST_SKIP() << "/usr/bin/python3 has no matplotlib";
  ASSERT_EQ(cli("map humanitarian-110 --out " + shell_quote(dir / "h.geojson"), dir).status, 0);
  const auto r = testing::run_command("/usr/bin/python3 " + shell_quote(std::string(ADVPLAN_SOURCE_DIR) + "/experiments/plot.py") +
                                          " map " + shell_quote(dir / "h.geojson") + " --out " + shell_quote(dir / "fig"),
                                      dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string png = testing::read_file(dir / "fig/map_h.png");
  ASSERT_GT(png.size(), 8u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  EXPECT_NE(testing::read_file(dir / "fig/map_h.svg").find("<svg"), std::string::npos);
  const auto bad = testing::run_command("/usr/bin/python3 " + shell_quote(std::string(ADVPLAN_SOURCE_DIR) + "/experiments/plot.py") +
                                            " map " + shell_quote(dir / "missing.geojson"),
                                        dir);
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("missing.geojson"), std::string::npos) << bad.err;
}

TEST(GeoCli, AnExecQuizAgentNeverSeesTheLiveModelsKey) {
  // The agent records its environment and advplan's (/proc/$PPID/environ), then answers as the example agent.
  testing::TempDir dir("geo-quiz-key");
  const std::string cfg = dir / "small.yaml", q = dir / "q.jsonl", seen = dir / "seen.txt", agent = dir / "agent.sh";
  {
    std::ofstream(cfg) << "name: small\nterrain: geo\ncorpus: {templates: [urban], seeds: [100, 100], template_dir: "
                       << ADVPLAN_SOURCE_DIR << "/configs/templates}\nconditions: [single]\n"
                       << "llm: {api_key_env: ADVPLAN_TEST_QUIZ_KEY}\n";
  }
  testing::write_file(agent, "#!/bin/sh\n{ tr '\\0' '\\n' < /proc/$PPID/environ; echo ==; env; } >> " + shell_quote(seen) +
                                 "\nexec " + shell_quote(testing::python()) + " " +
                                 shell_quote(std::string(ADVPLAN_SOURCE_DIR) + "/experiments/geo_agent.py") + "\n");
  ASSERT_EQ(::chmod(agent.c_str(), 0755), 0);
  ASSERT_EQ(cli("questions " + shell_quote(cfg) + " --out " + shell_quote(q), dir).status, 0);
  const auto r = testing::run_command("ADVPLAN_LLM_API_KEY=sk-quiz-default ADVPLAN_TEST_QUIZ_KEY=sk-quiz-named " +
                                          shell_quote(testing::kBinary) + " quiz " + shell_quote(cfg) + " --questions " +
                                          shell_quote(q) + " --agent " + shell_quote("exec:" + agent),
                                      dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string text = testing::read_file(seen);
  // Not printed on failure: the environment may hold the tester's own secrets.
  ASSERT_NE(text.find("ADVPLAN_POLICY_TOKEN="), std::string::npos) << "the agent did not record its environment";
  EXPECT_EQ(text.find("sk-quiz-default"), std::string::npos) << "ADVPLAN_LLM_API_KEY was readable";
  EXPECT_EQ(text.find("sk-quiz-named"), std::string::npos) << "the variable llm.api_key_env names was readable";
}

TEST(GeoCli, QuestionsAndQuizEndToEndWithTheScriptedAndPythonAgents) {
  testing::TempDir dir("geo-quiz");
  const std::string cfg = dir / "small.yaml";
  {
    std::ofstream(cfg) << "name: small\nterrain: geo\ncorpus: {templates: [urban, maritime, mixed, air-defense, "
                          "humanitarian], seeds: [100, 102], template_dir: "
                       << ADVPLAN_SOURCE_DIR << "/configs/templates}\nconditions: [single]\n";
  }
  const std::string q = dir / "q.jsonl";
  const auto gen = cli("questions " + shell_quote(cfg) + " --out " + shell_quote(q), dir);
  ASSERT_EQ(gen.status, 0) << gen.err;
  const auto qs = lines(testing::read_file(q));
  EXPECT_GT(qs.size(), 100u);
  for (const auto& l : qs) {
    const json j = json::parse(l);
    EXPECT_TRUE(j.contains("tier") && j.contains("categories") && j.contains("answer")) << l;
  }
  auto quiz = [&](const std::string& agent) {
    const auto r = cli("quiz " + shell_quote(cfg) + " --questions " + shell_quote(q) + " --agent " + shell_quote(agent) +
                           " --out " + shell_quote(dir / "r.jsonl"),
                       dir);
    EXPECT_EQ(r.status, 0) << agent << ": " << r.err;
    // The strict block, keyed by group, without the grading column: group,n,correct,accuracy,ci_low,...
    std::map<std::string, std::vector<std::string>> rows;
    for (const auto& l : lines(r.out)) {
      std::vector<std::string> cells;
      std::stringstream ss(l);
      for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
      if (cells[0] == "strict") rows[cells[1]] = std::vector<std::string>(cells.begin() + 1, cells.end());
    }
    return rows;
  };
  const auto oracle = quiz("scripted");
  ASSERT_TRUE(oracle.contains("overall"));
  EXPECT_EQ(oracle.at("overall")[3], "1.0000");
  EXPECT_NE(oracle.at("overall")[6], "0.000");  // the scripted agent really calls the tools
  for (const char* g : {"tier 1", "tier 2", "tier 3", "category 7"}) EXPECT_TRUE(oracle.contains(g)) << g;
  const auto verbose = quiz("scripted:verbose");
  EXPECT_EQ(verbose.at("overall")[3], "0.0000");
  EXPECT_EQ(verbose.at("overall")[7], verbose.at("overall")[1]);  // every question ran out of budget
  for (const auto& l : lines(testing::read_file(dir / "r.jsonl")))
    EXPECT_EQ(json::parse(l)["reason"], "budget of 10 steps exhausted");

  const auto py = quiz("exec:python3 " + std::string(ADVPLAN_SOURCE_DIR) + "/experiments/geo_agent.py");
  ASSERT_TRUE(py.contains("overall"));
  EXPECT_GT(std::stod(py.at("overall")[3]), 0.9);
  const auto bad = cli("quiz " + shell_quote(cfg) + " --questions " + shell_quote(q) + " --agent carrier-pigeon", dir);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("carrier-pigeon"), std::string::npos) << bad.err;
}

/// The summary CSV's rows as grading -> group -> cells after the grading column (group,n,correct,accuracy,...).
std::map<std::string, std::map<std::string, std::vector<std::string>>> summary_blocks(const std::string& csv) {
  std::map<std::string, std::map<std::string, std::vector<std::string>>> out;
  for (const auto& l : lines(csv)) {
    std::vector<std::string> cells;
    std::stringstream ss(l);
    for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
    if (cells.size() >= 2) out[cells[0]][cells[1]] = std::vector<std::string>(cells.begin() + 1, cells.end());
  }
  return out;
}

// Every grading mode in one run: a hedging agent (scripted:hedge) graded strict, by containment and by the offline
// LLM grader. The summary has a block per mode (strict 0 on the sector questions, containment all of them), the
// per-question lines carry every verdict, --unsolvable writes the precision/recall/F1 rows, --grading picks the
// mode of `correct`, and the bytes do not change from one run to the next.
TEST(GeoCli, QuizReportsEveryGradingModeAndTheUnsolvableScores) {
  testing::TempDir dir("geo-grading");
  const std::string cfg = dir / "six.yaml";
  std::ofstream(cfg) << "name: six\ncorpus: {templates: [urban, maritime, mixed], seeds: [100, 101], template_dir: "
                     << ADVPLAN_SOURCE_DIR << "/configs/templates}\nconditions: [single]\n";
  ASSERT_EQ(cli("questions " + shell_quote(cfg) + " --out " + shell_quote(dir / "q.jsonl"), dir).status, 0);
  auto quiz = [&](const std::string& agent, const std::string& extra, const std::string& tag) {
    const auto r = cli("quiz " + shell_quote(cfg) + " --questions " + shell_quote(dir / "q.jsonl") + " --agent " + agent +
                           " --out " + shell_quote(dir / (tag + ".jsonl")) + " --summary " +
                           shell_quote(dir / (tag + ".csv")) + " --unsolvable " + shell_quote(dir / (tag + "_u.csv")) +
                           " " + extra,
                       dir);
    EXPECT_EQ(r.status, 0) << r.err;
    return r;
  };
  quiz("scripted:hedge", "--grader llm_offline", "hedge");
  const std::string csv = testing::read_file(dir / "hedge.csv");
  EXPECT_EQ(lines(csv)[0],
            "grading,group,n,correct,accuracy,ci_low,ci_high,mean_steps,budget_exhausted,grader_prompt_sha256");
  const auto blocks = summary_blocks(csv);
  ASSERT_TRUE(blocks.contains("strict") && blocks.contains("containment") && blocks.contains("llm")) << csv;
  EXPECT_EQ(blocks.at("strict").at("category 1")[1], "6");
  EXPECT_EQ(blocks.at("strict").at("category 1")[2], "0") << "strict: the hedge names both sectors";
  EXPECT_EQ(blocks.at("containment").at("category 1")[2], "6") << "containment: 6 of 6 by hedging";
  EXPECT_EQ(blocks.at("strict").at("overall")[2], "0");
  EXPECT_GT(std::stoi(blocks.at("containment").at("overall")[2]), std::stoi(blocks.at("containment").at("overall")[1]) / 2);
  EXPECT_EQ(blocks.at("llm").at("overall")[2], "0") << "the offline grader gives strict's verdicts";
  EXPECT_EQ(blocks.at("llm").at("overall")[8], io::sha256_hex(testing::read_file(std::string(ADVPLAN_SOURCE_DIR) +
                                                                                   "/configs/prompts/quiz_grader.txt")));
  EXPECT_EQ(blocks.at("strict").at("overall").size(), 8u) << "no prompt hash on the strict rows";
  const auto rs = lines(testing::read_file(dir / "hedge.jsonl"));
  int retried = 0;
  for (const auto& l : rs) {
    const json j = json::parse(l);
    EXPECT_EQ(j["grading"], "strict");
    EXPECT_EQ(j["correct"], j["correct_strict"]);
    EXPECT_EQ(j["correct_llm"], j["correct_strict"]) << l;
    EXPECT_EQ(j["grader"], "llm_offline");
    EXPECT_EQ(j["boxed"], true);
    EXPECT_NE(j["answer"].get<std::string>().find(" or "), std::string::npos) << l;
    retried += j["grader_attempts"].get<int>() > 1 ? 1 : 0;
  }
  EXPECT_GT(retried, 0) << "the offline grader's first malformed replies were retried";
  const auto u = lines(testing::read_file(dir / "hedge_u.csv"));
  ASSERT_EQ(u.size(), 10u);
  EXPECT_EQ(u[0], "grading,metric,value,ci_low,ci_high,k,n");
  EXPECT_EQ(u[1].substr(0, 17), "strict,precision,");
  EXPECT_THAT(u[5], HasSubstr("containment,recall,1.0000,1.0000,1.0000,")) << "the hedge names unsolvable on every unsolvable question";

  // The same run again: the same bytes. --grading containment: `correct` is containment's, the numbers unchanged.
  quiz("scripted:hedge", "--grader llm_offline", "again");
  EXPECT_EQ(testing::read_file(dir / "again.jsonl"), testing::read_file(dir / "hedge.jsonl"));
  EXPECT_EQ(testing::read_file(dir / "again.csv"), csv);
  EXPECT_EQ(testing::read_file(dir / "again_u.csv"), testing::read_file(dir / "hedge_u.csv"));
  quiz("scripted:hedge", "--grading containment", "cont");
  for (const auto& l : lines(testing::read_file(dir / "cont.jsonl"))) {
    const json j = json::parse(l);
    EXPECT_EQ(j["correct"], j["correct_containment"]);
    EXPECT_FALSE(j.contains("correct_llm"));
  }
  EXPECT_FALSE(summary_blocks(testing::read_file(dir / "cont.csv")).contains("llm"));
  EXPECT_EQ(summary_blocks(testing::read_file(dir / "cont.csv")).at("strict"), blocks.at("strict"));
  quiz("scripted:hedge", "--grading llm --grader llm_offline", "llm");
  for (const auto& l : lines(testing::read_file(dir / "llm.jsonl"))) EXPECT_EQ(json::parse(l)["grading"], "llm");

  // The unboxed fallback end to end: graded from the final message, marked boxed: false.
  quiz("scripted:unboxed", "", "unboxed");
  for (const auto& l : lines(testing::read_file(dir / "unboxed.jsonl"))) {
    const json j = json::parse(l);
    EXPECT_EQ(j["boxed"], false);
    EXPECT_EQ(j["correct"], true) << l;
  }
  // Bad flags: one sentence each, before any agent call.
  for (const auto& [flags, want] : std::vector<std::pair<std::string, std::string>>{
           {"--grading lenient", "--grading lenient: accepted values are strict, containment and llm"},
           {"--grader gpt", "--grader gpt: expected llm:MODEL, llm (the config's llm.model) or llm_offline"},
           {"--max-connections 4", "--max-connections 4: only llm: agents run questions at once"},
           {"--unsolvable " + shell_quote(dir / "q.jsonl"), "q.jsonl: is the --questions file, which an output would overwrite"},
           {"--out " + shell_quote(dir / "s.csv") + " --summary " + shell_quote(dir / "s.csv"),
            "s.csv: given to two of --out, --summary, --unsolvable and --transcripts"}}) {
    const auto r = cli("quiz " + shell_quote(cfg) + " --questions " + shell_quote(dir / "q.jsonl") +
                           " --agent scripted " + flags,
                       dir);
    EXPECT_EQ(r.status, 1) << flags;
    EXPECT_THAT(r.err, HasSubstr(want));
  }
}

// A hostile agent's answer of \\boxed{ and 30,000 digits to every question is graded (wrong), not a crash: the quiz
// once ran std::regex over it, which recursed per character and overflowed the stack. The real binary, a real
// exec: agent.
TEST(GeoCli, AQuizAnswerOfThirtyThousandDigitsIsGradedNotACrash) {
  testing::TempDir dir("geo-digits");
  const std::string cfg = dir / "one.yaml";
  std::ofstream(cfg) << "name: one\ncorpus: {templates: [mixed], seeds: [103, 103], template_dir: " << ADVPLAN_SOURCE_DIR
                     << "/configs/templates}\nconditions: [single]\n";
  ASSERT_EQ(cli("questions " + shell_quote(cfg) + " --out " + shell_quote(dir / "q.jsonl"), dir).status, 0);
  const std::string agent = dir / "digits.py";
  std::ofstream(agent) << "import json, sys\n"
                          "for line in sys.stdin:\n"
                          "    print(json.dumps({'answer': '\\\\boxed{' + '7' * 30000 + '}'}), flush=True)\n";
  const auto r = cli("quiz " + shell_quote(cfg) + " --questions " + shell_quote(dir / "q.jsonl") + " --agent " +
                         shell_quote("exec:/usr/bin/python3 " + agent) + " --out " + shell_quote(dir / "r.jsonl"),
                     dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto qs = lines(testing::read_file(dir / "q.jsonl"));
  const auto rs = lines(testing::read_file(dir / "r.jsonl"));
  ASSERT_EQ(rs.size(), qs.size());
  for (const auto& l : rs) EXPECT_FALSE(json::parse(l)["correct"].get<bool>()) << l.substr(0, 200);
}

// Unclear errors (the hardening issue, item 23): each of these once gave a misleading or no sentence.
TEST(GeoCli, BadRepliesAndArgumentsGetTheirOwnSentence) {
  testing::TempDir dir("geo-sentences");
  const std::string cfg = dir / "one.yaml";
  std::ofstream(cfg) << "name: one\ncorpus: {templates: [mixed], seeds: [103, 103], template_dir: " << ADVPLAN_SOURCE_DIR
                     << "/configs/templates}\nconditions: [single]\n";
  ASSERT_EQ(cli("questions " + shell_quote(cfg) + " --out " + shell_quote(dir / "q.jsonl"), dir).status, 0);
  // a reply of bad UTF-8, and one nested 40 levels deep: not "not a JSON object" for both
  for (const auto& [name, body, want] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"latin1", "sys.stdout.buffer.write(b'{\"answer\": \"caf\\xe9\"}\\n')",
            "protocol: the reply is not valid UTF-8 (byte 15)"},
           {"deep", "sys.stdout.write('[' * 40 + ']' * 40 + '\\n')", "protocol: the reply JSON nests deeper than 16 levels"}}) {
    const std::string agent = dir / (name + ".py");
    std::ofstream(agent) << "import sys\nfor line in sys.stdin:\n    " << body << "\n    sys.stdout.flush()\n";
    const auto r = cli("quiz " + shell_quote(cfg) + " --questions " + shell_quote(dir / "q.jsonl") + " --agent " +
                           shell_quote("exec:/usr/bin/python3 " + agent) + " --out " + shell_quote(dir / (name + ".jsonl")),
                       dir);
    ASSERT_EQ(r.status, 0) << r.err;
    const auto rs = lines(testing::read_file(dir / (name + ".jsonl")));
    ASSERT_FALSE(rs.empty());
    EXPECT_EQ(json::parse(rs[0])["reason"], want) << name;
  }
  // an empty questions file has nothing to grade (it once reported accuracy 0 in [0, 0])
  testing::write_file(dir / "empty.jsonl", "");
  const auto e = cli("quiz " + shell_quote(cfg) + " --questions " + shell_quote(dir / "empty.jsonl") +
                         " --agent scripted",
                     dir);
  EXPECT_EQ(e.status, 1);
  EXPECT_THAT(e.err, HasSubstr("holds no question, so there is nothing to grade"));
  // a speed of 5e-324 km/h once answered "hours": null
  const auto t = cli("tool travel_time --scenario mixed-103 --config " + shell_quote(cfg) +
                         " --args '{\"from\": \"place-1\", \"to\": \"place-2\", \"speed_kmh\": 5e-324}'",
                     dir);
  EXPECT_NE(t.status, 0);
  EXPECT_THAT(t.out + t.err, HasSubstr("'speed_kmh' must be a number from 0.1 to 10000, while 5e-324 was given"));
  EXPECT_THAT(t.out, Not(HasSubstr("null")));
  // --resamples -1 was accepted
  EXPECT_NE(cli("metagame " + shell_quote(dir.path().string()) + " --resamples -1", dir).status, 0);
  EXPECT_THAT(cli("metagame " + shell_quote(dir.path().string()) + " --resamples -1", dir).err, HasSubstr("--resamples"));
}

/// llm:MODEL through a chat-completions server in the test process: it asks for list_features first (wrapped
/// in prose, as models do), then answers \\boxed{unsolvable} once it has seen an observation.
TEST(GeoCli, QuizWithAnLlmAgentOverChatCompletions) {
  std::atomic<int> calls{0}, in_flight{0}, most_in_flight{0};
  testing::LoopbackServer svr([&](const httplib::Request& req, httplib::Response& res) {
    ++calls;
    const int now = ++in_flight;
    for (int m = most_in_flight.load(); now > m && !most_in_flight.compare_exchange_weak(m, now);) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    --in_flight;
    const json body = json::parse(req.body);
    bool observed = false;
    for (const auto& m : body["messages"])
      observed = observed || m["content"].get<std::string>().starts_with("Observation for call");
    const std::string content =
        observed ? R"({"answer": "It cannot be done: \\boxed{unsolvable}"})"
                 : R"(Let me look. {"tool_call": {"id": "c1", "name": "list_features", "arguments": {"kind": "place"}}})";
    res.set_content(testing::chat_reply(content).dump(), "application/json");
  }, 8);

  testing::TempDir dir("geo-llm");
  const std::string cfg = dir / "one.yaml";
  std::ofstream(cfg) << "name: one\ncorpus: {templates: [mixed], seeds: [103, 103], template_dir: " << ADVPLAN_SOURCE_DIR
                     << "/configs/templates}\nconditions: [single]\n";
  ASSERT_EQ(cli("questions " + shell_quote(cfg) + " --out " + shell_quote(dir / "q.jsonl"), dir).status, 0);
  const auto r = testing::run_command("ADVPLAN_LLM_ENDPOINT=" + svr.url() + " " +
                                          shell_quote(ADVPLAN_BINARY) + " quiz " + shell_quote(cfg) + " --questions " +
                                          shell_quote(dir / "q.jsonl") + " --agent llm:fake --out " + shell_quote(dir / "r.jsonl"),
                                      dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const auto qs = lines(testing::read_file(dir / "q.jsonl"));
  const auto rs = lines(testing::read_file(dir / "r.jsonl"));
  ASSERT_EQ(qs.size(), rs.size());
  EXPECT_EQ(calls.load(), static_cast<int>(2 * qs.size()));
  int unsolvable = 0;
  for (std::size_t i = 0; i < rs.size(); ++i) {
    const json q = json::parse(qs[i]), o = json::parse(rs[i]);
    EXPECT_EQ(o["steps"], 1) << rs[i];
    EXPECT_EQ(o["answer"], "unsolvable") << rs[i];
    EXPECT_EQ(o["correct"].get<bool>(), q["unsolvable"].get<bool>()) << rs[i];
    unsolvable += q["unsolvable"].get<bool>() ? 1 : 0;
  }
  EXPECT_GT(unsolvable, 0);
  EXPECT_EQ(most_in_flight.load(), 1) << "one question at a time by default";

  // --max-connections 4: the questions run at once, the results in question order, byte-identical to one at a time.
  const auto r4 = testing::run_command("ADVPLAN_LLM_ENDPOINT=" + svr.url() + " " + shell_quote(ADVPLAN_BINARY) +
                                           " quiz " + shell_quote(cfg) + " --questions " + shell_quote(dir / "q.jsonl") +
                                           " --agent llm:fake --max-connections 4 --out " + shell_quote(dir / "r4.jsonl"),
                                       dir);
  ASSERT_EQ(r4.status, 0) << r4.err;
  EXPECT_GT(most_in_flight.load(), 1) << "the questions ran at once";
  EXPECT_EQ(testing::read_file(dir / "r4.jsonl"), testing::read_file(dir / "r.jsonl"));
  EXPECT_EQ(r4.out, r.out);
}

// Issue 48, item 6: an output that cannot be written is found before the work, not after it: a quiz whose --out (or
// --summary, --transcripts) lies in a missing folder asks the model nothing and fails with one sentence naming it.
TEST(GeoCli, AnUnwritableOutputFailsBeforeAnyQuestionIsAsked) {
  std::atomic<int> calls{0};
  testing::LoopbackServer svr([&](const httplib::Request&, httplib::Response& res) {
    ++calls;
    res.set_content(testing::chat_reply(R"({"answer": "\\boxed{unsolvable}"})").dump(), "application/json");
  });
  testing::TempDir dir("geo-unwritable");
  const std::string cfg = dir / "one.yaml";
  std::ofstream(cfg) << "name: one\ncorpus: {templates: [mixed], seeds: [103, 103], template_dir: " << ADVPLAN_SOURCE_DIR
                     << "/configs/templates}\nconditions: [single]\n";
  ASSERT_EQ(cli("questions " + shell_quote(cfg) + " --out " + shell_quote(dir / "q.jsonl"), dir).status, 0);
  const std::string missing = dir / "missing/r.jsonl";
  for (const std::string flag : {"--out", "--summary", "--transcripts"}) {
    const auto r = testing::run_command("ADVPLAN_LLM_ENDPOINT=" + svr.url() + " " + shell_quote(ADVPLAN_BINARY) +
                                            " quiz " + shell_quote(cfg) + " --questions " + shell_quote(dir / "q.jsonl") +
                                            " --agent llm:fake " + flag + " " + shell_quote(missing),
                                        dir);
    testing::expect_one_line_error(r);
    EXPECT_THAT(r.err, HasSubstr(flag + " " + missing + ": the folder " + (dir / "missing") + " does not exist"));
  }
  EXPECT_EQ(calls.load(), 0) << "no question was asked";
  const auto m = cli("map maritime-103 --out " + shell_quote(missing), dir);
  testing::expect_one_line_error(m);
  EXPECT_THAT(m.err, HasSubstr("does not exist"));
}

// The llm: agent's calls carry policies.quiz.generation, go through the completion cache (a second quiz asks
// nothing), and --transcripts writes one line per call: the messages sent and the reply, step by step; any agent's
// steps are transcribed the same way, its request as the message.
TEST(GeoCli, QuizTranscriptsGenerationAndCache) {
  std::atomic<int> calls{0};
  std::mutex mu;
  std::set<std::string> temperatures;
  testing::LoopbackServer svr([&](const httplib::Request& req, httplib::Response& res) {
    ++calls;
    const json body = json::parse(req.body);
    {
      std::lock_guard lock(mu);
      temperatures.insert(body["temperature"].dump());
    }
    bool observed = false;
    for (const auto& m : body["messages"])
      observed = observed || m["content"].get<std::string>().starts_with("Observation for call");
    const std::string content =
        observed ? R"({"answer": "\boxed{unsolvable}"})"
                 : R"({"tool_call": {"id": "c1", "name": "list_features", "arguments": {"kind": "place"}}})";
    res.set_content(testing::chat_reply(content).dump(), "application/json");
  });
  testing::TempDir dir("geo-quiz-transcripts");
  const std::string cfg = dir / "one.yaml";
  std::ofstream(cfg) << "name: one\ncorpus: {templates: [mixed], seeds: [103, 103], template_dir: " << ADVPLAN_SOURCE_DIR
                     << "/configs/templates}\nconditions: [single]\nllm: {generation: {temperature: 0.5}}\n"
                        "policies: {quiz: {generation: {temperature: 0.75}}}\n";
  ASSERT_EQ(cli("questions " + shell_quote(cfg) + " --out " + shell_quote(dir / "q.jsonl"), dir).status, 0);
  const auto qs = lines(testing::read_file(dir / "q.jsonl"));
  auto quiz = [&](const std::string& out) {
    return testing::run_command("ADVPLAN_LLM_ENDPOINT=" + svr.url() + " " + shell_quote(ADVPLAN_BINARY) + " quiz " +
                                    shell_quote(cfg) + " --questions " + shell_quote(dir / "q.jsonl") +
                                    " --agent llm:fake --llm-cache " + shell_quote(dir / "cache") + " --transcripts " +
                                    shell_quote(dir / out),
                                dir);
  };
  const auto a = quiz("t1.jsonl");
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(calls.load(), static_cast<int>(2 * qs.size()));
  EXPECT_EQ(temperatures, (std::set<std::string>{"0.75"}));
  const auto t = lines(testing::read_file(dir / "t1.jsonl"));
  ASSERT_EQ(t.size(), 2 * qs.size());
  for (std::size_t i = 0; i < t.size(); ++i) {
    const json j = json::parse(t[i]);
    EXPECT_EQ(j["role"], "quiz");
    EXPECT_EQ(j["policy"], "llm:fake");
    EXPECT_EQ(j["scenario_id"], json::parse(qs[i / 2])["id"]) << "the question id";
    EXPECT_EQ(j["attempt"], i % 2) << "the step within the question";
    EXPECT_EQ(j["messages"][0]["role"], "system");
    EXPECT_FALSE(j["cache_key"].get<std::string>().empty());
  }
  const auto b = quiz("t2.jsonl");
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_EQ(calls.load(), static_cast<int>(2 * qs.size())) << "the second quiz asked the model again";

  const auto s = cli("quiz " + shell_quote(cfg) + " --questions " + shell_quote(dir / "q.jsonl") +
                         " --agent scripted --transcripts " + shell_quote(dir / "s.jsonl"),
                     dir);
  ASSERT_EQ(s.status, 0) << s.err;
  const auto st = lines(testing::read_file(dir / "s.jsonl"));
  ASSERT_FALSE(st.empty());
  const json first = json::parse(st.front());
  EXPECT_EQ(first["messages"][0]["role"], "request");
  EXPECT_EQ(json::parse(first["messages"][0]["content"].get<std::string>())["question_id"], first["scenario_id"]);
  const auto bad = cli("quiz " + shell_quote(cfg) + " --questions " + shell_quote(dir / "q.jsonl") +
                           " --agent scripted --transcripts " + shell_quote(dir / "x.jsonl") + " --transcripts-mode none",
                       dir);
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("--transcripts-mode"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace advplan
