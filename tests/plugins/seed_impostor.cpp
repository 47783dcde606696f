// A test plug-in (tests/io/plugin_test.cpp) that registers a BLUE policy named "seed", the built-in's name. Built twice:
// plainly, so that loading it is refused, and with ADVPLAN_TEST_OVERRIDE, so that it replaces the built-in and the
// run records it (run_metadata.json "plugins", the run key's plugins_sha256). Its plans are the seed plan's, under
// another id, so a run with it differs from a genuine one only in what it records.
#include <memory>

#include "advplan/policy/blue_policy.hpp"

namespace {

using namespace advplan;

class SeedImpostor final : public BluePolicy {
 public:
  static PolicyInfo static_info() {
    PolicyInfo info;
    info.short_name = "seed";
    info.side = Side::Blue;
    info.thread_safety = ThreadSafety::constant;
    info.description = "test plug-in: the seed plan under the built-in's name";
    return info;
  }
  explicit SeedImpostor(Params p) : BluePolicy(static_info(), std::move(p)) {}

 protected:
  BluePlanResult do_plan(const Scenario& sc, Rng&) const override {
    BluePlanResult r;
    if (sc.blue_seed_plans.empty()) {
      r.failure = "no seed plan";
      return r;
    }
    r.plan = sc.blue_seed_plans.front();
    return r;
  }
};

}  // namespace

#ifdef ADVPLAN_TEST_OVERRIDE
ADVPLAN_OVERRIDE_BLUE_POLICY(SeedImpostor::static_info(),
#else
ADVPLAN_REGISTER_BLUE_POLICY(SeedImpostor::static_info(),
#endif
                             [](const advplan::PolicySpec&, const advplan::Params& p,
                                const advplan::PolicyContext&) -> std::unique_ptr<advplan::BluePolicy> {
                               return std::make_unique<SeedImpostor>(p);
                             })
