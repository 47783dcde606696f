#pragma once
// Summaries of a large run in one streaming pass over per_scenario.csv (docs/RESULTS.md "Summaries at scale"):
// memory is a few numbers per (scope, condition, metric), whatever the number of rows. Means are the same sums in
// the same order as the bootstrap path; intervals are the normal approximation mean +- 1.959964 s / sqrt(n).
#include <cstddef>
#include <string>

#include "advplan/stats/statistics.hpp"

namespace advplan {

/// Runs with more ok rows than this compute their summaries by streaming (RunOptions::summary "auto").
inline constexpr std::size_t kStreamingSummaryRows = 100000;

struct StreamedSummaries {
  std::string bootstrap_summary, budget_curve, terrain_summary;  ///< CSV texts (the schemas of trace_schema)
  std::size_t rows = 0, failed_rows = 0;
  std::string first_failure;
};

/// Reads per_scenario.csv once, row by row. `bs.seed` is recorded; the resamples column is 0 (no resampling).
/// Throws CsvError naming the file and line on a malformed row.
StreamedSummaries stream_summaries(const std::string& per_scenario_path, const BootstrapSettings& bs);

}  // namespace advplan
