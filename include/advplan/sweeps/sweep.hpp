#pragma once
// Parameter sweeps (docs/CONFIG.md "sweep", docs/METRICS.md "Parameter sweeps"): a run whose config has a
// `sweep:` block evaluates one condition per point (group grid), on the same scenarios and keyed streams, and
// this analysis writes tables/sweep.csv (each point's metrics with joint-bootstrap intervals over scenarios),
// tables/sweep_differences.csv (paired differences between neighbouring points and against the reference point),
// tables/sweep_argmax.csv (each metric's argmax point and how often it is the argmax across the bootstrap
// resamples) and tables/sweep.{md,tex} (the curve of a one-setting sweep, the heat map of a two-setting one).
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "advplan/io/csv.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/observer.hpp"
#include "advplan/run/run_reader.hpp"
#include "advplan/stats/statistics.hpp"

namespace advplan {

/// What the analysis needs of a sweep: its settings, its points (condition label and values) and the reference.
struct SweepLayout {
  std::string condition;            ///< the swept condition's label
  std::vector<std::string> params;  ///< the swept settings' paths
  struct Point {
    std::string label;
    std::vector<double> values;
  };
  std::vector<Point> points;
  std::size_t reference = 0;
};

/// The layout of a config's sweep (empty params when it has none).
SweepLayout sweep_layout(const ExperimentConfig& cfg);
/// The layout a run recorded (run_metadata.json "sweep"); nullopt-like empty params when it has none. Throws
/// CsvError naming the file and field when the record is malformed.
SweepLayout recorded_sweep_layout(const std::string& run_dir);

/// The metrics a sweep reports, in order.
const std::vector<std::string>& sweep_metrics();

/// The neighbour of point `a` along setting `s`: the point with the next larger value of that setting and the same
/// values of every other setting (the nearest such, the first of equals); nullopt when none.
std::optional<std::size_t> next_sweep_neighbour(const SweepLayout& l, std::size_t a, std::size_t s);

/// The sweep's files from per_scenario.csv's rows (sample means in a run of several samples), named relative to
/// tables/: sweep.csv, sweep_differences.csv, sweep_argmax.csv, sweep.md, sweep.tex. None without points.
std::vector<std::pair<std::string, std::string>> sweep_tables(const io::CsvTable& per, const SweepLayout& layout,
                                                              const BootstrapSettings& bs);
/// The same from a finished run's traces and recorded layout (what `advplan tables` rebuilds).
std::vector<std::pair<std::string, std::string>> sweep_tables(const RunTraces& run, const BootstrapSettings& bs);

/// The sweep analysis's run observer: writes the files of sweep_tables under tables/ for a run with a sweep.
std::shared_ptr<RunObserver> make_sweep_observer();

}  // namespace advplan
