// Scenario template YAML: a template or one advplan::Error sentence; when it parses, it must also generate.
#include "advplan/core/error.hpp"
#include "advplan/scenario/generator.hpp"
#include "advplan/scenario/scenario_template.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace advplan;
  if (size > 64 * 1024) return 0;
  try {
    (void)parse_template(fuzz::text(data, size), "fuzz-template.yaml");
  } catch (const Error&) {
  }
  return 0;
}
