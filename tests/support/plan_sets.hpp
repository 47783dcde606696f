#pragma once
// A plan set for tests of every registered policy (docs/POLICIES.md "4. Plan sets"): `plans:FILE` replays a file,
// so the conformance suites and the framing study make one for the scenarios they use.
#include <string>
#include <vector>

#include "advplan/io/played_plans.hpp"
#include "advplan/policy/red_policy.hpp"
#include "support/fixtures.hpp"

namespace advplan::testing {

/// "plans:FILE" for a file holding, for each scenario, its first seed plan (BLUE) and greedy@4's answer to it on the
/// baseline stream (RED). The file lives in a directory removed when the test program ends.
inline std::string plan_set_spec(const std::vector<Scenario>& scenarios, const PolicyContext& ctx) {
  static TempDir dir("plan-sets");
  static int n = 0;
  const std::string path = dir / ("set" + std::to_string(n++) + ".jsonl");
  const auto greedy = make_red_policy("greedy@4", ctx);
  std::string text;
  for (const Scenario& sc : scenarios) {
    const Plan& blue = sc.blue_seed_plans.front();
    text += played_plan_line(sc.id, "", 0, Side::Blue, "seed", &blue, "") + "\n";
    const RedResponse r = greedy->respond(red_request(sc, blue, ctx, "baseline"));
    if (r.chosen() != nullptr) text += played_plan_line(sc.id, "c", 0, Side::Red, "greedy@4", &r.chosen()->plan, "") + "\n";
  }
  write_file(path, text);
  return "plans:" + path;
}

}  // namespace advplan::testing
