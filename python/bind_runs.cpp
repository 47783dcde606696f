// Runs in the `advplan` Python module (docs/PYTHON.md): run, evaluate and tables, wrapped by
// python/advplan/__init__.py. Each releases the GIL for the library's work, and Ctrl-C stops a run
// (run_interruptible, interrupt_bridge.cpp).
#include <fmt/format.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <filesystem>
#include <string>
#include <vector>

#include "advplan/core/error.hpp"
#include "advplan/evaluation/evaluation.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/pipeline/standard_run.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/tables/tables.hpp"
#include "bindings.hpp"

namespace py = pybind11;
namespace fs = std::filesystem;

namespace advplan::python {
namespace {

/// One condition from Python: a RED spec ("greedy@8", against the config's default BLUE policy) or a dict with red
/// and optional blue, label and group.
Condition condition_from_py(const ExperimentConfig& cfg, const py::handle& it, std::size_t i) {
  Condition c;
  if (py::isinstance<py::str>(it)) {
    c.red = it.cast<std::string>();
    c.blue = cfg.default_blue;
  } else if (py::isinstance<py::dict>(it)) {
    const auto d = py::reinterpret_borrow<py::dict>(it);
    const auto text = [&](const char* key) {
      const py::object v = d[key];
      if (!py::isinstance<py::str>(v))
        throw ConfigError(fmt::format("conditions: condition {}: '{}' is not a string", i, key));
      return v.cast<std::string>();
    };
    if (!d.contains("red"))
      throw ConfigError(fmt::format("conditions: condition {}: a condition dict needs a 'red' key", i));
    c.red = text("red");
    c.blue = d.contains("blue") ? text("blue") : cfg.default_blue;
    if (d.contains("group")) c.group = text("group");
    if (d.contains("label")) c.label = text("label");
  } else {
    throw ConfigError(fmt::format("conditions: condition {} is a {}, not a RED spec string or a dict", i,
                                  Py_TYPE(it.ptr())->tp_name));
  }
  if (c.label.empty()) c.label = default_condition_label(cfg, c.blue, c.red);
  return c;
}

/// Conditions from Python: one string or dict is one condition (a string is never taken as a list of its
/// characters), otherwise a list or tuple of them.
std::vector<Condition> conditions_from_py(const ExperimentConfig& cfg, const py::object& items) {
  if (py::isinstance<py::str>(items) || py::isinstance<py::dict>(items))
    return {condition_from_py(cfg, items, 0)};
  if (!py::isinstance<py::list>(items) && !py::isinstance<py::tuple>(items))
    throw ConfigError("conditions: expected a RED spec string, a dict or a list of them");
  std::vector<Condition> out;
  std::size_t i = 0;
  for (const auto& it : items) out.push_back(condition_from_py(cfg, it, i++));
  return out;
}

/// A count from Python in lo..hi, or one sentence naming the parameter.
void check_count(const char* what, long long v, long long lo, long long hi) {
  if (v < lo || v > hi) throw ConfigError(fmt::format("{}: {} is not in {}..{}", what, v, lo, hi));
}

// ------------------------------------------------------------------------------------------------ runs

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
  check_count("run: threads", threads, 0, 1024);
  std::vector<Condition> conds = conditions.is_none() ? run_conditions(*c.cfg) : conditions_from_py(*c.cfg, conditions);
  const RunPlan plan = prepare_run(*c.cfg, std::move(conds));  // with the GIL: Python policies are created here
  RunOptions opts;
  opts.out_dir = out;
  opts.threads = threads;
  opts.progress = false;
  opts.studies = studies;
  opts.resume = resume;
  opts.observers = standard_observers(opts.studies);
  return summary_dict(run_interruptible([&] { return run_experiment(plan, opts); }));
}

py::dict evaluate_impl(ConfigHandle& c, const std::string& blue, const std::string& out, const std::vector<std::string>& reds,
                       const std::vector<std::string>& references, const std::vector<int>& budget, int threads,
                       long long rerun) {
  if (out.empty()) throw ConfigError("evaluate: out= names no run directory");
  check_count("evaluate: threads", threads, 0, 1024);
  check_count("evaluate: rerun", rerun, 0, 1000);
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
  const BootstrapSettings bs{c.cfg->bootstrap.resamples, c.cfg->bootstrap.seed};
  // The report is part of the run, written before the MANIFEST, as `advplan evaluate` writes it.
  opts.before_manifest = [&](const std::string& dir) {
    io::write_files(dir, evaluation_report_of_run(plan, dir, static_cast<std::size_t>(rerun), spec, bs));
  };
  return summary_dict(run_interruptible([&] { return run_experiment(plan, opts); }));
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
