// `advplan view`'s requests (report/view_server.hpp): the token path, the Fetch Metadata check and the headers.
#include "advplan/report/view_server.hpp"

#include <fmt/format.h>
#include <sys/random.h>

#include <cerrno>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"

namespace advplan::report {
namespace {

std::string header_or_empty(const io::LocalRequest& r, std::string_view name) {
  const std::string* v = r.head.header(name);
  return v ? *v : "";
}

io::LocalResponse served_file(const ViewSite& site, std::string_view file) {
  try {
    if (auto page = site.get(file)) {
      io::LocalResponse r;
      r.content_type = page->content_type;
      r.body = std::move(page->body);
      return r;
    }
    return io::text_response(404, "Not found.");
  } catch (const RunChanged& e) {
    return io::text_response(409, untrusted::excerpt(e.what(), 300));
  } catch (const std::exception& e) {
    return io::text_response(500, untrusted::excerpt(e.what(), 300));
  }
}

}  // namespace

bool same_view_token(std::string_view presented, std::string_view token) {
  if (presented.size() != token.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < presented.size(); ++i) diff |= static_cast<unsigned char>(presented[i] ^ token[i]);
  return diff == 0;
}

bool from_another_site(const io::LocalRequest& request, bool opens_index) {
  const std::string site = header_or_empty(request, "sec-fetch-site");
  if (site != "cross-site" && site != "same-site") return false;
  const bool navigation = header_or_empty(request, "sec-fetch-mode") == "navigate" &&
                          header_or_empty(request, "sec-fetch-dest") == "document";
  return request.head.method == "POST" || !(navigation && opens_index);
}

std::string new_view_token() {
  unsigned char bytes[16];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw IoError("view: the operating system gave no random bytes for the address's token");
    got += static_cast<std::size_t>(n);
  }
  std::string hex;
  for (unsigned char b : bytes) hex += fmt::format("{:02x}", b);
  return hex;
}

io::LocalServerOptions view_server_options(int port) {
  io::LocalServerOptions o;
  o.port = port;
  o.headers = {{"Cross-Origin-Resource-Policy", "same-origin"},
               {"X-Content-Type-Options", "nosniff"},
               {"Referrer-Policy", "no-referrer"},
               {"Cache-Control", "no-store"},
               {"Content-Security-Policy", "frame-ancestors 'none'"},
               {"X-Frame-Options", "DENY"}};
  return o;
}

io::LocalResponse answer_view_request(const ViewSite& site, std::string_view token, const io::LocalRequest& request) {
  const std::string_view path = request.head.path;
  const std::size_t slash = path.empty() ? 0 : path.find('/', 1);
  const std::string_view first = path.empty() ? path : path.substr(1, slash == std::string_view::npos ? path.npos : slash - 1);
  if (path.empty() || path.front() != '/' || !same_view_token(first, token))
    return io::text_response(404, "Not found: open the address `advplan view` printed; it holds this run's secret path.");
  if (slash == std::string_view::npos) {
    io::LocalResponse r = io::text_response(301, "Moved to the folder's address.");
    r.headers.emplace_back("Location", fmt::format("/{}/", token));
    return r;
  }
  const std::string_view file = path.substr(slash);
  if (from_another_site(request, file == "/" || file == "/index.html"))
    return io::text_response(403, "Refused: a page of another site asked for this run's files.");
  return served_file(site, file);
}

}  // namespace advplan::report
