#pragma once
// Summaries and tables computed from the trace CSVs alone (docs/TRACES.md). `advplan run` and `advplan tables`
// both go through these functions, so the tables a run writes and the tables rebuilt from its CSVs are
// byte-identical.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "advplan/io/csv.hpp"

namespace advplan {

struct BootstrapSettings {
  int resamples = 2000;
  std::uint64_t seed = 7;
};

/// Rows of per_scenario.csv with status ok, keeping file order.
io::CsvTable ok_rows(const io::CsvTable& per_scenario);

/// bootstrap_summary.csv: scope "all" and "template=<t>" x condition x summarised metric.
io::CsvTable bootstrap_summary_table(const io::CsvTable& per_scenario, const BootstrapSettings& bs);
/// budget_curve.csv: the sweep conditions (BLUE seed against greedy@k) by k.
io::CsvTable budget_curve_table(const io::CsvTable& per_scenario, const BootstrapSettings& bs);
/// terrain_summary.csv: terrain family x condition.
io::CsvTable terrain_summary_table(const io::CsvTable& per_scenario, const BootstrapSettings& bs);

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
/// scenarios.csv/per_scenario.csv (column: template or terrain_family). Throws CsvError on an unknown column.
RunCsvs slice_run(const RunCsvs& run, const std::string& column, const std::string& value);

/// Every table, as (file name, content): <name>.md and <name>.tex per table.
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
