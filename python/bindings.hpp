#pragma once
// The pieces of the `advplan._advplan` module (python/advplan_module.cpp) and what they share: the model and
// metrics (bind_model.cpp), Python policies (bind_policies.cpp) and runs, evaluations and tables (bind_runs.cpp).
#include <pybind11/pybind11.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "advplan/run/config.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/run/scenario_lookup.hpp"

namespace advplan::python {

// JSON <-> Python (bind_model.cpp): values cross the boundary as JSON.
pybind11::object json_module();
pybind11::object to_py(const nlohmann::json& j);
/// A plan given as a dict (or as JSON text) to JSON text, bounded before any conversion; `who` names the policy.
std::string plan_text(const pybind11::handle& obj, const std::string& who);

/// A config held by Python. Runs keep a pointer to it (RunPlan::cfg), so it is shared.
struct ConfigHandle {
  std::shared_ptr<ExperimentConfig> cfg;
  std::vector<Scenario> corpus_cache;  ///< generated on first use
  bool corpus_ready = false;

  const std::vector<Scenario>& corpus() {
    if (!corpus_ready) {
      corpus_cache = generate_corpus(*cfg);
      corpus_ready = true;
    }
    return corpus_cache;
  }
  Scenario scenario(const std::string& id) {
    for (const auto& s : corpus())
      if (s.id == id) return s;
    return find_scenario(*cfg, id);  // scenarios outside the corpus range, with its error sentence otherwise
  }
};

/// Runs `run` (a run_experiment call) without the GIL, as Ctrl-C can stop it (python/interrupt_bridge.cpp): SIGINT
/// sets the run's stop flag, and a watcher delivers it to Python policies busy in a callback as KeyboardInterrupt.
RunSummary run_interruptible(const std::function<RunSummary()>& run);

/// Marks the calling thread, for its lifetime, as inside a Python policy callback, so that Ctrl-C reaches it as an
/// asynchronous KeyboardInterrupt (Python's main thread hears the signal itself and is not marked). With the GIL.
class CallbackThread {
 public:
  CallbackThread();
  ~CallbackThread();
  CallbackThread(const CallbackThread&) = delete;
  CallbackThread& operator=(const CallbackThread&) = delete;

 private:
  unsigned long id_;
  bool registered_ = false;
};

/// `Config` and the model's functions: plans, metrics, the simulator, RED candidates and the selectors.
void bind_model(pybind11::module_& m);
/// register_blue, register_red and the policy lists: BLUE and RED policies written in Python, run in-process.
void bind_policies(pybind11::module_& m);
/// _run, _evaluate and _tables, which python/advplan/__init__.py wraps.
void bind_runs(pybind11::module_& m);

}  // namespace advplan::python
