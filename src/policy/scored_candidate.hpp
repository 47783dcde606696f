#pragma once
// score_red_plan for a plan whose assets are already known to be valid (library internal; src/scenario/
// sampled_plan.hpp gives them for a sampled plan), and the per-candidate draw that sample_red_candidates and
// sample_red_pressures share.
#include <cstdint>
#include <optional>
#include <string>

#include "advplan/policy/red_candidate.hpp"
#include "advplan/scenario/plan_sampler.hpp"
#include "scenario/sampled_plan.hpp"

namespace advplan::detail {

/// score_red_plan. With `valid_assets` (one per action, in action order) the plan is taken as valid for RED with
/// those assets, as accepts_resolving would find it, and is not validated again; without, it is validated. Without
/// `with_coherence` the coherence and raw capability are left absent.
RedCandidate score_red_plan_resolved(Plan plan, const Asset* const* valid_assets, const Scenario& sc,
                                     const std::array<double, kNumPressures>& blue_vulnerability,
                                     const QualityWeights& weights, int index, bool with_coherence);

/// score_red_plan_resolved's scoring of a plan valid for RED with `assets` (one per action, in action order): c's
/// q, d (with `with_coherence`), raw capability, pressure and categories, as that function sets them; c's index,
/// plan and validity are left as they are.
void score_valid_into(RedCandidate& c, const Plan& plan, const Asset* const* assets, const Scenario& sc,
                      const std::array<double, kNumPressures>& blue_vulnerability, const QualityWeights& weights,
                      bool with_coherence);

/// The pressure and categories of a plan valid for RED with `assets`, the same bits as score_valid_into gives them
/// (the pressure reads q's effectiveness e alone, and that is quality's own function). `plan` may be a lean plan
/// (src/scenario/sampled_plan.hpp), whose layout is the full plan's.
void pressure_valid_into(RedPressureCandidate& p, const Plan& plan, const Asset* const* assets, const Scenario& sc,
                         const std::array<double, kNumPressures>& blue_vulnerability);

/// What every candidate of one request's batch shares (the BLUE plan's vulnerability and the category bias it
/// gives, the scenario's sampler tables, the stream's key and the ids' prefix), and the drawing and scoring of
/// candidate i from it: sample_red_candidates draws each missing index with draw(i), sample_red_pressures with
/// draw_pressure(i), and the benchmarks time both.
class CandidateBatch {
 public:
  /// `with_coherence` as score_red_plan_resolved takes it.
  CandidateBatch(const RedRequest& req, bool with_coherence);
  /// Candidate i of the request's stream: a function of (run seed, scenario, stream, i) and the BLUE plan. Throws
  /// PlanError when the sampler cannot draw it. Safe to call concurrently.
  RedCandidate draw(std::size_t i) const;
  /// Candidate i's pressure (nullopt when the candidate is invalid): draw(i)'s plan id, pressure and categories,
  /// bit for bit. A plan valid by construction is drawn lean (sample_plan_lean: the same draws into a reused
  /// plan); one that is not, or any plan of a scenario where two assets share an id, is drawn and validated in
  /// full. Safe to call concurrently.
  std::optional<RedPressureCandidate> draw_pressure(std::size_t i) const;

 private:
  std::string id_of(std::size_t i) const;
  const Scenario& sc_;
  QualityWeights weights_;
  std::array<double, kNumPressures> vuln_{};
  SampleOptions opts_;
  SamplerTables tables_;
  std::uint64_t key_ = 0;
  std::string id_prefix_;
  bool with_coherence_;
};

}  // namespace advplan::detail
