// Batch runs (docs/LLM.md "Batch"): a run with --batch plays every scenario up to its next model call, submits the
// wave through the provider's batch endpoints (or exports it), and `batch poll` / `batch ingest` fill the completion
// cache and continue it, wave by wave, to a run byte-identical to the online one given the same answers, priced at
// llm.batch_discount. The server here implements OpenAI's /v1/files, /v1/batches and file content, and Anthropic's
// /v1/messages/batches and results, as their API references describe them; its answers are written by
// OfflineCompletionClient, the same for a call online and in a batch.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <httplib.h>

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "advplan/core/error.hpp"
#include "advplan/llm/batch.hpp"
#include "advplan/policy/llm_contract.hpp"
#include "support/cli.hpp"
#include "support/fixtures.hpp"
#include "support/messages_server.hpp"

namespace advplan {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using namespace advplan::testing;

int tokens(const std::string& s) { return static_cast<int>((s.size() + 3) / 4); }

/// The answer to a chat-completions body, with usage.
json chat_answer(const json& body) {
  const CompletionRequest req = messages_request(body);
  const std::string text = OfflineCompletionClient().complete(req).text;
  int prompt = 0;
  for (const auto& m : req.messages) prompt += tokens(m.content);
  return {{"id", "c"}, {"object", "chat.completion"}, {"model", body.value("model", "")},
          {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}}, {"finish_reason", "stop"}}}},
          {"usage", {{"prompt_tokens", prompt}, {"completion_tokens", tokens(text)}}}};
}

/// The answer to a Messages body, with usage.
json message_answer(const json& body) {
  const CompletionRequest req = messages_request(body);
  const std::string text = OfflineCompletionClient().complete(req).text;
  int prompt = 0;
  for (const auto& m : req.messages) prompt += tokens(m.content);
  return {{"id", "msg"}, {"type", "message"}, {"role", "assistant"}, {"model", body.value("model", "")},
          {"content", {{{"type", "text"}, {"text", text}}}}, {"stop_reason", "end_turn"},
          {"usage", {{"input_tokens", prompt}, {"output_tokens", tokens(text)}}}};
}

/// Online endpoints and batch endpoints of both providers on 127.0.0.1. A batch is in progress at its first status
/// request and ended at the next.
class BatchServer {
 public:
  BatchServer() {
    svr_.Post("/v1/chat/completions", [](const httplib::Request& q, httplib::Response& r) {
      r.set_content(chat_answer(json::parse(q.body)).dump(), "application/json");
    });
    svr_.Post("/v1/messages", [](const httplib::Request& q, httplib::Response& r) {
      r.set_content(message_answer(json::parse(q.body)).dump(), "application/json");
    });
    svr_.Post("/v1/files", [this](const httplib::Request& q, httplib::Response& r) { upload(q, r); });
    svr_.Post("/v1/batches", [this](const httplib::Request& q, httplib::Response& r) { create_openai(q, r); });
    svr_.Get(R"(/v1/batches/([A-Za-z0-9_]+))", [this](const httplib::Request& q, httplib::Response& r) { status(q, r, false); });
    svr_.Get(R"(/v1/files/([A-Za-z0-9_-]+)/content)", [this](const httplib::Request& q, httplib::Response& r) {
      std::lock_guard lock(mu_);
      r.set_content(files_[q.matches[1].str()], "application/jsonl");
    });
    svr_.Post("/v1/messages/batches", [this](const httplib::Request& q, httplib::Response& r) { create_anthropic(q, r); });
    svr_.Get(R"(/v1/messages/batches/([A-Za-z0-9_]+))", [this](const httplib::Request& q, httplib::Response& r) { status(q, r, true); });
    svr_.Get(R"(/v1/messages/batches/([A-Za-z0-9_]+)/results)", [this](const httplib::Request& q, httplib::Response& r) {
      std::lock_guard lock(mu_);
      r.set_content(results_[q.matches[1].str()], "application/binary");
    });
    port_ = svr_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    while (!svr_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~BatchServer() {
    svr_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int batches() const { return batches_; }

 private:
  void upload(const httplib::Request& q, httplib::Response& r) {
    if (!q.has_file("file") || q.get_file_value("purpose").content != "batch") {
      r.status = 400;
      r.set_content(R"({"error":{"message":"file and purpose batch are required"}})", "application/json");
      return;
    }
    std::lock_guard lock(mu_);
    const std::string id = "file-" + std::to_string(files_.size() + 1);
    files_[id] = q.get_file_value("file").content;
    r.set_content(json{{"id", id}, {"object", "file"}, {"purpose", "batch"}}.dump(), "application/json");
  }
  void create_openai(const httplib::Request& q, httplib::Response& r) {
    const json b = json::parse(q.body);
    std::lock_guard lock(mu_);
    std::string out;
    for (const std::string& line : lines(files_[b.at("input_file_id").get<std::string>()])) {
      const json l = json::parse(line);
      if (l.at("method") != "POST" || l.at("url") != "/v1/chat/completions") throw std::runtime_error("bad line");
      out += json{{"id", "r"}, {"custom_id", l.at("custom_id")},
                  {"response", {{"status_code", 200}, {"request_id", "q"}, {"body", chat_answer(l.at("body"))}}},
                  {"error", nullptr}}.dump() + "\n";
    }
    const std::string id = "batch_" + std::to_string(++batches_);
    files_["file-out-" + id] = out;
    polls_[id] = 0;
    r.set_content(json{{"id", id}, {"object", "batch"}, {"status", "validating"}}.dump(), "application/json");
  }
  void create_anthropic(const httplib::Request& q, httplib::Response& r) {
    const json b = json::parse(q.body);
    std::lock_guard lock(mu_);
    std::string out;
    for (const json& req : b.at("requests"))
      out += json{{"custom_id", req.at("custom_id")},
                  {"result", {{"type", "succeeded"}, {"message", message_answer(req.at("params"))}}}}.dump() + "\n";
    const std::string id = "msgbatch_" + std::to_string(++batches_);
    results_[id] = out;
    polls_[id] = 0;
    r.set_content(json{{"id", id}, {"type", "message_batch"}, {"processing_status", "in_progress"}, {"results_url", nullptr}}.dump(),
                  "application/json");
  }
  void status(const httplib::Request& q, httplib::Response& r, bool anthropic) {
    std::lock_guard lock(mu_);
    const std::string id = q.matches[1].str();
    const bool ended = ++polls_[id] > 1;
    json j = {{"id", id}};
    if (anthropic) {
      j["processing_status"] = ended ? "ended" : "in_progress";
      j["results_url"] = ended ? json(url() + "/v1/messages/batches/" + id + "/results") : json();
    } else {
      j["status"] = ended ? "completed" : "in_progress";
      if (ended) j["output_file_id"] = "file-out-" + id;
    }
    r.set_content(j.dump(), "application/json");
  }
  static std::vector<std::string> lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);)
      if (!l.empty()) out.push_back(l);
    return out;
  }

  httplib::Server svr_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::map<std::string, std::string> files_, results_;
  std::map<std::string, int> polls_;
  std::atomic<int> batches_{0};
};

std::string config(const TempDir& dir, const BatchServer& s, const std::string& provider) {
  return small_config(dir, {seeds("[100, 101]"),
                            {"conditions: [single, greedy@8, constraint@8, llm_offline, {label: council, blue: council, red: greedy@8}]",
                             "conditions: [single, llm_live]"},
                            {"studies: {rubric: true, framing: true, components: true}", "studies: {rubric: false, framing: false, components: false}"},
                            {"llm: {endpoint: \"\", model: \"\",",
                             "llm: {provider: " + provider + ", endpoint: \"" + s.url() + "\", model: m, prices: {m: {input_per_mtok: 2, output_per_mtok: 8}},"}});
}

std::string run_args(const std::string& cfg, const std::string& out, const std::string& cache) {
  return "run " + quote(cfg) + " --out " + quote(out) + " --llm-cache " + quote(cache) + " --progress none --threads 2";
}

/// The batch run continued with `step` (poll or ingest) until it ends; the number of waves.
int finish(const std::function<CommandResult()>& step, const TempDir& /*dir*/) {
  for (int i = 0; i < 12; ++i) {
    const CommandResult x = step();
    if (x.status == 0) return i;
    EXPECT_EQ(x.status, 75) << x.err;
    if (x.status != 75) return -1;
  }
  ADD_FAILURE() << "the batch run did not end within 12 steps";
  return -1;
}

void expect_batch_run(const std::string& provider) {
  TempDir dir("batch-" + provider);
  BatchServer server;
  const std::string cfg = config(dir, server, provider);
  ASSERT_EQ(advplan(run_args(cfg, dir / "online", dir / "c1"), dir).status, 0);
  const CommandResult first = advplan(run_args(cfg, dir / "batch", dir / "c2") + " --batch", dir);
  ASSERT_EQ(first.status, 75) << first.err;
  EXPECT_THAT(first.err, HasSubstr("--resume` polls them"));
  EXPECT_GE(server.batches(), 1);
  // The same command with --resume: the first poll finds the batch in progress, the next stores its answers and plays
  // the run to its next wave or its end.
  const int polls = finish([&] { return advplan(run_args(cfg, dir / "batch", dir / "c2") + " --batch --resume", dir); }, dir);
  EXPECT_GE(polls, 1);
  EXPECT_EQ(compare_runs(dir / "online", dir / "batch"), "");
  const json meta = json::parse(read_file(dir / "batch/run_metadata.json"));
  ASSERT_FALSE(meta["llm_usage"].empty());
  for (const json& u : meta["llm_usage"]) {
    EXPECT_TRUE(u["batch"].get<bool>());
    const double full = (u["prompt_tokens"].get<double>() * 2 + u["completion_tokens"].get<double>() * 8) / 1e6;
    EXPECT_NEAR(u["cost_usd"].get<double>(), 0.5 * full, 1e-12);
    EXPECT_GT(full, 0);
  }
}

// ctest: slow
TEST(BatchRun, AnOpenAiBatchRunEndsInTheBytesOfTheOnlineRunAtHalfPrice) { expect_batch_run("openai"); }

// ctest: slow
TEST(BatchRun, AnAnthropicBatchRunEndsInTheBytesOfTheOnlineRunAtHalfPrice) { expect_batch_run("anthropic"); }

// --batch-export writes the wave in the provider's input format; results the user got are read from files
// (--batch-results).
// ctest: slow
TEST(BatchRun, AnExportedWaveIngestedFromResultsFilesEndsInTheOnlineBytes) {
  TempDir dir("batch-export");
  BatchServer server;
  const std::string cfg = config(dir, server, "openai");
  ASSERT_EQ(advplan(run_args(cfg, dir / "online", dir / "c1"), dir).status, 0);
  const CommandResult first = advplan(run_args(cfg, dir / "batch", dir / "c2") + " --batch-export " + quote(dir / "x"), dir);
  ASSERT_EQ(first.status, 75) << first.err;
  EXPECT_EQ(server.batches(), 0);  // nothing submitted
  int wave = 1;
  const int steps = finish(
      [&] {
        std::string results;
        std::istringstream in(read_file(dir / ("x/wave-" + std::to_string(wave) + "-0.jsonl")));
        for (std::string line; std::getline(in, line);) {
          const json l = json::parse(line);
          results += json{{"custom_id", l["custom_id"]},
                          {"response", {{"status_code", 200}, {"body", chat_answer(l["body"])}}},
                          {"error", nullptr}}.dump() + "\n";
        }
        const std::string file = dir / ("results-" + std::to_string(wave++) + ".jsonl");
        write_file(file, results);
        return advplan(run_args(cfg, dir / "batch", dir / "c2") + " --batch-export " + quote(dir / "x") +
                           " --resume --batch-results " + quote(file), dir);
      },
      dir);
  EXPECT_GE(steps, 0);
  EXPECT_EQ(compare_runs(dir / "online", dir / "batch"), "");
}

TEST(BatchResults, AHostileResultsFileIsRefusedNamingTheLine) {
  const std::string key(64, 'a');
  EXPECT_THROW(batch::read_results(LlmProvider::openai, "{\"custom_id\":\"../x\"}\n", "r.jsonl", ""), IoError);
  try {
    batch::read_results(LlmProvider::anthropic, "\n{\"custom_id\":\"" + key + "\",\"result\":{\"type\":\"weird\"}}\n", "r.jsonl", "");
    ADD_FAILURE();
  } catch (const IoError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("r.jsonl: line 2"));
  }
  const auto errored = batch::read_results(
      LlmProvider::openai, "{\"custom_id\":\"" + key + "\",\"response\":null,\"error\":{\"code\":\"x\",\"message\":\"expired\"}}", "r", "");
  ASSERT_EQ(errored.size(), 1u);
  EXPECT_FALSE(errored[0].reply.ok);
  EXPECT_THROW(batch::read_results(LlmProvider::openai, std::string(3, '{'), "r", ""), IoError);
}

// A request the batch failed for good (a 400) fails its row, as online, instead of being asked in every wave.
// ctest: slow
TEST(BatchRun, ARequestTheBatchFailedForGoodFailsItsRowAndTheRunEnds) {
  TempDir dir("batch-failed");
  BatchServer server;
  const std::string cfg = config(dir, server, "openai");
  ASSERT_EQ(advplan(run_args(cfg, dir / "batch", dir / "c") + " --batch-export " + quote(dir / "x"), dir).status, 75);
  std::string results;
  std::istringstream in(read_file(dir / "x/wave-1-0.jsonl"));
  for (std::string line; std::getline(in, line);)
    results += json{{"custom_id", json::parse(line)["custom_id"]},
                    {"response", {{"status_code", 400}, {"body", {{"error", {{"message", "bad"}}}}}}},
                    {"error", nullptr}}.dump() + "\n";
  write_file(dir / "r.jsonl", results);
  const CommandResult x = advplan(run_args(cfg, dir / "batch", dir / "c") + " --batch --resume --batch-results " +
                                      quote(dir / "r.jsonl"), dir);
  EXPECT_EQ(x.status, 0) << x.err;
  EXPECT_THAT(read_file(dir / "batch/per_scenario.csv"), HasSubstr("batch request failed"));
}

TEST(BatchFlags, ResultsWithoutAWaitingWaveAreRefused) {
  TempDir dir("batch-nowave");
  BatchServer server;
  const std::string cfg = config(dir, server, "openai");
  write_file(dir / "r.jsonl", "");
  const CommandResult x = advplan(run_args(cfg, dir / "r", dir / "c") + " --batch-results " + quote(dir / "r.jsonl"), dir);
  expect_one_line_error(x);
}

TEST(BatchFlags, BatchWithoutACacheIsRefusedBeforeAnyWork) {
  TempDir dir("batch-nocache");
  BatchServer server;
  const std::string cfg = config(dir, server, "openai");
  const CommandResult x = advplan("run " + quote(cfg) + " --out " + quote(dir / "r") + " --batch --progress none", dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr("--llm-cache"));
}

}  // namespace
}  // namespace advplan
