// Live language-model policies (docs/LLM.md): the RED baseline "llm_live" and the BLUE planning policy
// "llm:MODEL". Both go through the same contract as llm_offline (build_*_prompt, run_contract, the plan
// parser and validator); only the client differs: an OpenAI-compatible chat-completions endpoint.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "advplan/core/random.hpp"
#include "advplan/policy/policy_settings.hpp"
#include "advplan/metrics/plan_layout.hpp"
#include "advplan/metrics/pressure.hpp"
#include "advplan/policy/blue_policy.hpp"
#include "advplan/policy/completion_cache.hpp"
#include "advplan/llm/providers.hpp"
#include "advplan/policy/red_policy.hpp"
#include "advplan/policy/replan.hpp"

namespace advplan {
namespace {

ParamSpec max_repairs_param() { return {"max_repairs", 1, 0, 10, "re-prompts after an unusable completion"}; }

/// policies.<name>.max_repairs when the config sets it, else llm.max_repairs.
int max_repairs_for(const std::string& name, const Params& p, const PolicyContext& ctx) {
  const auto it = ctx.policy_params.find(name);
  if (it != ctx.policy_params.end() && it->second.contains("max_repairs"))
    return static_cast<int>(p.at("max_repairs"));
  return ctx.get<LlmConfig>().max_repairs;
}

/// A request seed the server may use for sampling (OpenAI "seed"); 31 bits, so every server parses it.
std::uint64_t request_seed(Rng rng) { return rng.next_u64() & 0x7fffffffULL; }

/// A model's revised plan at a decision point (docs/POLICIES.md "6. Replanning"): build_replan_prompt, then the
/// same contract as every plan (parser, validator, re-prompts). The request carries no seed: the run's cache makes a
/// replan reproducible. The plan id is `<scenario>/<side>/<tag>/replan`.
ReplanResult replan_by_contract(const CompletionClient& client, const Scenario& sc, const nlohmann::json& request,
                                Side side, int max_repairs, const GenerationSettings& generation, const std::string& tag) {
  CompletionRequest prompt = build_replan_prompt(sc, request);
  apply_generation(prompt, generation);
  attach_plan_schema(prompt, sc, side);
  auto res = run_contract(client, std::move(prompt), sc, side, max_repairs,
                          fmt::format("{}/{}/{}/replan", sc.id, side == Side::Blue ? "blue" : "red", tag));
  ReplanResult r;
  r.plan = std::move(res.plan);
  r.failure = std::move(res.failure);
  r.transcript = std::move(res.transcript);
  return r;
}

/// The live LLM-contract responder: LlmOfflinePolicy with a live client.
class LlmLivePolicy final : public RedPolicy {
 public:
  static PolicyInfo static_info() {
    PolicyInfo info{"llm_live", Side::Red, false, 1, ThreadSafety::constant, {max_repairs_param(), replans_param()},
                    "LLM JSON contract against a live OpenAI-compatible endpoint (llm.endpoint)"};
    info.reproducible = false;
    info.external = true;
    return info;
  }
  /// Throws PolicyError without an endpoint.
  LlmLivePolicy(Params p, const PolicyContext& ctx)
      : RedPolicy(static_info(), 1, p),
        client_(make_live_client(resolve_llm_settings(ctx.get<LlmConfig>(), "", "llm_live"), ctx)),
        max_repairs_(max_repairs_for("llm_live", p, ctx)),
        generation_(ctx.get<LlmConfig>().generation_for("llm_live")) {}

 protected:
  RedResponse do_respond(const RedRequest& req, CandidateCache*) const override {
    return respond_by_contract(*client_, req, max_repairs_, "llm_live", &generation_);
  }
  ReplanResult do_replan(const Scenario& sc, const nlohmann::json& request) const override {
    return replan_by_contract(*client_, sc, request, Side::Red, max_repairs_, generation_, "llm_live");
  }

 private:
  std::unique_ptr<CompletionClient> client_;  ///< the live client, behind the run's cache when it has one
  int max_repairs_;
  GenerationSettings generation_;
};

/// A BLUE plan written by a live model: "llm:MODEL" (MODEL overrides llm.model and ADVPLAN_LLM_MODEL).
class LlmBluePolicy final : public BluePolicy {
 public:
  static PolicyInfo static_info() {
    PolicyInfo info{"llm", Side::Blue, false, 1, ThreadSafety::constant, {max_repairs_param(), replans_param()},
                    "a BLUE plan from a live OpenAI-compatible endpoint: llm:MODEL"};
    info.reproducible = false;
    info.external = true;
    info.argument = "MODEL";
    return info;
  }
  /// Throws PolicyError without an endpoint.
  LlmBluePolicy(const PolicySpec& spec, Params p, const PolicyContext& ctx)
      : BluePolicy(static_info(), p),
        text_(spec.text.empty() ? "llm" : spec.text),
        client_(make_live_client(resolve_llm_settings(ctx.get<LlmConfig>(), model_of(text_), text_), ctx)),
        max_repairs_(max_repairs_for("llm", p, ctx)),
        generation_(ctx.get<LlmConfig>().generation_for("llm")) {}

  std::string label() const override { return text_; }

 protected:
  BluePlanResult do_plan(const Scenario& sc, Rng& rng) const override {
    CompletionRequest prompt = build_blue_prompt(sc);
    prompt.seed = request_seed(rng.child("blue/llm"));
    apply_generation(prompt, generation_);
    attach_plan_schema(prompt, sc, Side::Blue);
    auto res = run_contract(*client_, std::move(prompt), sc, Side::Blue, max_repairs_,
                            fmt::format("{}/blue/llm", sc.id));
    BluePlanResult r{std::move(res.plan), std::move(res.failure), res.stats};
    r.transcript = std::move(res.transcript);
    return r;
  }
  ReplanResult do_replan(const Scenario& sc, const nlohmann::json& request) const override {
    return replan_by_contract(*client_, sc, request, Side::Blue, max_repairs_, generation_, "llm");
  }

 private:
  static std::string model_of(const std::string& text) {
    const auto colon = text.find(':');
    return colon == std::string::npos ? "" : text.substr(colon + 1);
  }
  std::string text_;
  std::unique_ptr<CompletionClient> client_;  ///< the live client, behind the run's cache when it has one
  int max_repairs_;
  GenerationSettings generation_;
};

}  // namespace

ADVPLAN_REGISTER_RED_POLICY(LlmLivePolicy::static_info(),
                            [](const PolicySpec&, const Params& p, const PolicyContext& ctx)
                                -> std::unique_ptr<RedPolicy> {
                              return std::make_unique<LlmLivePolicy>(p, ctx);
                            })
ADVPLAN_REGISTER_BLUE_POLICY(LlmBluePolicy::static_info(),
                             [](const PolicySpec& s, const Params& p, const PolicyContext& ctx)
                                 -> std::unique_ptr<BluePolicy> {
                               return std::make_unique<LlmBluePolicy>(s, p, ctx);
                             })

}  // namespace advplan
