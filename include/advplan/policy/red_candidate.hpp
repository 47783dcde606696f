#pragma once
// A scored RED plan, and the sampler that draws k of them in parallel from per-candidate streams.
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <optional>
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

/// How much of each RED candidate a caller reads (RedRequest::detail). A property of the request, as
/// pagmo's thread_safety is of a problem: the caller says what it reads, and what it does not read is absent from
/// the candidates it gets, never a placeholder.
enum class RedDetail {
  quality,  ///< q, pressure and categories; d and raw_capability may be absent
  full,     ///< everything: d and raw_capability too
};

struct RedCandidate {
  int index = 0;
  Plan plan;
  QualityParts q;
  /// Coherence D and its parts: present on every valid candidate of a RedDetail::full answer.
  std::optional<CoherenceParts> d;
  PressureResult pressure;
  CategorySet categories{};
  bool valid = true;
  std::string invalid_reason;
  /// raw_capability(plan, scenario), when the scoring computed it (every valid candidate of a full answer).
  std::optional<double> raw_capability;
};

/// Scores a RED plan answering `blue_vulnerability` (validates it first; an invalid plan is returned with
/// valid = false and its violations in invalid_reason), to `detail`: at RedDetail::quality the candidate's
/// coherence d and raw capability are left absent (its q, pressure and categories are the same).
RedCandidate score_red_plan(Plan plan, const Scenario& sc, const std::array<double, kNumPressures>& blue_vulnerability,
                            const QualityWeights& weights, int index, RedDetail detail = RedDetail::full);

/// Everything a RED policy needs to answer one BLUE plan.
struct RedRequest {
  const Scenario* scenario = nullptr;
  const Plan* blue = nullptr;
  std::uint64_t run_seed = 0;
  /// Names the candidate stream. Candidate i of stream S in scenario X is always the same draw, so greedy@k
  /// and constraint@k share their candidates, and greedy@k's set is the first k of greedy@16's.
  std::string stream = "baseline";
  /// The run's sample (config `samples`): every keyed RED stream of the request is sample_stream(purpose, sample),
  /// so sample 0 draws what a run of one sample draws.
  int sample = 0;
  QualityWeights weights;
  PlanShape shape;  ///< RED plan shape (chain length, branches)
  std::vector<BranchKind> branch_kinds;
  /// What the caller reads of each candidate. At RedDetail::quality (the framing study's arms read the chosen
  /// response's q alone) a candidate's d and raw_capability may be absent; RedPolicy::respond fills them in at
  /// RedDetail::full whatever the policy returned. A caller that reads only pressures asks RedPolicy::pressures.
  RedDetail detail = RedDetail::full;
};

/// The request for answering `blue` in `sc` from candidate stream `stream`, with the run seed, quality weights
/// and the scenario's template plan shape taken from the run's context. Throws ConfigError when the run does not
/// load the scenario's template.
RedRequest red_request(const Scenario& sc, const Plan& blue, const PolicyContext& ctx, std::string stream);

/// Caches sampled candidates per (stream, BLUE plan) within one scenario task, so greedy@k and constraint@k share
/// one draw and a larger k extends a smaller one's candidates instead of drawing them again. The BLUE plan is
/// identified by its address and id: two policies' plans with the same id are different plans. Not thread-safe:
/// one per task, and the plans must outlive it.
///
/// The cache works out when a plan's candidates are needed for the last time from the requests it is built with:
/// how many RED requests will answer each BLUE plan in the task. RedPolicy::respond counts each request as it
/// starts, and in a plan's last request sample_red_candidates moves the candidates out instead of copying them. A
/// request after that (or a second draw within the last one) draws them again: the same candidates, since each is
/// a function of its stream and index, so a miscount costs time, never a result. A cache built without counts
/// copies always.
class CandidateCache {
 public:
  CandidateCache() = default;
  /// `requests[&plan]`: how many RED requests will answer `plan` in this task.
  explicit CandidateCache(std::map<const Plan*, int> requests) : remaining_(std::move(requests)) {}
  /// The candidates drawn so far for (stream, plan), created empty on first use.
  std::vector<RedCandidate>& entry(const std::string& stream, const Plan& blue);
  /// Counts the start of one RED request answering `blue` (RedPolicy::respond calls it).
  void start_request(const Plan& blue);
  /// Whether the request in progress for `blue` is the last one the cache was built with.
  bool in_last_request(const Plan& blue) const;

 private:
  std::map<std::tuple<std::string, const Plan*, std::string>, std::vector<RedCandidate>> entries_;
  std::map<const Plan*, int> remaining_;  ///< requests not yet started, by plan
  std::set<const Plan*> last_;            ///< plans whose last request has started
};

/// Draws candidates 0..k-1 in parallel (TBB), each from Rng::keyed(run_seed, scenario, "red/" + stream, i);
/// RED category weights lean towards the pressures the BLUE plan leaves uncovered: w_c * (1 + v_p(c)(B)).
/// Candidates drawn for this call alone are scored to the larger of the request's detail and `reads`, what the
/// calling policy's own choice reads (constraint reads D: RedDetail::full); cached candidates are always full,
/// since the cache may answer a later request that reads everything.
std::vector<RedCandidate> sample_red_candidates(const RedRequest& req, int k, CandidateCache* cache = nullptr,
                                                RedDetail reads = RedDetail::quality);

/// A RED response reduced to what a pressure test reads: which candidate, and the pressure it puts on the BLUE
/// plan.
struct RedPressureCandidate {
  int index = 0;
  std::string plan_id;
  PressureResult pressure;
  CategorySet categories{};
};

/// The pressures of candidates 0..k-1 of the request's stream: the same draws as sample_red_candidates (the same
/// plan ids and pressures, bit for bit), each plan drawn lean when it is valid by construction (the plan itself is
/// never built); invalid candidates are left out. For the built-in sampling policies' RedPolicy::pressures.
std::vector<RedPressureCandidate> sample_red_pressures(const RedRequest& req, int k);

}  // namespace advplan
