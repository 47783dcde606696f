// advplan against a server it did not write: llama.cpp's llama-server with a tiny random-weights model
// (scripts/real_server.sh builds both; docs/LLM.md "A real server in the tests"). The model's text is noise: the
// tests check the protocol, grammar-constrained decoding, slots, usage counts, the cache and the failure rows.
// Skipped when the server was not built, unless ADVPLAN_REQUIRE_REAL_SERVER=1 (CI sets it), which makes that a
// failure.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/cli.hpp"

namespace advplan {
namespace {
using json = nlohmann::json;
using namespace advplan::testing;

/// scripts/real_server.sh's products, in the build folder that holds the advplan under test.
const std::string kBuild = std::filesystem::path(kBinary).parent_path().string();
const std::string kServer = kBuild + "/llama/build/bin/llama-server";
const std::string kModel = kBuild + "/llama/tiny-random-qwen2.gguf";
constexpr int kSlots = 4;
constexpr int kSlotContext = 8192;  // the scenario prompt (about 3,000 tokens) and max_tokens fit in one slot

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t n = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
  ::close(fd);
  return ntohs(a.sin_port);
}

/// One llama-server on 127.0.0.1 for one test: -c is the total context of all slots, so slots x per-slot context.
class LlamaServer {
 public:
  explicit LlamaServer(const TempDir& dir) : port_(free_port()), log_(dir / "llama-server.log") {
    const std::string port = std::to_string(port_), ctx = std::to_string(kSlots * kSlotContext);
    const std::string slots = std::to_string(kSlots);
    pid_ = ::fork();
    if (pid_ == 0) {
      std::freopen(log_.c_str(), "w", stdout);
      std::freopen(log_.c_str(), "a", stderr);
      ::execl(kServer.c_str(), kServer.c_str(), "-m", kModel.c_str(), "--host", "127.0.0.1", "--port", port.c_str(),
              "-c", ctx.c_str(), "-np", slots.c_str(), "-t", "2", "--metrics", "--no-webui",
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~LlamaServer() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  /// Waits (at most 120 s) for /health to answer 200; false with the log's tail otherwise.
  bool ready(const TempDir& dir) const {
    for (int i = 0; i < 1200; ++i) {
      if (run_command("curl -sf " + endpoint() + "/health", dir).status == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  /// A counter of the server's /metrics (llamacpp:NAME), or -1.
  double metric(const TempDir& dir, const std::string& name) const {
    const auto x = run_command("curl -sf " + endpoint() + "/metrics", dir);
    const std::string key = "llamacpp:" + name + " ";
    const auto at = x.out.find("\n" + key);
    if (at == std::string::npos) return -1;
    return std::stod(x.out.substr(at + 1 + key.size()));
  }
  std::string log() const { return read_file(log_); }

 private:
  int port_;
  std::string log_;
  pid_t pid_ = -1;
};

bool have_server() { return ::access(kServer.c_str(), X_OK) == 0 && ::access(kModel.c_str(), R_OK) == 0; }

#define REQUIRE_REAL_SERVER()                                                                                   \
  do {                                                                                                          \
    if (!have_server()) {                                                                                       \
      const char* req = std::getenv("ADVPLAN_REQUIRE_REAL_SERVER");                                             \
      if (req && std::string(req) == "1") FAIL() << "llama-server was not built: bash scripts/real_server.sh";   \
      GTEST_SKIP() << "llama-server was not built (bash scripts/real_server.sh builds it)";                      \
    }                                                                                                           \
  } while (0)

/// The small config on one template and `n` seeds, against `endpoint`, with `generation` as llm.generation.
std::string real_config(const TempDir& dir, const LlamaServer& s, int n, const std::string& generation,
                        const std::string& conditions = "[single]", const std::string& extra = "") {
  const std::string range = "[100, " + std::to_string(100 + n - 1) + "]";
  return small_config(dir, {{"templates: [urban, air-defense]", "templates: [urban]"},
                            seeds(range),
                            {"conditions: [single, greedy@8, constraint@8, llm_offline, {label: council, blue: council, red: greedy@8}]",
                             "conditions: " + conditions},
                            {"studies: {rubric: true, framing: true, components: true}", "studies: {rubric: false, framing: false, components: false}\n" + extra},
                            {"llm: {endpoint: \"\", model: \"\",", "llm: {endpoint: \"" + s.endpoint() + "\", model: tiny, generation: " + generation + ","},
                            {"timeout_s: 30, max_retries: 3", "timeout_s: 300, max_retries: 1"}});
}

std::vector<json> jsonl(const std::string& path) {
  std::vector<json> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

const std::string kSchemaGen = "{max_tokens: 1024, structured_output: json_schema, extra: {cache_prompt: false}}";
const std::string kFreeGen = "{max_tokens: 64, extra: {cache_prompt: false}}";

std::string evaluate(const std::string& cfg, const std::string& out, const std::string& more = "") {
  return "evaluate --blue llm:tiny --red single --no-reference --budget '' --rerun 0 --config " + quote(cfg) +
         " --out " + quote(out) + " --progress none " + more;
}

// ctest: slow
TEST(RealServer, WithThePerScenarioSchemaEveryReplyParsesAndEachFailureIsNamed) {
  REQUIRE_REAL_SERVER();
  TempDir dir("real-schema");
  LlamaServer server(dir);
  ASSERT_TRUE(server.ready(dir)) << server.log();
  const auto x = advplan(evaluate(real_config(dir, server, 3, kSchemaGen), dir / "run"), dir);
  ASSERT_LE(x.status, 1) << x.err;
  int replies = 0;
  for (const json& c : jsonl(dir / "run/transcripts.jsonl")) {  // one line per call (docs/TRACES.md)
    ++replies;
    const std::string text = c["reply"].get<std::string>();
    EXPECT_FALSE(json::parse(text, nullptr, false).is_discarded()) << "not JSON: " << text.substr(0, 300);
    // What served the call: llama.cpp's reply names its model and its build (system_fingerprint).
    EXPECT_NE(c["served_by"].get<std::string>().find(' '), std::string::npos) << c["served_by"];
  }
  EXPECT_GE(replies, 3);
  const std::string per = read_file(dir / "run/per_scenario.csv");
  EXPECT_EQ(per.find("failed,,"), std::string::npos) << "a failed row without its reason:\n" << per;
  EXPECT_NE(x.out.find("valid"), std::string::npos) << x.out;
}

// ctest: slow
TEST(RealServer, WithoutStructuredOutputEveryRowFailsWithANamedCause) {
  REQUIRE_REAL_SERVER();
  TempDir dir("real-free");
  LlamaServer server(dir);
  ASSERT_TRUE(server.ready(dir)) << server.log();
  const auto x = advplan(evaluate(real_config(dir, server, 2, kFreeGen), dir / "run"), dir);
  EXPECT_EQ(x.status, 1) << x.err;  // every row failed
  const std::string per = read_file(dir / "run/per_scenario.csv");
  EXPECT_NE(per.find("completion holds no parseable JSON object"), std::string::npos) << per;
}

// ctest: slow
TEST(RealServer, TheTokensRecordedAreTheServersOwnCounts) {
  REQUIRE_REAL_SERVER();
  TempDir dir("real-tokens");
  LlamaServer server(dir);
  ASSERT_TRUE(server.ready(dir)) << server.log();
  ASSERT_LE(advplan(evaluate(real_config(dir, server, 2, kFreeGen), dir / "run"), dir).status, 1);
  long prompt = 0, completion = 0;
  for (const json& c : jsonl(dir / "run/transcripts.jsonl")) {
    prompt += c["prompt_tokens"].get<long>();
    completion += c["completion_tokens"].get<long>();
  }
  EXPECT_EQ(prompt, static_cast<long>(server.metric(dir, "prompt_tokens_total")));
  EXPECT_EQ(completion, static_cast<long>(server.metric(dir, "tokens_predicted_total")));
}

// ctest: slow
TEST(RealServer, OneConnectionRepeatsItselfAndACachedRerunMakesNoCall) {
  REQUIRE_REAL_SERVER();
  TempDir dir("real-conns");
  LlamaServer server(dir);
  ASSERT_TRUE(server.ready(dir)) << server.log();
  const std::string cfg = real_config(dir, server, 3, kSchemaGen);
  ASSERT_LE(advplan(evaluate(cfg, dir / "one", "--max-connections 1 --llm-cache " + quote(dir / "c1")), dir).status, 1);
  ASSERT_LE(advplan(evaluate(cfg, dir / "two", "--max-connections 1 --llm-cache " + quote(dir / "c2")), dir).status, 1);
  // With the server's prompt cache off (cache_prompt: false) and one request at a time, its replies repeat.
  EXPECT_EQ(read_file(dir / "one/transcripts.jsonl"), read_file(dir / "two/transcripts.jsonl"));
  EXPECT_EQ(read_file(dir / "one/per_scenario.csv"), read_file(dir / "two/per_scenario.csv"));
  const double predicted = server.metric(dir, "tokens_predicted_total");
  ASSERT_LE(advplan(evaluate(cfg, dir / "again", "--max-connections 4 --llm-cache " + quote(dir / "c1")), dir).status, 1);
  EXPECT_EQ(server.metric(dir, "tokens_predicted_total"), predicted) << "a cached rerun asked the server";
  EXPECT_EQ(read_file(dir / "one/per_scenario.csv"), read_file(dir / "again/per_scenario.csv"));
}

// ctest: slow
TEST(RealServer, AJudgeALiveRedAndAQuizAgentEachComplete) {
  REQUIRE_REAL_SERVER();
  TempDir dir("real-roles");
  LlamaServer server(dir);
  ASSERT_TRUE(server.ready(dir)) << server.log();
  // 256 tokens a reply: this test asks that every role completes, not that its replies parse (the judge's canaries
  // add six calls a judge), so it keeps its time short.
  const std::string cfg = real_config(dir, server, 2, "{max_tokens: 256, structured_output: json_schema, extra: {cache_prompt: false}}",
                                      "[single, llm_live]",
                                      "rubric: {judges: [llm_judge]}");
  const auto run = advplan("run " + quote(cfg) + " --out " + quote(dir / "run") + " --progress none", dir);
  EXPECT_LE(run.status, 1) << run.err;
  EXPECT_NE(read_file(dir / "run/per_scenario.csv").find("llm_live"), std::string::npos);
  ASSERT_EQ(advplan("questions " + quote(cfg) + " --out " + quote(dir / "all.jsonl"), dir).status, 0);
  std::ifstream all(dir / "all.jsonl");
  std::string three;
  for (std::string line; three.size() < 3 * 1 && std::getline(all, line);) three += line + "\n";
  write_file(dir / "questions.jsonl", three);
  const auto quiz = advplan("quiz " + quote(cfg) + " --questions " + quote(dir / "questions.jsonl") +
                                " --agent llm:tiny --budget 2 --out " + quote(dir / "quiz.jsonl"), dir);
  EXPECT_LE(quiz.status, 1) << quiz.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "quiz.jsonl")) << quiz.err;
}

}  // namespace
}  // namespace advplan
