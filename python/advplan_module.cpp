// The `advplan` Python module (pybind11): the model and metrics, RED candidates and selectors, the simulator,
// runs, evaluations and tables, and BLUE and RED policies written in Python that run in-process
// (docs/PYTHON.md). This is the compiled part, `advplan._advplan`; python/advplan/__init__.py wraps it.
//
// Values cross the boundary as JSON: a scenario or plan becomes a Python dict through the library's own to_json
// and Python's json module, and a dict from Python is parsed and validated by the same parser and validator as
// every other plan (core/plan_json.cpp, core/validation.cpp).
//
// The GIL: every call into the library that can take long (runs, evaluations, tables, candidate sampling)
// releases it; a Python policy takes it for its callback only. A policy's thread-safety declaration becomes its
// PolicyInfo::thread_safety, so the runner serialises a ThreadSafety::none policy with its own lock.
//
// This file defines the module and its error hierarchy; the bindings are in bind_model.cpp (the model and
// metrics), bind_policies.cpp (Python policies) and bind_runs.cpp (runs, evaluations and tables), declared in
// bindings.hpp.
#include <pybind11/pybind11.h>

#include <exception>
#include <string>

#include "advplan/core/error.hpp"
#include "advplan/run/interrupt.hpp"
#include "advplan/version.hpp"
#include "bindings.hpp"

namespace py = pybind11;
using namespace advplan;

PYBIND11_MODULE(_advplan, m) {
  m.doc() = "advplan: adversarial planning under uncertainty (compiled part; see docs/PYTHON.md)";
  m.attr("__version__") = std::string(version_string());

  // The error hierarchy, with the library's sentence as the message.
  static py::exception<Error> error(m, "Error", PyExc_RuntimeError);
  static py::exception<ConfigError> config_error(m, "ConfigError", error.ptr());
  static py::exception<PlanError> plan_error(m, "PlanError", error.ptr());
  static py::exception<CsvError> csv_error(m, "CsvError", error.ptr());
  static py::exception<PolicyError> policy_error(m, "PolicyError", error.ptr());
  static py::exception<IoError> io_error(m, "IoError", error.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ConfigError& e) {
      config_error(e.what());
    } catch (const PlanError& e) {
      plan_error(e.what());
    } catch (const CsvError& e) {
      csv_error(e.what());
    } catch (const PolicyError& e) {
      policy_error(e.what());
    } catch (const IoError& e) {
      io_error(e.what());
    } catch (const RunInterrupted& e) {
      // Ctrl-C during a run: Python's own exception, with the sentence that says how to resume.
      PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
    } catch (const Error& e) {
      error(e.what());
    }
  });

  python::bind_model(m);
  python::bind_policies(m);
  python::bind_runs(m);
}
