#pragma once
// The multi-agent council (generate, stress-test, revise, adjudicate; docs/ARCHITECTURE.md "Council"),
// registered as the BLUE planning policy "council". Its whole deliberation goes to two extra trace files,
// council_trace.csv and council_candidates.csv, through the generic BluePolicy::trace_rows hook.
#include <array>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "advplan/core/plan.hpp"
#include "advplan/core/scenario.hpp"
#include "advplan/council/council_config.hpp"
#include "advplan/policy/blue_policy.hpp"
#include "advplan/policy/red_policy.hpp"

namespace advplan {

/// The five proposer roles and the action category each adds.
inline constexpr std::array<Category, 5> kProposerRoles{Category::movement, Category::information, Category::cyber,
                                                        Category::sustainment, Category::protection};

/// Adds one action of `category` to `plan`, performed by a BLUE asset able to do it, with a verb of the
/// category, at a sensible chain position (council_operators.cpp says where). Returns false (plan unchanged)
/// when no BLUE asset can perform the category or the template has no such verb. `verb` forces the verb when
/// it is in the vocabulary.
bool add_role_action(Plan& plan, const Scenario& sc, Category category, Rng& rng, const std::string& verb = "",
                     const std::string& tag = "");
/// add_role_action for a plan of either side: an asset of `side` able to perform `category`, placed by the same
/// rule. add_role_action is add_side_action(..., Side::Blue, ...); search@N's add and pressure moves (src/council/
/// search_red.cpp) call it with Side::Red.
bool add_side_action(Plan& plan, const Scenario& sc, Side side, Category category, Rng& rng,
                     const std::string& verb = "", const std::string& tag = "");

/// One mitigation action of the critique-to-mitigation map.
struct Mitigation {
  Category category;
  std::string verb;
};
/// The paper's map: direct -> dispersion (movement: disperse) and hardening (protection: harden); cyber ->
/// out-of-band communications (cyber: oob-comms); logistics -> redundant supply routing (sustainment:
/// reroute-supply); information gathering -> deception and counter-reconnaissance (deception: decoy,
/// counter-recon); public information -> a communication cell (public_information: comm-cell).
const std::vector<Mitigation>& mitigations_for(Pressure p);

/// Applies the mitigations for `p`; returns the "category:verb" list actually added (a verb missing from the
/// template's vocabulary or a category no BLUE asset performs is skipped).
std::vector<std::string> apply_mitigation(Plan& plan, const Scenario& sc, Pressure p, Rng& rng);

struct CouncilCandidate {
  std::string id;
  int round = 1;          ///< 1: proposal, 2: revision
  std::string role;       ///< proposer role (round 1) or the parent's role (round 2)
  std::string parent_id;  ///< the seed plan (round 1) or the shortlisted candidate (round 2)
  Plan plan;
  QualityParts q;
  CoherenceParts d;
  CategorySet categories{};
  double pressure = 0;    ///< the critique's pressure magnitude
  Pressure critique = Pressure::direct;
  std::string critique_red_id;
  double diversity = 0;   ///< diversity contribution in the final pool
  double round1_score = std::numeric_limits<double>::quiet_NaN();  ///< first-round score (shortlisting); NaN for revisions
  double score = 0;         ///< adjudicator score within the final pool
  std::array<double, 4> parts{};  ///< weighted quality, coherence, diversity, (1 - pressure) terms of `score`
  bool shortlisted = false, selected = false;
  std::string mitigation;  ///< mitigations applied (round 2)
};

/// The adjudicator: score = w_q q + w_D D + w_div diversity + w_p (1 - pressure).
double adjudicator_score(const CouncilConfig& w, double q, double D, double diversity, double pressure,
                         std::array<double, 4>* parts = nullptr);
/// Indices of the top `n` by score, ties to the lower index.
std::vector<std::size_t> shortlist(const std::vector<double>& scores, std::size_t n);
/// Mean Jaccard distance of member i's category set to every other member (0 for a single member).
double diversity_contribution(const std::vector<CategorySet>& sets, std::size_t i);

struct CouncilRecord {
  std::vector<CouncilCandidate> candidates;  ///< round 1 then round 2
  int selected = -1;
  double council_diversity = 0;   ///< action-type diversity of the first-round candidates
  double revised_diversity = 0;   ///< action-type diversity of the revised candidates
  double consensus_gap = 0;       ///< top-two final adjudicator score gap
  double robustness_margin = 0;   ///< selected score minus best first-round score (>= 0)
  double pressure_reduction = 0;  ///< mean over revised candidates of parent pressure minus own pressure
  int n_initial = 0, n_revised = 0;
  std::string failure;
  const CouncilCandidate* chosen() const { return selected >= 0 ? &candidates[static_cast<std::size_t>(selected)] : nullptr; }
};

/// The council's extra trace files (docs/TRACES.md).
const TraceFile& council_trace_file();       ///< council_trace.csv: one row per scenario
const TraceFile& council_candidates_file();  ///< council_candidates.csv: one row per candidate

namespace schema {
/// The council's trace files' columns, as their readers check them.
inline const std::vector<std::string>& council_trace() { return council_trace_file().header; }
inline const std::vector<std::string>& council_candidates() { return council_candidates_file().header; }
}  // namespace schema

class CouncilPolicy final : public BluePolicy {
 public:
  static PolicyInfo static_info();
  /// Settings from ctx.get<CouncilConfig>(); the stress-testing RED policy is created from the same context.
  CouncilPolicy(Params p, const PolicyContext& ctx);
  /// The whole deliberation, for the council trace. plan() returns the selected candidate's plan.
  CouncilRecord deliberate(const Scenario& sc, Rng& rng) const;
  /// council_trace.csv and council_candidates.csv rows for the deliberation in result.details.
  void trace_rows(const Scenario& sc, const BluePlanResult& result, const PlanOutcome* outcome,
                  TraceRows& out) const override;

 protected:
  BluePlanResult do_plan(const Scenario& sc, Rng& rng) const override;

 private:
  void stress(CouncilCandidate& c, const Scenario& sc, const std::string& stream) const;
  CouncilConfig council_;
  std::uint64_t run_seed_;
  QualityWeights weights_;
  PolicyContext ctx_;
  std::unique_ptr<RedPolicy> red_;
};

}  // namespace advplan
