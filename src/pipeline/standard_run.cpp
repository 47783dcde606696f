#include "advplan/pipeline/standard_run.hpp"

#include "advplan/evaluation/samples.hpp"
#include "advplan/rubric/plans.hpp"
#include "advplan/rubric/score.hpp"
#include "advplan/studies/studies.hpp"
#include "advplan/sweeps/extrapolation.hpp"
#include "advplan/sweeps/sweep.hpp"

namespace advplan {

RunObservers standard_observers(bool studies, bool rubric, ProgressMode judges_progress) {
  RunObservers out;
  if (studies) out.push_back(make_studies_observer());
  if (rubric) out.push_back(rubric::make_rubric_observer(judges_progress));
  out.push_back(make_sweep_observer());
  out.push_back(make_extrapolation_observer());  // extrapolation.csv (a run with a budget sweep)
  out.push_back(make_tables_observer());
  out.push_back(make_sample_reducer_observer());  // samples/ (a run with samples: N >= 2)
  return out;
}

RunObservers standard_observers(bool studies) { return standard_observers(studies, studies); }

std::vector<std::pair<std::string, std::string>> run_tables(const RunCsvs& run, const BootstrapSettings& bs,
                                                            bool with_studies) {
  auto files = build_tables(run, bs);
  for (auto& f : sweep_tables(run, bs)) files.push_back(std::move(f));
  if (with_studies) {
    for (auto& f : study_tables(run.dir)) files.push_back(std::move(f));
    for (auto& f : rubric::rubric_tables(run.dir)) files.push_back(std::move(f));
  }
  return files;
}

}  // namespace advplan
