#pragma once
// The rubric-sensitivity, framing-sensitivity and component studies (docs/METRICS.md "Rubric validators" and
// "Framing"). Each names the conditions it compares in the config (StudiesConfig). They take part in a run as a
// run observer (make_studies_observer): the rubric records stream as the observer's trace, and the framing study
// reuses the games the run played and the scenarios it generated.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "advplan/io/csv.hpp"
#include "advplan/run/observer.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/stats/text_table.hpp"
#include "advplan/stats/statistics.hpp"

namespace advplan {

namespace schema {
/// The studies' files' columns (docs/TRACES.md "studies/"), as their writers and readers use them.
const std::vector<std::string>& rubric_records();
const std::vector<std::string>& rubric_sensitivity();
const std::vector<std::string>& framing();
const std::vector<std::string>& components();
const std::vector<std::string>& attribution();
const std::vector<std::string>& attribution_scenarios();
const std::vector<std::string>& simulator_validity();
const std::vector<std::string>& simulator_disagreements();
}  // namespace schema

/// The framing study's base-arm games the run played: per scenario id, (BLUE quality, advantage).
using FramingPlayed = std::map<std::string, std::pair<double, double>>;

/// Runs the studies the config enables; returns files as ("studies/<name>.csv", content).
/// `rubric_records` holds the records the run collected. `corpus`: the run's scenarios when it kept them (else
/// they are generated); `played`: the framing study's base-arm games the run played (see the observer), used
/// only when neither of the study's policies reads the framing label.
std::vector<std::pair<std::string, std::string>> run_studies(const RunPlan& plan, const io::CsvTable& per_scenario,
                                                             const io::CsvTable& rubric_records,
                                                             const io::CsvTable* council_trace,
                                                             const BootstrapSettings& bs,
                                                             const std::vector<Scenario>* corpus = nullptr,
                                                             const FramingPlayed* played = nullptr);

/// The studies as a run observer: the rubric records (trace rubric_records.csv, studies/rubric_records.csv in a
/// whole run), the framing study's base arm as the run played it (when the run's scenarios differ from the base
/// corpus in the label alone: metadata framing, no map), and the study files and their tables when the run ends.
class StudiesObserver final : public RunObserver {
 public:
  std::string name() const override { return "studies"; }
  std::vector<ObserverTrace> traces(const RunPlan& plan) const override;
  void begin(const RunPlan& plan, const RunScope& scope) override;
  bool wants_corpus() const override { return wants_corpus_; }
  void scenario(std::size_t index, const Scenario& sc, const ScenarioOutcome& outcome,
                std::vector<std::vector<TraceRow>>& rows) override;
  std::vector<std::pair<std::string, std::string>> finish(const RunArtifacts& run) override;
  /// The base-arm games kept from the run (nullptr when this run keeps none).
  const FramingPlayed* played() const { return keep_played_ ? &played_ : nullptr; }

 private:
  const ExperimentConfig* cfg_ = nullptr;
  std::mutex m_;
  FramingPlayed played_;
  bool keep_played_ = false, wants_corpus_ = false;
};
std::shared_ptr<RunObserver> make_studies_observer();

/// The study tables (tables/study_*.md and .tex, names relative to tables/) from a run's studies/*.csv, those
/// present; the studies observer writes them, and `advplan tables` rebuilds them.
std::vector<std::pair<std::string, std::string>> study_tables(const std::string& run_dir);

/// studies/rubric_sensitivity.csv from studies/rubric_records.csv: pairwise agreement of the three validators
/// (per scenario 1 - mean |v_a - v_b| over its records), their mean, and each validator's mean absolute
/// deviation from the base rubric, each with a bootstrap interval over scenarios.
io::CsvTable rubric_sensitivity_table(const io::CsvTable& records, const BootstrapSettings& bs);

/// studies/attribution.csv and studies/attribution_scenarios.csv (docs/METRICS.md "Attribution") from the rows of
/// the attribution study's conditions in per_scenario.csv; none when the study is off.
std::vector<std::pair<std::string, std::string>> attribution_files(const io::CsvTable& per_scenario,
                                                                   const ExperimentConfig& cfg,
                                                                   const BootstrapSettings& bs);
/// studies/simulator_validity.csv and studies/simulator_disagreements.csv (docs/METRICS.md "Simulator validity") from
/// an engagement run's per_scenario.csv; none for a Lanchester run.
std::vector<std::pair<std::string, std::string>> simulator_validity_files(const io::CsvTable& per_scenario,
                                                                         const ExperimentConfig& cfg,
                                                                         const BootstrapSettings& bs);
/// tables/study_attribution from studies/attribution.csv.
TextTable attribution_table(const io::CsvTable& attribution);

/// studies/components.csv from per_scenario.csv and council_trace.csv (when present), comparing the conditions
/// `studies` names.
io::CsvTable components_table(const io::CsvTable& per_scenario, const io::CsvTable* council_trace,
                              const StudiesConfig& studies, const BootstrapSettings& bs);

struct FramingOutcome {
  std::vector<double> blue_quality, advantage;  ///< per scenario, corpus order
};
/// `blue`'s plan quality and its advantage against `red` for the corpus generated under (mode, framing) (from
/// `corpus`, the run's scenarios, when given); NaN where `blue` makes no plan.
FramingOutcome framing_outcome(const RunPlan& plan, FramingMode mode, Framing framing, const BluePolicy& blue,
                               const RedPolicy& red, const std::vector<Scenario>* corpus = nullptr);

}  // namespace advplan
