// A BLUE policy written outside the advplan tree: the scenario's first BLUE seed plan, plus one sustainment
// action when the plan has none. Built as a plug-in with advplan_add_policy (CMakeLists.txt here).
#include <algorithm>
#include <memory>

#include "advplan/council/council.hpp"
#include "advplan/policy/blue_policy.hpp"

namespace {

using namespace advplan;

class OutOfTreeBlue final : public BluePolicy {
 public:
  static PolicyInfo static_info() {
    PolicyInfo info;
    info.short_name = "out_of_tree_blue";
    info.side = Side::Blue;
    info.thread_safety = ThreadSafety::constant;
    info.description = "seed plan plus a sustainment step (tests/out_of_tree)";
    return info;
  }
  explicit OutOfTreeBlue(Params p) : BluePolicy(static_info(), std::move(p)) {}

 protected:
  BluePlanResult do_plan(const Scenario& sc, Rng& rng) const override {
    BluePlanResult r;
    if (sc.blue_seed_plans.empty()) {
      r.failure = "the scenario has no BLUE seed plan";
      return r;
    }
    Plan plan = sc.blue_seed_plans.front();
    plan.plan_id = sc.id + "/blue/out_of_tree_blue";
    const bool has_sustainment = std::any_of(plan.actions.begin(), plan.actions.end(), [](const Action& a) {
      return a.category == Category::sustainment;
    });
    if (!has_sustainment) add_role_action(plan, sc, Category::sustainment, rng, "", "out_of_tree_blue");
    r.plan = std::move(plan);
    return r;
  }
};

}  // namespace

ADVPLAN_REGISTER_BLUE_POLICY(OutOfTreeBlue::static_info(),
                             [](const advplan::PolicySpec&, const advplan::Params& p,
                                const advplan::PolicyContext&) -> std::unique_ptr<advplan::BluePolicy> {
                               return std::make_unique<OutOfTreeBlue>(p);
                             })
