#pragma once
// The tables of a run, computed from its trace CSVs alone (docs/TRACES.md). `advplan run` and `advplan tables`
// both go through these functions, so the tables a run writes and the tables rebuilt from its CSVs are
// byte-identical.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "advplan/io/csv.hpp"
#include "advplan/run/observer.hpp"
#include "advplan/run/run_reader.hpp"
#include "advplan/run/summaries.hpp"
#include "advplan/stats/statistics.hpp"

namespace advplan {

/// A run's CSVs, read and checked against the schema. Optional files are empty when absent.
struct RunCsvs : RunTraces {
  std::optional<io::CsvTable> council_trace, council_candidates;  ///< the council's traces, when it ran
};
/// Reads DIR's CSVs after io::verify_run_directory (MANIFEST present and matching): read_run_traces, then the
/// council's traces when present. Throws CsvError naming the file when one is missing, unlisted, changed,
/// truncated or has other columns.
RunCsvs read_run(const std::string& dir);

/// Keeps the per-scenario rows (and council rows) whose scenario matches `column=value` in
/// scenarios.csv/per_scenario.csv (column: template or terrain_family), and recomputes bootstrap_summary over the
/// slice (with the bootstrap settings recorded in the run). Throws CsvError on an unknown column.
RunCsvs slice_run(const RunCsvs& run, const std::string& column, const std::string& value);

/// Every table, as (file name, content): <name>.md and <name>.tex per table. Intervals come from
/// run.bootstrap_summary (SummaryIntervals); a sliced run (slice_run) carries the summary of its slice.
std::vector<std::pair<std::string, std::string>> build_tables(const RunCsvs& run, const BootstrapSettings& bs);
/// The same from the run's own traces and the council's trace (nullopt: the council did not run).
std::vector<std::pair<std::string, std::string>> build_tables(const RunTraces& run,
                                                              const std::optional<io::CsvTable>& council_trace,
                                                              const BootstrapSettings& bs);

/// Table 6 (council), built when the council's trace is in the run.
std::vector<std::pair<std::string, std::string>> build_extra_tables(const std::optional<io::CsvTable>& council_trace,
                                                                    const io::CsvTable& ok_per_scenario,
                                                                    const SummaryIntervals& intervals,
                                                                    const BootstrapSettings& bs);

/// The tables as a run observer: every table of build_tables, written into tables/ once the run's traces (and the
/// files of the observers before it) are in place.
std::shared_ptr<RunObserver> make_tables_observer();

/// Table 3's advantage and win rate per condition clustered by template (docs/METRICS.md "Template-clustered
/// intervals"): table3_clustered.{csv,md,tex}.
std::vector<std::pair<std::string, std::string>> build_clustered_tables(const RunCsvs& run, const BootstrapSettings& bs);

/// Paired differences of run A against run B: rows pair by (scenario, BLUE policy, RED policy), with run A's BLUE
/// policies renamed through `blue_map` first (so `mine=seed` compares A's `mine` with B's `seed`). Throws
/// CsvError naming both runs when nothing pairs.
std::vector<std::pair<std::string, std::string>> build_comparison(const RunCsvs& a, const RunCsvs& b,
                                                                  const BootstrapSettings& bs,
                                                                  const std::map<std::string, std::string>& blue_map = {},
                                                                  double power = 0.8);


}  // namespace advplan
