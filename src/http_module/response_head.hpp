#pragma once
// The head of one HTTP response (status line and header lines) as libcurl hands it over, line by line, to
// libadvplan_http.so (http_module.cpp). Plain code without libcurl, so that the unit tests and the fuzz target
// (tests/fuzz/fuzz_http_head.cpp) drive exactly what the module runs. The head is untrusted: it is bounded in
// total size and in line count, parsed by hand (no std::regex), and everything it keeps is short.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace advplan::http {

class ResponseHead {
 public:
  /// libcurl bounds one header line itself (CURL_MAX_HTTP_HEADER, 100 KiB); these bound the whole head.
  static constexpr std::size_t kMaxHeadBytes = 64u << 10;
  static constexpr std::size_t kMaxHeaderLines = 200;

  explicit ResponseHead(std::size_t max_body) : max_body_(max_body) {}

  /// Takes one line (with or without its CRLF). Returns false when the response must be abandoned; then
  /// refusal() says why in one sentence fragment. A new status line (after a 1xx interim response) starts
  /// a new head, but the byte and line budgets count the whole exchange.
  bool line(std::string_view l) {
    bytes_ += l.size();
    ++lines_;
    if (bytes_ > kMaxHeadBytes)
      return refuse(Refusal::head_too_big, "the response head exceeds " + std::to_string(kMaxHeadBytes) + " bytes");
    if (lines_ > kMaxHeaderLines)
      return refuse(Refusal::head_too_big,
                    "the response head has more than " + std::to_string(kMaxHeaderLines) + " lines");
    while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) l.remove_suffix(1);
    if (l.size() >= 5 && l.substr(0, 5) == "HTTP/") return status_line(l);
    if (l.empty()) return true;  // the end of a head
    const std::size_t colon = l.find(':');
    if (colon == std::string_view::npos) return true;  // a line libcurl passed on that is not a field: ignored
    const std::string_view name = l.substr(0, colon);
    const std::string_view value = trim(l.substr(colon + 1));
    if (iequals(name, "Content-Encoding")) {
      if (!value.empty() && !iequals(value, "identity")) {
        encoding_ = std::string(value.substr(0, 80));
        return refuse(Refusal::compressed, "compressed");
      }
    } else if (iequals(name, "Content-Length")) {
      const std::optional<unsigned long long> n = digits(value);
      if (n && *n > max_body_) {
        declared_size_ = std::string(value.substr(0, 40));
        return refuse(Refusal::too_big, "too big");
      }
    } else if (iequals(name, "Retry-After")) {
      // Seconds only (an HTTP date is ignored), at most 10 digits.
      const std::optional<unsigned long long> n = digits(value);
      retry_after_ = n ? std::optional<double>(static_cast<double>(*n)) : std::nullopt;
    }
    return true;
  }

  enum class Refusal { none, head_too_big, compressed, too_big };
  Refusal refusal() const { return refusal_; }
  const std::string& reason() const { return reason_; }
  int status() const { return status_; }
  const std::optional<double>& retry_after() const { return retry_after_; }
  const std::string& encoding() const { return encoding_; }
  const std::string& declared_size() const { return declared_size_; }

  static bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      char x = a[i], y = b[i];
      if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
      if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
      if (x != y) return false;
    }
    return true;
  }

  /// A decimal of 1 to 18 digits and nothing else; nullopt otherwise (so it cannot overflow).
  static std::optional<unsigned long long> digits(std::string_view v) {
    if (v.empty() || v.size() > 18) return std::nullopt;
    unsigned long long n = 0;
    for (const char c : v) {
      if (c < '0' || c > '9') return std::nullopt;
      n = n * 10 + static_cast<unsigned long long>(c - '0');
    }
    return n;
  }

 private:
  static std::string_view trim(std::string_view v) {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    return v;
  }

  /// "HTTP/1.1 200 OK", "HTTP/2 200": the three digits after the first space.
  bool status_line(std::string_view l) {
    status_ = 0;
    retry_after_.reset();
    const std::size_t sp = l.find(' ');
    if (sp != std::string_view::npos && l.size() >= sp + 4) {
      const std::string_view code = l.substr(sp + 1, 3);
      if (const auto n = digits(code); n && code.size() == 3) status_ = static_cast<int>(*n);
    }
    return true;
  }

  bool refuse(Refusal r, std::string why) {
    refusal_ = r;
    reason_ = std::move(why);
    return false;
  }

  std::size_t max_body_;
  std::size_t bytes_ = 0, lines_ = 0;
  int status_ = 0;
  std::optional<double> retry_after_;
  std::string encoding_, declared_size_, reason_;
  Refusal refusal_ = Refusal::none;
};

}  // namespace advplan::http
