// The loopback HTTP server (io::LocalServer) and its request-head parser (io::http::parse_request_head): the strict
// grammar, the Host check, no body, Range never honoured, and the bounds on slow and numerous clients. Limits are
// set short through LocalServerOptions so that every wait here is well under a second.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "advplan/io/http_request.hpp"
#include "advplan/io/local_server.hpp"
#include "support/raw_http.hpp"

namespace advplan {
namespace {

using namespace std::chrono_literals;
using testing::body_of;
using testing::exchange;
using testing::get_request;
using testing::RawClient;
using testing::ServerThread;
using testing::status_of;

TEST(HttpRequestHead, ParsesAStrictHead) {
  const auto p = io::http::parse_request_head(
      "GET /a/b.js?x=1 HTTP/1.1\r\nHost: 127.0.0.1:80\r\nX-Thing:  v a l \t\r\nConnection: Keep-Alive, Upgrade\r\n\r\n");
  ASSERT_TRUE(p.ok()) << p.error;
  EXPECT_EQ(p.head.method, "GET");
  EXPECT_EQ(p.head.path, "/a/b.js");
  EXPECT_EQ(p.head.query, "x=1");
  EXPECT_EQ(*p.head.header("x-thing"), "v a l");
  EXPECT_EQ(*p.head.header("host"), "127.0.0.1:80");
  EXPECT_TRUE(p.head.keep_alive);
  EXPECT_FALSE(p.head.content_length);
  const auto q = io::http::parse_request_head("HEAD / HTTP/1.0\nHost: h\nContent-Length: 0\nContent-Length: 0\n\n");
  ASSERT_TRUE(q.ok()) << q.error;
  EXPECT_FALSE(q.head.keep_alive) << "HTTP/1.0 closes unless it asks to keep alive";
  EXPECT_EQ(q.head.content_length, 0u);
  EXPECT_TRUE(io::http::parse_request_head("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n").ok());
  EXPECT_FALSE(io::http::parse_request_head("GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n").head.keep_alive);
}

TEST(HttpRequestHead, RefusesAnythingLooser) {
  const std::string host = "Host: h\r\n";
  const std::pair<std::string, int> cases[] = {
      {"GET / HTTP/1.1\r\n\r\n", 400},                                           // no Host
      {"GET / HTTP/1.1\r\n" + host + host + "\r\n", 400},                         // two Hosts
      {"GET  / HTTP/1.1\r\n" + host + "\r\n", 400},                               // two spaces
      {"GET http://x/ HTTP/1.1\r\n" + host + "\r\n", 400},                        // absolute form
      {"GET / HTTP/2.0\r\n" + host + "\r\n", 505},
      {"GET / HTTP/1.2\r\n" + host + "\r\n", 505},
      {"GET / HTTX/1.1\r\n" + host + "\r\n", 400},
      {"G(T / HTTP/1.1\r\n" + host + "\r\n", 400},                                // not a token
      {"GET /\x01 HTTP/1.1\r\n" + host + "\r\n", 400},                            // control in the target
      {"GET / HTTP/1.1\r\n" + host + "X : y\r\n\r\n", 400},                       // space before ':'
      {"GET / HTTP/1.1\r\n" + host + "X: y\r\n z\r\n\r\n", 400},                  // folded
      {"GET / HTTP/1.1\r\n" + host + "X: a\rb\r\n\r\n", 400},                     // lone CR
      {"GET / HTTP/1.1\r\n" + host + std::string("X: a\0b\r\n\r\n", 11), 400},   // NUL
      {"GET / HTTP/1.1\r\n" + host + "X y\r\n\r\n", 400},                         // no ':'
      {"GET / HTTP/1.1\r\n" + host + "Content-Length: -1\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\n" + host + "Content-Length: 1,1\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\n" + host + "Content-Length: 99999999999999999999999\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\n" + host + "Content-Length: 1\r\nContent-Length: 2\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\n" + host + "Content-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
      {"GET /" + std::string(io::http::kMaxTargetBytes, 'a') + " HTTP/1.1\r\n" + host + "\r\n", 414},
      {"GET / HTTP/1.1\r\n" + host, 400},                                         // no empty line
      {"GET / HTTP/1.1\r\n" + host + "\r\nX: y\r\n\r\n", 400},                    // a line after the end
  };
  for (const auto& [text, status] : cases) {
    const auto p = io::http::parse_request_head(text);
    EXPECT_FALSE(p.ok()) << text;
    EXPECT_EQ(p.status, status) << text << ": " << p.error;
  }
  std::string many = "GET / HTTP/1.1\r\n" + host;
  for (std::size_t i = 0; i < io::http::kMaxHeaderFields; ++i) many += "X: y\r\n";
  EXPECT_EQ(io::http::parse_request_head(many + "\r\n").status, 431);
}

TEST(HttpRequestHead, FindsTheEndOfAHead) {
  EXPECT_EQ(io::http::find_head_end("GET / HTTP/1.1\r\nHost: h\r\n"), std::string_view::npos);
  EXPECT_EQ(io::http::find_head_end("GET / HTTP/1.1\r\nHost: h\r\n\r\nrest"), 27u);
  EXPECT_EQ(io::http::find_head_end("GET / HTTP/1.1\nHost: h\n\nrest"), 24u);
}

/// Options with short limits, the test's headers, and a handler that answers 1000 'x' and counts its calls.
struct Counted {
  std::atomic<int> calls{0};
  io::LocalServerOptions options() const {
    io::LocalServerOptions o;
    o.request_timeout = 400ms;
    o.idle_timeout = 200ms;
    o.write_timeout = 2000ms;
    o.max_head_bytes = 1024;
    o.max_connections = 8;
    o.max_connections_per_client = 4;
    o.headers = {{"X-Test", "every"}};
    return o;
  }
  io::LocalServer::Handler handler() {
    return [this](const io::LocalRequest&) {
      ++calls;
      io::LocalResponse r;
      r.body = std::string(1000, 'x');
      return r;
    };
  }
};

TEST(LocalServer, AnswersOnlyTheAddressItListensOn) {
  Counted h;
  ServerThread s(h.options(), h.handler());
  const std::string port = std::to_string(s.port());
  for (const std::string& good : std::vector<std::string>{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST:" + port, "[::1]:" + port})
    EXPECT_EQ(status_of(exchange(s.port(), "GET / HTTP/1.1\r\nHost: " + good + "\r\n\r\n")), 200) << good;
  for (const std::string& bad : std::vector<std::string>{"evil.test:" + port, "127.0.0.1", "127.0.0.1:1" + port, "localhost.:" + port, ""}) {
    const std::string r = exchange(s.port(), "GET / HTTP/1.1\r\nHost: " + bad + "\r\n\r\n");
    EXPECT_EQ(status_of(r), 421) << bad;
    EXPECT_NE(r.find("\r\nX-Test: every\r\n"), std::string::npos) << "a refusal carries the headers too";
  }
  EXPECT_EQ(status_of(exchange(s.port(), "GET / HTTP/1.1\r\n\r\n")), 400) << "no Host";
  EXPECT_EQ(h.calls, 4);
}

TEST(LocalServer, RefusesABodyAtTheHeadWithoutReadingIt) {
  Counted h;
  ServerThread s(h.options(), h.handler());
  // The body is never sent: the answer comes at the head.
  for (const std::string field : {"Content-Length: 1000000000000", "Content-Length: 1", "Transfer-Encoding: chunked"}) {
    RawClient c(s.port());
    c.send("POST / HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(s.port()) + "\r\n" + field + "\r\n\r\n");
    const std::string r = c.read_response();
    EXPECT_EQ(status_of(r), 413) << field;
    EXPECT_TRUE(c.closed_by_server()) << field;
  }
  EXPECT_EQ(status_of(exchange(s.port(), get_request(s.port(), "/", "Content-Length: 0\r\n"))), 200);
  EXPECT_EQ(h.calls, 1);
}

TEST(LocalServer, AnswersGetAndHeadOnly) {
  Counted h;
  ServerThread s(h.options(), h.handler());
  const std::string post = "POST / HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(s.port()) + "\r\n\r\n";
  const std::string r = exchange(s.port(), post);
  EXPECT_EQ(status_of(r), 405);
  EXPECT_NE(r.find("\r\nAllow: GET, HEAD\r\n"), std::string::npos);
  RawClient c(s.port());
  c.send("HEAD / HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(s.port()) + "\r\n\r\n");
  const std::string head = c.read_response(true);
  EXPECT_EQ(status_of(head), 200);
  EXPECT_NE(head.find("Content-Length: 1000\r\n"), std::string::npos);
  EXPECT_EQ(body_of(head), "");
}

TEST(LocalServer, NeverHonoursRange) {
  Counted h;
  ServerThread s(h.options(), h.handler());
  std::string ranges = "Range: bytes=0-";
  for (int i = 0; i < 100; ++i) ranges += ",0-";
  const std::string r = exchange(s.port(), get_request(s.port(), "/", ranges + "\r\n"));
  EXPECT_EQ(status_of(r), 200);
  EXPECT_NE(r.find("Content-Length: 1000\r\n"), std::string::npos);
  EXPECT_EQ(body_of(r), std::string(1000, 'x'));
}

TEST(LocalServer, KeepsAliveAndAnswersPipelinedRequestsInOrder) {
  Counted h;
  ServerThread s(h.options(), h.handler());
  RawClient c(s.port());
  c.send(get_request(s.port(), "/1") + get_request(s.port(), "/2"));
  EXPECT_EQ(status_of(c.read_response()), 200);
  EXPECT_EQ(status_of(c.read_response()), 200);
  EXPECT_EQ(h.calls, 2);
  // Then idle past idle_timeout: closed.
  EXPECT_TRUE(c.closed_by_server());
}

TEST(LocalServer, RefusesAHeadOverItsSize) {
  Counted h;
  ServerThread s(h.options(), h.handler());
  RawClient c(s.port());
  c.send(get_request(s.port(), "/", "X-Long: " + std::string(2000, 'a') + "\r\n"));
  EXPECT_EQ(status_of(c.read_response()), 431);
  EXPECT_EQ(h.calls, 0);
}

TEST(LocalServer, CutsATricklingClientWhileAnsweringOthers) {
  Counted h;
  ServerThread s(h.options(), h.handler());
  RawClient slow(s.port());
  ASSERT_TRUE(slow.send("GET / HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(s.port()) + "\r\n"));
  // A header line every 50 ms, never the end of the head: the head deadline (400 ms) closes it, however regular.
  bool cut = false;
  for (int i = 0; i < 40 && !cut; ++i) {
    EXPECT_EQ(status_of(exchange(s.port(), get_request(s.port(), "/"))), 200) << "another client is answered meanwhile";
    cut = !slow.send("X-Slow: " + std::to_string(i) + "\r\n") || slow.closed_by_server(50ms);
  }
  EXPECT_TRUE(cut) << "the trickling client was never cut";
  EXPECT_EQ(status_of(exchange(s.port(), get_request(s.port(), "/"))), 200);
}

TEST(LocalServer, ClosesAConnectionThatSendsNothing) {
  Counted h;
  ServerThread s(h.options(), h.handler());
  RawClient idle(s.port());
  EXPECT_TRUE(idle.closed_by_server(2000ms));
}

TEST(LocalServer, LimitsTheConnectionsPerClientAndInAll) {
  Counted h;
  io::LocalServerOptions o = h.options();
  o.max_connections_per_client = 2;
  o.max_connections = 4;
  o.request_timeout = o.idle_timeout = 10s;  // none of them is closed for idling meanwhile
  ServerThread s(o, h.handler());
  // Each connection made and registered (one answer each) before the next.
  const auto open = [&](const char* from) {
    auto c = std::make_unique<RawClient>(s.port(), from);
    c->send(get_request(s.port(), "/"));
    return std::pair{std::move(c), status_of(c->read_response())};
  };
  auto a1 = open("127.0.0.1"), a2 = open("127.0.0.1"), a3 = open("127.0.0.1");
  EXPECT_EQ(a1.second, 200);
  EXPECT_EQ(a2.second, 200);
  EXPECT_EQ(a3.second, 503) << "a third connection from the same address";
  EXPECT_TRUE(a3.first->closed_by_server());
  auto b1 = open("127.0.0.2"), b2 = open("127.0.0.2"), c1 = open("127.0.0.3");
  EXPECT_EQ(b1.second, 200);
  EXPECT_EQ(b2.second, 200);
  EXPECT_EQ(c1.second, 503) << "a fifth connection in all";
  // The kept-alive ones still answer.
  a1.first->send(get_request(s.port(), "/"));
  EXPECT_EQ(status_of(a1.first->read_response()), 200);
}

TEST(LocalServer, AnswersAThrowingHandlerWith500) {
  io::LocalServerOptions o;
  ServerThread s(o, [](const io::LocalRequest&) -> io::LocalResponse { throw std::runtime_error("a.csv: broken"); });
  const std::string r = exchange(s.port(), get_request(s.port(), "/"));
  EXPECT_EQ(status_of(r), 500);
  EXPECT_EQ(body_of(r), "a.csv: broken\n");
}

}  // namespace
}  // namespace advplan
