// Plan JSON (plan files, policy and model replies): parse, validate and, when valid, score. Must never crash,
// hang or throw. Differential too: the simdjson plan reader (src/core/plan_text.hpp) gives a plan only where the
// DOM decoder gives the same plan without a violation.
#include <nlohmann/json.hpp>

#include "advplan/core/plan_json.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/metrics/coherence.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/metrics/structure.hpp"
#include "core/plan_text.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace advplan;
  const Scenario& sc = fuzz::scenario();
  const std::string text = fuzz::text(data, size);
  const PlanParse p = parse_plan_text(text, sc);
  if (const auto fast = detail::plan_from_text_fast(text)) {
    std::vector<Violation> v;
    nlohmann::json j;
    const bool parsed = untrusted::parse_json_bounded(text, j).empty();
    const auto dom = parsed ? plan_from_json(j, v) : std::nullopt;
    if (!dom || !v.empty() || !(*fast == *dom)) __builtin_trap();  // the fast reader disagrees with the decoder
  }
  if (p.plan) {
    // Scoring runs on decoded plans, valid or not (the metrics must tolerate unknown assets and ids).
    (void)quality(*p.plan, sc, QualityWeights{});
    (void)coherence(*p.plan, sc);
    (void)structure(*p.plan);
  }
  return 0;
}
