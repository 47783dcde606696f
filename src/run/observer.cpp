#include "advplan/run/observer.hpp"

namespace advplan {

// The defaults: an observer that overrides nothing adds nothing and keeps nothing.
std::vector<ObserverTrace> RunObserver::traces(const RunPlan&) const { return {}; }
void RunObserver::begin(const RunPlan&, const RunScope&) {}
bool RunObserver::wants_corpus() const { return false; }
void RunObserver::scenario(std::size_t, const Scenario&, const ScenarioOutcome&, std::vector<std::vector<TraceRow>>&) {}
std::vector<std::pair<std::string, std::string>> RunObserver::finish(const RunArtifacts&) { return {}; }
std::vector<std::pair<std::string, std::string>> RunObserver::metadata(const ExperimentConfig&) const { return {}; }

}  // namespace advplan
