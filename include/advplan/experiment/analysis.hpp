#pragma once
// Summaries and tables computed from the trace CSVs alone (docs/TRACES.md). `advplan run` and `advplan tables`
// both go through these functions, so the tables a run writes and the tables rebuilt from its CSVs are
// byte-identical.
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "advplan/io/csv.hpp"
#include "advplan/metrics/statistics.hpp"

namespace advplan {

struct BootstrapSettings {
  int resamples = 2000;
  std::uint64_t seed = 7;
};

/// Rows of per_scenario.csv with status ok, keeping file order.
io::CsvTable ok_rows(const io::CsvTable& per_scenario);
/// The same without a copy when every row is ok (most runs): `per_scenario` itself; otherwise the ok rows, kept in
/// `storage`.
const io::CsvTable& ok_rows(const io::CsvTable& per_scenario, io::CsvTable& storage);

/// bootstrap_summary.csv: scope "all", "template=<t>" (order of appearance) and "terrain=<family>" (sorted) x
/// condition x summarised metric. Each scope is one joint bootstrap over its scenarios (joint_bootstrap_means,
/// key = the scope): every condition and metric of a scope comes from the same resamples.
io::CsvTable bootstrap_summary_table(const io::CsvTable& per_scenario, const BootstrapSettings& bs);

/// The intervals of a run's bootstrap_summary.csv by (scope, condition, metric): the tables and curves read
/// them instead of resampling again. A scope the file lacks (a run written before terrain scopes were summarised)
/// is computed from the ok rows by the same joint bootstrap; a condition with no row in a scope has n = 0.
class SummaryIntervals {
 public:
  SummaryIntervals(const io::CsvTable& bootstrap_summary, const io::CsvTable& ok_per_scenario, const BootstrapSettings& bs);
  Interval get(const std::string& scope, const std::string& condition, const std::string& metric) const;

 private:
  const io::CsvTable* per_;
  BootstrapSettings bs_;
  mutable std::unordered_map<std::string, Interval> by_key_;
  mutable std::map<std::string, bool> scopes_;  ///< scopes loaded or computed
};

/// budget_curve.csv: the sweep conditions (BLUE seed against greedy@k) by k, from the ok rows (ok_rows) and
/// intervals from `intervals`.
io::CsvTable budget_curve_table(const io::CsvTable& ok_per_scenario, const SummaryIntervals& intervals);
/// terrain_summary.csv: terrain family x condition, from the ok rows, intervals from `intervals` (scope
/// terrain=<family>).
io::CsvTable terrain_summary_table(const io::CsvTable& ok_per_scenario, const SummaryIntervals& intervals);

/// The bootstrap settings recorded in bootstrap_summary.csv (first row); throws CsvError when absent.
BootstrapSettings recorded_bootstrap(const io::CsvTable& bootstrap_summary);

/// A run's CSVs, read and checked against the schema. Optional files are empty when absent.
struct RunCsvs {
  std::string dir;
  io::CsvTable scenarios, per_scenario, bootstrap_summary;
  std::optional<io::CsvTable> council_trace, council_candidates, rubric_records, rubric_sensitivity, framing, components;
};
/// Reads DIR's CSVs after io::verify_run_directory (MANIFEST present and matching); throws CsvError naming the
/// file when one is missing, unlisted, changed, truncated or has other columns.
RunCsvs read_run(const std::string& dir);

/// Keeps the per-scenario rows (and council and rubric rows) whose scenario matches `column=value` in
/// scenarios.csv/per_scenario.csv (column: template or terrain_family), and recomputes bootstrap_summary over the
/// slice (with the bootstrap settings recorded in the run). Throws CsvError on an unknown column.
RunCsvs slice_run(const RunCsvs& run, const std::string& column, const std::string& value);

/// Every table, as (file name, content): <name>.md and <name>.tex per table. Intervals come from
/// run.bootstrap_summary (SummaryIntervals); a sliced run (slice_run) carries the summary of its slice.
std::vector<std::pair<std::string, std::string>> build_tables(const RunCsvs& run, const BootstrapSettings& bs);

/// Paired differences of run A against run B: rows pair by (scenario, BLUE policy, RED policy), with run A's BLUE
/// policies renamed through `blue_map` first (so `mine=seed` compares A's `mine` with B's `seed`). Throws
/// CsvError naming both runs when nothing pairs.
std::vector<std::pair<std::string, std::string>> build_comparison(const RunCsvs& a, const RunCsvs& b,
                                                                  const BootstrapSettings& bs,
                                                                  const std::map<std::string, std::string>& blue_map = {});

/// Writes the files into `dir` (created when missing), each atomically, after all were built.
void write_files(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace advplan
