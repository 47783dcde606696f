#pragma once
// Judge canaries (docs/RUBRIC.md "Canaries", docs/METRICS.md "Canary flag"): known-bad plans built from the run's
// own scenarios, graded by every judge beside the real plans. Each canary has must-fail items: positive items whose
// pass condition cannot hold in it by construction. A judge that passes more than kCanaryMaxPassShare of the
// must-fail items it graded is flagged in rubric/canary_judges.csv, the rubric tables and on stderr. Canary grades
// never enter the plans' scores.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "advplan/core/plan.hpp"
#include "advplan/core/scenario.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/rubric/judge.hpp"
#include "advplan/rubric/score.hpp"
#include "advplan/stats/text_table.hpp"

namespace advplan::rubric {

/// How many scenarios give canaries (fewer when fewer scenarios have items).
inline constexpr std::size_t kCanaryScenarios = 3;
/// A judge is flagged when it passes more than this share of the must-fail canary items it graded.
inline constexpr double kCanaryMaxPassShare = 0.5;

/// `empty`: no objective, no action, no chain, no branch. `planted`: the scenario's reference plan (its first BLUE
/// seed plan) with a generic objective and without its branches and its information, protection, deception,
/// sustainment, civil and public-information actions.
enum class CanaryKind { empty, planted };
std::string_view to_string(CanaryKind k);

struct Canary {
  std::size_t scenario = 0;  ///< index into the corpus
  CanaryKind kind = CanaryKind::empty;
  std::string id;            ///< "<case_id>/canary:<kind>"
  Plan plan;
  std::vector<std::size_t> must_fail;  ///< indices into the scenario's items
};

/// The scenarios that give canaries: of those with items, the kCanaryScenarios with the smallest keyed draw
/// Rng::keyed(seed, id, "rubric/canary").next_u64() (ties by id), in corpus order.
std::vector<std::size_t> canary_scenarios(std::span<const Scenario> corpus,
                                          std::span<const std::vector<RubricItem>> items, std::uint64_t seed);

Plan empty_canary(const Scenario& sc);
/// The planted canary, or nothing when the scenario has no seed plan to plant failures in.
std::optional<Plan> planted_canary(const Scenario& sc);

/// The items whose pass condition cannot hold in `canary`, read from its structure alone (not from any judge):
/// objective_names_target when the objective contains no place of the scenario; sustainment_present,
/// branch_contingency and civil_engaged when the plan has no such action or branch; exposed_steps_covered@p when
/// chain step p is exposed and the plan has no protection or deception action; information_before_exposure when
/// a chain step is exposed and the plan has no information action. Negative items are never must-fail.
std::vector<std::size_t> must_fail_items(std::span<const RubricItem> items, const Plan& canary, const Scenario& sc);

/// Every canary of the run: per chosen scenario, the empty canary then the planted one.
std::vector<Canary> build_canaries(std::span<const Scenario> corpus, std::span<const std::vector<RubricItem>> items,
                                   std::uint64_t seed);

/// One judge's grade of one canary.
struct CanaryGrade {
  bool ok = true;             ///< false: the judge failed on it (scored as verifying nothing: no item passed)
  std::string reason;
  std::vector<bool> passed;   ///< per item of the canary's scenario
  JudgeOutcome llm;           ///< an LLM judge's outcome (attempts, transcript); empty for a rule judge
};

/// The judges' grades, [canary][judge]: the rule judges (rule_judges()) then the LLM judges, whose clients are
/// `clients` (null: not available, `setup_errors` says why). Canaries are graded in parallel; the result does not
/// depend on the thread count.
struct CanaryJudging {
  const std::vector<std::string>& llm_judges;
  std::span<const CompletionClient* const> clients;
  std::span<const std::string> setup_errors;
  int retries = 2;
  const GenerationSettings* generation = nullptr;
};
std::vector<std::vector<CanaryGrade>> grade_canaries(std::span<const Canary> canaries,
                                                     std::span<const Scenario> corpus,
                                                     std::span<const std::vector<RubricItem>> items,
                                                     const CanaryJudging& judging);

/// A judge's canary summary: must-fail items of the canaries it graded without error, and those it passed.
struct CanaryTally {
  std::string judge;
  std::size_t canaries = 0, errors = 0, must_fail = 0, passed = 0;
  bool flagged() const;  ///< must_fail > 0 and passed > kCanaryMaxPassShare * must_fail
};
/// Per judge (all_judges: the rule judges, then the LLM judges, the order of grade_canaries).
std::vector<CanaryTally> tally_canaries(std::span<const Canary> canaries,
                                        const std::vector<std::vector<CanaryGrade>>& grades,
                                        const std::vector<std::string>& all_judges);

/// rubric/canaries.csv: one row per (judge, canary).
io::CsvTable canaries_csv(std::span<const Canary> canaries, std::span<const Scenario> corpus,
                          std::span<const std::vector<RubricItem>> items,
                          const std::vector<std::vector<CanaryGrade>>& grades, const std::vector<std::string>& all_judges);
/// rubric/canary_judges.csv: one row per judge.
io::CsvTable canary_judges_csv(std::span<const CanaryTally> tallies);
/// tables/rubric/canary_judges: rendered from canary_judges.csv alone.
TextTable canary_judges_table(const io::CsvTable& canary_judges, const std::string& name);
/// The one stderr line of a flagged judge (no newline).
std::string canary_warning(const CanaryTally& t);

}  // namespace advplan::rubric
