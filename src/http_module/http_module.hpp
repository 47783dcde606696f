#pragma once
// The interface of libadvplan_http.so (src/http_module), the HTTP requests the LLM providers make (a POST, or a GET
// for a batch's status and results),
// with libcurl behind it. libadvplan loads the module on first use (io::open_module): linking libcurl loads
// OpenSSL's TLS library and runs its initialisation in every process. Both sides are built together, by
// the same compiler and standard library, so the interface passes C++ types; the entry point has C linkage so
// that dlsym finds it by name.
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace advplan::http {

struct Post {
  std::string origin, path;  ///< scheme://host[:port] and the request path
  std::vector<std::pair<std::string, std::string>> headers;
  std::string payload;       ///< the body (sent as content_type); not sent by a GET
  std::string content_type = "application/json";
  bool get = false;          ///< a GET (batch status and results) instead of a POST
  double timeout_s = 60;     ///< total deadline: connection, request and the whole response
  std::size_t max_body = 0;  ///< larger bodies are refused, by Content-Length or while reading
};

/// What one POST did; the client turns it into its messages and retries.
struct Reply {
  enum class Kind { response, deadline, compressed, too_big, transport } kind = Kind::transport;
  int status = 0;                     ///< response: the HTTP status
  std::string body;                   ///< response: the body (at most max_body bytes)
  std::optional<double> retry_after;  ///< response: Retry-After in seconds, when given as a number >= 0
  std::string encoding;               ///< compressed: the Content-Encoding the server sent
  std::string size;                   ///< too_big: the size, as the server declared it or "more than N"
  std::string transport_error;        ///< transport: libcurl's sentence, or why the response head was refused
  double elapsed_s = 0;
};

using PostFn = void (*)(const Post&, Reply&) noexcept;
inline constexpr const char* kPostSymbol = "advplan_http_post";

/// The same POST, carried by the module's I/O thread (libcurl's multi interface, many transfers on one thread):
/// returns at once; `done(arg)` is called on the I/O thread once `reply` is filled. `post` and `reply` must live
/// until then. At most the connection limit of transfers run at once; the rest wait in submission order.
using DoneFn = void (*)(void* arg) noexcept;
using SubmitFn = void (*)(const Post&, Reply&, DoneFn done, void* arg) noexcept;
inline constexpr const char* kSubmitSymbol = "advplan_http_submit";

/// Sets the most transfers the I/O thread runs at once (at least 1). The limit adapts below it: a 429 halves the
/// current limit (never below 1), and each success raises it by one again, up to the value set here.
using LimitFn = void (*)(int max_connections) noexcept;
inline constexpr const char* kLimitSymbol = "advplan_http_set_max_connections";

}  // namespace advplan::http
