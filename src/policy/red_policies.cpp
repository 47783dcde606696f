// The RED baselines of the paper: single sample, quality-greedy best-of-k, constraint-aware best-of-k, and the
// offline LLM-contract responder.
#include <fmt/format.h>

#include "advplan/metrics/frontier.hpp"
#include "advplan/policy/red_policy.hpp"

namespace advplan {
namespace {

std::vector<double> qualities(const std::vector<RedCandidate>& c) {
  std::vector<double> q;
  for (const auto& x : c) q.push_back(x.valid ? x.q.q : std::numeric_limits<double>::quiet_NaN());
  return q;
}
std::vector<double> coherences(const std::vector<RedCandidate>& c) {
  std::vector<double> d;
  for (const auto& x : c) d.push_back(x.valid && x.d ? x.d->D : std::numeric_limits<double>::quiet_NaN());
  return d;
}

/// One sampled response: candidate 0 of the stream (so it is greedy@1's candidate too).
class SinglePolicy final : public RedPolicy {
 public:
  static PolicyInfo static_info() {
    PolicyInfo info{"single", Side::Red, false, 1, ThreadSafety::constant, {}, "one sampled RED response"};
    info.reads_framing = false;
    return info;
  }
  explicit SinglePolicy(Params p) : RedPolicy(static_info(), 1, std::move(p)) {}

 protected:
  RedResponse do_respond(const RedRequest& req, CandidateCache* cache) const override {
    RedResponse r;
    r.candidates = sample_red_candidates(req, 1, cache);  // the choice reads nothing
    r.selected = r.candidates.front().valid ? 0 : -1;
    return r;
  }
  RedPressures do_pressures(const RedRequest& req) const override { return {sample_red_pressures(req, 1), {}}; }
};

/// Quality-greedy best-of-k: c_q = argmax q (docs/METRICS.md).
class GreedyPolicy final : public RedPolicy {
 public:
  static PolicyInfo static_info() {
    PolicyInfo info{"greedy", Side::Red, true, 8, ThreadSafety::constant, {}, "quality-greedy best-of-k"};
    info.reads_framing = false;
    return info;
  }
  GreedyPolicy(int k, Params p) : RedPolicy(static_info(), k, std::move(p)) {}

 protected:
  RedResponse do_respond(const RedRequest& req, CandidateCache* cache) const override {
    RedResponse r;
    r.candidates = sample_red_candidates(req, k(), cache);  // the choice reads q alone
    r.selected = select_quality_greedy(qualities(r.candidates));
    return r;
  }
  RedPressures do_pressures(const RedRequest& req) const override { return {sample_red_pressures(req, k()), {}}; }
};

/// Constraint-aware best-of-k: c_D = argmax lambda q + (1 - lambda) D (docs/METRICS.md).
class ConstraintPolicy final : public RedPolicy {
 public:
  static PolicyInfo static_info() {
    PolicyInfo info{"constraint", Side::Red, true, 8, ThreadSafety::constant,
                    {{"lambda", 0.7, 0.0, 1.0, "weight of quality against coherence"}}, "constraint-aware best-of-k"};
    info.reads_framing = false;
    return info;
  }
  ConstraintPolicy(int k, Params p) : RedPolicy(static_info(), k, std::move(p)) {}

 protected:
  RedResponse do_respond(const RedRequest& req, CandidateCache* cache) const override {
    RedResponse r;
    r.candidates = sample_red_candidates(req, k(), cache, RedDetail::full);  // the choice reads D
    r.selected = select_constraint_aware(qualities(r.candidates), coherences(r.candidates), params().at("lambda"));
    return r;
  }
};

/// The offline LLM-contract responder: the prompt builder, the offline deterministic client, the parser.
class LlmOfflinePolicy final : public RedPolicy {
 public:
  static PolicyInfo static_info() {
    return {"llm_offline", Side::Red, false, 1, ThreadSafety::constant,
            {{"max_repairs", 1, 0, 10, "re-prompts after an unusable completion"}},
            "LLM JSON contract with the offline deterministic client"};
  }
  explicit LlmOfflinePolicy(Params p) : RedPolicy(static_info(), 1, std::move(p)) {}

 protected:
  RedResponse do_respond(const RedRequest& req, CandidateCache*) const override {
    return respond_by_contract(client_, req, static_cast<int>(params().at("max_repairs")), "llm_offline");
  }

 private:
  OfflineCompletionClient client_;
};

}  // namespace

ADVPLAN_REGISTER_RED_POLICY(SinglePolicy::static_info(),
                            [](const PolicySpec&, const Params& p, const PolicyContext&) -> std::unique_ptr<RedPolicy> {
                              return std::make_unique<SinglePolicy>(p);
                            })
ADVPLAN_REGISTER_RED_POLICY(GreedyPolicy::static_info(),
                            [](const PolicySpec& s, const Params& p, const PolicyContext&) -> std::unique_ptr<RedPolicy> {
                              return std::make_unique<GreedyPolicy>(s.k.value_or(8), p);
                            })
ADVPLAN_REGISTER_RED_POLICY(ConstraintPolicy::static_info(),
                            [](const PolicySpec& s, const Params& p, const PolicyContext&) -> std::unique_ptr<RedPolicy> {
                              return std::make_unique<ConstraintPolicy>(s.k.value_or(8), p);
                            })
ADVPLAN_REGISTER_RED_POLICY(LlmOfflinePolicy::static_info(),
                            [](const PolicySpec&, const Params& p, const PolicyContext&) -> std::unique_ptr<RedPolicy> {
                              return std::make_unique<LlmOfflinePolicy>(p);
                            })

}  // namespace advplan
