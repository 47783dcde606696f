// Replayable plan sets as policies: "plans:FILE" plays, for each scenario, the one plan FILE holds for it, on
// either side (docs/POLICIES.md "4. Plan sets"). FILE is in the layout of a run's plans.jsonl (io/played_plans):
// a BLUE policy takes the file's BLUE lines, a RED policy its RED lines, one per scenario. `advplan psro` writes
// each policy it adds as such a file, so a later run can play it again; so can any run's plans.jsonl with one
// policy per side.
#include <fmt/format.h>

#include <map>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/io/played_plans.hpp"
#include "advplan/metrics/plan_layout.hpp"
#include "advplan/metrics/pressure.hpp"
#include "advplan/policy/blue_policy.hpp"
#include "advplan/policy/red_policy.hpp"

namespace advplan {
namespace {

constexpr const char* kDescription =
    "a replayable plan set, plans:FILE: the plan FILE (plans.jsonl layout) holds for the scenario, one per scenario";

/// The plans of `side` in the plan set at `path`, by scenario. Throws PolicyError naming the file (and the line's
/// scenario for a second plan of one scenario, or a line with no plan).
std::map<std::string, Plan> read_plan_set(const std::string& spec_text, const std::string& path, Side side) {
  const char* side_name = side == Side::Blue ? "BLUE" : "RED";
  if (path.empty()) throw PolicyError(fmt::format("{} policy '{}': no file after 'plans:'", side_name, spec_text));
  std::vector<PlayedPlan> lines;
  try {
    lines = read_played_plans(path);
  } catch (const Error& e) {
    throw PolicyError(fmt::format("{} policy '{}': {}", side_name, untrusted::excerpt(spec_text), e.what()));
  }
  std::map<std::string, Plan> out;
  std::size_t n = 0;
  for (auto& l : lines) {
    ++n;
    if (l.side != side) continue;
    if (!l.plan)
      throw PolicyError(fmt::format("{}: plan {} (scenario {}) is null ({}); a plan set holds a plan for each of its "
                                    "scenarios",
                                    path, n, untrusted::excerpt(l.scenario_id, 60), untrusted::excerpt(l.failure, 80)));
    if (!out.emplace(l.scenario_id, std::move(*l.plan)).second)
      throw PolicyError(fmt::format("{}: plan {} is a second {} plan for scenario {}; a plan set holds one per "
                                    "scenario",
                                    path, n, side_name, untrusted::excerpt(l.scenario_id, 60)));
  }
  if (out.empty()) throw PolicyError(fmt::format("{}: holds no {} plan, so it is no {} plan set", path, side_name, side_name));
  return out;
}

std::string file_of(const std::string& spec_text) {
  const auto colon = spec_text.find(':');
  return colon == std::string::npos ? std::string() : spec_text.substr(colon + 1);
}

class BluePlanSetPolicy final : public BluePolicy {
 public:
  static PolicyInfo static_info() {
    PolicyInfo info{"plans", Side::Blue, false, 1, ThreadSafety::constant, {}, kDescription, {}};
    info.argument = "FILE";
    info.reads_framing = false;
    return info;
  }
  BluePlanSetPolicy(const std::string& spec_text, Params p)
      : BluePolicy(static_info(), std::move(p)), spec_(spec_text),
        plans_(read_plan_set(spec_text, file_of(spec_text), Side::Blue)) {}
  std::string label() const override { return spec_; }

 protected:
  BluePlanResult do_plan(const Scenario& sc, Rng&) const override {
    BluePlanResult r;
    const auto it = plans_.find(sc.id);
    if (it == plans_.end())
      r.failure = fmt::format("the plan set {} has no BLUE plan for scenario {}", file_of(spec_), sc.id);
    else
      r.plan = it->second;
    return r;
  }

 private:
  std::string spec_;
  std::map<std::string, Plan> plans_;
};

/// RED's plan for the scenario, scored against the BLUE plan it answers as every RED candidate is
/// (score_red_plan): one candidate, chosen.
class RedPlanSetPolicy final : public RedPolicy {
 public:
  static PolicyInfo static_info() {
    PolicyInfo info{"plans", Side::Red, false, 1, ThreadSafety::constant, {}, kDescription};
    info.argument = "FILE";
    info.reads_framing = false;
    return info;
  }
  RedPlanSetPolicy(const std::string& spec_text, Params p)
      : RedPolicy(static_info(), 1, std::move(p)), spec_(spec_text),
        plans_(read_plan_set(spec_text, file_of(spec_text), Side::Red)) {}
  std::string label() const override { return spec_; }

 protected:
  RedResponse do_respond(const RedRequest& req, CandidateCache*) const override {
    const Scenario& sc = *req.scenario;
    RedResponse r;
    const auto it = plans_.find(sc.id);
    if (it == plans_.end()) {
      r.failure = fmt::format("the plan set {} has no RED plan for scenario {}", file_of(spec_), sc.id);
      return r;
    }
    r.candidates.push_back(score_red_plan(it->second, sc, vulnerability(layout_plan(*req.blue, sc)), req.weights, 0));
    r.selected = 0;
    return r;
  }

 private:
  std::string spec_;
  std::map<std::string, Plan> plans_;
};

}  // namespace

ADVPLAN_REGISTER_BLUE_POLICY(BluePlanSetPolicy::static_info(),
                             [](const PolicySpec& spec, const Params& p,
                                const PolicyContext&) -> std::unique_ptr<BluePolicy> {
                               return std::make_unique<BluePlanSetPolicy>(spec.text, p);
                             })
ADVPLAN_REGISTER_RED_POLICY(RedPlanSetPolicy::static_info(),
                            [](const PolicySpec& spec, const Params& p,
                               const PolicyContext&) -> std::unique_ptr<RedPolicy> {
                              return std::make_unique<RedPlanSetPolicy>(spec.text, p);
                            })

}  // namespace advplan
