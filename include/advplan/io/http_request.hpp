#pragma once
// An HTTP/1.1 request head read by the loopback server (io/local_server.hpp, docs/REPORT.md "Serving a large run"):
// a pure parser of untrusted text, without regular expressions, that accepts the strict form of RFC 9112 only.
// It never reads a body; it says how long one is declared to be, and the server decides.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace advplan::io::http {

inline constexpr std::size_t kMaxTargetBytes = 8 * 1024;  ///< the request target
inline constexpr std::size_t kMaxHeaderFields = 100;      ///< header lines in one head

struct HeaderField {
  std::string name;   ///< lower case
  std::string value;  ///< without the surrounding blanks
};

struct RequestHead {
  std::string method;   ///< as sent (methods are case-sensitive): "GET", "HEAD", ...
  std::string target;   ///< origin form: "/path?query"
  std::string path;     ///< the target before '?', not percent-decoded
  std::string query;    ///< after '?', or empty
  int minor_version = 1;  ///< HTTP/1.0 or HTTP/1.1
  std::vector<HeaderField> headers;
  std::optional<std::uint64_t> content_length;  ///< Content-Length, when sent (every copy equal)
  bool transfer_encoding = false;                ///< a Transfer-Encoding field was sent
  bool keep_alive = true;                        ///< the connection may carry another request after this one

  /// The value of the field `lower_name` (lower case), or nullptr; the first when it is repeated.
  const std::string* header(std::string_view lower_name) const;
};

/// The outcome: `error` empty and `head` set, or `status` (400, 414, 431, 505) with one sentence in `error`.
struct ParsedHead {
  RequestHead head;
  int status = 0;
  std::string error;
  bool ok() const { return error.empty(); }
};

/// Where a head ends in `buffer`: the offset just past its empty line ("\r\n\r\n", or "\n\n" from a client that
/// ends lines with a bare LF), or npos when it has not ended yet.
std::size_t find_head_end(std::string_view buffer);

/// Parses one request head: the text up to and including its empty line (as find_head_end cuts it). Refused:
/// a request line that is not `METHOD SP origin-form SP HTTP/1.x`, a target longer than kMaxTargetBytes, a
/// version other than 1.0 or 1.1 (505), a header line without a token name and ':', white space before the ':', a
/// folded line, a control character (NUL, a lone CR) anywhere, more than kMaxHeaderFields fields, a missing
/// or repeated Host, a Content-Length that is not digits or that differs between copies, and Content-Length
/// together with Transfer-Encoding. Never throws.
ParsedHead parse_request_head(std::string_view text);

}  // namespace advplan::io::http
