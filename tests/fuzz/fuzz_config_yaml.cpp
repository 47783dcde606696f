// Experiment config YAML: any input is a config or one ConfigError-like sentence (advplan::Error); anything
// else (a std::exception such as YAML::BadConversion, bad_alloc) is a finding. A config read is also expanded into
// its conditions (the budget sweep, a sweep's points, the attribution study's combinations) and each of its first
// sweep points' configs is made (run/sweep_points.hpp).
#include "advplan/core/error.hpp"
#include "advplan/run/sweep_points.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace advplan;
  if (size > 64 * 1024) return 0;
  try {
    const ExperimentConfig cfg =
        parse_experiment_config(fuzz::text(data, size), "fuzz.yaml", ADVPLAN_SOURCE_DIR "/configs/experiments");
    std::size_t points = 0;
    for (const Condition& c : run_conditions(cfg))
      if (!c.settings.empty() && points++ < 4) (void)with_settings(cfg, c.settings);
  } catch (const Error&) {
  }
  return 0;
}
