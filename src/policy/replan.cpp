#include "advplan/policy/replan.hpp"

#include <fmt/format.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/core/stop_error.hpp"
#include "advplan/core/plan_json.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/core/validation.hpp"

namespace advplan {

using json = nlohmann::json;

ParamSpec replans_param() {
  return {"replans", 0, 0, 1, "1 (replans: true): revise the plan at the engagement wargame's decision points"};
}

bool replans_enabled(const Params& params) {
  const auto it = params.find("replans");
  return it != params.end() && it->second > 0;
}

namespace {

json categories(const std::vector<Category>& cs) {
  json out = json::array();
  for (const Category c : cs) out.push_back(std::string(to_string(c)));
  return out;
}

}  // namespace

json replan_request(const Scenario& sc, const DecisionPoint& at) {
  const Branch& br = at.plan->branches.at(at.branch);
  json options = json::array();
  for (const auto& o : br.options) options.push_back(o);
  return {{"type", "replan"},
          {"side", std::string(to_string(at.side))},
          {"scenario", to_json(sc)},
          {"step", at.step},
          {"branch", {{"at", br.at}, {"condition", br.condition}, {"options", options}}},
          {"observed",
           {{"own_strength", at.own},
            {"other_strength", at.other},
            {"own_engaged", at.own_engaged},
            {"other_engaged", at.other_engaged},
            {"own_effects", categories(at.own_effects)},
            {"other_effects", categories(at.other_effects)}}},
          {"done", at.done},
          {"remaining", at.remaining},
          {"plan", to_json(*at.plan)}};
}

ReplanResult checked_replan(const std::function<ReplanResult()>& call, const Scenario& sc, Side side,
                            const std::string& label) {
  ReplanResult r;
  try {
    r = call();
  } catch (const StopRunError&) {
    throw;  // the endpoint refused the key: the command stops
  } catch (const std::exception& e) {  // an advplan::Error, or anything a plug-in throws: the call's failure
    r.plan.reset();
    r.failure = untrusted::excerpt(fmt::format("{}: {}", label, e.what()), kReasonChars);
    return r;
  }
  if (!r.plan) {
    r.failure = r.failure.empty() ? fmt::format("{} returned no revised plan", label)
                                  : untrusted::excerpt(r.failure, kReasonChars);
    return r;
  }
  const auto v = validate_plan(*r.plan, sc, side);
  if (!v.empty()) {
    std::string msg;
    for (std::size_t k = 0; k < v.size() && k < 5; ++k) msg += (msg.empty() ? "" : "; ") + v[k].str();
    if (v.size() > 5) msg += fmt::format(" (and {} more)", v.size() - 5);
    r.failure = untrusted::excerpt(fmt::format("{} returned an invalid revised plan: {}", label, msg), kReasonChars);
    r.plan.reset();
  }
  return r;
}

}  // namespace advplan
