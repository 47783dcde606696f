#pragma once
// A table rendered as Markdown and as LaTeX (booktabs), and the one format of an interval in a table cell.
#include <string>
#include <utility>
#include <vector>

#include "advplan/stats/statistics.hpp"

namespace advplan {

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

}  // namespace advplan
