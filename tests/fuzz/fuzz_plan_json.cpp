// Plan JSON (plan files, policy and model replies): parse, validate and, when valid, score. Must never crash,
// hang or throw.
#include "advplan/core/validation.hpp"
#include "advplan/metrics/coherence.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/metrics/structure.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace advplan;
  const Scenario& sc = fuzz::scenario();
  const PlanParse p = parse_plan_text(fuzz::text(data, size), sc);
  if (p.plan) {
    // Scoring runs on decoded plans, valid or not (the metrics must tolerate unknown assets and ids).
    (void)quality(*p.plan, sc, QualityWeights{});
    (void)coherence(*p.plan, sc);
    (void)structure(*p.plan);
  }
  return 0;
}
