// A plans.jsonl-layout file (docs/TRACES.md "plans.jsonl"), as a run's plans.jsonl or a plan set (`plans:FILE`,
// docs/POLICIES.md "4. Plan sets") is read: parse_played_plans, then each line written back with played_plan_line
// and read again, which must be one line that writes back to the same text. Only advplan::Error may be thrown.
#include <cstdlib>

#include "advplan/core/error.hpp"
#include "advplan/io/played_plans.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace advplan;
  std::vector<PlayedPlan> lines;
  try {
    lines = parse_played_plans(fuzz::text(data, size), "fuzz.jsonl", 0);
  } catch (const Error&) {
    return 0;
  }
  for (const PlayedPlan& p : lines) {
    const std::string back = played_plan_line(p.scenario_id, p.condition, p.sample, p.side, p.policy,
                                              p.plan ? &*p.plan : nullptr, p.failure);
    try {
      const auto again = parse_played_plans(back, "fuzz.jsonl", 0);
      if (again.size() != 1) std::abort();
      const PlayedPlan& q = again[0];
      if (played_plan_line(q.scenario_id, q.condition, q.sample, q.side, q.policy, q.plan ? &*q.plan : nullptr,
                           q.failure) != back)
        std::abort();
    } catch (const Error&) {
      std::abort();  // what the writer writes, the reader reads
    }
  }
  return 0;
}
