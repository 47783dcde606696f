#pragma once
// The RED-budget extrapolation past the largest k run (docs/METRICS.md "Budget extrapolation", docs/TRACES.md
// "extrapolation.csv"). A greedy@k response is the best of k i.i.d. candidates of one sampler, so each scenario's
// best-of-k quality follows from the upper tail of its candidates' quality: a generalized Pareto fit above a
// threshold (stats/tail_fit.hpp) to the candidates of the sweep's largest-k greedy condition, which hold every
// candidate drawn. From the fits: the expected best-of-k RED quality and BLUE advantage at k beyond the sweep (32,
// 64, 256 and the limit k -> infinity), with joint-bootstrap intervals over scenarios, and k*, the smallest k at
// which the mean BLUE advantage falls below a level (0.5, parity, by default).
#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "advplan/io/csv.hpp"
#include "advplan/run/observer.hpp"
#include "advplan/stats/statistics.hpp"
#include "advplan/stats/tail_fit.hpp"

namespace advplan {

struct ExtrapolationOptions {
  std::vector<int> extra_ks = {32, 64, 256};  ///< predicted beside the sweep's own ks
  double level = 0.5;                         ///< k*: the smallest k with mean advantage < level
  double interval = 0.90;                     ///< the per-scenario prediction interval of one best-of-k draw
  /// Fit only on candidates with index < fit_index (0: every candidate of the largest-k condition). The held-out
  /// check fits on index < 16 of a greedy@64 condition.
  int fit_index = 0;
  TailRule rule;
  /// The budget curve's conditions by k, the largest fitted; empty: the run's budget sweep (sweep_conditions).
  std::vector<std::pair<int, std::string>> budget;
};

struct SweepLayout;
/// The budget curve of a sweep over k alone (`sweep: {k: [...]}` of a quality-greedy condition): its points by k,
/// each with a row in per_scenario.csv whose RED policy is greedy@k; empty for any other sweep.
std::vector<std::pair<int, std::string>> k_sweep_budget(const io::CsvTable& per_scenario, const SweepLayout& layout);

/// One scenario's fit.
struct ScenarioTail {
  std::string scenario_id;
  double blue_quality = 0;
  std::size_t drawn = 0, valid = 0;  ///< draws (valid or not) and the valid candidates fitted
  TailModel model;
  /// The prediction interval of one best-of-k quality at `interval`: the (1 - interval)/2 and (1 + interval)/2
  /// quantiles of the max of k draws under the fit.
  std::pair<double, double> prediction_interval(double k, double interval) const;
};

struct ExtrapolationFit {
  std::string condition;  ///< the condition whose candidates were fitted (the sweep's largest greedy k)
  int k = 0;              ///< its k
  int draws = 0;          ///< candidates per scenario (and sample) the fit reads: k, or fit_index when smaller
  std::vector<std::pair<int, std::string>> sweep;  ///< the sweep's conditions by k (sweep_conditions)
  std::vector<ScenarioTail> scenarios;             ///< in order of first appearance of their ok row
};

/// Fits every scenario of a run: `per_scenario` as the run wrote it (a sampled one is reduced to its sample means)
/// and its candidates.csv. Without a budget sweep the fit has no scenarios and an empty condition. Throws CsvError
/// naming the file and field for a malformed, out-of-range or oversized candidates.csv.
ExtrapolationFit fit_extrapolation(const io::CsvTable& per_scenario, const io::CsvTable& candidates,
                                   const ExtrapolationOptions& opts = {});

/// extrapolation.csv's text from a fit ("" when it has no scenarios).
std::string extrapolation_csv(const ExtrapolationFit& fit, const io::CsvTable& per_scenario,
                              const BootstrapSettings& bs, const ExtrapolationOptions& opts = {});

/// k* of the mean over scenarios and of each bootstrap resample (docs/METRICS.md "Budget extrapolation"): the
/// first k of k_star_grid() at which the mean advantage falls below `level`, +inf when none does; replicates empty
/// when there are fewer than two scenarios or no resample.
struct KStarSearch {
  double k_star = std::numeric_limits<double>::infinity();
  std::vector<double> replicates;  ///< resample b's k*, b = 0 .. B-1
};
KStarSearch search_k_star(const ExtrapolationFit& fit, const BootstrapSettings& bs, double level);

/// extrapolation.csv's header.
const std::vector<std::string>& extrapolation_header();

/// The grid k* is searched on: every k in 1..64, then ceil(64 * 2^(j/32)) up to 2^20.
const std::vector<int>& k_star_grid();

/// The run observer: writes extrapolation.csv at the run directory's top level for a run with a budget sweep.
std::shared_ptr<RunObserver> make_extrapolation_observer();

/// The same file rebuilt from a finished run directory's traces (read_run_traces, candidates.csv), as (path
/// relative to the run directory, content); none without a budget sweep.
std::vector<std::pair<std::string, std::string>> extrapolation_files(const std::string& run_dir);

}  // namespace advplan
