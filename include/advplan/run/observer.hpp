#pragma once
// The run-observer hook (docs/ARCHITECTURE.md "Analyses"). An analysis reads a run through its trace files; one
// that needs the run's scenarios or plans as they are made (the rubric layer grades the plans the run played, the
// framing study reuses the games it played) registers a RunObserver in RunOptions::observers, so the runner names
// no analysis. The runner calls every observer in registration order:
//   begin()     once, before the first scenario (a merge of shards calls it too, with nothing to keep);
//   scenario()  once per scenario this process evaluates, concurrently from the scenario tasks;
//   finish()    once the traces and summaries of a whole run are in place (never in a shard, never when the
//               summaries were streamed, never when every row failed); the runner writes the files it returns
//               before the next observer's finish() runs, so a later observer may read them.
// Observers may add trace files of their own (traces()): they stream into the work directory like every trace,
// so they survive --resume and a shard merge; a shard keeps them under their names, and a whole run hands them to
// finish() instead of writing them.
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "advplan/core/scenario.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/run/run_reader.hpp"
#include "advplan/stats/statistics.hpp"

namespace advplan {

struct RunPlan;
struct ScenarioOutcome;
struct ExperimentConfig;

/// What the run is about to do, for RunObserver::begin.
struct RunScope {
  std::size_t total = 0;  ///< scenarios in the corpus
  /// This process evaluates the whole corpus and will keep its summaries in memory (no shard, no merge, not
  /// streamed): the one case in which state kept from scenario() reaches finish().
  bool whole_run_here = false;
};

/// A trace file an observer adds to the run (header row first), written only when it has rows.
struct ObserverTrace {
  std::string name;  ///< its file name in a shard directory, e.g. "rubric_records.csv"
  std::vector<std::string> header;
};

/// What finish() reads: the run with its traces and summaries in place (no MANIFEST yet).
struct RunArtifacts {
  const RunPlan& plan;
  const RunTraces& run;  ///< the run directory and its scenarios.csv, per_scenario.csv and bootstrap_summary.csv
  BootstrapSettings bootstrap;
  /// The observer's own trace files (traces(), in that order), read back from the work directory.
  std::vector<io::CsvTable> traces;
  /// The run's whole corpus, in corpus order, when some observer asked for it (wants_corpus()); else nullptr.
  const std::vector<Scenario>* corpus = nullptr;
};

using TraceRow = std::vector<std::string>;

/// Thread safety: scenario() is called concurrently and must synchronise what it keeps; the others are called
/// from one thread.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  /// Its phase in run_metadata.json "phase_seconds", and the key of its metadata().
  virtual std::string name() const = 0;
  /// Trace files this observer adds (ObserverTrace): the same list for the same plan.
  virtual std::vector<ObserverTrace> traces(const RunPlan& plan) const;
  /// Before the first scenario; forgets what an earlier run left.
  virtual void begin(const RunPlan& plan, const RunScope& scope);
  /// Whether finish() needs the whole corpus (RunArtifacts::corpus); asked after begin().
  virtual bool wants_corpus() const;
  /// Scenario `index` of the corpus, evaluated. `rows[t]` collects this scenario's rows of traces()[t].
  virtual void scenario(std::size_t index, const Scenario& sc, const ScenarioOutcome& outcome,
                        std::vector<std::vector<TraceRow>>& rows);
  /// The files this observer derives, as (path relative to the run directory, content).
  virtual std::vector<std::pair<std::string, std::string>> finish(const RunArtifacts& run);
  /// What run_metadata.json records of this observer under name() (nothing when empty), as (key, value).
  virtual std::vector<std::pair<std::string, std::string>> metadata(const ExperimentConfig& cfg) const;
};

using RunObservers = std::vector<std::shared_ptr<RunObserver>>;

}  // namespace advplan
