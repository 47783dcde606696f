#pragma once
// Anytime-valid early stopping of `advplan evaluate --stop-when-decided` (docs/METRICS.md "Anytime-valid
// stopping"): the family of paired comparisons a run monitors, the looks after each block of scenarios in corpus
// order, and the stopping rule. Everything is computed from per_scenario rows in corpus order, so a run stops at
// the same scenario at any thread count, and a written run's looks are replayed from its per_scenario.csv.
#include <cstddef>
#include <string>
#include <vector>

#include "advplan/evaluation/evaluation.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/stats/confidence_sequence.hpp"

namespace advplan {

/// One monitored comparison: the policy minus `reference`, both against `red`, on `metric`.
struct SequentialComparison {
  std::string red, reference, metric;
};

/// The family a stopping run monitors, fixed before the first scenario: for each RED the policy meets (the
/// baselines, then each greedy@k of the budget that is not one), each reference other than the policy, each
/// verdict metric.
std::vector<SequentialComparison> sequential_family(const EvaluateSpec& spec);

/// A comparison at one look: its confidence sequence at Holm's strictest level alpha/m (the futility bound),
/// its anytime p-value, and whether Holm's step-down rejects "mean difference = 0".
struct ComparisonLook {
  std::size_t n = 0;  ///< paired differences so far
  double mean = 0;    ///< their mean (NaN when n = 0)
  double lo = -1, hi = 1;
  double p = 1;
  bool decided = false;
};

struct SequentialLook {
  std::size_t look = 0;       ///< 1, 2, ...
  std::size_t scenarios = 0;  ///< scenarios played at this look
  std::vector<ComparisonLook> comparisons;  ///< parallel to the family
  std::string stop;  ///< "decided", "futility", or "" (go on)
  std::size_t decided() const;
};

/// The looks of a stopping run as its scenarios come, in corpus order.
class SequentialMonitor {
 public:
  SequentialMonitor(std::string blue, std::vector<SequentialComparison> family, StoppingRule rule);
  /// Adds one scenario's per_scenario rows (columns as `header` names them). Returns the look when the scenario
  /// ends a block, else nullptr.
  const SequentialLook* add_scenario(const std::vector<std::string>& header,
                                     const std::vector<std::vector<std::string>>& rows);
  /// Adds every scenario of a per_scenario table (rows grouped by scenario, in corpus order); the number added.
  std::size_t add_table(const io::CsvTable& per);
  /// A look at the scenarios so far, recorded unless the last look was already taken there.
  const SequentialLook& look_now();
  std::size_t scenarios() const { return scenarios_; }
  const std::vector<SequentialLook>& looks() const { return looks_; }
  const std::vector<SequentialComparison>& family() const { return family_; }
  const StoppingRule& rule() const { return rule_; }

 private:
  std::string blue_;
  std::vector<SequentialComparison> family_;
  StoppingRule rule_;
  std::vector<ConfidenceSequence> cs_;
  std::vector<double> sum_;
  std::size_t scenarios_ = 0;
  std::vector<SequentialLook> looks_;
  void add_differences(const io::CsvTable& rows);
};

/// The looks of a written run: every block's, and a final one at its last scenario when that ends no block.
std::vector<SequentialLook> replay_looks(const io::CsvTable& per, const std::string& blue,
                                         const std::vector<SequentialComparison>& family, const StoppingRule& rule);

/// The stopped run's verdicts are the anytime ones: each verdict of the family takes `last`'s decision ("better"
/// or "worse" by the sign of the mean difference when Holm rejects, else "no detectable difference") and its
/// anytime p-value as p; p_holm is left as the sign-flip test's, for reference only.
void apply_anytime_verdicts(std::vector<Verdict>& verdicts, const std::vector<SequentialComparison>& family,
                            const SequentialLook& last);

/// evaluation/stopping.csv: one row per look and comparison (docs/TRACES.md).
io::CsvTable stopping_table(const std::string& blue, const std::vector<SequentialComparison>& family,
                            const std::vector<SequentialLook>& looks);

/// Wires `spec.stopping` into a run's options: the looks after each block (with opts.progress, a progress line on
/// stderr each), the rows a resumed run already has, and the rule in the run key (a resume must stop by the same
/// rule).
void stop_when_decided(const EvaluateSpec& spec, RunOptions& opts);

/// "look 3 after 30 scenarios: 2 of 4 decided; stop: every verdict decided", the progress line of a look.
std::string look_line(const SequentialLook& look);

}  // namespace advplan
