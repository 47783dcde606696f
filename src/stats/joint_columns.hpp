#pragma once
// Columns of one scope's units for the joint bootstrap (library internal; docs/METRICS.md "Joint bootstrap"). Table
// 6's council diagnostics and the studies put every interval of a table over the same units into one scope, so
// the table's rows come from the same resamples, as the summary's do.
#include <limits>
#include <string_view>
#include <vector>

#include "advplan/stats/statistics.hpp"

namespace advplan::detail {

class JointColumns {
 public:
  explicit JointColumns(std::size_t units) : units_(units) {}
  std::size_t units() const { return units_; }
  /// Adds a column, one value per unit (NaN where the unit has none); returns its index.
  std::size_t add(std::vector<double> by_unit) {
    by_unit.resize(units_, std::numeric_limits<double>::quiet_NaN());
    cols_.push_back(std::move(by_unit));
    return cols_.size() - 1;
  }
  /// Every column's interval from one joint bootstrap of the units, keyed `key`: the mean and n of its present
  /// values in unit order, and the percentile bounds of its replicates.
  std::vector<Interval> intervals(const BootstrapSettings& bs, std::string_view key) const {
    const std::size_t m = cols_.size();
    std::vector<double> values(units_ * m);
    for (std::size_t s = 0; s < units_; ++s)
      for (std::size_t j = 0; j < m; ++j) values[s * m + j] = cols_[j][s];
    return joint_bootstrap_means(values, m, bs.resamples, bs.seed, key);
  }

 private:
  std::size_t units_;
  std::vector<std::vector<double>> cols_;
};

}  // namespace advplan::detail
