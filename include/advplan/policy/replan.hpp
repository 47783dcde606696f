#pragma once
// Replanning at the engagement wargame's decision points (docs/POLICIES.md "6. Replanning"). A BLUE or RED policy
// that declares the `replans` parameter, and whose config sets `replans: true`, is asked at each decision point of
// its plan (a branch's step has ended) for a revised plan. One protocol for every kind of policy: the request is
// the JSON object replan_request builds, the answer a plan in the plan JSON of docs/POLICIES.md "1.5", whose chain
// is the side's remainder from that point. The answer is validated like any plan of the side; whatever goes wrong
// is the call's failure, never a crash, and the documented default rule decides that point instead.
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "advplan/core/plan.hpp"
#include "advplan/core/scenario.hpp"
#include "advplan/policy/llm_contract.hpp"
#include "advplan/policy/policy_info.hpp"
#include "advplan/sim/engagement.hpp"

namespace advplan {

/// The parameter a policy that can replan declares: 0 (default) or 1; `replans: true` in the config's policies block.
ParamSpec replans_param();
/// Whether `params` (a policy's effective parameters) switch replanning on.
bool replans_enabled(const Params& params);

/// The most bytes of a replan failure's reason (one line: the validator's first five violations, a program's
/// error, an exception's text), as replans.csv records it.
inline constexpr std::size_t kReasonChars = 600;

struct ReplanResult {
  std::optional<Plan> plan;  ///< a revised plan that passed validate_plan, or nothing
  std::string failure;       ///< why there is none
  Transcript transcript;     ///< the calls behind it (an exec: program's exchange, a model's conversation)
};

/// The request of docs/POLICIES.md "6.1": {"type": "replan", "side", "scenario", "step", "branch": {"at",
/// "condition", "options"}, "observed": {"own_strength", "other_strength" (as the engine has them), "own_engaged",
/// "other_engaged", "own_effects", "other_effects"}, "done", "remaining", "plan"}. The replication is not in it, so
/// two replications that reach the same state send the same request (a cache serves the second).
nlohmann::json replan_request(const Scenario& sc, const DecisionPoint& at);

/// Runs `call` (a policy's do_replan) and checks its plan as a plan of `side` in `sc`: any std::exception it throws,
/// no plan, or an invalid plan becomes the failure (one line, at most kReasonChars bytes), naming `label`. Never
/// throws for the policy's output.
ReplanResult checked_replan(const std::function<ReplanResult()>& call, const Scenario& sc, Side side,
                            const std::string& label);

/// The prompt of a model's replan: the plan schema, then marked sections "SCENARIO:", "PLAN:" (the plan being
/// played) and "STATE:" (the request's observed state, step, branch, done and remaining), and the instruction to
/// return the revised plan whose chain is the remainder.
CompletionRequest build_replan_prompt(const Scenario& sc, const nlohmann::json& request);

}  // namespace advplan
