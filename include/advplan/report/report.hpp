#pragma once
// `advplan report` (docs/REPORT.md): a static, self-contained site of one run, or of two side by side, built from
// the run's files after the MANIFEST check. index.html holds the page, its script and style and the chart and map
// libraries (d3 and Leaflet from Debian, compiled into the binary); data/ holds the run's numbers as script files
// (data/overview.js, one data/s/<i>.js per scenario), loaded by <script> tags so that the site opens from file://
// with nothing fetched from anywhere.
#include <string>
#include <utility>
#include <vector>

#include "advplan/run/config.hpp"

namespace advplan::report {

/// One run the report reads: its directory and the config it ran (from its run_metadata.json).
struct ReportRun {
  std::string dir;
  const ExperimentConfig* cfg = nullptr;
};

/// The site's files as (path relative to the output folder, content): index.html, data/overview.js,
/// data/s/<i>.js per scenario (i: the scenario's row in scenarios.csv); with `against`, its scenarios too under
/// data/b/ and the paired differences in data/overview.js. Throws IoError / CsvError naming a file of the run.
std::vector<std::pair<std::string, std::string>> report_files(const ReportRun& run, const ReportRun* against);

/// The largest run a report bundles (scenarios x conditions rows of per_scenario.csv); above it the error names
/// the limit. A site holds every row in its overview.
inline constexpr std::size_t kMaxReportRows = 2'000'000;

}  // namespace advplan::report
