#pragma once
// A scored RED plan, and the sampler that draws k of them in parallel from per-candidate streams.
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "advplan/core/plan.hpp"
#include "advplan/core/scenario.hpp"
#include "advplan/metrics/coherence.hpp"
#include "advplan/metrics/frontier.hpp"
#include "advplan/metrics/pressure.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/policy/policy_context.hpp"
#include "advplan/scenario/scenario_template.hpp"

namespace advplan {

struct RedCandidate {
  int index = 0;
  Plan plan;
  QualityParts q;
  CoherenceParts d;
  PressureResult pressure;
  CategorySet categories{};
  bool valid = true;
  std::string invalid_reason;
  /// raw_capability(plan, scenario), when score_red_plan computed it (fully scored candidates); NaN otherwise.
  double raw_capability = std::numeric_limits<double>::quiet_NaN();
};

/// Scores a RED plan answering `blue_vulnerability` (validates it first; an invalid plan is returned with
/// valid = false and its violations in invalid_reason). Without `with_coherence` the candidate's coherence d and
/// raw capability are not computed and hold NaN (its q, pressure and categories are the same).
RedCandidate score_red_plan(Plan plan, const Scenario& sc, const std::array<double, kNumPressures>& blue_vulnerability,
                            const QualityWeights& weights, int index, bool with_coherence = true);

/// Everything a RED policy needs to answer one BLUE plan.
struct RedRequest {
  const Scenario* scenario = nullptr;
  const Plan* blue = nullptr;
  std::uint64_t run_seed = 0;
  /// Names the candidate stream. Candidate i of stream S in scenario X is always the same draw, so greedy@k
  /// and constraint@k share their candidates, and greedy@k's set is the first k of greedy@16's.
  std::string stream = "baseline";
  QualityWeights weights;
  PlanShape shape;  ///< RED plan shape (chain length, branches)
  std::vector<BranchKind> branch_kinds;
  /// False when the caller reads no candidate's coherence (the council's stress test reads only validity and
  /// pressure). A hint: a policy whose own choice does not use coherence (single, greedy) may then leave every
  /// candidate's d as NaN; one that needs it (constraint) computes it anyway. A candidate cache never holds such
  /// candidates.
  bool reads_coherence = true;
  /// False when the caller reads only the candidates' validity, pressure and plan ids, and no selection (the
  /// council's stress test takes the highest-pressure candidate). A hint, as reads_coherence, and implies it: a
  /// policy whose choice reads q alone (single, greedy) may then leave each candidate's q.c, q.r, q.q and d as NaN
  /// (q.e stays: the pressure reads it), and return each candidate's plan as its plan_id and side alone (the
  /// built-in sampler draws such candidates without building their plans); its selection is then not meaningful
  /// (greedy selects none) and RedPolicy::respond does not validate it. A policy that needs more (constraint)
  /// computes it anyway. A candidate cache never holds such candidates.
  bool reads_quality = true;
};

/// The request for answering `blue` in `sc` from candidate stream `stream`, with the run seed, quality weights
/// and the scenario's template plan shape taken from the run's context. Throws ConfigError when the run does not
/// load the scenario's template.
RedRequest red_request(const Scenario& sc, const Plan& blue, const PolicyContext& ctx, std::string stream);

/// Caches sampled candidates per (stream, BLUE plan) within one scenario task, so greedy@k and constraint@k share
/// one draw and a larger k extends a smaller one's candidates instead of drawing them again. The BLUE plan is
/// identified by its address and id: two policies' plans with the same id are different plans. Not thread-safe:
/// one per task, and the plans must outlive it.
class CandidateCache {
 public:
  /// The candidates drawn so far for (stream, plan), created empty on first use.
  std::vector<RedCandidate>& entry(const std::string& stream, const Plan& blue);
  /// Says that the next request for (stream, plan) is the last one: sample_red_candidates then moves its
  /// candidates out of the cache instead of copying them. A request after that draws them again (the same
  /// candidates: each is a function of its stream and index), so a wrong hint costs time, never a result.
  void last_use(const std::string& stream, const Plan& blue);
  /// Whether last_use was said for (stream, plan) since its candidates were last taken; clears it.
  bool take_last_use(const std::string& stream, const Plan& blue);

 private:
  struct Entry {
    std::vector<RedCandidate> candidates;
    bool last_use = false;
  };
  std::map<std::tuple<std::string, const Plan*, std::string>, Entry> entries_;
};

/// Draws candidates 0..k-1 in parallel (TBB), each from Rng::keyed(run_seed, scenario, "red/" + stream, i);
/// RED category weights lean towards the pressures the BLUE plan leaves uncovered: w_c * (1 + v_p(c)(B)).
/// With `coherence_optional`, candidates drawn for this call alone (no cache) skip their coherence when the
/// request says nobody reads it (RedRequest::reads_coherence), and all of q but e when it says nobody reads q
/// either (RedRequest::reads_quality), and then carry no plan but its id (plan_id and side; a candidate not valid
/// by construction, or any candidate of a scenario where two assets share an id, keeps its full plan); cached
/// candidates are always fully scored.
std::vector<RedCandidate> sample_red_candidates(const RedRequest& req, int k, CandidateCache* cache = nullptr,
                                                bool coherence_optional = false);

}  // namespace advplan
