#pragma once
// A raw TCP client for the loopback server's tests (io::LocalServer): connect (optionally from another 127/8
// address), send bytes as they are, read a response or wait for the server to close. Every wait is bounded.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

#include "advplan/io/local_server.hpp"

namespace advplan::testing {

/// A connected socket, closed on destruction.
class RawClient {
 public:
  explicit RawClient(int port, const char* from = nullptr) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (from) {
      sockaddr_in src{};
      src.sin_family = AF_INET;
      ::inet_pton(AF_INET, from, &src.sin_addr);
      ::bind(fd_, reinterpret_cast<sockaddr*>(&src), sizeof src);
    }
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~RawClient() { ::close(fd_); }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;
  bool connected() const { return connected_; }

  /// False when the server has closed the connection (or reset it).
  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }
  /// Everything until the server closes, or until `wait` passes without a byte.
  std::string read_all(std::chrono::milliseconds wait = std::chrono::milliseconds(5000)) {
    std::string out = std::move(pending_);
    pending_.clear();
    while (readable(wait)) {
      char buf[65536];
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        closed_ = true;
        break;
      }
      out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
  }
  /// One response: its head and Content-Length bytes of body (none for `head_only`), within `wait` per read.
  std::string read_response(bool head_only = false, std::chrono::milliseconds wait = std::chrono::milliseconds(5000)) {
    // Bytes of a later response that came with this one (pipelining) wait in pending_ for the next call.
    std::string out = std::move(pending_);
    pending_.clear();
    std::size_t want = std::string::npos;
    auto measure = [&] {
      const std::size_t end = out.find("\r\n\r\n");
      if (want != std::string::npos || end == std::string::npos) return;
      const std::size_t cl = out.find("Content-Length: ");
      want = end + 4 + (head_only || cl == std::string::npos || cl > end ? 0 : std::strtoull(out.c_str() + cl + 16, nullptr, 10));
    };
    measure();
    while (out.size() < want && readable(wait)) {
      char buf[65536];
      const ssize_t n = ::recv(fd_, buf, want == std::string::npos ? sizeof buf : std::min(sizeof buf, want - out.size()), 0);
      if (n <= 0) {
        closed_ = true;
        break;
      }
      out.append(buf, static_cast<std::size_t>(n));
      measure();
    }
    if (want != std::string::npos && out.size() > want) {
      pending_ = out.substr(want);
      out.resize(want);
    }
    return out;
  }
  /// Whether the server has closed: a read returns end of file or a reset within `wait`.
  bool closed_by_server(std::chrono::milliseconds wait = std::chrono::milliseconds(5000)) {
    read_all(wait);
    return closed_;
  }

 private:
  bool readable(std::chrono::milliseconds wait) {
    pollfd p{fd_, POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(wait.count())) > 0;
  }
  int fd_ = -1;
  std::string pending_;
  bool connected_ = false;
  bool closed_ = false;
};

/// A LocalServer running on its own thread for the life of the object.
class ServerThread {
 public:
  ServerThread(io::LocalServerOptions options, io::LocalServer::Handler handler)
      : server_(std::move(options), std::move(handler)), thread_([this] { server_.run(); }) {}
  ~ServerThread() {
    server_.stop();
    thread_.join();
  }
  int port() const { return server_.port(); }

 private:
  io::LocalServer server_;
  std::thread thread_;
};

/// The status of a response text ("HTTP/1.1 404 ..." -> 404), or 0.
inline int status_of(const std::string& response) {
  return response.rfind("HTTP/1.1 ", 0) == 0 ? std::atoi(response.c_str() + 9) : 0;
}
/// The body of a response text.
inline std::string body_of(const std::string& response) {
  const std::size_t end = response.find("\r\n\r\n");
  return end == std::string::npos ? "" : response.substr(end + 4);
}
/// A GET of `target` with Host 127.0.0.1:port and the extra header lines `more` (each ending in \r\n).
inline std::string get_request(int port, const std::string& target, const std::string& more = "") {
  return "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n" + more + "\r\n";
}
/// One request on a new connection, and its response.
inline std::string exchange(int port, const std::string& request) {
  RawClient c(port);
  c.send(request);
  return c.read_response();
}

}  // namespace advplan::testing
