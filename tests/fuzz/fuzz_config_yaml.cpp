// Experiment config YAML: any input is a config or one ConfigError-like sentence (advplan::Error); anything
// else (a std::exception such as YAML::BadConversion, bad_alloc) is a finding.
#include "advplan/core/error.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace advplan;
  if (size > 64 * 1024) return 0;
  try {
    (void)parse_experiment_config(fuzz::text(data, size), "fuzz.yaml", ADVPLAN_SOURCE_DIR "/configs/experiments");
  } catch (const Error&) {
  }
  return 0;
}
