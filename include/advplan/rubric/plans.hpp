#pragma once
// The rubric layer for plans (docs/RUBRIC.md): each scenario's rubric items, derived from the item kinds its
// template declares (`rubric:` in the template YAML) and from the scenario's content; deterministic rule judges
// (the exact check, and the three role validators as stricter or looser judges); and the run's rubric/ directory.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "advplan/core/plan.hpp"
#include "advplan/core/scenario.hpp"
#include "advplan/rubric/score.hpp"
#include "advplan/metrics/coherence.hpp"
#include "advplan/policy/blue_policy.hpp"
#include "advplan/run/observer.hpp"
#include "advplan/run/progress.hpp"

namespace advplan {

struct RunPlan;
struct BootstrapSettings;
struct ExperimentConfig;

namespace rubric {

/// The items of `sc` for the kinds listed (in that order); item ids are "<kind>" or "<kind>@<position>".
std::vector<RubricItem> plan_rubric_items(const Scenario& sc, const std::vector<std::string>& kinds);

/// The coherence sub-score an item's kind belongs to: a validator judge is stricter on the parts it emphasises.
CoherencePart coherence_part_of(const RubricItem& item);

/// "exact", then one judge per role validator other than base: "constraint", "logistics", "adversarial_review".
const std::vector<std::string>& rule_judges();

/// The judge's verdict on each item (true: the pass condition holds; for a negative item, the mistake is made).
/// Throws Error for an unknown judge.
std::vector<bool> judge_plan(const std::string& judge, std::span<const RubricItem> items, const Plan& plan,
                             const Scenario& sc);
/// judge_plan for several judges at once, [judge][item]: the exact checks and the coherence parts, which every judge
/// reads, are computed once.
std::vector<std::vector<bool>> judge_plan_all(const std::vector<std::string>& judges, std::span<const RubricItem> items,
                                              const Plan& plan, const Scenario& sc);

/// The files of the run's rubric/ directory: items, item verdicts per judge, scores per plan and policy, the
/// decomposition, the agreement tables (CSV, Markdown, LaTeX) and the same data in MA-Bench's JSON-lines
/// layout. Plans are made again from each BLUE policy's stream ("blue/<spec>"), so they are the run's plans;
/// `exec:` and `llm:` policies are left out (they would be asked again). Empty when no template declares items.
/// The judges are the rule judges, then the config's LLM judges (rubric.judges); an LLM judge's calls are
/// recorded in rubric/judge_calls.csv, and a judge that fails on a plan after its retries is a verdict with
/// error set and the reason, never a pass.
/// `corpus`: the run's scenarios when it kept them (else they are generated); `kept`: the plans the run made, by
/// (scenario id, BLUE spec) (see make_rubric_observer), moved out as they are graded; a plan not there is made
/// again from the policy's stream.
using KeptBluePlans = std::map<std::pair<std::string, std::string>, std::optional<Plan>>;
/// How the live judges' phase reports (docs/RUBRIC.md "Progress and cost"). Every layer with a live judge ends with
/// one line on stderr: per judge, the plans it failed on and what its calls took.
struct LayerOptions {
  ProgressMode progress = ProgressMode::none;  ///< the phase's progress, as the run's --progress
  /// Set: what a live judge without an endpoint is told to do (`rubric regrade` reads no endpoint from the run);
  /// empty: the client's own sentence ("set llm.endpoint in the config or ADVPLAN_LLM_ENDPOINT").
  std::string no_endpoint;
};
std::vector<std::pair<std::string, std::string>> rubric_layer_files(const RunPlan& plan, const BootstrapSettings& bs,
                                                                    const std::vector<Scenario>* corpus = nullptr,
                                                                    KeptBluePlans* kept = nullptr,
                                                                    const LayerOptions& options = {});

/// `advplan rubric regrade`: the rubric/ files of a finished run graded again by plan.cfg's judges (the rule judges
/// and cfg.rubric.judges), from the BLUE plans in the run's plans.jsonl (sample 0 of each scenario and policy:
/// read_played_plans), which are never made or asked again; a policy's scenario missing from the file is graded as
/// having no plan. `plan` needs only cfg and ctx (no policy is created). Throws IoError naming the file.
std::vector<std::pair<std::string, std::string>> regrade_files(const RunPlan& plan, const BootstrapSettings& bs,
                                                               const std::string& plans_jsonl,
                                                               const LayerOptions& options = {});

/// The rubric layer as a run observer: it keeps every BLUE plan the run played (when this process runs the whole
/// corpus), so it grades the same plans without asking the policies again, external ones (`exec:`, `llm:`)
/// included, and writes rubric/ and its metadata when the run ends.
/// `judges_progress`: how its live judges show their progress (the run's --progress).
std::shared_ptr<RunObserver> make_rubric_observer(ProgressMode judges_progress = ProgressMode::none);

/// Whether a run writes the rubric layer: studies.rubric is on and some template declares rubric items.
bool rubric_layer_enabled(const ExperimentConfig& cfg);
/// Whether the rubric layer grades BLUE policy `policy`: every policy when the run's plans are kept (`kept`), else
/// every policy but the external ones (PolicyInfo::external: `exec:`, `llm:`), which it would have to ask again.
bool rubric_grades_blue(const BluePolicy& policy, bool kept);

/// What run_metadata.json records of the rubric layer: mean_over, the judges, judge_retries and, when an LLM judge
/// is configured, judge_prompt_sha256.
std::vector<std::pair<std::string, std::string>> rubric_metadata(const ExperimentConfig& cfg);

}  // namespace rubric
}  // namespace advplan
