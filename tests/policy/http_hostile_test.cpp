// Hostile chat-completions endpoints against the real binary (the hardening issue, items 1 and 6): a loopback
// server on raw sockets that sends what no HTTP library would, a status line of 100 KB, an endless status or
// header line, a flood of headers, and a reply that echoes the API key JSON-escaped. Each must end as a failure
// row (or a clean error) within the deadline, with bounded memory and no key in any output.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "advplan/core/untrusted.hpp"
#include "advplan/llm/providers.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kKey = "sk-HOSTILE-4242";

/// JSON string escapes for every character of `s` (\u0073\u006b...).
std::string escaped(const std::string& s) {
  std::string out;
  char buf[8];
  for (const unsigned char c : s) {
    std::snprintf(buf, sizeof buf, "\\u%04x", c);
    out += buf;
  }
  return out;
}

/// A server on 127.0.0.1 that reads each request's head and body, then hands the socket to `reply`, which
/// writes raw bytes until it is done or the client hangs up.
class RawServer {
 public:
  using Reply = std::function<void(int fd, const std::string& request)>;
  explicit RawServer(Reply reply) : reply_(std::move(reply)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    const int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 16) != 0)
      throw std::runtime_error("RawServer: cannot listen");
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~RawServer() {
    stopping_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    for (auto& t : conns_) t.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int requests() const { return requests_.load(); }
  bool stopping() const { return stopping_.load(); }

  /// Sends all of `s`; false once the peer is gone.
  static bool send_all(int fd, std::string_view s) {
    while (!s.empty()) {
      const ssize_t n = ::send(fd, s.data(), s.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      s.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

 private:
  void serve() {
    while (!stopping_) {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      conns_.emplace_back([this, c] {
        std::string req;
        char buf[65536];
        // the head, then Content-Length bytes of body
        std::size_t want = std::string::npos;
        while (true) {
          const ssize_t n = ::recv(c, buf, sizeof buf, 0);
          if (n <= 0) break;
          req.append(buf, static_cast<std::size_t>(n));
          const auto end = req.find("\r\n\r\n");
          if (end != std::string::npos && want == std::string::npos) {
            std::size_t len = 0;
            const auto cl = req.find("Content-Length: ");
            if (cl != std::string::npos && cl < end) len = std::stoul(req.substr(cl + 16));
            want = end + 4 + len;
          }
          if (want != std::string::npos && req.size() >= want) break;
        }
        ++requests_;
        reply_(c, req);
        ::shutdown(c, SHUT_RDWR);
        ::close(c);
      });
    }
  }

  Reply reply_;
  int fd_ = -1, port_ = 0;
  std::thread thread_;
  std::vector<std::thread> conns_;
  std::atomic<bool> stopping_{false};
  std::atomic<int> requests_{0};
};

/// Sends `head` and then `chunk` again and again until the client hangs up (or 30 s pass, or the server stops).
void endless(int fd, const RawServer& s, const std::string& head, const std::string& chunk) {
  if (!RawServer::send_all(fd, head)) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!s.stopping() && std::chrono::steady_clock::now() < until)
    if (!RawServer::send_all(fd, chunk)) return;
}

std::string ok_reply(const std::string& content) {
  const std::string body =
      nlohmann::json{{"choices", {{{"message", {{"role", "assistant"}, {"content", content}}}}}}}.dump();
  return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nConnection: close\r\n\r\n" + body;
}

struct Outcome {
  testing::CommandResult r;
  std::string per_scenario;  ///< per_scenario.csv, or "" when the run wrote none
  std::string all_output;    ///< every file of the run directory, stdout and stderr
  double seconds = 0;
};

/// `advplan evaluate --blue llm:hostile` on one scenario against `server`, with a 2 s deadline, no retries, and
/// the key in the environment; address space capped at 4 GB (ulimit -v), so a head grown to 1 GB, as cpp-httplib
/// once let it grow, shows as a failure.
Outcome evaluate_against(const RawServer& server, const std::string& tag) {
  static testing::TempDir dir("http-hostile");
  const std::string cfg = dir / (tag + ".yaml");
  std::ofstream(cfg) << "name: hostile\ncorpus: {templates: [urban], seeds: [1, 1]}\nconditions: [single]\n"
                        "llm: {timeout_s: 2, max_retries: 0, max_repairs: 0, api_key_env: ADVPLAN_TEST_HOSTILE_KEY}\n";
  const std::string out = dir / ("run-" + tag);
  const auto t0 = std::chrono::steady_clock::now();
  Outcome o;
  // Not under AddressSanitizer, whose shadow memory needs terabytes of address space.
#if defined(__SANITIZE_ADDRESS__)
  const std::string limit;
#else
  const std::string limit = "ulimit -v 4000000; ";
#endif
  o.r = testing::run_command(limit + "ADVPLAN_TEST_HOSTILE_KEY=" + std::string(kKey) +
                                 " ADVPLAN_LLM_ENDPOINT=" + server.url() + " " + testing::shell_quote(ADVPLAN_BINARY) +
                                 " evaluate --config " + testing::shell_quote(cfg) +
                                 " --blue llm:hostile --red single --no-reference --rerun 0 --budget '' --threads 1"
                                 " --progress none --out " + testing::shell_quote(out),
                             dir);
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  o.all_output = o.r.out + o.r.err;
  if (std::filesystem::exists(out))
    for (const auto& e : std::filesystem::recursive_directory_iterator(out))
      if (e.is_regular_file()) o.all_output += testing::read_file(e.path().string());
  o.per_scenario = testing::read_file(out + "/per_scenario.csv");
  return o;
}

/// The run ends normally: every scenario is a failure row, so evaluate reports that the policy produced no plan
/// and exits 1 (not a signal, not "internal error").
void expect_a_failure_row(const Outcome& o, const std::string& why) {
  ASSERT_EQ(o.r.status, 1) << o.r.err;
  EXPECT_THAT(o.r.err, HasSubstr("llm:hostile produced no plan on any scenario"));
  EXPECT_THAT(o.per_scenario, HasSubstr(why)) << o.per_scenario.substr(0, 2000);
  EXPECT_LT(o.seconds, 20.0);
}

TEST(HostileEndpoint, AStatusLineOf100KbIsAFailureRowNotACrash) {
  RawServer s([](int fd, const std::string&) {
    RawServer::send_all(fd, "HTTP/1.1 200 " + std::string(100000, 'A') + "\r\nContent-Length: 2\r\n\r\n{}");
  });
  const Outcome o = evaluate_against(s, "long-status");
  expect_a_failure_row(o, "the response head exceeds 65536 bytes");
  EXPECT_GE(s.requests(), 1);
}

TEST(HostileEndpoint, AnEndlessStatusLineIsCutNotGrown) {
  RawServer s([&s](int fd, const std::string&) { endless(fd, s, "HTTP/1.1 200 ", std::string(65536, 'A')); });
  const Outcome o = evaluate_against(s, "endless-status");
  expect_a_failure_row(o, "the response head has a line longer than libcurl's limit of 100 KiB");
}

TEST(HostileEndpoint, AnEndlessHeaderLineIsCutNotGrown) {
  RawServer s([&s](int fd, const std::string&) {
    endless(fd, s, "HTTP/1.1 200 OK\r\nX-Long: ", std::string(65536, 'B'));
  });
  const Outcome o = evaluate_against(s, "endless-header");
  expect_a_failure_row(o, "the response head has a line longer than libcurl's limit of 100 KiB");
}

TEST(HostileEndpoint, AFloodOfHeadersIsRefusedByItsCount) {
  RawServer s([&s](int fd, const std::string&) {
    std::string chunk;
    for (int i = 0; i < 4000; ++i) chunk += "X-Flood: 1\r\n";
    endless(fd, s, "HTTP/1.1 200 OK\r\n", chunk);
  });
  const Outcome o = evaluate_against(s, "flood");
  expect_a_failure_row(o, "the response head has more than 200 lines");
}

TEST(HostileEndpoint, AKeyEchoedJsonEscapedNeverReachesAnOutput) {
  // The plan names the key as its asset, spelt with JSON escapes, so the plan parser decodes it and the
  // validator quotes it in the failure reason.
  RawServer s([](int fd, const std::string&) {
    const std::string plan = "{\"objective\": \"" + escaped(kKey) + "\", \"actions\": [{\"id\": \"a1\", \"asset\": \"" +
                             escaped(kKey) + "\", \"verb\": \"move\", \"category\": \"maneuver\", \"target\": \"x\"}]," +
                             " \"chain\": [\"a1\"], \"branches\": []}";
    RawServer::send_all(fd, ok_reply(plan));
  });
  const Outcome o = evaluate_against(s, "escaped-key");
  ASSERT_EQ(o.r.status, 1) << o.r.err;
  EXPECT_GE(s.requests(), 1);
  EXPECT_THAT(o.per_scenario, HasSubstr("[redacted]"));
  EXPECT_THAT(o.all_output, Not(HasSubstr(kKey)));
  EXPECT_THAT(o.all_output, Not(HasSubstr("HOSTILE-4242")));
}

// Issue 48, item 5: an endpoint that refuses the key stops the command at once: exit 1, one line naming the endpoint
// and the variable that holds the key (never the key, which this server echoes), and no further request.
TEST(HostileEndpoint, ARefusedKeyStopsTheRunWithOneLine) {
  RawServer s([](int fd, const std::string& request) {
    std::string auth;
    if (const auto a = request.find("Authorization: "); a != std::string::npos)
      auth = request.substr(a + 15, request.find("\r\n", a) - a - 15);
    const std::string body = nlohmann::json{{"error", {{"message", "Incorrect API key provided: " + auth}}}}.dump();
    RawServer::send_all(fd, "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: " +
                                std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
  });
  const Outcome o = evaluate_against(s, "refused-key");
  testing::expect_one_line_error(o.r);
  EXPECT_THAT(o.r.err, HasSubstr(s.url()));
  EXPECT_THAT(o.r.err, HasSubstr("HTTP 401"));
  EXPECT_THAT(o.r.err, HasSubstr("ADVPLAN_TEST_HOSTILE_KEY"));
  EXPECT_THAT(o.all_output, Not(HasSubstr(kKey)));
  EXPECT_EQ(s.requests(), 1);
}

TEST(Redact, FindsTheKeyLiteralAndJsonEscapedAtEveryLevel) {
  const std::string key = "sk-abc";
  EXPECT_EQ(untrusted::redact("x sk-abc y", key), "x [redacted] y");
  EXPECT_EQ(untrusted::redact("x " + escaped(key) + " y", key), "x [redacted] y");
  EXPECT_EQ(untrusted::redact("x s\\u006b-abc y", key), "x [redacted] y");    // partly escaped
  EXPECT_EQ(untrusted::redact("x s\\\\u006b-abc y", key), "x [redacted] y");  // escaped twice
  EXPECT_EQ(untrusted::redact("sk\\/abc", "sk/abc"), "[redacted]");
  EXPECT_EQ(untrusted::redact("x sk\\\"q y", "sk\"q"), "x [redacted] y");  // a key with a quote, escaped \"
  EXPECT_EQ(untrusted::redact("\\u00e9sk-abc\\u00e9", key), "\\u00e9[redacted]\\u00e9");
  EXPECT_EQ(untrusted::redact("nothing \\n here", key), "nothing \\n here");
  EXPECT_EQ(untrusted::redact("\\u", key), "\\u");
  EXPECT_EQ(untrusted::redact("a", ""), "a");
  // the client's body reader: a key escaped inside the content is redacted before the text leaves it
  const std::string body = nlohmann::json{{"choices", {{{"message", {{"content", "{\"a\": \"" + escaped(key) + "\"}"}}}}}}}.dump();
  const Completion c = parse_chat_completion_body(body, key);
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_EQ(c.text, "{\"a\": \"[redacted]\"}");
}

}  // namespace
}  // namespace advplan
