// The loopback HTTP/1.1 server (io/local_server.hpp): one thread, poll() over the listening socket, a wake-up pipe
// and the connections, each a small state machine (head -> body -> write -> head again, or closed) with one deadline.
#include "advplan/io/local_server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"

namespace advplan::io {
namespace {

using Clock = std::chrono::steady_clock;

/// An owned file descriptor.
struct Fd {
  int fd = -1;
  explicit Fd(int f = -1) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(std::exchange(o.fd, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd, o.fd);
    return *this;
  }
  Fd(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

enum class Phase { head, body, write };

struct Connection {
  Fd fd;
  std::string peer;
  Phase phase = Phase::head;
  std::string in;   ///< bytes read and not yet used: the head so far, or the next request's start
  std::string out;  ///< the response being written
  std::size_t sent = 0;
  bool close_after = false;  ///< close once `out` is written
  bool idle = false;         ///< kept alive after a response, no byte of the next request yet
  bool pipelined = false;    ///< `in` may hold the next request (answered at the next turn, never recursively)
  Clock::time_point deadline, idle_deadline;
  LocalRequest request;  ///< during the body phase
  bool closed = false;
};

const char* reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 301: return "Moved Permanently";
    case 400: return "Bad Request";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 421: return "Misdirected Request";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Status";
  }
}

std::string lowered(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

std::string peer_address(const sockaddr_in& a) {
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
  return text;
}

}  // namespace

LocalResponse text_response(int status, std::string sentence) {
  LocalResponse r;
  r.status = status;
  r.body = std::move(sentence) + "\n";
  return r;
}

struct LocalServer::Impl {
  LocalServerOptions opt;
  Handler handler;
  Fd listener, wake_read, wake_write;
  int port = 0;
  std::vector<std::string> hosts;  ///< the Host values answered
  std::vector<std::unique_ptr<Connection>> conns;

  void listen_on_loopback();
  void accept_all();
  void read_from(Connection& c);
  void advance(Connection& c);
  void start_response(Connection& c, const LocalResponse& r, bool head_only, bool keep_alive);
  void write_to(Connection& c);
  LocalResponse answer(Connection& c, const http::ParsedHead& p, bool& keep_alive, bool& wait_for_body);
  LocalResponse call_handler(const LocalRequest& req);
  std::string format(const LocalResponse& r, bool head_only, bool keep_alive) const;
  void expire(Clock::time_point now);
  int poll_timeout(Clock::time_point now) const;
};

void LocalServer::Impl::listen_on_loopback() {
  listener = Fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (listener.fd < 0) throw IoError(fmt::format("cannot open a socket: {}", std::strerror(errno)));
  const int yes = 1;
  ::setsockopt(listener.fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<std::uint16_t>(opt.port));
  if (::bind(listener.fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(listener.fd, 64) != 0)
    throw IoError(fmt::format("cannot listen on 127.0.0.1:{} ({}); pass another --port", opt.port, std::strerror(errno)));
  socklen_t len = sizeof a;
  ::getsockname(listener.fd, reinterpret_cast<sockaddr*>(&a), &len);
  port = ntohs(a.sin_port);
  for (const char* h : {"127.0.0.1", "localhost", "[::1]"}) {
    hosts.push_back(fmt::format("{}:{}", h, port));
    if (port == 80) hosts.emplace_back(h);
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_NONBLOCK | O_CLOEXEC) != 0) throw IoError("cannot make the server's wake-up pipe");
  wake_read = Fd(pipe_fds[0]);
  wake_write = Fd(pipe_fds[1]);
}

/// Takes every pending connection; one over a limit gets a 503 (best effort) and is closed at once.
void LocalServer::Impl::accept_all() {
  for (int n = 0; n < 256; ++n) {
    sockaddr_in a{};
    socklen_t len = sizeof a;
    Fd fd(::accept4(listener.fd, reinterpret_cast<sockaddr*>(&a), &len, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (fd.fd < 0) return;  // EAGAIN: none left; EMFILE and the like: try again at the next turn
    std::string peer = peer_address(a);
    const auto same = static_cast<std::size_t>(
        std::count_if(conns.begin(), conns.end(), [&](const auto& c) { return c->peer == peer; }));
    if (conns.size() >= opt.max_connections || same >= opt.max_connections_per_client) {
      const std::string refusal =
          format(text_response(503, "Too many connections to advplan's server; try again."), false, false);
      [[maybe_unused]] const auto sent = ::send(fd.fd, refusal.data(), refusal.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      continue;
    }
    auto c = std::make_unique<Connection>(Connection{std::move(fd), std::move(peer)});
    c->deadline = Clock::now() + opt.request_timeout;
    conns.push_back(std::move(c));
  }
}

void LocalServer::Impl::read_from(Connection& c) {
  // At most what the phase can use: the head up to one byte over its limit, or the rest of the body.
  const std::size_t room = c.phase == Phase::body ? c.request.head.content_length.value_or(0) - c.request.body.size()
                                                  : opt.max_head_bytes + 1 - std::min(c.in.size(), opt.max_head_bytes);
  char buf[16 * 1024];
  const ssize_t got = ::recv(c.fd.fd, buf, std::min(room, sizeof buf), 0);
  if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    c.closed = true;
    return;
  }
  if (got < 0) return;
  c.idle = false;
  (c.phase == Phase::body ? c.request.body : c.in).append(buf, static_cast<std::size_t>(got));
  advance(c);
}

/// Uses what has been read: a complete head is answered (or its body awaited), a complete body is answered.
void LocalServer::Impl::advance(Connection& c) {
  if (c.phase == Phase::body) {
    if (c.request.body.size() < *c.request.head.content_length) return;
    start_response(c, call_handler(c.request), c.request.head.method == "HEAD", c.request.head.keep_alive);
    return;
  }
  if (c.phase != Phase::head) return;
  const std::size_t end = http::find_head_end(std::string_view(c.in).substr(0, opt.max_head_bytes));
  if (end == std::string_view::npos) {
    if (c.in.size() > opt.max_head_bytes)
      start_response(c, text_response(431, fmt::format("The request head is over {} bytes.", opt.max_head_bytes)), false,
                     false);
    return;
  }
  const http::ParsedHead p = http::parse_request_head(std::string_view(c.in).substr(0, end));
  c.in.erase(0, end);
  bool keep_alive = false, wait_for_body = false;
  LocalResponse r = answer(c, p, keep_alive, wait_for_body);
  if (wait_for_body) {
    c.phase = Phase::body;
    const std::size_t have = std::min<std::size_t>(c.in.size(), *c.request.head.content_length);
    c.request.body = c.in.substr(0, have);
    c.in.erase(0, have);
    advance(c);
    return;
  }
  start_response(c, r, p.ok() && p.head.method == "HEAD", keep_alive);
}

/// The answer to a complete head, or wait_for_body (a body is allowed and declared).
LocalResponse LocalServer::Impl::answer(Connection& c, const http::ParsedHead& p, bool& keep_alive, bool& wait_for_body) {
  if (!p.ok()) return text_response(p.status, "Bad request: " + p.error + ".");
  const http::RequestHead& h = p.head;
  if (std::find(hosts.begin(), hosts.end(), lowered(*h.header("host"))) == hosts.end())
    return text_response(421, fmt::format("This server answers only to the address it printed (Host {}).", hosts[0]));
  if (h.transfer_encoding || h.content_length.value_or(0) > opt.max_body_bytes)
    return text_response(413, opt.max_body_bytes == 0
                                  ? std::string("This server takes no request body.")
                                  : fmt::format("A request body must have a Content-Length of at most {} bytes.",
                                                opt.max_body_bytes));
  if (std::find(opt.methods.begin(), opt.methods.end(), h.method) == opt.methods.end()) {
    LocalResponse r = text_response(405, fmt::format("Method {} is not served here.", untrusted::excerpt(h.method, 20)));
    std::string allow;
    for (const auto& m : opt.methods) allow += (allow.empty() ? "" : ", ") + m;
    r.headers.emplace_back("Allow", allow);
    return r;
  }
  keep_alive = h.keep_alive;
  c.request = LocalRequest{h, "", c.peer};
  if (h.content_length.value_or(0) > 0) {
    wait_for_body = true;
    return {};
  }
  return call_handler(c.request);
}

LocalResponse LocalServer::Impl::call_handler(const LocalRequest& req) {
  try {
    return handler(req);
  } catch (const std::exception& e) {
    return text_response(500, untrusted::excerpt(e.what(), 300));
  }
}

std::string LocalServer::Impl::format(const LocalResponse& r, bool head_only, bool keep_alive) const {
  std::string out = fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: {}\r\n", r.status,
                                reason(r.status), r.content_type, r.body.size(), keep_alive ? "keep-alive" : "close");
  for (const auto& [k, v] : opt.headers) out += fmt::format("{}: {}\r\n", k, v);
  for (const auto& [k, v] : r.headers) out += fmt::format("{}: {}\r\n", k, v);
  out += "\r\n";
  if (!head_only) out += r.body;
  return out;
}

void LocalServer::Impl::start_response(Connection& c, const LocalResponse& r, bool head_only, bool keep_alive) {
  c.out = format(r, head_only, keep_alive);
  c.sent = 0;
  c.close_after = !keep_alive;
  c.phase = Phase::write;
  c.deadline = Clock::now() + opt.write_timeout;
  write_to(c);
}

/// Sends what the socket takes; a finished response closes the connection or waits for the next request.
void LocalServer::Impl::write_to(Connection& c) {
  while (c.sent < c.out.size()) {
    const ssize_t n = ::send(c.fd.fd, c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      c.closed = true;
      return;
    }
    c.sent += static_cast<std::size_t>(n);
  }
  if (c.close_after) {
    ::shutdown(c.fd.fd, SHUT_WR);
    c.closed = true;
    return;
  }
  const auto now = Clock::now();
  c.out.clear();
  c.phase = Phase::head;
  c.idle = c.in.empty();
  c.deadline = now + opt.request_timeout;
  c.idle_deadline = now + opt.idle_timeout;
  c.pipelined = !c.in.empty();
}

void LocalServer::Impl::expire(Clock::time_point now) {
  for (auto& c : conns)
    if (now >= c->deadline || (c->idle && now >= c->idle_deadline)) c->closed = true;
  std::erase_if(conns, [](const auto& c) { return c->closed; });
}

int LocalServer::Impl::poll_timeout(Clock::time_point now) const {
  auto next = now + std::chrono::seconds(1);
  for (const auto& c : conns) {
    if (c->pipelined) return 0;
    next = std::min({next, c->deadline, c->idle ? c->idle_deadline : next});
  }
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(next - now).count();
  return static_cast<int>(std::max<std::int64_t>(ms, 0));
}

LocalServer::LocalServer(LocalServerOptions options, Handler handler) : impl_(std::make_unique<Impl>()) {
  impl_->opt = std::move(options);
  impl_->handler = std::move(handler);
  impl_->listen_on_loopback();
}

LocalServer::~LocalServer() = default;

int LocalServer::port() const { return impl_->port; }

void LocalServer::run() {
  Impl& m = *impl_;
  std::vector<pollfd> fds;
  for (;;) {
    fds.assign({{m.wake_read.fd, POLLIN, 0}, {m.listener.fd, POLLIN, 0}});
    for (const auto& c : m.conns)
      fds.push_back({c->fd.fd, static_cast<short>(c->phase == Phase::write ? POLLOUT : POLLIN), 0});
    const int ready = ::poll(fds.data(), fds.size(), m.poll_timeout(Clock::now()));
    if (ready < 0 && errno != EINTR) throw IoError(fmt::format("the server's poll failed: {}", std::strerror(errno)));
    if (ready > 0 && (fds[0].revents & POLLIN)) return;
    // The connections as polled (accept_all appends new ones after them).
    const std::size_t polled = fds.size() - 2;
    for (std::size_t i = 0; ready > 0 && i < polled; ++i) {
      Connection& c = *m.conns[i];
      const short ev = fds[i + 2].revents;
      if (ev & (POLLERR | POLLNVAL)) c.closed = true;
      else if (c.phase == Phase::write && (ev & (POLLOUT | POLLHUP))) m.write_to(c);
      else if (c.phase != Phase::write && (ev & (POLLIN | POLLHUP))) m.read_from(c);
    }
    for (auto& c : m.conns)
      if (std::exchange(c->pipelined, false) && !c->closed) m.advance(*c);
    m.expire(Clock::now());  // before accepting, so that a closed connection no longer counts against a limit
    if (ready > 0 && (fds[1].revents & POLLIN)) m.accept_all();
  }
}

void LocalServer::stop() noexcept {
  const char byte = 1;
  [[maybe_unused]] const auto n = ::write(impl_->wake_write.fd, &byte, 1);
}

}  // namespace advplan::io
