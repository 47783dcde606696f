#pragma once
// The columns of the run's own trace files, in one place (docs/TRACES.md describes each; a policy's or an
// analysis's files have their columns with it: PolicyInfo::traces, studies/studies.hpp). Writers and readers both use
// these lists, so a reader rejects a file whose columns are not the expected ones.
#include <cstddef>
#include <string>
#include <vector>

namespace advplan::io {
class CsvTable;
}

namespace advplan::schema {

const std::vector<std::string>& scenarios();
const std::vector<std::string>& per_scenario();
const std::vector<std::string>& candidates();
/// per_scenario.csv and candidates.csv of a run of more than one sample (config `samples`): the same columns with
/// `sample` after `condition`.
const std::vector<std::string>& per_scenario_sampled();
const std::vector<std::string>& candidates_sampled();
inline const std::vector<std::string>& per_scenario(bool sampled) {
  return sampled ? per_scenario_sampled() : per_scenario();
}
inline const std::vector<std::string>& candidates(bool sampled) { return sampled ? candidates_sampled() : candidates(); }
/// The column `sample` is inserted at (after `condition`) in the sampled headers.
std::size_t sample_column_per_scenario();
std::size_t sample_column_candidates();
const std::vector<std::string>& bootstrap_summary();
const std::vector<std::string>& budget_curve();
const std::vector<std::string>& terrain_summary();
/// geo_moves.csv (terrain: geo): one row per movement bound to a route or map tool call, per condition and side.
const std::vector<std::string>& geo_moves();
/// engagements.csv and replications.csv: the engagement wargame's engagements and per-replication outcomes
/// (docs/TRACES.md), written when a condition plays `simulator: {model: engagement}`.
const std::vector<std::string>& engagements();
const std::vector<std::string>& replications();
/// replans.csv: one row per replanning call of an engagement run (docs/TRACES.md "replans.csv")
const std::vector<std::string>& replans();

/// Metrics of per_scenario.csv summarised with bootstrap intervals in bootstrap_summary.csv.
const std::vector<std::string>& summarised_metrics();

/// The documented range of a numeric trace column (docs/TRACES.md "Ranges").
struct ColumnRange {
  const char* column;
  double lo, hi;
  bool integer;
};
/// The ranges of per_scenario.csv's and candidates.csv's numeric columns.
const std::vector<ColumnRange>& per_scenario_ranges();
const std::vector<ColumnRange>& candidates_ranges();
/// The largest candidate set a run writes (k is at most 1024); a reader refuses a larger one.
inline constexpr std::size_t kMaxCandidateSet = 1024;

/// Checks every non-empty cell of each column of `ranges` that `t` has: a finite number (inf, nan and 1e400 are
/// refused) within [lo, hi] (a slack of 1e-9 for rounding), and whole where the column is an integer. Throws
/// CsvError "<file>: line N: column 'c' is X, outside its documented range [lo, hi]".
void check_ranges(const io::CsvTable& t, const std::vector<ColumnRange>& ranges);

/// per_scenario.csv as a run wrote it: its header must be per_scenario() or per_scenario_sampled(), and its cells
/// pass check_ranges. Throws CsvError naming the file. (summaries.hpp's sample_means reduces a sampled one.)
io::CsvTable read_per_scenario(const std::string& path);

}  // namespace advplan::schema
