#pragma once
// A small HTTP/1.1 server for 127.0.0.1 (docs/REPORT.md "Serving a large run", docs/DECISIONS.md "advplan view's own
// HTTP server"): one thread, poll(), and a bound on everything a client controls: the time to send a complete
// request head and the head's size, the idle time between requests on a kept-alive connection, the time to take a
// response, the connections per client address and in all, and the body (none unless the server allows one).
// Requests are parsed by io/http_request.hpp; the answer comes from a handler. Range is never honoured: an answer
// is always whole.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "advplan/io/http_request.hpp"

namespace advplan::io {

struct LocalServerOptions {
  int port = 0;  ///< on 127.0.0.1; 0: any free port
  /// From accept, or from the end of the previous response, to the end of the request head (and its body).
  std::chrono::milliseconds request_timeout{10'000};
  /// From the end of a response to the first byte of the next request on the same connection.
  std::chrono::milliseconds idle_timeout{5'000};
  /// From the first byte of a response to its last.
  std::chrono::milliseconds write_timeout{30'000};
  std::size_t max_head_bytes = 16 * 1024;
  std::size_t max_body_bytes = 0;  ///< 0: a request declaring a body (Content-Length > 0, Transfer-Encoding) is a 413
  std::size_t max_connections = 64;
  std::size_t max_connections_per_client = 16;  ///< per peer address
  std::vector<std::string> methods{"GET", "HEAD"};  ///< others: 405
  /// Sent with every response, the server's own refusals included (security headers, for instance).
  std::vector<std::pair<std::string, std::string>> headers;
};

struct LocalRequest {
  http::RequestHead head;
  std::string body;  ///< at most max_body_bytes
  std::string peer;  ///< the client's address
};

struct LocalResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  ///< besides Content-Type, Content-Length, Connection
};

/// A plain-text response of one sentence.
LocalResponse text_response(int status, std::string sentence);

class LocalServer {
 public:
  using Handler = std::function<LocalResponse(const LocalRequest&)>;
  /// Listens on 127.0.0.1:options.port. Only requests whose Host is 127.0.0.1:PORT, localhost:PORT or
  /// [::1]:PORT (PORT: the bound one) reach `handler`; any other Host is a 421, none a 400. Throws IoError.
  LocalServer(LocalServerOptions options, Handler handler);
  ~LocalServer();
  LocalServer(const LocalServer&) = delete;
  LocalServer& operator=(const LocalServer&) = delete;

  int port() const;
  /// Serves until stop(). A handler that throws answers 500 with the exception's sentence.
  void run();
  /// Makes run() return (from any thread, or a signal handler: one write to a pipe).
  void stop() noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace advplan::io
