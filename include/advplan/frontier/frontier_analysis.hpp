#pragma once
// Pareto frontier analysis of a run's RED candidate sets (`advplan frontier`, docs/METRICS.md "Pareto frontier
// analysis", outputs in docs/TRACES.md "frontier/"). Computed from the CSVs alone: candidates.csv (the sets),
// per_scenario.csv (each condition's policies) and bootstrap_summary.csv (the bootstrap settings).
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "advplan/io/csv.hpp"

namespace advplan {

struct BootstrapSettings;

/// One objective: a numeric column of candidates.csv and its direction.
struct FrontierObjective {
  std::string column;
  bool maximise = true;
};

/// "q,D,pressure,-cost": 2 to 4 comma-separated columns of candidates.csv (aliases q = quality, D = coherence),
/// each maximised unless prefixed by '-' ('+' is allowed). Throws ConfigError naming the option.
std::vector<FrontierObjective> parse_frontier_objectives(const std::string& spec);

struct FrontierOptions {
  std::vector<FrontierObjective> objectives{{"quality", true}, {"coherence", true}};
  std::vector<std::string> conditions;  ///< the conditions analysed; empty: every condition with candidates
  int k = 0;                            ///< keep only conditions with this k; 0: every k
  /// EAF differences A − B between conditions of the run; empty: every (greedy@2k, greedy@k)-style pair.
  std::vector<std::pair<std::string, std::string>> compare;
  double grid_step = 0.02;  ///< spacing of the EAF-difference grid over the normalised square
  /// The hypervolume reference point in normalised units z (1 best), one value per objective, each in [-1, 1);
  /// empty: 0 for each, the worst value of every objective (docs/METRICS.md "Frontier indicators").
  std::vector<double> reference;
  /// Also write eaf_diff_exact.csv (`--exact-eaf`): exact, but on a full run it holds hundreds of thousands of
  /// rectangles per comparison (tens of MB), so it is asked for.
  bool exact_eaf = false;
};

/// "0,0" or "-0.1,-0.1,0": the --reference option, one normalised value per objective. Throws ConfigError naming
/// the option on a malformed list, a value outside [-1, 1) or a count unlike that of the objectives.
std::vector<double> parse_frontier_reference(const std::string& spec, std::size_t objectives);

/// The CSVs the analysis reads from one run directory.
struct FrontierInputs {
  std::string dir;
  io::CsvTable candidates, per_scenario, bootstrap_summary;
};
/// Reads DIR's candidates.csv, per_scenario.csv and bootstrap_summary.csv. Throws CsvError naming the file.
FrontierInputs read_frontier_inputs(const std::string& dir);

/// Every output file of frontier/ as (file name, content). With `against`, the EAF differences are each condition
/// of `run` minus the same condition of `against` (normalisation over both runs) instead of the pairs of `opts`.
/// Throws ConfigError on an unknown objective column or condition, CsvError on a malformed cell.
std::vector<std::pair<std::string, std::string>> build_frontier(const FrontierInputs& run, const FrontierOptions& opts,
                                                                const FrontierInputs* against = nullptr);

}  // namespace advplan
