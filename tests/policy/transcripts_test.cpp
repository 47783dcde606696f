// transcripts.jsonl (docs/TRACES.md): every call of an external policy, recorded in the run in row order. The
// contract records each attempt with the messages it sent; an exec: run writes one line per exchange, without the
// request id, the same at any thread count; --transcripts errors and none narrow it.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "advplan/policy/llm_contract.hpp"
#include "advplan/llm/providers.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using nlohmann::json;
using testing::shell_quote;

/// Answers from a script, one reply per call; the offline client's plan when the script is out.
class ScriptedClient : public CompletionClient {
 public:
  explicit ScriptedClient(std::vector<std::string> replies) : replies_(std::move(replies)) {}
  Completion complete(const CompletionRequest& req) const override {
    if (next_ < replies_.size()) {
      Completion c;
      c.ok = true;
      c.text = replies_[next_++];
      c.finish_reason = "length";
      return c;
    }
    return OfflineCompletionClient().complete(req);
  }
  std::string name() const override { return "scripted"; }

 private:
  std::vector<std::string> replies_;
  mutable std::size_t next_ = 0;
};

TEST(Transcripts, TheContractRecordsEveryAttemptWithTheMessagesItSent) {
  const Scenario sc = testing::tiny_scenario();
  ScriptedClient client({"not a plan", "{\"still\": \"not a plan\"}"});
  const CompletionRequest prompt = build_blue_prompt(sc);
  const std::size_t first = prompt.messages.size();
  const ContractResult r = run_contract(client, prompt, sc, Side::Blue, 2, "p");
  ASSERT_EQ(r.transcript.calls.size(), 3u);
  // Each re-prompt sends the conversation so far: the reply and the violations are appended.
  EXPECT_EQ(r.transcript.calls[0].messages_sent, first);
  EXPECT_EQ(r.transcript.calls[1].messages_sent, first + 2);
  EXPECT_EQ(r.transcript.calls[2].messages_sent, first + 4);
  EXPECT_EQ(r.transcript.messages.size(), first + 4);
  EXPECT_EQ(r.transcript.messages[first].role, "assistant");
  EXPECT_EQ(r.transcript.messages[first].content, "not a plan");
  EXPECT_EQ(r.transcript.calls[0].reply.finish_reason, "length");
  EXPECT_FALSE(r.transcript.calls[0].accepted);
  EXPECT_FALSE(r.transcript.calls[1].accepted);
  EXPECT_EQ(r.transcript.calls[2].accepted, r.plan.has_value());
}

TEST(Transcripts, TheFinishReasonIsReadFromTheReply) {
  const Completion c = parse_chat_completion_body(
      R"({"choices":[{"message":{"role":"assistant","content":"x"},"finish_reason":"length"}]})", "");
  EXPECT_TRUE(c.ok);
  EXPECT_EQ(c.finish_reason, "length");
  EXPECT_EQ(parse_chat_completion_body(R"({"choices":[{"message":{"content":"x"}}]})", "").finish_reason, "");
}

std::vector<json> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<json> out;
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

TEST(Transcripts, AnExecRunRecordsEachExchangeInRowOrderAtAnyThreadCount) {
  testing::TempDir dir("transcripts");
  const std::string cfg = dir / "exec.yaml";
  std::ofstream(cfg) << "name: exec\nseed: 5\ncorpus: {templates: [urban, maritime], seeds: [1, 3]}\n"
                        "conditions: [{label: ext, blue: \"exec:python3 "
                     << ADVPLAN_SOURCE_DIR
                     << "/examples/policies/greedy_blue.py\", red: greedy@2}, single]\n"
                        "simulator: {replications: 10}\nbootstrap: {resamples: 20}\n"
                        "studies: {rubric: false, framing: false, components: false}\n";
  auto run = [&](const std::string& name, const std::string& flags) {
    const std::string out = dir / name;
    const auto r = testing::run_command(shell_quote(ADVPLAN_BINARY) + " run " + shell_quote(cfg) + " --out " +
                                            shell_quote(out) + " --progress none " + flags,
                                        dir);
    EXPECT_EQ(r.status, 0) << r.err;
    return out;
  };
  const std::string one = run("t1", "--threads 1");
  const std::string two = run("t2", "--threads 2");
  const auto lines = lines_of(one + "/transcripts.jsonl");
  ASSERT_EQ(lines.size(), 6u);  // one exchange per scenario: the BLUE plan is made once, whatever the conditions
  std::vector<std::string> scenarios;
  for (const json& l : lines) {
    scenarios.push_back(l.at("scenario_id").get<std::string>());
    EXPECT_EQ(l.at("role"), "blue");
    EXPECT_EQ(l.at("condition"), "");
    EXPECT_EQ(l.at("attempt"), 0);
    EXPECT_TRUE(l.at("ok").get<bool>());
    EXPECT_TRUE(l.at("accepted").get<bool>());
    ASSERT_EQ(l.at("messages").size(), 1u);
    const json request = json::parse(l.at("messages")[0].at("content").get<std::string>());
    EXPECT_FALSE(request.contains("request_id")) << "the request id numbers requests in arrival order";
    EXPECT_EQ(request.at("scenario").at("id"), l.at("scenario_id"));
    EXPECT_TRUE(json::parse(l.at("reply").get<std::string>()).contains("plan"));
  }
  std::ifstream sc_csv(one + "/scenarios.csv");
  std::string header, row;
  std::getline(sc_csv, header);
  std::vector<std::string> corpus;
  while (std::getline(sc_csv, row)) corpus.push_back(row.substr(0, row.find(',')));
  EXPECT_EQ(scenarios, corpus) << "the lines follow the rows' order";
  EXPECT_EQ(testing::compare_runs(one, two), "");
  // plans.jsonl: per scenario, each BLUE policy's plan (exec and seed), then each condition's selected RED plan.
  const auto plans = lines_of(one + "/plans.jsonl");
  ASSERT_EQ(plans.size(), 24u);
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const json& p = plans[i];
    EXPECT_EQ(p.at("scenario_id"), corpus[i / 4]);
    EXPECT_EQ(p.at("side"), i % 4 < 2 ? "BLUE" : "RED");
    EXPECT_EQ(p.at("condition"), i % 4 < 2 ? "" : i % 4 == 2 ? "ext" : "single");
    ASSERT_TRUE(p.at("plan").is_object()) << p.dump();
    EXPECT_EQ(p.at("plan").at("side"), p.at("side"));
  }
  const std::string manifest = testing::read_file(one + "/MANIFEST");
  EXPECT_NE(manifest.find("transcripts.jsonl"), std::string::npos);
  // Every exchange was accepted: errors keeps none of them; none writes no file.
  EXPECT_TRUE(lines_of(run("errors", "--threads 2 --transcripts errors") + "/transcripts.jsonl").empty());
  EXPECT_FALSE(std::filesystem::exists(run("none", "--threads 2 --transcripts none") + "/transcripts.jsonl"));
}

TEST(Transcripts, ARunWithoutExternalPoliciesWritesNone) {
  testing::TempDir dir("transcripts-none");
  const std::string cfg = dir / "plain.yaml";
  std::ofstream(cfg) << "name: plain\nseed: 5\ncorpus: {templates: [urban], seeds: [1, 2]}\n"
                        "conditions: [single, llm_offline]\nsimulator: {replications: 10}\nbootstrap: {resamples: 20}\n"
                        "studies: {rubric: false, framing: false, components: false}\n";
  const auto r = testing::run_command(shell_quote(ADVPLAN_BINARY) + " run " + shell_quote(cfg) + " --out " +
                                          shell_quote(dir / "run") + " --progress none --threads 2",
                                      dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "run/transcripts.jsonl"));
  EXPECT_FALSE(std::filesystem::exists(dir / "run/plans.jsonl")) << "plans.jsonl is opt-in without an external policy";
}

}  // namespace
}  // namespace advplan
