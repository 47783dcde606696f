// The response head reader of libadvplan_http.so (src/http_module/response_head.hpp), fed line by line as
// libcurl feeds it. Never throws; the head it accepts is bounded; what it keeps is short.
#include <cstdlib>
#include <string_view>

#include "fuzz_common.hpp"
#include "http_module/response_head.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using advplan::http::ResponseHead;
  if (size == 0) return 0;
  const std::size_t max_body = static_cast<std::size_t>(data[0]) * 1000;
  const std::string text = advplan::fuzz::text(data + 1, size - 1);
  // Repeated, so that the byte and line budgets are reached from small inputs too.
  for (int copies : {1, 300}) {
    ResponseHead head(max_body);
    std::size_t fed = 0;
    bool refused = false;
    for (int c = 0; c < copies && !refused; ++c) {
      std::string_view rest(text);
      while (!rest.empty()) {
        const std::size_t nl = rest.find('\n');
        const std::string_view line = rest.substr(0, nl == std::string_view::npos ? rest.size() : nl + 1);
        rest.remove_prefix(line.size());
        fed += line.size();
        if (!head.line(line)) {
          refused = true;
          break;
        }
      }
    }
    if (!refused && fed > ResponseHead::kMaxHeadBytes) std::abort();
    if (refused == (head.refusal() == ResponseHead::Refusal::none)) std::abort();
    if (head.status() < 0 || head.status() > 999) std::abort();
    if (head.encoding().size() > 80 || head.declared_size().size() > 40) std::abort();
    if (head.retry_after() && !(*head.retry_after() >= 0)) std::abort();
  }
  return 0;
}
