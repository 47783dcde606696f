#pragma once
// RED response policies behind one interface (a checked non-virtual entry point, a static
// description, registration by name). Registered: single, greedy, constraint, llm_offline (and llm_live in
// src/policy/llm_live_policies.cpp, with the client in openai_client.hpp).
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "advplan/policy/llm_contract.hpp"
#include "advplan/policy/policy_info.hpp"
#include "advplan/policy/red_candidate.hpp"
#include "advplan/policy/registry.hpp"

namespace advplan {

struct ReplanResult;  // policy/replan.hpp

struct RedResponse {
  std::vector<RedCandidate> candidates;  ///< the valid candidates the policy chose among
  int selected = -1;                     ///< index into candidates; -1 when no valid response
  int dropped = 0;                       ///< candidates that failed validation (never used)
  ContractStats contract;                ///< LLM-contract outcomes (zero for sampling policies)
  std::string failure;                   ///< why there is no response, when selected == -1
  Transcript transcript;                 ///< the calls behind it, for an external policy (PolicyInfo::external)
  const RedCandidate* chosen() const { return selected >= 0 ? &candidates[static_cast<std::size_t>(selected)] : nullptr; }
};

/// The pressures of a policy's valid candidates (RedPolicy::pressures).
struct RedPressures {
  std::vector<RedPressureCandidate> candidates;
  std::string failure;  ///< why there are none, when the policy failed
};

class RedPolicy {
 public:
  virtual ~RedPolicy() = default;
  /// Checks the request, calls do_respond, then drops invalid candidates (counted in `dropped`) and checks the
  /// selection, so no policy can return an invalid plan unnoticed. Never throws for a policy's bad output: the
  /// failure is recorded in the response.
  RedResponse respond(const RedRequest& req, CandidateCache* cache = nullptr) const;
  /// The pressures the policy's valid candidates put on the BLUE plan (the council's stress test takes the
  /// highest): the candidates respond() would return, reduced to their ids and pressures. Checked as respond is:
  /// a candidate without a plan id or with a pressure outside [0, 1] is left out. Never throws for a policy's bad
  /// output.
  RedPressures pressures(const RedRequest& req) const;
  const PolicyInfo& info() const { return info_; }
  /// Whether it replans at the engagement wargame's decision points: it declares the `replans` parameter
  /// (replans_param) and the config sets `replans: true` (docs/POLICIES.md "6. Replanning").
  bool replans() const;
  /// Its revised plan at a decision point (`request`: replan_request), validated as a RED plan in `sc`. Never throws
  /// for the policy's output: a throw, no plan or an invalid plan is the result's failure.
  ReplanResult replan(const Scenario& sc, const nlohmann::json& request) const;
  int k() const { return k_; }
  const Params& params() const { return params_; }
  /// "greedy@8", "single", ...; a policy with an argument ("exec:CMD", "plans:FILE") gives its whole spec, so two such
  /// policies of a run stay apart in per_scenario.csv's red_policy column and in the meta-game.
  virtual std::string label() const;

 protected:
  RedPolicy(PolicyInfo info, int k, Params params) : info_(std::move(info)), k_(k), params_(std::move(params)) {}
  virtual RedResponse do_respond(const RedRequest& req, CandidateCache* cache) const = 0;
  /// The revised plan for `request`; the default has none ("does not replan"). A policy that overrides it declares
  /// replans_param() among its parameters.
  virtual ReplanResult do_replan(const Scenario& sc, const nlohmann::json& request) const;
  /// The default answers through respond() and reduces its candidates; a policy that can draw pressures more
  /// cheaply (the built-in samplers, sample_red_pressures) overrides it, with the same result.
  virtual RedPressures do_pressures(const RedRequest& req) const;

 private:
  PolicyInfo info_;
  int k_;
  Params params_;
};

using RedRegistry = Registry<RedPolicy>;

/// The LLM-contract response shared by llm_offline and llm_live: build_red_prompt, `client`, run_contract (the
/// same parser and validator as every plan), then scoring against the BLUE plan. The plan id is
/// `<scenario>/red/<tag>`; the request's seed comes from the stream (run seed, scenario, "red/<tag>"). With
/// `generation`, the request carries those settings (apply_generation).
RedResponse respond_by_contract(const CompletionClient& client, const RedRequest& req, int max_repairs,
                                const std::string& tag, const GenerationSettings* generation = nullptr);

/// Creates a RED policy from a spec such as "constraint@8"; parameters come from ctx.policy_params[name].
/// Throws PolicyError naming the policy and the registered names, or the bad parameter.
std::unique_ptr<RedPolicy> make_red_policy(const std::string& spec, const PolicyContext& ctx);

}  // namespace advplan

/// Registers a RED policy factory: ADVPLAN_REGISTER_RED_POLICY(info_expr, factory_lambda)
#define ADVPLAN_REGISTER_RED_POLICY(INFO, FACTORY) \
  namespace {                                      \
  const bool ADVPLAN_CONCAT(advplan_red_registered_, __LINE__) = ::advplan::RedRegistry::instance().add(INFO, FACTORY); \
  }
/// The same for a plug-in that means to replace a RED policy of the same name (see ADVPLAN_OVERRIDE_BLUE_POLICY).
#define ADVPLAN_OVERRIDE_RED_POLICY(INFO, FACTORY) \
  namespace {                                      \
  const bool ADVPLAN_CONCAT(advplan_red_overridden_, __LINE__) =   \
      ::advplan::RedRegistry::instance().add(INFO, FACTORY, true); \
  }
