#include "advplan/policy/blue_policy.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "advplan/core/stop_error.hpp"
#include "advplan/core/validation.hpp"

#include "advplan/policy/replan.hpp"

namespace advplan {

BluePlanResult BluePolicy::plan(const Scenario& sc, Rng& rng) const {
  BluePlanResult r;
  try {
    r = do_plan(sc, rng);
  } catch (const StopRunError&) {
    throw;  // the endpoint refused the key: the command stops
  } catch (const Error& e) {
    r.plan.reset();
    r.failure = e.what();
    return r;
  }
  if (!r.plan) {
    if (r.failure.empty()) r.failure = fmt::format("{} returned no plan", label());
    return r;
  }
  const auto v = validate_plan(*r.plan, sc, Side::Blue);
  if (!v.empty()) {
    std::string msg;
    for (const auto& x : v) msg += (msg.empty() ? "" : "; ") + x.str();
    r.failure = fmt::format("{} returned an invalid plan: {}", label(), msg);
    r.plan.reset();
  }
  return r;
}

namespace {
/// The scenario's fixed first BLUE seed plan (paper: "the first BLUE seed plan is fixed").
class SeedPolicy final : public BluePolicy {
 public:
  static PolicyInfo static_info() {
    PolicyInfo info{"seed", Side::Blue, false, 1, ThreadSafety::constant, {}, "the scenario's fixed first BLUE seed plan"};
    info.reads_framing = false;
    return info;
  }
  explicit SeedPolicy(Params p) : BluePolicy(static_info(), std::move(p)) {}

 protected:
  BluePlanResult do_plan(const Scenario& sc, Rng&) const override {
    BluePlanResult r;
    if (sc.blue_seed_plans.empty())
      r.failure = fmt::format("scenario {} has no BLUE seed plan", sc.id);
    else
      r.plan = sc.blue_seed_plans.front();
    return r;
  }
};
}  // namespace

ADVPLAN_REGISTER_BLUE_POLICY(SeedPolicy::static_info(),
                             [](const PolicySpec&, const Params& p, const PolicyContext&) -> std::unique_ptr<BluePolicy> {
                               return std::make_unique<SeedPolicy>(p);
                             })

void BluePolicy::trace_rows(const Scenario&, const BluePlanResult&, const PlanOutcome*, TraceRows&) const {}

std::unique_ptr<BluePolicy> make_blue_policy(const std::string& text, const PolicyContext& ctx) {
  // exec:CMD and llm:MODEL carry their argument after the colon; the registry entry is the prefix.
  PolicySpec spec;
  spec.text = text;
  const auto colon = text.find(':');
  spec.name = colon == std::string::npos ? text : text.substr(0, colon);
  const auto& reg = BlueRegistry::instance();
  const PolicyInfo& info = reg.info(spec.name, "BLUE");
  const Params params = params_from_config(info, ctx.policy_params, ctx.source);
  return reg.create(spec, params, ctx, "BLUE");
}

bool BluePolicy::replans() const { return replans_enabled(params_); }

ReplanResult BluePolicy::replan(const Scenario& sc, const nlohmann::json& request) const {
  return checked_replan([&] { return do_replan(sc, request); }, sc, Side::Blue, label());
}

ReplanResult BluePolicy::do_replan(const Scenario&, const nlohmann::json&) const {
  ReplanResult r;
  r.failure = fmt::format("{} does not replan", label());
  return r;
}

}  // namespace advplan
