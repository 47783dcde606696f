// libadvplan_http.so: one HTTP POST with libcurl (src/http_module/http_module.hpp), with a total deadline, a
// bounded response head, a cap on the body and no compressed body. libcurl bounds each header line (100 KiB)
// and the transfer time (CURLOPT_TIMEOUT_MS, however slowly a server trickles bytes); ResponseHead bounds the
// whole head and reads the few fields the client needs, by hand.
#include <curl/curl.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include "http_module.hpp"
#include "response_head.hpp"

namespace {

using advplan::http::Reply;
using advplan::http::ResponseHead;

struct Transfer {
  explicit Transfer(const advplan::http::Post& p, Reply& r) : post(p), reply(r), head(p.max_body) {}
  const advplan::http::Post& post;
  Reply& reply;
  ResponseHead head;
  bool body_too_big = false;
};

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::size_t len = size * n;
  return t.head.line(std::string_view(data, len)) ? len : 0;  // 0 makes libcurl abandon the transfer
}

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto& t = *static_cast<Transfer*>(user);
  const std::size_t len = size * n;
  if (t.reply.body.size() + len > t.post.max_body) {
    t.body_too_big = true;
    return 0;
  }
  t.reply.body.append(data, len);
  return len;
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
  void operator()(curl_slist* s) const { curl_slist_free_all(s); }
};

/// A header value or name with CR, LF or NUL would split the request: refused before anything is sent.
bool clean_header(const std::string& s) { return s.find_first_of(std::string("\r\n\0", 3)) == std::string::npos; }

void post(const advplan::http::Post& p, Reply& a) {
  using Kind = Reply::Kind;
  static std::once_flag global;
  static CURLcode init = CURLE_OK;
  std::call_once(global, [] { init = curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (init != CURLE_OK) {
    a.kind = Kind::transport;
    a.transport_error = std::string("libcurl did not initialise: ") + curl_easy_strerror(init);
    return;
  }
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) {
    a.kind = Kind::transport;
    a.transport_error = "libcurl could not make a handle";
    return;
  }
  std::unique_ptr<curl_slist, CurlDeleter> headers;
  auto add = [&](const std::string& line) {
    curl_slist* s = curl_slist_append(headers.get(), line.c_str());
    if (s) {
      (void)headers.release();
      headers.reset(s);
    }
    return s != nullptr;
  };
  for (const auto& [k, v] : p.headers) {
    if (!clean_header(k) || !clean_header(v)) {
      a.kind = Kind::transport;
      a.transport_error = "a request header holds a line break";
      return;
    }
    add(k + ": " + v);
  }
  add("Content-Type: application/json");
  add("Expect:");  // no 100-continue round trip for a large prompt

  Transfer t(p, a);
  char errbuf[CURL_ERROR_SIZE] = {};
  const std::string url = p.origin + p.path;
  const auto ms = static_cast<long>(p.timeout_s * 1000.0 + 0.5);
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 1L);
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ms < 1 ? 1L : ms);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, ms < 1 ? 1L : ms);
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, p.payload.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(p.payload.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  // No CURLOPT_ACCEPT_ENCODING: libcurl decodes nothing, and a compressed body is refused by its header.

  const auto t0 = std::chrono::steady_clock::now();
  const CURLcode rc = curl_easy_perform(c);
  a.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  switch (t.head.refusal()) {
    case ResponseHead::Refusal::compressed:
      a.kind = Kind::compressed;
      a.encoding = t.head.encoding();
      return;
    case ResponseHead::Refusal::too_big:
      a.kind = Kind::too_big;
      a.size = t.head.declared_size();
      return;
    case ResponseHead::Refusal::head_too_big:
      a.kind = Kind::transport;
      a.transport_error = t.head.reason();
      return;
    case ResponseHead::Refusal::none:
      break;
  }
  if (t.body_too_big) {
    a.kind = Kind::too_big;
    a.size = "more than " + std::to_string(p.max_body);
    return;
  }
  if (rc == CURLE_OPERATION_TIMEDOUT) {
    a.kind = Kind::deadline;
    return;
  }
  if (rc == CURLE_OUT_OF_MEMORY) {
    // libcurl's answer to a header line past CURL_MAX_HTTP_HEADER ("Avoided giant realloc for header"), and to
    // a real shortage of memory, which it does not tell apart.
    a.kind = Kind::transport;
    a.transport_error = "the response head has a line longer than libcurl's limit of 100 KiB (or memory ran out)";
    return;
  }
  if (rc != CURLE_OK) {
    a.kind = Kind::transport;
    // errbuf is libcurl's own sentence; it can quote a server's bytes (a header that is too long), so the
    // client cuts and redacts it like any other server text.
    a.transport_error = errbuf[0] ? std::string(errbuf) : std::string(curl_easy_strerror(rc));
    a.transport_timed_out = false;
    return;
  }
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  a.kind = Kind::response;
  a.status = static_cast<int>(status);
  a.retry_after = t.head.retry_after();
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void advplan_http_post(const advplan::http::Post& p,
                                                                         advplan::http::Reply& a) noexcept {
  try {
    post(p, a);
  } catch (const std::exception& e) {  // e.g. memory for the body
    a = advplan::http::Reply{};
    a.kind = advplan::http::Reply::Kind::transport;
    a.transport_error = e.what();
  }
}
