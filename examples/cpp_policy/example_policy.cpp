// An example BLUE planning policy written as one C++ file (docs/POLICIES.md, examples/cpp_policy/README.md).
// Built as the plug-in build/plugins/example_cpp.so (CMakeLists.txt here); load it and select it with
// `advplan evaluate --plugin build/plugins/example_cpp.so --blue example_cpp`, or name "example_cpp" in a config.
//
// What it does: start from the scenario's fixed first BLUE seed plan, then
//   - add a protection action right before the first exposed step, when no protection or deception action
//     already comes before it (exposed: advplan::is_exposed, the coherence rubric's threshold);
//   - add a sustainment action when the plan has none.
// In the engagement wargame with `policies: {example_cpp: {replans: true}}` it also replans at each decision point
// (docs/POLICIES.md "6. Replanning"): the branch's first option, then the remaining steps, with the protection steps
// first when it is weaker than RED.
// advplan::add_role_action picks a BLUE asset able to perform the category and the chain position. Every
// random choice comes from the Rng the framework passes in, so the same run seed gives the same plan.
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>

#include "advplan/council/council.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/core/plan_json.hpp"
#include "advplan/policy/blue_policy.hpp"
#include "advplan/policy/replan.hpp"

namespace {

using namespace advplan;

class ExampleCppPolicy final : public BluePolicy {
 public:
  static PolicyInfo static_info() {
    PolicyInfo info;
    info.short_name = "example_cpp";  // the name --blue selects
    info.side = Side::Blue;
    info.thread_safety = ThreadSafety::constant;  // do_plan keeps no state, so one object serves every task
    info.description = "seed plan plus a protection step before the first exposed step (examples/cpp_policy)";
    info.params = {replans_param()};  // it can replan (docs/POLICIES.md "6. Replanning")
    return info;
  }
  explicit ExampleCppPolicy(Params p) : BluePolicy(static_info(), std::move(p)) {}

 protected:
  // The base class validates whatever this returns; an invalid plan becomes a recorded failure.
  BluePlanResult do_plan(const Scenario& sc, Rng& rng) const override {
    BluePlanResult r;
    if (sc.blue_seed_plans.empty()) {
      r.failure = fmt::format("scenario {} has no BLUE seed plan", sc.id);
      return r;
    }
    Plan plan = sc.blue_seed_plans.front();
    plan.plan_id = sc.id + "/blue/example_cpp";
    if (!protected_before_first_exposed(plan, sc))
      add_role_action(plan, sc, Category::protection, rng, "", "example_cpp");
    const bool has_sustainment = std::any_of(plan.actions.begin(), plan.actions.end(), [](const Action& a) {
      return a.category == Category::sustainment;
    });
    if (!has_sustainment) add_role_action(plan, sc, Category::sustainment, rng, "", "example_cpp");
    r.plan = std::move(plan);
    return r;
  }

  // The request of docs/POLICIES.md "6.1"; the base class validates the revised plan like any plan.
  ReplanResult do_replan(const Scenario&, const nlohmann::json& request) const override {
    ReplanResult r;
    std::vector<Violation> violations;
    const std::optional<Plan> plan = plan_from_json(request.at("plan"), violations);
    if (!plan) {
      r.failure = "example_cpp: the request's plan does not parse";
      return r;
    }
    std::vector<std::string> chain = request.at("branch").at("options").at(0).get<std::vector<std::string>>();
    for (const auto& id : request.at("remaining").get<std::vector<std::string>>())
      if (std::find(chain.begin(), chain.end(), id) == chain.end()) chain.push_back(id);
    const auto& seen = request.at("observed");
    if (seen.at("own_strength").get<double>() < seen.at("other_strength").get<double>())
      std::stable_partition(chain.begin(), chain.end(), [&](const std::string& id) {
        const int i = plan->find_action(id);
        return i >= 0 && plan->actions[static_cast<std::size_t>(i)].category == Category::protection;
      });
    Plan revised = *plan;
    revised.plan_id += "/replan";
    revised.actions.clear();
    for (const auto& id : chain)
      if (const int i = plan->find_action(id); i >= 0) revised.actions.push_back(plan->actions[static_cast<std::size_t>(i)]);
    revised.chain = chain;
    revised.branches.clear();
    r.plan = std::move(revised);
    return r;
  }

 private:
  /// True when a protection or deception step precedes the first exposed chain step (or none is exposed).
  static bool protected_before_first_exposed(const Plan& plan, const Scenario& sc) {
    for (const auto& id : plan.chain) {
      const int i = plan.find_action(id);
      if (i < 0) continue;
      const Action& a = plan.actions[static_cast<std::size_t>(i)];
      if (a.category == Category::protection || a.category == Category::deception) return true;
      if (is_exposed(a.category, sc)) return false;
    }
    return true;
  }
};

}  // namespace

ADVPLAN_REGISTER_BLUE_POLICY(ExampleCppPolicy::static_info(),
                             [](const advplan::PolicySpec&, const advplan::Params& p,
                                const advplan::PolicyContext&) -> std::unique_ptr<advplan::BluePolicy> {
                               return std::make_unique<ExampleCppPolicy>(p);
                             })
