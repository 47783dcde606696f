#pragma once
// The standard composition of a run's analyses, above every analysis and below the command line and the Python
// module (docs/ARCHITECTURE.md "Layers"): which run observers `advplan run`, `evaluate` and `merge` register, and
// which tables `advplan tables` rebuilds. The analyses do not know each other; this is the one place that names
// them together.
#include <string>
#include <utility>
#include <vector>

#include "advplan/run/observer.hpp"
#include "advplan/run/progress.hpp"
#include "advplan/stats/statistics.hpp"
#include "advplan/tables/tables.hpp"

namespace advplan {

/// The observers of a standard run, in order: the studies (when `studies`), the rubric layer (when `rubric`, by
/// default with the studies; `advplan evaluate` has it without them), then the tables, which read their files.
/// `judges_progress`: how the rubric layer's live judges show their progress (the run's --progress).
RunObservers standard_observers(bool studies, bool rubric, ProgressMode judges_progress = ProgressMode::none);
RunObservers standard_observers(bool studies);

/// Every table of a run as `advplan run` writes it into tables/, rebuilt from its files alone: build_tables, and
/// the study and rubric tables when `with_studies` (a slice of a run has neither: they are corpus-level).
/// Names are relative to tables/.
std::vector<std::pair<std::string, std::string>> run_tables(const RunCsvs& run, const BootstrapSettings& bs,
                                                            bool with_studies = true);

}  // namespace advplan
