#pragma once
// The run's own summaries of per_scenario.csv (docs/METRICS.md "Statistics", docs/TRACES.md): bootstrap_summary.csv,
// budget_curve.csv and terrain_summary.csv. Every run writes them, and every analysis reads its intervals from
// them (SummaryIntervals) rather than resampling again. `advplan run` and `advplan tables` both go through these
// functions, so the summaries a run writes and those rebuilt from its CSVs are byte-identical.
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "advplan/io/csv.hpp"
#include "advplan/stats/statistics.hpp"

namespace advplan {

/// per_scenario.csv of a run of several samples (config `samples`: a `sample` column) as one row per (scenario,
/// condition), in order of first appearance and without the sample column: the row is ok when some sample is,
/// each numeric column (schema::per_scenario_ranges but k) is the mean of the ok samples' non-empty values
/// (written as the traces write numbers), and the other columns are the first ok sample's; a (scenario, condition)
/// no sample of which is ok keeps its first sample's row. Every summary and analysis reads these means
/// (docs/METRICS.md "Samples"). A table without a sample column is returned as it is. Throws CsvError naming the
/// file when a (scenario, condition, sample) has two rows.
io::CsvTable sample_means(const io::CsvTable& per_scenario);

/// Rows of per_scenario.csv with status ok, keeping file order.
io::CsvTable ok_rows(const io::CsvTable& per_scenario);
/// The same without a copy when every row is ok (most runs): `per_scenario` itself; otherwise the ok rows, kept in
/// `storage`.
const io::CsvTable& ok_rows(const io::CsvTable& per_scenario, io::CsvTable& storage);

/// Distinct values of a column in order of first appearance.
std::vector<std::string> distinct_values(const io::CsvTable& t, std::string_view col);
/// The BLUE policy of the budget sweep: the BLUE policy of the rows in group sweep, or "" without a sweep.
std::string sweep_blue(const io::CsvTable& per_scenario);
/// Sweep conditions by k: every condition in which the sweep's BLUE policy meets greedy@k (the sweep group's
/// own conditions, and listed ones such as the main greedy@8), sorted by k.
std::vector<std::pair<int, std::string>> sweep_conditions(const io::CsvTable& per_scenario);

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

}  // namespace advplan
