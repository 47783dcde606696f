// One council proposer as a BLUE policy of its own: "proposer:ROLE" (ROLE: movement, information, cyber,
// sustainment, protection) plans the scenario's first BLUE seed plan plus one action of the role's category,
// exactly as the council's first round does (add_role_action, stream child "propose" with the role's index).
// A baseline of the meta-game (docs/POLICIES.md, docs/METRICS.md "Meta-game").
#include <fmt/format.h>

#include "advplan/core/error.hpp"
#include "advplan/council/council.hpp"

namespace advplan {
namespace {

std::string role_names() {
  std::string s;
  for (const Category c : kProposerRoles) s += (s.empty() ? "" : ", ") + std::string(to_string(c));
  return s;
}

class ProposerPolicy final : public BluePolicy {
 public:
  static PolicyInfo static_info() {
    PolicyInfo info{"proposer", Side::Blue, false, 1, ThreadSafety::constant, {},
                    "one council proposer, proposer:ROLE (movement, information, cyber, sustainment, protection): the "
                    "first BLUE seed plan plus one action of the role's category, as in the council's first round", {}};
    info.argument = "ROLE";
    info.reads_framing = false;
    return info;
  }
  ProposerPolicy(const std::string& spec_text, Params p) : BluePolicy(static_info(), std::move(p)), spec_(spec_text) {
    const auto colon = spec_text.find(':');
    const std::string role = colon == std::string::npos ? "" : spec_text.substr(colon + 1);
    for (std::size_t i = 0; i < kProposerRoles.size(); ++i)
      if (to_string(kProposerRoles[i]) == role) {
        role_ = kProposerRoles[i];
        index_ = i;
        return;
      }
    throw PolicyError(fmt::format("BLUE policy '{}': unknown proposer role '{}' (accepted: {})", spec_text, role,
                                  role_names()));
  }
  std::string label() const override { return spec_; }

 protected:
  BluePlanResult do_plan(const Scenario& sc, Rng& rng) const override {
    BluePlanResult r;
    if (sc.blue_seed_plans.empty()) {
      r.failure = fmt::format("scenario {} has no BLUE seed plan", sc.id);
      return r;
    }
    Plan plan = sc.blue_seed_plans.front();
    plan.plan_id = fmt::format("{}/blue/proposer/{}", sc.id, to_string(role_));
    Rng child = rng.child("propose", index_);
    // When no BLUE asset can act in the role's category the proposer keeps the seed plan (the council would
    // drop the proposal); the plan id still names the proposer.
    add_role_action(plan, sc, role_, child, "", "proposer:" + std::string(to_string(role_)));
    r.plan = std::move(plan);
    return r;
  }

 private:
  std::string spec_;
  Category role_ = Category::movement;
  std::size_t index_ = 0;
};

}  // namespace

ADVPLAN_REGISTER_BLUE_POLICY(ProposerPolicy::static_info(),
                             [](const PolicySpec& spec, const Params& p,
                                const PolicyContext&) -> std::unique_ptr<BluePolicy> {
                               return std::make_unique<ProposerPolicy>(spec.text, p);
                             })

}  // namespace advplan
