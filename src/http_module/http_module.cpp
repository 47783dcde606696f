// libadvplan_http.so: one HTTP POST with libcurl (src/http_module/http_module.hpp), with a total deadline, a
// bounded response head, a cap on the body and no compressed body. libcurl bounds each header line (100 KiB)
// and the transfer time (CURLOPT_TIMEOUT_MS, however slowly a server trickles bytes); ResponseHead bounds the
// whole head and reads the few fields the client needs, by hand.
#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <thread>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
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

/// One transfer: its easy handle, its headers and what the callbacks gather.
struct Job {
  Job(const advplan::http::Post& p, Reply& r) : transfer(p, r) {}
  Transfer transfer;
  std::unique_ptr<CURL, CurlDeleter> curl;
  std::unique_ptr<curl_slist, CurlDeleter> headers;
  std::string url;
  char errbuf[CURL_ERROR_SIZE] = {};
  std::chrono::steady_clock::time_point t0;
  advplan::http::DoneFn done = nullptr;
  void* arg = nullptr;
};

bool global_init_ok(Reply& a) {
  static std::once_flag global;
  static CURLcode init = CURLE_OK;
  std::call_once(global, [] { init = curl_global_init(CURL_GLOBAL_DEFAULT); });
  if (init == CURLE_OK) return true;
  a.kind = Reply::Kind::transport;
  a.transport_error = std::string("libcurl did not initialise: ") + curl_easy_strerror(init);
  return false;
}

/// Sets up the easy handle of `j`; false (and the reply filled) when the request cannot be made.
bool setup(Job& j) {
  using Kind = Reply::Kind;
  const auto& p = j.transfer.post;
  Reply& a = j.transfer.reply;
  if (!global_init_ok(a)) return false;
  j.curl.reset(curl_easy_init());
  if (!j.curl) {
    a.kind = Kind::transport;
    a.transport_error = "libcurl could not make a handle";
    return false;
  }
  auto add = [&](const std::string& line) {
    curl_slist* s = curl_slist_append(j.headers.get(), line.c_str());
    if (s) {
      (void)j.headers.release();
      j.headers.reset(s);
    }
    return s != nullptr;
  };
  for (const auto& [k, v] : p.headers) {
    if (!clean_header(k) || !clean_header(v)) {
      a.kind = Kind::transport;
      a.transport_error = "a request header holds a line break";
      return false;
    }
    add(k + ": " + v);
  }
  if (!clean_header(p.content_type)) {
    a.kind = Kind::transport;
    a.transport_error = "the content type holds a line break";
    return false;
  }
  if (!p.get) add("Content-Type: " + p.content_type);
  add("Expect:");  // no 100-continue round trip for a large prompt
  j.url = p.origin + p.path;
  const auto ms = static_cast<long>(p.timeout_s * 1000.0 + 0.5);
  CURL* c = j.curl.get();
  curl_easy_setopt(c, CURLOPT_URL, j.url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 1L);
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ms < 1 ? 1L : ms);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, ms < 1 ? 1L : ms);
  if (p.get) {
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, p.payload.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(p.payload.size()));
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, j.headers.get());
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &j.transfer);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &j.transfer);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, j.errbuf);
  curl_easy_setopt(c, CURLOPT_PRIVATE, &j);
  // No CURLOPT_ACCEPT_ENCODING: libcurl decodes nothing, and a compressed body is refused by its header.
  j.t0 = std::chrono::steady_clock::now();
  return true;
}

/// Turns the outcome of a finished transfer into the reply.
void finish(Job& j, CURLcode rc) {
  using Kind = Reply::Kind;
  Transfer& t = j.transfer;
  Reply& a = t.reply;
  const auto& p = t.post;
  a.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - j.t0).count();
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
    a.transport_error = j.errbuf[0] ? std::string(j.errbuf) : std::string(curl_easy_strerror(rc));
    return;
  }
  long status = 0;
  curl_easy_getinfo(j.curl.get(), CURLINFO_RESPONSE_CODE, &status);
  a.kind = Kind::response;
  a.status = static_cast<int>(status);
  a.retry_after = t.head.retry_after();
}

void post(const advplan::http::Post& p, Reply& a) {
  Job j(p, a);
  if (!setup(j)) return;
  finish(j, curl_easy_perform(j.curl.get()));
}

/// The I/O thread: a curl multi handle carrying every submitted transfer, at most `limit` at once. Started on the
/// first submission and never stopped (it sleeps in curl_multi_poll when idle); process exit ends it.
class IoLoop {
 public:
  static IoLoop& instance() {
    static IoLoop* loop = new IoLoop;  // never destroyed: the thread may outlive static destruction
    return *loop;
  }

  void submit(std::unique_ptr<Job> j) {
    {
      std::lock_guard lock(mu_);
      queue_.push_back(std::move(j));
    }
    curl_multi_wakeup(multi_);
  }

  void set_max(int n) {
    {
      std::lock_guard lock(mu_);
      max_ = std::max(1, n);
      limit_ = max_;
    }
    curl_multi_wakeup(multi_);  // queued transfers may start now
  }

 private:
  IoLoop() {
    Reply unused;
    if (!global_init_ok(unused)) throw std::runtime_error("libcurl did not initialise");
    multi_ = curl_multi_init();
    if (!multi_) throw std::runtime_error("libcurl could not make a multi handle");
    std::thread([this] { run(); }).detach();
  }

  void run() {
    std::map<CURL*, std::unique_ptr<Job>> active;
    for (;;) {
      {
        std::lock_guard lock(mu_);
        while (!queue_.empty() && static_cast<int>(active.size()) < limit_) {
          std::unique_ptr<Job> j = std::move(queue_.front());
          queue_.pop_front();
          CURL* c = j->curl.get();
          if (curl_multi_add_handle(multi_, c) != CURLM_OK) {
            j->transfer.reply.kind = Reply::Kind::transport;
            j->transfer.reply.transport_error = "libcurl could not start the transfer";
            complete(std::move(j));
            continue;
          }
          active.emplace(c, std::move(j));
        }
      }
      int running = 0;
      curl_multi_perform(multi_, &running);
      int left = 0;
      bool finished = false;
      while (CURLMsg* m = curl_multi_info_read(multi_, &left)) {
        if (m->msg != CURLMSG_DONE) continue;
        CURL* c = m->easy_handle;
        const CURLcode rc = m->data.result;
        curl_multi_remove_handle(multi_, c);
        auto it = active.find(c);
        if (it == active.end()) continue;
        std::unique_ptr<Job> j = std::move(it->second);
        active.erase(it);
        finish(*j, rc);
        adapt(j->transfer.reply);
        complete(std::move(j));
        finished = true;
      }
      // A finished transfer freed a connection: start the next queued one now rather than after a poll.
      if (!finished) curl_multi_poll(multi_, nullptr, 0, 1000, nullptr);
    }
  }

  /// A 429 halves the limit; a success raises it by one, up to the set maximum.
  void adapt(const Reply& r) {
    if (r.kind != Reply::Kind::response) return;
    std::lock_guard lock(mu_);
    if (r.status == 429) limit_ = std::max(1, limit_ / 2);
    else if (r.status >= 200 && r.status <= 299) limit_ = std::min(max_, limit_ + 1);
  }

  static void complete(std::unique_ptr<Job> j) {
    const advplan::http::DoneFn done = j->done;
    void* arg = j->arg;
    j.reset();  // the easy handle is freed before the caller may free post and reply
    done(arg);
  }

  CURLM* multi_ = nullptr;
  std::mutex mu_;
  std::deque<std::unique_ptr<Job>> queue_;
  int max_ = 16, limit_ = 16;
};

}  // namespace

extern "C" __attribute__((visibility("default"))) void advplan_http_submit(const advplan::http::Post& p,
                                                                           advplan::http::Reply& a,
                                                                           advplan::http::DoneFn done,
                                                                           void* arg) noexcept {
  try {
    auto j = std::make_unique<Job>(p, a);
    j->done = done;
    j->arg = arg;
    if (!setup(*j)) {
      j.reset();
      done(arg);
      return;
    }
    IoLoop::instance().submit(std::move(j));
  } catch (const std::exception& e) {
    a = advplan::http::Reply{};
    a.kind = advplan::http::Reply::Kind::transport;
    a.transport_error = e.what();
    done(arg);
  }
}

extern "C" __attribute__((visibility("default"))) void advplan_http_set_max_connections(int n) noexcept {
  try {
    IoLoop::instance().set_max(n);
  } catch (const std::exception&) {
  }
}

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
