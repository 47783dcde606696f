// "random": a BLUE plan sampled the way a RED candidate is (the template's plan shape and branch kinds,
// category-weight jitter 0.6, no pressure bias), from BLUE's assets and verbs. A baseline of the meta-game
// (docs/POLICIES.md, docs/METRICS.md "Meta-game"); it plans from its stream blue/random.
#include <fmt/format.h>

#include "advplan/policy/blue_policy.hpp"
#include "advplan/policy/policy_context.hpp"
#include "advplan/scenario/plan_sampler.hpp"

namespace advplan {
namespace {

class RandomBluePolicy final : public BluePolicy {
 public:
  static PolicyInfo static_info() {
    PolicyInfo info{"random", Side::Blue, false, 1, ThreadSafety::constant, {},
                    "a BLUE plan sampled like a RED candidate (template plan shape, weight jitter 0.6) from BLUE's assets",
                    {}};
    info.reads_framing = false;
    return info;
  }
  RandomBluePolicy(Params p, const PolicyContext& ctx) : BluePolicy(static_info(), std::move(p)), ctx_(ctx) {}

 protected:
  BluePlanResult do_plan(const Scenario& sc, Rng& rng) const override {
    const TemplateShape& t = ctx_.shape_of(sc.template_id, sc.id);
    SampleOptions opts;  // category_bias keeps its default of 1 (no pressure bias)
    opts.shape = t.shape;
    opts.branch_kinds = t.branch_kinds;
    opts.weight_jitter = 0.6;
    BluePlanResult r;
    r.plan = sample_plan(sc, Side::Blue, rng, opts, fmt::format("{}/blue/random", sc.id));
    return r;
  }

 private:
  PolicyContext ctx_;
};

}  // namespace

ADVPLAN_REGISTER_BLUE_POLICY(RandomBluePolicy::static_info(),
                             [](const PolicySpec&, const Params& p,
                                const PolicyContext& ctx) -> std::unique_ptr<BluePolicy> {
                               return std::make_unique<RandomBluePolicy>(p, ctx);
                             })

}  // namespace advplan
