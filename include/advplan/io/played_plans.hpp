#pragma once
// Writing and reading back a run's plans.jsonl (docs/TRACES.md "plans.jsonl"): the plans the run played, as the policies
// returned them, so that an analysis can grade a resumed run's or another run's plans without asking an
// external policy again.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "advplan/core/plan.hpp"

namespace advplan {

/// A line of plans.jsonl: the plan a policy returned for one scenario (after parsing and validation), or null
/// with the reason it gave none (docs/TRACES.md "plans.jsonl"). One compact JSON object, no newline.
std::string played_plan_line(const std::string& scenario, const std::string& condition, int sample, Side side,
                             const std::string& policy, const Plan* plan, const std::string& failure);

/// One line of plans.jsonl.
struct PlayedPlan {
  std::string scenario_id;
  std::string condition;  ///< "" for a BLUE plan (made once per scenario), the condition's label for a RED plan
  int sample = 0;
  Side side = Side::Blue;
  std::string policy;
  std::optional<Plan> plan;  ///< absent when the policy gave none
  std::string failure;       ///< why it gave none ("" with a plan)
};

/// The lines of the plans.jsonl at `path`, in file order. Bounded: the file at most io::kMaxListBytes, each
/// plan's JSON nested at most untrusted::kMaxJsonDepth levels and holding at most untrusted::kMaxPlanActions
/// actions. Throws IoError naming the file (and the line and field for a malformed line).
std::vector<PlayedPlan> read_played_plans(const std::string& path);
/// The same for lines of such a file already read (a block of it: `first_line` lines come before it); errors name
/// `path` and the line.
std::vector<PlayedPlan> parse_played_plans(std::string_view text, const std::string& path, std::size_t first_line);

}  // namespace advplan
