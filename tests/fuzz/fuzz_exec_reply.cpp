// One response line of an exec: policy: envelope check, then plan decoding and validation. Never throws; a
// failure reason is one line of valid UTF-8 of bounded length.
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "advplan/core/untrusted.hpp"
#include "advplan/policy/exec_policy.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace advplan;
  const std::string line = fuzz::text(data, size);
  nlohmann::json response;
  const std::string err = check_exec_envelope(line, 1, response);
  if (!untrusted::valid_utf8(err) || err.size() > 1000) std::abort();
  if (!err.empty()) return 0;
  const BluePlanResult r = exec_plan_from_response(response, fuzz::scenario());
  if (!untrusted::valid_utf8(r.failure)) std::abort();
  return 0;
}
