#include "advplan/policy/red_policy.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "advplan/core/random.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/metrics/coherence.hpp"
#include "advplan/metrics/quality.hpp"

#include "advplan/policy/replan.hpp"

namespace advplan {

std::string RedPolicy::label() const {
  return info_.samples_k ? fmt::format("{}@{}", info_.short_name, k_) : info_.short_name;
}

RedResponse RedPolicy::respond(const RedRequest& req, CandidateCache* cache) const {
  if (!req.scenario || !req.blue) throw std::invalid_argument("RedPolicy::respond: request without scenario or BLUE plan");
  if (cache) cache->start_request(*req.blue);
  RedResponse r = do_respond(req, cache);
  // Drop invalid candidates, keeping the selection pointing at the same candidate.
  const RedCandidate* sel = r.chosen();
  const int sel_index = sel ? sel->index : -1;
  const bool sel_valid = sel && sel->valid && validate_plan(sel->plan, *req.scenario, Side::Red).empty();
  // In place, keeping the order: nothing moves when every candidate is valid (the usual case).
  std::size_t kept = 0;
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    if (!r.candidates[i].valid) {
      ++r.dropped;
      continue;
    }
    if (kept != i) r.candidates[kept] = std::move(r.candidates[i]);
    ++kept;
  }
  r.candidates.erase(r.candidates.begin() + static_cast<std::ptrdiff_t>(kept), r.candidates.end());
  // A full answer has every candidate's coherence and raw capability, whatever the policy filled in.
  if (req.detail == RedDetail::full)
    for (RedCandidate& c : r.candidates) {
      if (!c.d) c.d = coherence(c.plan, *req.scenario);
      if (!c.raw_capability) c.raw_capability = raw_capability(c.plan, *req.scenario);
    }
  r.selected = -1;
  if (sel_valid)
    for (std::size_t i = 0; i < r.candidates.size(); ++i)
      if (r.candidates[i].index == sel_index) r.selected = static_cast<int>(i);
  if (r.selected < 0 && r.failure.empty())
    r.failure = sel ? fmt::format("{} selected an invalid plan", label()) : fmt::format("{} returned no plan", label());
  return r;
}

RedPressures RedPolicy::pressures(const RedRequest& req) const {
  if (!req.scenario || !req.blue) throw std::invalid_argument("RedPolicy::pressures: request without scenario or BLUE plan");
  RedPressures r = do_pressures(req);
  std::erase_if(r.candidates, [](const RedPressureCandidate& c) {
    const double m = c.pressure.magnitude;
    return c.plan_id.empty() || !(m >= 0.0 && m <= 1.0);
  });
  if (r.candidates.empty() && r.failure.empty()) r.failure = fmt::format("{} returned no valid plan", label());
  return r;
}

RedPressures RedPolicy::do_pressures(const RedRequest& req) const {
  RedRequest quality = req;
  quality.detail = RedDetail::quality;  // nothing here reads D
  RedResponse full = respond(quality);
  RedPressures out;
  out.failure = std::move(full.failure);
  for (RedCandidate& c : full.candidates)
    out.candidates.push_back({c.index, std::move(c.plan.plan_id), c.pressure, c.categories});
  return out;
}

RedResponse respond_by_contract(const CompletionClient& client, const RedRequest& req, int max_repairs,
                                const std::string& tag, const GenerationSettings* generation) {
  RedResponse r;
  CompletionRequest prompt = build_red_prompt(*req.scenario, *req.blue);
  if (generation) apply_generation(prompt, *generation);
  attach_plan_schema(prompt, *req.scenario, Side::Red);
  // 31 bits, so every OpenAI-compatible server parses it.
  prompt.seed =
      Rng::keyed(req.run_seed, req.scenario->id, sample_stream("red/" + tag, req.sample)).next_u64() & 0x7fffffffULL;
  auto res = run_contract(client, std::move(prompt), *req.scenario, Side::Red, max_repairs,
                          fmt::format("{}/red/{}", req.scenario->id, tag));
  r.contract = res.stats;
  r.transcript = std::move(res.transcript);
  if (!res.plan) {
    r.failure = res.failure;
    return r;
  }
  const auto vuln = vulnerability(layout_plan(*req.blue, *req.scenario));
  r.candidates.push_back(score_red_plan(*res.plan, *req.scenario, vuln, req.weights, 0));
  r.selected = 0;
  return r;
}

std::unique_ptr<RedPolicy> make_red_policy(const std::string& text, const PolicyContext& ctx) {
  const auto& reg = RedRegistry::instance();
  // exec:CMD carries its argument after the colon (which may hold '@'): the registry entry is the prefix.
  if (const auto colon = text.find(':'); colon != std::string::npos) {
    PolicySpec spec;
    spec.text = text;
    spec.name = text.substr(0, colon);
    if (reg.contains(spec.name) && !reg.info(spec.name, "RED").argument.empty()) {
      const Params params = params_from_config(reg.info(spec.name, "RED"), ctx.policy_params, ctx.source);
      return reg.create(spec, params, ctx, "RED");
    }
  }
  const PolicySpec spec = parse_policy_spec(text);
  const PolicyInfo& info = reg.info(spec.name, "RED");
  if (spec.k && !info.samples_k)
    throw PolicyError(fmt::format("policy '{}' does not sample k candidates, so '{}' is not accepted (use '{}')",
                                  spec.name, text, spec.name));
  const Params params = params_from_config(info, ctx.policy_params, ctx.source);
  return reg.create(spec, params, ctx, "RED");
}

bool RedPolicy::replans() const { return replans_enabled(params_); }

ReplanResult RedPolicy::replan(const Scenario& sc, const nlohmann::json& request) const {
  return checked_replan([&] { return do_replan(sc, request); }, sc, Side::Red, label());
}

ReplanResult RedPolicy::do_replan(const Scenario&, const nlohmann::json&) const {
  ReplanResult r;
  r.failure = fmt::format("{} does not replan", label());
  return r;
}

}  // namespace advplan
