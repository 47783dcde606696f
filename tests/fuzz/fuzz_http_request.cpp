// The request-head parser of advplan's loopback server (io/http_request.hpp), fed what a client could send: the
// head as find_head_end cuts it from the bytes, or the bytes whole. Never throws; what it accepts is consistent.
#include <cstdlib>
#include <string_view>

#include "advplan/io/http_request.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace http = advplan::io::http;
  const std::string text = advplan::fuzz::text(data, size);
  const std::size_t end = http::find_head_end(text);
  if (end != std::string_view::npos && (end > text.size() || end < 2 || text[end - 1] != '\n')) std::abort();
  for (const std::string_view head : {std::string_view(text), std::string_view(text).substr(0, end)}) {
    const http::ParsedHead p = http::parse_request_head(head);
    if (!p.ok()) {
      if (p.status != 400 && p.status != 414 && p.status != 431 && p.status != 505) std::abort();
      continue;
    }
    const http::RequestHead& h = p.head;
    if (h.target.empty() || h.target[0] != '/' || h.target.size() > http::kMaxTargetBytes) std::abort();
    if (h.path + (h.query.empty() && h.target.find('?') == std::string::npos ? "" : "?" + h.query) != h.target) std::abort();
    if (h.headers.size() > http::kMaxHeaderFields || !h.header("host")) std::abort();
    if (h.content_length && h.transfer_encoding) std::abort();
    if (h.minor_version != 0 && h.minor_version != 1) std::abort();
    for (const auto& f : h.headers) {
      if (f.name.empty()) std::abort();
      for (char c : f.name)
        if ((c >= 'A' && c <= 'Z') || c == ':' || c == ' ') std::abort();
      for (char c : f.value)
        if (c == '\r' || c == '\n' || c == '\0') std::abort();
    }
  }
  return 0;
}
