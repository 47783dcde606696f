// The request-head parser of the loopback server (io/http_request.hpp): RFC 9112's strict grammar, by hand.
#include "advplan/io/http_request.hpp"

#include <fmt/format.h>

#include <charconv>

namespace advplan::io::http {
namespace {

/// RFC 9110 tchar: the characters of a method or a field name.
bool is_tchar(char c) {
  if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}
bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!is_tchar(c)) return false;
  return true;
}
/// A field value's characters: visible ASCII, space, tab and obs-text (bytes >= 0x80); no control character.
bool is_field_value(std::string_view s) {
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) return false;
  }
  return true;
}
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
std::string lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}
std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

template <class T>
T fail(std::string& why, std::string text, T result) {
  why = std::move(text);
  return result;
}

ParsedHead refuse(int status, std::string why) {
  ParsedHead p;
  p.status = status;
  p.error = std::move(why);
  return p;
}

/// Splits `text` into lines ending in "\r\n" or "\n"; false when a CR stands anywhere else.
bool split_lines(std::string_view text, std::vector<std::string_view>& lines) {
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find('\r') != std::string_view::npos) return false;
    lines.push_back(line);
  }
  return true;
}

/// `METHOD SP origin-form SP HTTP/1.x`; the error's status, or 0.
int request_line(std::string_view line, RequestHead& h, std::string& why) {
  const std::size_t a = line.find(' ');
  const std::size_t b = a == std::string_view::npos ? a : line.find(' ', a + 1);
  if (b == std::string_view::npos || line.find(' ', b + 1) != std::string_view::npos) {
    return fail(why, "the request line is not METHOD TARGET VERSION", 400);
  }
  const std::string_view method = line.substr(0, a), target = line.substr(a + 1, b - a - 1), version = line.substr(b + 1);
  if (!is_token(method)) return fail(why, "the method is not a token", 400);
  if (target.size() > kMaxTargetBytes) return fail(why, fmt::format("the target is longer than {} bytes", kMaxTargetBytes), 414);
  if (target.empty() || target.front() != '/') return fail(why, "the target is not a path starting with /", 400);
  for (char c : target)
    if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f)
      return fail(why, "the target holds a character outside visible ASCII", 400);
  if (version.size() != 8 || !version.starts_with("HTTP/") || version[6] != '.' || version[5] < '0' || version[5] > '9' ||
      version[7] < '0' || version[7] > '9')
    return fail(why, "the version is not HTTP/x.y", 400);
  if (version[5] != '1' || version[7] > '1') return fail(why, "only HTTP/1.0 and HTTP/1.1 are served", 505);
  h.method = std::string(method);
  h.target = std::string(target);
  const std::size_t q = target.find('?');
  h.path = std::string(target.substr(0, q));
  h.query = q == std::string_view::npos ? "" : std::string(target.substr(q + 1));
  h.minor_version = version[7] - '0';
  return 0;
}

/// One `name: value` line into h.headers; false (with why) when it is malformed.
bool header_line(std::string_view line, RequestHead& h, std::string& why) {
  if (line.front() == ' ' || line.front() == '\t') return fail(why, "a folded header line (obsolete line folding)", false);
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return fail(why, "a header line without ':'", false);
  const std::string_view name = line.substr(0, colon), value = trimmed(line.substr(colon + 1));
  if (!is_token(name)) return fail(why, "a header name that is not a token (or white space before ':')", false);
  if (!is_field_value(value)) return fail(why, "a control character in a header value", false);
  h.headers.push_back({lowered(name), std::string(value)});
  return true;
}

/// Whether the comma-separated list `value` holds `token` (case-insensitive).
bool list_has(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    if (lowered(trimmed(value.substr(0, comma))) == token) return true;
    value.remove_prefix(comma == std::string_view::npos ? value.size() : comma + 1);
  }
  return false;
}

/// Host, Content-Length, Transfer-Encoding and Connection, checked and read; false (with why) when refused.
bool framing(RequestHead& h, std::string& why) {
  std::size_t hosts = 0;
  bool close = false, keep = false;
  for (const auto& f : h.headers) {
    if (f.name == "host") ++hosts;
    if (f.name == "transfer-encoding") h.transfer_encoding = true;
    if (f.name == "connection") {
      close = close || list_has(f.value, "close");
      keep = keep || list_has(f.value, "keep-alive");
    }
    if (f.name != "content-length") continue;
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(f.value.data(), f.value.data() + f.value.size(), n);
    if (f.value.empty() || ec != std::errc() || end != f.value.data() + f.value.size() || f.value.front() == '-')
      return fail(why, "Content-Length is not a number of bytes", false);
    if (h.content_length && *h.content_length != n) return fail(why, "two different Content-Length fields", false);
    h.content_length = n;
  }
  if (hosts == 0) return fail(why, "no Host field", false);
  if (hosts > 1) return fail(why, "more than one Host field", false);
  if (h.content_length && h.transfer_encoding) return fail(why, "both Content-Length and Transfer-Encoding", false);
  h.keep_alive = !close && (h.minor_version == 1 || keep);
  return true;
}

}  // namespace

const std::string* RequestHead::header(std::string_view lower_name) const {
  for (const auto& f : headers)
    if (f.name == lower_name) return &f.value;
  return nullptr;
}

std::size_t find_head_end(std::string_view buffer) {
  for (std::size_t i = buffer.find('\n'); i != std::string_view::npos; i = buffer.find('\n', i + 1)) {
    if (i + 1 < buffer.size() && buffer[i + 1] == '\n') return i + 2;
    if (i + 2 < buffer.size() && buffer[i + 1] == '\r' && buffer[i + 2] == '\n') return i + 3;
  }
  return std::string_view::npos;
}

ParsedHead parse_request_head(std::string_view text) {
  std::vector<std::string_view> lines;
  if (!split_lines(text, lines)) return refuse(400, "a carriage return that does not end a line");
  // The head ends with an empty line: drop it (and nothing may follow it).
  if (lines.size() < 2 || !lines.back().empty()) return refuse(400, "the head does not end with an empty line");
  lines.pop_back();
  if (text.find('\0') != std::string_view::npos) return refuse(400, "a NUL byte in the head");
  ParsedHead p;
  if (const int status = request_line(lines.front(), p.head, p.error)) return refuse(status, std::move(p.error));
  if (lines.size() - 1 > kMaxHeaderFields)
    return refuse(431, fmt::format("more than {} header fields", kMaxHeaderFields));
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) return refuse(400, "an empty line inside the head");
    if (!header_line(lines[i], p.head, p.error)) return refuse(400, std::move(p.error));
  }
  if (!framing(p.head, p.error)) return refuse(400, std::move(p.error));
  return p;
}

}  // namespace advplan::io::http
