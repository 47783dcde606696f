// Runs in the `advplan` Python module (docs/PYTHON.md): run, evaluate and tables, wrapped by
// python/advplan/__init__.py. Each releases the GIL for the library's work, and Ctrl-C stops a run
// (InterruptScope).
#include <fmt/format.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <signal.h>

#include <filesystem>
#include <string>
#include <vector>

#include "advplan/core/error.hpp"
#include "advplan/evaluation/evaluation.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/pipeline/standard_run.hpp"
#include "advplan/run/interrupt.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/tables/tables.hpp"
#include "bindings.hpp"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace advplan::python {
namespace {

/// Conditions from Python: a RED spec ("greedy@8", against the config's default BLUE policy) or a dict with red
/// and optional blue, label and group.
std::vector<Condition> conditions_from_py(const ExperimentConfig& cfg, const py::list& items) {
  std::vector<Condition> out;
  for (const auto& it : items) {
    Condition c;
    if (py::isinstance<py::str>(it)) {
      c.red = it.cast<std::string>();
      c.blue = cfg.default_blue;
    } else {
      const auto d = it.cast<py::dict>();
      if (!d.contains("red")) throw ConfigError("conditions: a condition dict needs a 'red' key");
      c.red = d["red"].cast<std::string>();
      c.blue = d.contains("blue") ? d["blue"].cast<std::string>() : cfg.default_blue;
      if (d.contains("group")) c.group = d["group"].cast<std::string>();
      if (d.contains("label")) c.label = d["label"].cast<std::string>();
    }
    if (c.label.empty()) c.label = default_condition_label(cfg, c.blue, c.red);
    out.push_back(std::move(c));
  }
  return out;
}

// ------------------------------------------------------------------------------------------------ runs

/// While a run or evaluate runs without the GIL, Ctrl-C cannot reach Python's handler (it runs only when the main
/// thread runs Python code, after the whole run). So for the duration SIGINT gets a C handler that asks the run to
/// stop (request_run_interrupt); the previous handler comes back after, and a run that stopped raises
/// KeyboardInterrupt (run_impl's caller sees RunInterrupted, translated below).
class InterruptScope {
 public:
  InterruptScope() {
    clear_run_interrupt();
    struct sigaction sa {};
    sa.sa_handler = [](int) { request_run_interrupt(); };
    sigemptyset(&sa.sa_mask);
    installed_ = ::sigaction(SIGINT, &sa, &old_) == 0;
  }
  ~InterruptScope() {
    if (installed_) ::sigaction(SIGINT, &old_, nullptr);
    clear_run_interrupt();
  }
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  struct sigaction old_ {};
  bool installed_ = false;
};

py::dict summary_dict(const RunSummary& s) {
  py::dict d;
  d["scenarios"] = s.scenarios;
  d["rows"] = s.rows;
  d["failed_rows"] = s.failed_rows;
  d["scenarios_with_blue_plan"] = s.scenarios_with_blue_plan;
  d["seconds"] = s.seconds;
  return d;
}

py::dict run_impl(ConfigHandle& c, const std::string& out, int threads, const py::object& conditions, bool studies,
                  bool resume) {
  if (out.empty()) throw ConfigError("run: out= names no run directory");
  std::vector<Condition> conds =
      conditions.is_none() ? run_conditions(*c.cfg) : conditions_from_py(*c.cfg, conditions.cast<py::list>());
  const RunPlan plan = prepare_run(*c.cfg, std::move(conds));  // with the GIL: Python policies are created here
  RunOptions opts;
  opts.out_dir = out;
  opts.threads = threads;
  opts.progress = false;
  opts.studies = studies;
  opts.resume = resume;
  opts.observers = standard_observers(opts.studies);
  RunSummary s;
  {
    const InterruptScope interrupt;
    py::gil_scoped_release nogil;
    s = run_experiment(plan, opts);
  }
  return summary_dict(s);
}

py::dict evaluate_impl(ConfigHandle& c, const std::string& blue, const std::string& out, const std::vector<std::string>& reds,
                       const std::vector<std::string>& references, const std::vector<int>& budget, int threads,
                       std::size_t rerun) {
  if (out.empty()) throw ConfigError("evaluate: out= names no run directory");
  EvaluateSpec spec;
  spec.blue = blue;
  spec.reds = reds;
  if (spec.reds.empty()) throw ConfigError("evaluate: reds names no RED baseline");
  spec.references = references;
  for (int k : budget)
    if (k < 1 || k > 1024) throw ConfigError(fmt::format("evaluate: budget: '{}' is not a k in 1..1024", k));
  spec.budget_ks = budget;
  const RunPlan plan = prepare_run(*c.cfg, evaluate_conditions(spec));
  RunOptions opts;
  opts.out_dir = out;
  opts.threads = threads;
  opts.progress = false;
  opts.studies = false;
  opts.observers = standard_observers(opts.studies, true);  // the rubric layer, as `advplan evaluate`
  opts.command = "evaluate";
  RunSummary s;
  {
    const InterruptScope interrupt;
    py::gil_scoped_release nogil;
    const BootstrapSettings bs{c.cfg->bootstrap.resamples, c.cfg->bootstrap.seed};
    // The report is part of the run, written before the MANIFEST, as `advplan evaluate` writes it.
    opts.before_manifest = [&](const std::string& dir) {
      io::write_files(dir, evaluation_report_of_run(plan, dir, rerun, spec, bs));
    };
    s = run_experiment(plan, opts);
  }
  return summary_dict(s);
}

void tables_impl(const std::string& dir, const std::string& out) {
  py::gil_scoped_release nogil;
  const RunCsvs r = read_run(dir);
  const BootstrapSettings bs = recorded_bootstrap(r.bootstrap_summary);
  const std::string dest = out.empty() ? (fs::path(dir) / "tables").string() : out;
  io::check_analysis_output_dir(dest);
  io::write_files(dest, run_tables(r, bs));
}

}  // namespace

void bind_runs(py::module_& m) {
  m.def("_run", &run_impl, py::arg("config"), py::arg("out"), py::arg("threads"), py::arg("conditions"),
        py::arg("studies"), py::arg("resume") = false);
  m.def("_evaluate", &evaluate_impl, py::arg("config"), py::arg("blue"), py::arg("out"), py::arg("reds"),
        py::arg("references"), py::arg("budget"), py::arg("threads"), py::arg("rerun"));
  m.def("_tables", &tables_impl, py::arg("dir"), py::arg("out"));
}

}  // namespace advplan::python
