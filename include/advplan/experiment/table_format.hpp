#pragma once
// A table rendered as Markdown and as LaTeX (booktabs).
#include <string>
#include <utility>
#include <vector>

#include "advplan/io/csv.hpp"
#include "advplan/metrics/statistics.hpp"

namespace advplan {

struct BootstrapSettings;
struct RunCsvs;
class SummaryIntervals;

struct TextTable {
  std::string name;     ///< file stem, e.g. table3_policy_comparison
  std::string caption;  ///< first line of the Markdown file and the LaTeX caption
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  std::string markdown() const;
  std::string latex() const;
};

/// "0.518 [0.510, 0.526]"; "n/a" when n == 0.
std::string interval_cell(const Interval& i);

/// Table 6 (council) and the study tables, built when their CSVs are in the run.
std::vector<std::pair<std::string, std::string>> build_extra_tables(const RunCsvs& run, const io::CsvTable& ok_per_scenario,
                                                                    const SummaryIntervals& intervals,
                                                                    const BootstrapSettings& bs);

}  // namespace advplan
