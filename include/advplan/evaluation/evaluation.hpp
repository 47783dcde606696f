#pragma once
// Testing a planning policy (`advplan evaluate`): the protocol's conditions, paired verdicts against each
// reference, robustness curves over the RED budget, the six-axis scorecard, and the summary files. Everything
// but the reproducibility check is computed from the trace CSVs alone (docs/METRICS.md "Evaluating a policy").
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "advplan/run/summaries.hpp"
#include "advplan/stats/text_table.hpp"
#include "advplan/run/config.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/stats/cluster.hpp"
#include "advplan/stats/statistics.hpp"

namespace advplan {

struct RunPlan;

/// `evaluate --stop-when-decided` (evaluation/stopping.hpp, docs/METRICS.md "Anytime-valid stopping").
struct StoppingRule {
  std::size_t block = 10;  ///< scenarios between looks
  double futility = 0;     ///< δ: also stop when every undecided comparison lies within ±δ (0: never)
  double alpha = 0.05;     ///< the family's level (Holm over the family)
};

/// What `advplan evaluate` runs: the policy under test against each fixed RED baseline and each greedy@k of the
/// budget sweep, and every reference BLUE policy against the same, with common random numbers.
struct EvaluateSpec {
  std::string blue;
  std::vector<std::string> reds{"single", "greedy@8", "constraint@8", "llm_offline"};
  std::vector<std::string> references{"seed", "council"};
  std::vector<int> budget_ks{1, 2, 4, 8, 16};
  double alpha = 0.05;  ///< the family's level, before Holm
  double power = 0.8;   ///< the power at which each verdict's minimum detectable effect is stated
  bool cluster_by_template = false;  ///< `--cluster template`: template-clustered intervals beside each verdict
  /// `--stop-when-decided`: the run stops when its looks decide, and its verdicts are the anytime ones.
  std::optional<StoppingRule> stopping;
  std::size_t corpus = 0;  ///< the config's corpus size, which a stopped run names beside what it played
};

/// The conditions, labelled "BLUE vs RED": for each RED baseline the policy (group evaluate) and each reference
/// (group reference); then for each k whose greedy@k is not a baseline, the policy and each reference against
/// greedy@k (group sweep). The policy comes first, so it is the sweep's BLUE policy in Table 4.
std::vector<Condition> evaluate_conditions(const EvaluateSpec& spec);

/// The metrics a verdict compares: BLUE advantage, win rate, quality q and coherence D (higher is better).
const std::vector<std::string>& verdict_metrics();

/// One paired comparison: policy minus reference, on the scenarios where both have a row against `red`.
struct Verdict {
  std::string blue, reference, red, metric;
  std::size_t n = 0;
  double mean_blue = 0, mean_reference = 0;
  Interval difference;  ///< paired bootstrap interval of the mean difference
  double p = 1;         ///< two-sided sign-flip p-value
  double p_holm = 1;    ///< Holm-adjusted over the whole family of the policy's comparisons
  std::string verdict;  ///< "better", "worse" or "no detectable difference"
  double alpha_holm = 0;  ///< alpha / m, Holm's strictest step over the family of m comparisons
  double power = 0.8;
  double mde = 0;  ///< minimum detectable effect at alpha_holm and power (docs/METRICS.md); NaN when n < 2
  /// With clustering by template: the difference's CR2 standard error, Satterthwaite df, t and wild intervals.
  std::optional<ClusteredMean> clustered;
  std::string verdict_text() const;  ///< the verdict, and for "no detectable difference" its n and MDE
  std::string sentence() const;
};

/// Every (RED policy, reference, metric) comparison of `blue` in per_scenario.csv, in RED order of first
/// appearance, Holm-corrected as one family. A comparison is "better"/"worse" when its adjusted p-value is below
/// alpha, by the sign of the mean difference; otherwise "no detectable difference".
std::vector<Verdict> paired_verdicts(const io::CsvTable& per, const std::string& blue,
                                     const std::vector<std::string>& references, const BootstrapSettings& bs,
                                     double alpha = 0.05, double power = 0.8, bool cluster_by_template = false);

/// One point of a robustness curve: `blue` against greedy@k.
struct RobustnessPoint {
  std::string blue;
  int k = 0;
  Interval advantage, win_rate;
};
/// The robustness curves of every BLUE policy with greedy@k rows, by policy (order of appearance) and k.
std::vector<RobustnessPoint> robustness_curves(const io::CsvTable& per, const BootstrapSettings& bs);

/// The drop (value at the smallest k minus value at the largest) and the slope (least squares against log2 k) of a
/// BLUE policy's mean advantage or win rate over k, each with a bootstrap interval that resamples scenarios jointly
/// across k (scenarios with a row at every k). NaN when the policy has fewer than two k.
struct RobustnessSummary {
  Interval drop, slope;
};
RobustnessSummary robustness_summary(const io::CsvTable& per, const std::string& blue, const std::string& metric,
                                     const BootstrapSettings& bs);

/// One line of the scorecard: an axis, a quantity, a policy, and the value with its interval (lo = hi = value when
/// there is no interval).
struct ScoreLine {
  std::string axis, quantity, policy;
  std::size_t n = 0;
  double value = 0, lo = 0, hi = 0;
  std::string note;
};
/// The six axes for `blue` and each reference (docs/METRICS.md "Scorecard"). `candidates` is candidates.csv;
/// `reproducibility` is evaluation/reproducibility.csv when the run checked it (nullptr otherwise).
std::vector<ScoreLine> scorecard(const io::CsvTable& per, const io::CsvTable& candidates,
                                 const io::CsvTable* reproducibility, const std::string& blue,
                                 const std::vector<std::string>& references, const BootstrapSettings& bs);

/// Re-evaluates a sample of `sample` scenarios (every ceil(n / sample)-th of the corpus) with the same run plan and
/// compares their rows with the run's per_scenario.csv: evaluation/reproducibility.csv (scenario_id, rows,
/// identical). Returns the empty table, with a note, when the plan has a live model (exempt: the server decides).
io::CsvTable check_reproducibility(const RunPlan& plan, const io::CsvTable& per, std::size_t sample,
                                   std::string* exempt_reason);

/// Everything `advplan evaluate` writes after the run, as (file name, content): summary.md, summary.json and
/// evaluation/{verdicts,robustness,scorecard}.csv. `reproducibility` may be empty (not checked or exempt). The
/// per-baseline intervals are read from the run's `bootstrap_summary` (scope all), not resampled again.
std::vector<std::pair<std::string, std::string>> evaluation_report(const io::CsvTable& per,
                                                                   const io::CsvTable& candidates,
                                                                   const io::CsvTable& bootstrap_summary,
                                                                   const io::CsvTable& reproducibility,
                                                                   const std::string& exempt_reason,
                                                                   const EvaluateSpec& spec,
                                                                   const BootstrapSettings& bs);

/// The report of the evaluate run in `dir`, read from its written traces: check_reproducibility (on the rows as
/// written) and evaluation_report (on the sample means of a sampled run, as every reader of per_scenario.csv).
/// What `advplan evaluate` and the Python module both write before the MANIFEST.
std::vector<std::pair<std::string, std::string>> evaluation_report_of_run(const RunPlan& plan, const std::string& dir,
                                                                          std::size_t rerun, const EvaluateSpec& spec,
                                                                          const BootstrapSettings& bs);

/// The cause of a failure reason: its leading ": "-separated parts (after the side tag), digits masked as N, at
/// most 80 characters ("blue: exec: timeout after N.N s").
std::string failure_cause(const std::string& reason);

}  // namespace advplan
