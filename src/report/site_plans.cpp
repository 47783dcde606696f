// Plans for a run that kept none (docs/REPORT.md "Plans made again"): the built-in policies are deterministic
// from the run's keyed streams, so their plans are made again from the recorded config when the report is made
// (replay_plans: the policies' answers without the wargame), the same lines a run with traces: {plans: true}
// writes. A run with an external policy keeps its plans.jsonl and is read as it is.
#include <fmt/format.h>

#include <set>
#include <tuple>

#include "advplan/core/error.hpp"
#include "advplan/io/played_plans.hpp"
#include "advplan/io/text_lines.hpp"
#include "advplan/policy/registry_access.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/run/scenario_eval.hpp"
#include "report/site.hpp"

namespace advplan::report::site {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {
/// Whether `spec` names a policy of `reg` whose answers come from advplan itself. Only looked up, never built:
/// a spec with a ':' (exec:CMD, llm:MODEL, a module's) or an unknown name (a plug-in's) is not replayed, so a
/// config from a hostile run_metadata.json starts nothing.
template <typename Registry>
bool built_in(const Registry& reg, const std::string& spec) {
  if (spec.find(':') != std::string::npos) return false;
  try {
    const PolicySpec p = parse_policy_spec(spec);
    return reg.contains(p.name) && !reg.info(p.name, "").external;
  } catch (const Error&) {
    return false;
  }
}

/// A row's cell as text (cell() reads a number-like text as a number).
std::string text_of(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }
}  // namespace

std::shared_ptr<const RunPlan> plan_replay(const ExperimentConfig* cfg, const fs::path& dir) {
  if (cfg == nullptr || fs::exists(dir / "plans.jsonl")) return nullptr;
  try {
    std::vector<Condition> conds = run_conditions(*cfg);
    for (const Condition& c : conds)
      if (!built_in(blue_registry(), c.blue) || !built_in(red_registry(), c.red)) return nullptr;
    auto plan = std::make_shared<RunPlan>(prepare_run(*cfg, std::move(conds)));
    if (has_external_policy(*plan)) return nullptr;
    return plan;
  } catch (const Error&) {
    return nullptr;  // a config this build cannot run (a policy it lacks): the page says the plans were not kept
  }
}

void replay_into(json& page, const Scenario* sc, const RunPlan* replay) {
  if (sc == nullptr || replay == nullptr || !page["plans"].empty() || !page["rows"].is_array()) return;
  // Only when the page's rows are the replay's conditions: the same labels, BLUE policies and RED policies.
  std::set<std::tuple<std::string, std::string, std::string>> played, replayed;
  for (const json& r : page["rows"])
    if (r.is_object() && r.contains("condition") && r.contains("blue_policy") && r.contains("red_policy"))
      played.emplace(text_of(r["condition"]), text_of(r["blue_policy"]), text_of(r["red_policy"]));
  for (const Condition& c : replay->conditions) replayed.emplace(c.label, c.blue, replay->red(c).label());
  if (played.empty() || played != replayed) return;
  std::string text;
  for (const std::string& line : replay_plans(*sc, *replay)) text += line + "\n";
  for (const PlayedPlan& p : parse_played_plans(text, "plans made again", 0)) page["plans"].push_back(plan_entry(p));
  page["plans_made_again"] = true;
}

}  // namespace advplan::report::site
