#include "transport.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <thread>

#include "advplan/core/error.hpp"
#include "advplan/core/stop_error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/io/modules.hpp"
#include "advplan/llm/suspension.hpp"
#include "http_module/http_module.hpp"

#include <tbb/task.h>
#include <tbb/task_arena.h>

namespace advplan {

const char* to_string(ErrorKind k) {
  switch (k) {
    case ErrorKind::none: return "";
    case ErrorKind::transport: return "transport";
    case ErrorKind::timeout: return "timeout";
    case ErrorKind::http: return "http";
    case ErrorKind::context_overflow: return "context_overflow";
    case ErrorKind::bad_reply: return "bad_reply";
    case ErrorKind::deferred: return "deferred";
  }
  return "";
}

namespace llm_detail {
using nlohmann::json;

namespace {

constexpr std::size_t kExcerptChars = 200;
constexpr double kRetryAfterCap = 30.0;  // seconds; a server asking for longer is not waited on longer

/// The entry points of libadvplan_http.so (src/http_module), loaded on first use.
struct HttpModule {
  http::PostFn post = nullptr;
  http::SubmitFn submit = nullptr;
  http::LimitFn limit = nullptr;
};
const HttpModule& http_module() {
  static const HttpModule m = [] {
    const std::string file = "libadvplan_http.so";
    void* h = io::open_module(file, /*global=*/false, "the HTTP client");
    HttpModule out;
    out.post = reinterpret_cast<http::PostFn>(io::module_symbol(h, file, http::kPostSymbol));
    out.submit = reinterpret_cast<http::SubmitFn>(io::module_symbol(h, file, http::kSubmitSymbol));
    out.limit = reinterpret_cast<http::LimitFn>(io::module_symbol(h, file, http::kLimitSymbol));
    return out;
  }();
  return m;
}

thread_local int t_no_suspend = 0;
std::atomic<int> g_async_scopes{0};

/// One POST: inside a TBB task (and outside a NoSuspendScope) the task is suspended while the I/O thread carries
/// the request, so the worker thread runs other tasks; otherwise it blocks in libcurl's easy interface.
void send(const http::Post& post, http::Reply& r) {
  const HttpModule& m = http_module();
  if (g_async_scopes.load() == 0 || t_no_suspend > 0 ||
      tbb::this_task_arena::current_thread_index() == tbb::task_arena::not_initialized) {
    m.post(post, r);
    return;
  }
  tbb::task::suspend_point sp = nullptr;
  tbb::task::suspend([&](tbb::task::suspend_point here) {
    sp = here;
    m.submit(post, r, [](void* arg) noexcept { tbb::task::resume(*static_cast<tbb::task::suspend_point*>(arg)); },
             &sp);
  });
}

/// One POST (a total deadline, a cap on the body, no compressed body), as the client's messages.
struct Attempt {
  std::optional<int> status;
  std::string body;
  std::string error;  ///< set: the attempt failed (transport, deadline, size or encoding)
  ErrorKind kind = ErrorKind::none;
  bool retryable = false;  ///< transport failures and deadlines are retried
  std::optional<double> retry_after;
};

Attempt post_once(const http::Post& post, const std::string& secret) {
  using Kind = http::Reply::Kind;
  http::Reply r;
  send(post, r);
  Attempt a;
  switch (r.kind) {
    case Kind::deadline:
      a.error = fmt::format("timeout: no complete response from {} within {} s", post.origin, post.timeout_s);
      a.kind = ErrorKind::timeout;
      a.retryable = true;
      break;
    case Kind::compressed:
      a.error = fmt::format("the server sent a compressed body (Content-Encoding: {}) that was not asked for",
                            untrusted::excerpt(untrusted::redact(r.encoding, secret), 40));
      a.kind = ErrorKind::bad_reply;
      break;
    case Kind::too_big:
      a.error = fmt::format("response body exceeds {} bytes ({} bytes)", post.max_body, untrusted::excerpt(r.size, 40));
      a.kind = ErrorKind::bad_reply;
      break;
    case Kind::transport:
      a.error = fmt::format("{} ({})", r.transport_error, post.origin);
      a.kind = ErrorKind::transport;
      a.retryable = true;
      break;
    case Kind::response:
      a.status = r.status;
      a.body = std::move(r.body);
      if (r.retry_after) a.retry_after = std::min(*r.retry_after, kRetryAfterCap);
      break;
  }
  return a;
}

/// The StopRunError sentence of a 401 or 403: the endpoint, the status, the body excerpt, the key variable.
std::string refused_key_message(const Exchange& ex, int status, const std::string& body) {
  const std::string key = ex.key_env.empty() ? std::string("no key variable is configured (llm.api_key_env)")
                          : ex.secret.empty() ? fmt::format("the key variable {} is not set", ex.key_env)
                                              : fmt::format("the key in {} was refused", ex.key_env);
  return fmt::format("the LLM endpoint {}{} answered HTTP {} ({}), so every further request would fail: {}; "
                     "nothing more is asked", ex.origin, ex.path, status, body, key);
}

}  // namespace

std::optional<ParsedUrl> parse_endpoint(std::string_view url, std::string_view leaf) {
  std::string_view rest;
  std::string scheme;
  for (const char* s : {"http://", "https://"}) {
    if (url.substr(0, std::char_traits<char>::length(s)) == s) {
      scheme = s;
      rest = url.substr(scheme.size());
    }
  }
  if (scheme.empty()) return std::nullopt;
  if (const auto q = rest.find_first_of("?#"); q != std::string_view::npos) return std::nullopt;
  const auto slash = rest.find('/');
  const std::string_view host = rest.substr(0, slash);
  if (host.empty() || host.find('@') != std::string_view::npos || host.find(' ') != std::string_view::npos)
    return std::nullopt;
  std::string path(slash == std::string_view::npos ? std::string_view{} : rest.substr(slash));
  while (!path.empty() && path.back() == '/') path.pop_back();
  const bool has_v1 = path.size() >= 3 && path.compare(path.size() - 3, 3, "/v1") == 0;
  path += has_v1 ? "/" : "/v1/";
  path += leaf;
  return ParsedUrl{scheme + std::string(host), path};
}

std::string excerpt(const std::string& body, const std::string& secret) {
  // The whole body is redacted before it is cut: a key escaped near the cut would otherwise leave a part behind.
  std::string s = untrusted::excerpt(untrusted::redact(body, secret), kExcerptChars);
  return s.empty() ? "(empty body)" : s;
}

int token_count(const json& usage, const char* key) {
  if (!usage.is_object()) return -1;
  const auto it = usage.find(key);
  if (it == usage.end()) return -1;
  if (it->is_number_unsigned())
    return static_cast<int>(std::min<std::uint64_t>(it->get<std::uint64_t>(), std::numeric_limits<int>::max()));
  if (it->is_number_integer()) {
    const auto v = it->get<std::int64_t>();
    return v < 0 ? -1 : static_cast<int>(std::min<std::int64_t>(v, std::numeric_limits<int>::max()));
  }
  return -1;
}

bool says_context_overflow(std::string_view body) {
  std::string lower(body.substr(0, 4096));
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* p : {"exceed_context_size", "context size has been exceeded", "context_length_exceeded",
                        "prompt is too long", "maximum context length"})
    if (lower.find(p) != std::string::npos) return true;
  return false;
}

namespace {

http::Post post_of(const Exchange& ex, std::string path, std::string payload, bool get, std::string content_type) {
  http::Post post;
  post.origin = ex.origin;
  post.path = std::move(path);
  // Identity encoding only: a compressed body could inflate far past the size cap.
  post.headers = {{"Accept", "application/json"}, {"Accept-Encoding", "identity"}};
  post.headers.insert(post.headers.end(), ex.headers.begin(), ex.headers.end());
  post.payload = std::move(payload);
  post.content_type = std::move(content_type);
  post.get = get;
  post.timeout_s = ex.timeout_s;
  post.max_body = ex.max_body;
  return post;
}

/// The attempts of one request: retried after a transport failure, or a status read_error calls retryable, up to
/// ex.max_retries times. Returns the last attempt (a 2xx, a status not retried, or the last failure); 401 and 403
/// throw StopRunError. `reading` is read_error's view of the last non-2xx status.
Attempt attempt_loop(const Exchange& ex, const http::Post& post, int& retries, ErrorReading& reading, bool& exhausted) {
  for (int attempt = 0;; ++attempt) {
    Attempt a = post_once(post, ex.secret);
    std::optional<double> wait;  // set: retryable
    if (!a.status) {
      if (a.retryable) wait = ex.backoff_s * std::ldexp(1.0, attempt);
    } else if (*a.status >= 200 && *a.status <= 299) {
      return a;
    } else if (*a.status == 401 || *a.status == 403) {
      throw StopRunError(refused_key_message(ex, *a.status, excerpt(a.body, ex.secret)));
    } else {
      reading = ex.read_error(*a.status, a.body, ex.secret);
      if (reading.retry) wait = a.retry_after.value_or(ex.backoff_s * std::ldexp(1.0, attempt));
    }
    if (!wait) return a;
    if (attempt >= ex.max_retries) {
      exhausted = ex.max_retries > 0;  // the last failure was worth another try, but the retries ran out
      return a;
    }
    ++retries;
    std::this_thread::sleep_for(std::chrono::duration<double>(*wait));
  }
}

}  // namespace

Completion exchange(const Exchange& ex, const std::string& payload) {
  const http::Post post = post_of(ex, ex.path, payload, false, "application/json");
  Completion out;
  ErrorReading reading;
  bool exhausted = false;
  const Attempt a = attempt_loop(ex, post, out.http_retries, reading, exhausted);
  if (a.status && *a.status >= 200 && *a.status <= 299) {
    ex.read_success(a.body, ex.secret, out);
    if (!out.ok && out.error_kind == ErrorKind::none) out.error_kind = ErrorKind::bad_reply;
    return out;
  }
  if (!a.status) {
    out.error = untrusted::redact(a.error, ex.secret);
    out.error_kind = a.kind;
  } else {
    out.error = fmt::format("HTTP {}: {}", *a.status, reading.message);
    out.error_kind = reading.kind;
  }
  if (exhausted) out.error += fmt::format(" (after {} retries)", ex.max_retries);
  return out;
}

Fetched fetch(const Exchange& ex, const std::string& path, const std::string& payload, bool get,
              const std::string& content_type) {
  const http::Post post = post_of(ex, path, payload, get, content_type);
  Fetched out;
  ErrorReading reading;
  int retries = 0;
  bool exhausted = false;
  Attempt a = attempt_loop(ex, post, retries, reading, exhausted);
  if (!a.status) {
    out.error = untrusted::redact(a.error, ex.secret);
  } else if (*a.status >= 200 && *a.status <= 299) {
    out.status = *a.status;
    out.body = untrusted::redact(a.body, ex.secret);
  } else {
    out.status = *a.status;
    out.error = fmt::format("HTTP {}: {}", *a.status, reading.message);
  }
  return out;
}

void load_http_module(std::string_view endpoint) {
  try {
    (void)http_module();
  } catch (const std::exception& e) {
    throw PolicyError(fmt::format("LLM endpoint {}: {}", endpoint, e.what()));
  }
}

void set_http_connection_limit(int n) { http_module().limit(std::max(1, n)); }

}  // namespace llm_detail

AsyncRequestsScope::AsyncRequestsScope() { ++llm_detail::g_async_scopes; }
AsyncRequestsScope::~AsyncRequestsScope() { --llm_detail::g_async_scopes; }

NoSuspendScope::NoSuspendScope() { ++llm_detail::t_no_suspend; }
NoSuspendScope::~NoSuspendScope() { --llm_detail::t_no_suspend; }

}  // namespace advplan
