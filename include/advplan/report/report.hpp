#pragma once
// `advplan report` (docs/REPORT.md): a static, self-contained site of one run, or of two side by side, built from
// the run's files after the MANIFEST check. index.html holds the page, its script and style and the chart and map
// libraries (d3 and Leaflet from Debian, compiled into the binary); data/ holds the run's numbers as script files
// (data/overview.js, one data/s/<i>.js per scenario), loaded by <script> tags so that the site opens from file://
// with nothing fetched from anywhere.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "advplan/core/error.hpp"
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

/// A file `advplan view` serves from changed after the MANIFEST check at its start (its size, modification time or
/// inode differs): what() names it.
struct RunChanged : IoError {
  using IoError::IoError;
};

/// `advplan view` (docs/REPORT.md "Serving a large run"): the report's pages for a run too large to bundle, answered
/// one request at a time from an index of where each scenario's records lie in the run's files (byte offsets,
/// built in one streamed pass), so memory grows with the number of scenarios by a few offsets each, never with
/// the traces. The overview holds no rows; they come page by page (`data/rows/<p>.js`, kViewPage scenarios each),
/// and a scenario's page (`data/s/<i>.js`) is the bytes the static report holds for it.
class ViewSite {
 public:
  /// Checks the run against its MANIFEST and indexes it, recording the identity of each file it will read on
  /// request before the check and confirming it after the index. Throws IoError / CsvError naming a file.
  explicit ViewSite(const ReportRun& run);
  ~ViewSite();
  ViewSite(const ViewSite&) = delete;
  ViewSite& operator=(const ViewSite&) = delete;
  struct Response {
    std::string content_type, body;
  };
  /// The answer to GET `path` ("/", "/app.js", "/data/overview.js", "/data/rows/0.js", "/data/s/3.js"), or
  /// nullopt (404) for any other path. Callable from several threads at once. Throws RunChanged when a file it
  /// reads is not the one checked at the start.
  std::optional<Response> get(std::string_view path) const;
  std::size_t scenarios() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};
inline constexpr std::size_t kViewPage = 200;

/// The largest run a report bundles (rows of per_scenario.csv); above it the error names the limit and `advplan
/// view`. A site holds every row in its overview, and a browser tab holds the site (300,000 rows took 2.9 GB to
/// write and a tab of a million rows fails to load).
inline constexpr std::size_t kMaxReportRows = 200'000;

}  // namespace advplan::report
