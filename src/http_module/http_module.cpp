// libadvplan_http.so: one HTTP POST with cpp-httplib, with a total deadline, a cap on the body and no compressed
// body (src/http_module/http_module.hpp). A watchdog thread stops the client when the deadline passes, so a
// server that trickles bytes cannot hold the run.
#include "http_module.hpp"

#include <httplib.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>

namespace {

/// Retry-After in seconds; nullopt when absent or not a number of seconds (an HTTP date is ignored).
std::optional<double> retry_after(const httplib::Response& r) {
  if (!r.has_header("Retry-After")) return std::nullopt;
  const std::string v = r.get_header_value("Retry-After");
  char* end = nullptr;
  const double s = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || !std::isfinite(s) || s < 0) return std::nullopt;
  return s;
}

void set_timeouts(httplib::Client& cli, double timeout_s) {
  const auto sec = static_cast<time_t>(timeout_s);
  const auto usec = static_cast<time_t>((timeout_s - static_cast<double>(sec)) * 1e6);
  cli.set_connection_timeout(sec, usec);
  cli.set_read_timeout(sec, usec);
  cli.set_write_timeout(sec, usec);
}

void post(const advplan::http::Post& p, advplan::http::Reply& a) {
  using Kind = advplan::http::Reply::Kind;
  httplib::Client cli(p.origin);
  set_timeouts(cli, p.timeout_s);
  cli.set_decompress(false);
  httplib::Request req;
  req.method = "POST";
  req.path = p.path;
  for (const auto& [k, v] : p.headers) req.headers.emplace(k, v);
  req.body = p.payload;
  req.set_header("Content-Type", "application/json");
  std::string encoding, too_big;
  req.response_handler = [&](const httplib::Response& r) {
    encoding = r.get_header_value("Content-Encoding");
    if (!encoding.empty() && encoding != "identity") return false;
    if (r.has_header("Content-Length")) {
      const std::string len = r.get_header_value("Content-Length");
      if (std::strtoull(len.c_str(), nullptr, 10) > p.max_body) {
        too_big = len;
        return false;
      }
    }
    return true;
  };
  req.content_receiver = [&](const char* data, std::size_t n, std::uint64_t, std::uint64_t) {
    if (a.body.size() + n > p.max_body) {
      too_big = "more than " + std::to_string(p.max_body);
      return false;
    }
    a.body.append(data, n);
    return true;
  };

  std::mutex mu;
  std::condition_variable cv;
  bool done = false, deadline_hit = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                                std::chrono::duration<double>(p.timeout_s));
  std::thread watchdog([&] {
    std::unique_lock lock(mu);
    if (cv.wait_until(lock, deadline, [&] { return done; })) return;
    deadline_hit = true;
    // stop() shuts the socket of a request in flight; repeat it in case the socket did not exist yet.
    while (!done) {
      lock.unlock();
      cli.stop();
      lock.lock();
      cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return done; });
    }
  });
  const auto t0 = std::chrono::steady_clock::now();
  const httplib::Result res = cli.send(req);
  a.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  {
    std::lock_guard lock(mu);
    done = true;
  }
  cv.notify_all();
  watchdog.join();

  if (deadline_hit) {
    a.kind = Kind::deadline;
  } else if (!encoding.empty() && encoding != "identity") {
    a.kind = Kind::compressed;
    a.encoding = encoding;
  } else if (!too_big.empty()) {
    a.kind = Kind::too_big;
    a.size = too_big;
  } else if (!res) {
    const httplib::Error e = res.error();
    a.kind = Kind::transport;
    a.transport_error = httplib::to_string(e);
    a.transport_timed_out = (e == httplib::Error::Read || e == httplib::Error::ConnectionTimeout ||
                             e == httplib::Error::Write || e == httplib::Error::Connection) &&
                            a.elapsed_s >= 0.9 * p.timeout_s;
  } else {
    a.kind = Kind::response;
    a.status = res->status;
    a.retry_after = retry_after(*res);
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void advplan_http_post(const advplan::http::Post& p,
                                                                         advplan::http::Reply& a) noexcept {
  try {
    post(p, a);
  } catch (const std::exception& e) {  // e.g. a thread that cannot be started
    a = advplan::http::Reply{};
    a.kind = advplan::http::Reply::Kind::transport;
    a.transport_error = e.what();
  }
}
