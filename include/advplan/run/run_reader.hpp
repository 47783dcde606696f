#pragma once
// Reading a finished run back (docs/TRACES.md "Run directory and MANIFEST"): the MANIFEST check, then the traces
// every run has, checked against their schema. An analysis reads its own files beside these.
#include <string>

#include "advplan/io/csv.hpp"

namespace advplan {

/// The traces every complete run has.
struct RunTraces {
  std::string dir;
  io::CsvTable scenarios, per_scenario, bootstrap_summary;
};

/// Reads DIR's scenarios.csv, per_scenario.csv and bootstrap_summary.csv after io::verify_run_directory (MANIFEST
/// present and matching), checks that every summarised metric of per_scenario.csv parses (a run of several samples
/// is read as its sample means: summaries.hpp sample_means), and that the extra trace
/// files each BLUE policy in it declares (PolicyInfo::traces) are there. Throws CsvError naming the file when one
/// is missing, unlisted, changed, truncated or has other columns.
RunTraces read_run_traces(const std::string& dir);

}  // namespace advplan
