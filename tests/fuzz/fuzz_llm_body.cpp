// A chat-completions response body, then its content through the contract's parser and repair (code fence,
// outermost {...}). Never throws; the key is never in the result.
#include <cstdlib>

#include "advplan/policy/llm_contract.hpp"
#include "advplan/llm/providers.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace advplan;
  const std::string body = fuzz::text(data, size);
  static const std::string key = "sk-FUZZKEY";
  const Completion c = parse_chat_completion_body(body, key);
  if (c.text.find(key) != std::string::npos || c.error.find(key) != std::string::npos) std::abort();
  (void)parse_completion(c.ok ? c.text : body, fuzz::scenario(), Side::Red);
  return 0;
}
