#pragma once
// score_red_plan for a plan whose assets are already known to be valid (library internal; src/scenario/
// sampled_plan.hpp gives them for a sampled plan).
#include <cstdint>
#include <string>

#include "advplan/policy/red_candidate.hpp"
#include "advplan/scenario/plan_sampler.hpp"
#include "scenario/sampled_plan.hpp"

namespace advplan::detail {

/// score_red_plan. With `valid_assets` (one per action, in action order) the plan is taken as valid for RED with
/// those assets, as accepts_resolving would find it, and is not validated again; without, it is validated. Without
/// `with_quality` only q.e of the quality is computed (the pressure's input; q.c, q.r and q.q are NaN) and neither
/// is the coherence.
RedCandidate score_red_plan_resolved(Plan plan, const Asset* const* valid_assets, const Scenario& sc,
                                     const std::array<double, kNumPressures>& blue_vulnerability,
                                     const QualityWeights& weights, int index, bool with_coherence,
                                     bool with_quality = true);

/// score_red_plan_resolved's scoring of a plan valid for RED with `assets` (one per action, in action order): c's
/// q, d, raw capability, pressure and categories, as that function sets them; c's index, plan and validity are
/// left as they are. `plan` need not be c.plan (a lean plan, src/scenario/sampled_plan.hpp, gives the same
/// pressure and e; only those are read without `with_quality`).
void score_valid_into(RedCandidate& c, const Plan& plan, const Asset* const* assets, const Scenario& sc,
                      const std::array<double, kNumPressures>& blue_vulnerability, const QualityWeights& weights,
                      bool with_coherence, bool with_quality);

/// What every candidate of one request's batch shares (the BLUE plan's vulnerability and the category bias it
/// gives, the scenario's sampler tables, the stream's key and the ids' prefix), and the drawing and scoring of
/// candidate i from it: sample_red_candidates draws each missing index with draw(i), and the benchmarks time it.
class CandidateBatch {
 public:
  /// `with_coherence` and `with_quality` as score_red_plan_resolved takes them; without `with_quality` a plan valid
  /// by construction is drawn lean (sample_plan_lean) and the candidate's plan is its id and side alone.
  CandidateBatch(const RedRequest& req, bool with_coherence, bool with_quality);
  /// Candidate i of the request's stream: a function of (run seed, scenario, stream, i) and the BLUE plan. Throws
  /// PlanError when the sampler cannot draw it. Safe to call concurrently.
  RedCandidate draw(std::size_t i) const;

 private:
  const Scenario& sc_;
  QualityWeights weights_;
  std::array<double, kNumPressures> vuln_{};
  SampleOptions opts_;
  SamplerTables tables_;
  std::uint64_t key_ = 0;
  std::string id_prefix_;
  bool with_coherence_, with_quality_;
};

}  // namespace advplan::detail
