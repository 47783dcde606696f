#include "advplan/policy/red_policy.hpp"

#include <fmt/format.h>

#include "advplan/core/validation.hpp"
#include "advplan/experiment/config.hpp"

namespace advplan {

std::string RedPolicy::label() const {
  return info_.samples_k ? fmt::format("{}@{}", info_.short_name, k_) : info_.short_name;
}

RedResponse RedPolicy::respond(const RedRequest& req, CandidateCache* cache) const {
  if (!req.scenario || !req.blue) throw std::invalid_argument("RedPolicy::respond: request without scenario or BLUE plan");
  RedResponse r = do_respond(req, cache);
  // Drop invalid candidates, keeping the selection pointing at the same candidate.
  const RedCandidate* sel = r.chosen();
  const int sel_index = sel ? sel->index : -1;
  const bool sel_valid = sel && sel->valid && validate_plan(sel->plan, *req.scenario, Side::Red).empty();
  std::vector<RedCandidate> kept;
  for (auto& c : r.candidates) {
    if (c.valid)
      kept.push_back(std::move(c));
    else
      ++r.dropped;
  }
  r.candidates = std::move(kept);
  r.selected = -1;
  if (sel_valid)
    for (std::size_t i = 0; i < r.candidates.size(); ++i)
      if (r.candidates[i].index == sel_index) r.selected = static_cast<int>(i);
  if (r.selected < 0 && r.failure.empty())
    r.failure = sel ? fmt::format("{} selected an invalid plan", label()) : fmt::format("{} returned no plan", label());
  return r;
}

std::unique_ptr<RedPolicy> make_red_policy(const std::string& text, const ExperimentConfig& cfg) {
  const PolicySpec spec = parse_policy_spec(text);
  const auto& reg = RedRegistry::instance();
  const PolicyInfo& info = reg.info(spec.name, "RED");
  if (spec.k && !info.samples_k)
    throw PolicyError(fmt::format("policy '{}' does not sample k candidates, so '{}' is not accepted (use '{}')",
                                  spec.name, text, spec.name));
  static const std::map<std::string, double> kNone;
  auto it = cfg.policy_params.find(spec.name);
  const Params params = resolve_params(info, it == cfg.policy_params.end() ? kNone : it->second,
                                       fmt::format("{}: policies.{}", cfg.source, spec.name));
  return reg.create(spec, params, cfg, "RED");
}

}  // namespace advplan
