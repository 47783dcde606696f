#pragma once
// BLUE planning policies behind one interface, in the style of the RED policies: a checked non-virtual entry
// point, a static description, registration by name. The interface takes a scenario and a random stream and
// returns a validated plan, nothing more. Registered here: seed (the scenario's fixed first seed plan). The
// council, external processes (exec:...) and live models (llm:...) are further planning policies.
#include <any>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "advplan/core/plan.hpp"
#include "advplan/core/random.hpp"
#include "advplan/core/scenario.hpp"
#include "advplan/policy/llm_contract.hpp"
#include "advplan/policy/policy_info.hpp"
#include "advplan/policy/registry.hpp"

namespace advplan {

struct ReplanResult;  // policy/replan.hpp

struct BluePlanResult {
  std::optional<Plan> plan;  ///< a plan that passed validate_plan, or nothing
  std::string failure;       ///< why there is no plan (contract failure, invalid plan, crash, timeout, ...)
  ContractStats contract;    ///< outcomes of a language-model or external-process contract
  std::any details;          ///< the policy's own record of how it planned, for its trace_rows (e.g. the council's)
  Transcript transcript;     ///< the calls behind it, for an external policy (PolicyInfo::external)
};

/// How a BLUE plan fared against the first RED condition that answered it in a run, for trace_rows.
struct PlanOutcome {
  std::string red_plan_id;
  double advantage = 0, blue_coherence = 0, red_coherence = 0, blue_win_rate = 0;
};

/// Rows for extra trace files, by file name (PolicyInfo::traces).
using TraceRows = std::map<std::string, std::vector<std::vector<std::string>>>;

class BluePolicy {
 public:
  virtual ~BluePolicy() = default;
  /// Calls do_plan, then validates the plan against the scenario as a BLUE plan. An invalid plan or a thrown
  /// advplan::Error becomes a recorded failure, never a crash of the run.
  BluePlanResult plan(const Scenario& sc, Rng& rng) const;
  const PolicyInfo& info() const { return info_; }
  /// Whether it replans at the engagement wargame's decision points: it declares the `replans` parameter
  /// (replans_param) and the config sets `replans: true` (docs/POLICIES.md "6. Replanning").
  bool replans() const;
  /// Its revised plan at a decision point (`request`: replan_request), validated as a BLUE plan in `sc`. Never throws
  /// for the policy's output: a throw, no plan or an invalid plan is the result's failure.
  ReplanResult replan(const Scenario& sc, const nlohmann::json& request) const;
  const Params& params() const { return params_; }
  virtual std::string label() const { return info_.short_name; }
  /// Counters over the whole run that belong in run_metadata.json (e.g. process restarts); none by default.
  virtual std::map<std::string, double> run_counters() const { return {}; }
  /// Appends this scenario's rows of the extra trace files that info().traces declares. `result` is what plan()
  /// returned for the scenario (with its `details`); `outcome` is the plan's first RED result, or nullptr when it
  /// met none. The default writes nothing.
  virtual void trace_rows(const Scenario& sc, const BluePlanResult& result, const PlanOutcome* outcome,
                          TraceRows& out) const;

 protected:
  BluePolicy(PolicyInfo info, Params params) : info_(std::move(info)), params_(std::move(params)) {}
  virtual BluePlanResult do_plan(const Scenario& sc, Rng& rng) const = 0;
  /// The revised plan for `request`; the default has none ("does not replan"). A policy that overrides it declares
  /// replans_param() among its parameters.
  virtual ReplanResult do_replan(const Scenario& sc, const nlohmann::json& request) const;

 private:
  PolicyInfo info_;
  Params params_;
};

using BlueRegistry = Registry<BluePolicy>;

/// "seed", "council", "exec:CMD", "llm:MODEL" or any registered name; parameters come from
/// ctx.policy_params[name]. Throws PolicyError naming the policy and the registered names.
std::unique_ptr<BluePolicy> make_blue_policy(const std::string& spec, const PolicyContext& ctx);

}  // namespace advplan

#define ADVPLAN_REGISTER_BLUE_POLICY(INFO, FACTORY) \
  namespace {                                       \
  const bool ADVPLAN_CONCAT(advplan_blue_registered_, __LINE__) = ::advplan::BlueRegistry::instance().add(INFO, FACTORY); \
  }
/// The same for a plug-in that means to replace a policy of the same name (a built-in one, say). Without it a
/// duplicate name is refused when the plug-in is loaded. Either way the run records the plug-in's sha256 in
/// run_metadata.json and in its run key.
#define ADVPLAN_OVERRIDE_BLUE_POLICY(INFO, FACTORY) \
  namespace {                                       \
  const bool ADVPLAN_CONCAT(advplan_blue_overridden_, __LINE__) =   \
      ::advplan::BlueRegistry::instance().add(INFO, FACTORY, true); \
  }
