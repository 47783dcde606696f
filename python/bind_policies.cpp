// Python policies in the `advplan` Python module (docs/PYTHON.md): BLUE and RED policy classes written in Python,
// registered by name and run in-process. A policy takes the GIL for its callback only; its thread-safety
// declaration becomes its PolicyInfo::thread_safety, so the runner serialises a ThreadSafety::none policy with its
// own lock.
#include <fmt/format.h>
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <tbb/task_arena.h>

#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <memory>
#include <string>
#include <tuple>

#include "advplan/core/error.hpp"
#include "advplan/core/plan_json.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/metrics/plan_layout.hpp"
#include "advplan/metrics/pressure.hpp"
#include "advplan/policy/blue_policy.hpp"
#include "advplan/policy/red_candidate.hpp"
#include "advplan/policy/red_policy.hpp"
#include "advplan/policy/registry_access.hpp"
#include "advplan/policy/replan.hpp"
#include "advplan/run/interrupt.hpp"
#include "bindings.hpp"

namespace py = pybind11;

namespace advplan::python {
namespace {

/// The first line of a Python exception, "ValueError: message", without the traceback.
std::string python_error_sentence(py::error_already_set& e) {
  std::string type = "Exception";
  std::string msg;
  try {
    type = py::str(e.type().attr("__name__")).cast<std::string>();
    msg = py::str(e.value()).cast<std::string>();
  } catch (...) {
    msg = e.what();
  }
  return msg.empty() ? type : type + ": " + msg;
}

/// Runs `call` (a policy's Python code) as one callback: with the GIL, in task isolation (parallel work it starts,
/// such as cfg.red_candidates, never picks up another scenario task of the run, which could wait on the lock this
/// thread holds for a ThreadSafety::none policy), and within reach of Ctrl-C (interrupt_bridge.cpp). Once a stop was
/// asked for, no callback starts. A KeyboardInterrupt raised in it, or pending when it returns, stops the run (this
/// scenario's rows are dropped) rather than being recorded as the policy's failure while the run goes on.
void python_callback(const std::string& label, const std::function<void()>& call) {
  tbb::this_task_arena::isolate([&] {
    py::gil_scoped_acquire gil;
    if (run_interrupt_requested()) throw PolicyError(fmt::format("{}: not called, the run was interrupted", label));
    const CallbackThread in_callback;
    try {
      call();
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();  // Ctrl-C as the callback returned
    } catch (py::error_already_set& e) {
      if (e.matches(PyExc_KeyboardInterrupt)) request_run_interrupt();
      throw PolicyError(fmt::format("{}: {}", label, python_error_sentence(e)));
    } catch (const py::cast_error& e) {  // a value that does not convert (a lone surrogate in a string)
      throw PolicyError(fmt::format("{}: returned a value that does not convert: {}", label, e.what()));
    }
  });
}

// ------------------------------------------------------------------------------------------------ Python policies

/// Python policy classes by registered name. A plain pointer that is never freed: the C++ registries outlive the
/// interpreter, so they hold names only and look the class up here, with the GIL held.
py::dict& python_classes() {
  static auto* d = new py::dict();
  return *d;
}

/// Owns one Python policy object; takes the GIL to drop it.
struct PyObjectHolder {
  py::object obj;
  explicit PyObjectHolder(py::object o) : obj(std::move(o)) {}
  ~PyObjectHolder() {
    if (!Py_IsInitialized()) {
      obj.release();  // the interpreter is gone: nothing left to free
      return;
    }
    py::gil_scoped_acquire gil;
    obj = py::object();
  }
};

std::unique_ptr<PyObjectHolder> instantiate(const std::string& key, const Params& params) {
  py::gil_scoped_acquire gil;
  py::object cls = python_classes()[py::str(key)];
  py::dict kw;
  for (const auto& [k, v] : params)
    if (k != "replans") kw[py::str(k)] = v;  // advplan's own switch (docs/POLICIES.md "6. Replanning")
  try {
    return std::make_unique<PyObjectHolder>(kw.empty() ? cls() : cls(**kw));
  } catch (py::error_already_set& e) {
    throw PolicyError(fmt::format("python policy '{}': creating it raised {}", key, python_error_sentence(e)));
  }
}

/// A Python policy's replan(request) (docs/POLICIES.md "6. Replanning"): the request as a dict, the plan it
/// returns parsed and validated as a plan of `side` by the caller (BluePolicy::replan / RedPolicy::replan).
ReplanResult python_replan(const PyObjectHolder& holder, const nlohmann::json& request, const Scenario& sc, Side side,
                           const std::string& label) {
  const std::string request_json = request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string text;
  python_callback(label, [&] {
    py::object out = holder.obj.attr("replan")(json_module().attr("loads")(request_json));
    if (out.is_none()) throw PolicyError(fmt::format("{}: replan() returned None", label));
    text = plan_text(out, label);
  });
  ReplanResult r;
  const PlanParse p = parse_plan_text(text, sc, side);
  if (!p.ok()) {
    r.failure = fmt::format("{} returned an invalid revised plan: {}", label, p.summary());
    return r;
  }
  r.plan = *p.plan;
  return r;
}

class PyBluePolicy final : public BluePolicy {
 public:
  PyBluePolicy(PolicyInfo info, Params p, std::unique_ptr<PyObjectHolder> h)
      : BluePolicy(std::move(info), std::move(p)), holder_(std::move(h)) {}

 protected:
  BluePlanResult do_plan(const Scenario& sc, Rng& rng) const override {
    const std::string scenario_json = scenario_to_string(sc);
    const std::uint64_t seed = rng.next_u64() & 0x7fffffffffffffffULL;
    std::string text;
    python_callback(label(), [&] {
      py::object scenario = json_module().attr("loads")(scenario_json);
      scenario["rng_seed"] = seed;
      py::object out = holder_->obj.attr("plan")(scenario);
      if (out.is_none()) throw PolicyError(fmt::format("{}: plan() returned None", label()));
      text = plan_text(out, label());
    });
    BluePlanResult r;
    const PlanParse p = parse_plan_text(text, sc, Side::Blue);
    if (!p.ok()) {
      r.failure = fmt::format("{} returned an invalid plan: {}", label(), p.summary());
      return r;
    }
    r.plan = *p.plan;
    return r;
  }
  ReplanResult do_replan(const Scenario& sc, const nlohmann::json& request) const override {
    return python_replan(*holder_, request, sc, Side::Blue, label());
  }

 private:
  std::unique_ptr<PyObjectHolder> holder_;
};

class PyRedPolicy final : public RedPolicy {
 public:
  PyRedPolicy(PolicyInfo info, Params p, std::unique_ptr<PyObjectHolder> h)
      : RedPolicy(std::move(info), 1, std::move(p)), holder_(std::move(h)) {}

 protected:
  RedResponse do_respond(const RedRequest& req, CandidateCache*) const override {
    const Scenario& sc = *req.scenario;
    const std::string scenario_json = scenario_to_string(sc);
    const std::string blue_json = plan_to_string(*req.blue);
    const std::uint64_t seed =
        Rng::keyed(req.run_seed, sc.id, sample_stream("red/" + info().short_name, req.sample)).next_u64() &
        0x7fffffffffffffffULL;
    std::string text;
    python_callback(label(), [&] {
      py::object loads = json_module().attr("loads");
      py::object scenario = loads(scenario_json);
      scenario["rng_seed"] = seed;
      py::object out = holder_->obj.attr("respond")(scenario, loads(blue_json));
      if (out.is_none()) throw PolicyError(fmt::format("{}: respond() returned None", label()));
      text = plan_text(out, label());
    });
    RedResponse r;
    const PlanParse p = parse_plan_text(text, sc, Side::Red);
    if (!p.ok()) {
      r.failure = fmt::format("{} returned an invalid plan: {}", label(), p.summary());
      return r;
    }
    const auto vuln = vulnerability(layout_plan(*req.blue, sc));
    r.candidates.push_back(score_red_plan(*p.plan, sc, vuln, req.weights, 0));
    r.selected = 0;
    return r;
  }
  ReplanResult do_replan(const Scenario& sc, const nlohmann::json& request) const override {
    return python_replan(*holder_, request, sc, Side::Red, label());
  }

 private:
  std::unique_ptr<PyObjectHolder> holder_;
};

PolicyInfo python_info(const std::string& name, Side side, bool thread_safe, const std::string& description,
                       const std::map<std::string, std::tuple<double, double, double>>& params, bool replans) {
  PolicyInfo info;
  info.short_name = name;
  info.side = side;
  info.thread_safety = thread_safe ? ThreadSafety::constant : ThreadSafety::none;
  info.description = description.empty() ? "a Python policy (in-process)" : description;
  for (const auto& [k, v] : params) info.params.push_back({k, std::get<0>(v), std::get<1>(v), std::get<2>(v), ""});
  if (replans && !params.contains("replans")) info.params.push_back(replans_param());  // a class with replan()
  return info;
}

/// A parameter is (default, lo, hi): no NaN, lo <= default <= hi, a finite default (the bounds may be infinite).
void check_params(const std::string& name, const std::map<std::string, std::tuple<double, double, double>>& params) {
  for (const auto& [k, v] : params) {
    const auto [def, lo, hi] = v;
    if (!std::isfinite(def) || !(lo <= def) || !(def <= hi))
      throw PolicyError(fmt::format("policy '{}': parameter '{}': the default {} is not a finite number within "
                                    "[{}, {}]", name, k, def, lo, hi));
  }
}

void check_name(const std::string& name) {
  if (name.empty() || name.find_first_of(":@ ,") != std::string::npos)
    throw PolicyError(fmt::format("policy name '{}': use letters, digits, '_' or '-' (no ':', '@', ',' or space)", name));
}

/// A name already registered (built in, by a plug-in or by an earlier call) is refused unless `override_existing`.
void check_new(bool exists, const std::string& kind, const std::string& name, bool override_existing) {
  if (exists && !override_existing)
    throw PolicyError(fmt::format("{} policy '{}' is already registered (built in, by a plug-in or by an earlier call); "
                                  "pass override=True to replace it",
                                  kind, name));
}

void register_blue(const std::string& name, py::object cls, bool thread_safe, const std::string& description,
                   const std::map<std::string, std::tuple<double, double, double>>& params, bool override_existing) {
  check_name(name);
  check_params(name, params);
  check_new(blue_registry().contains(name), "BLUE", name, override_existing);
  if (!py::hasattr(cls, "plan")) throw PolicyError(fmt::format("BLUE policy '{}': the class has no plan(scenario) method", name));
  python_classes()[py::str("blue:" + name)] = cls;
  blue_registry().add(python_info(name, Side::Blue, thread_safe, description, params, py::hasattr(cls, "replan")),
                               [name](const PolicySpec&, const Params& p, const PolicyContext&) -> std::unique_ptr<BluePolicy> {
                                 auto info = blue_registry().info(name, "BLUE");
                                 return std::make_unique<PyBluePolicy>(info, p, instantiate("blue:" + name, p));
                               }, override_existing);
}

void register_red(const std::string& name, py::object cls, bool thread_safe, const std::string& description,
                  const std::map<std::string, std::tuple<double, double, double>>& params, bool override_existing) {
  check_name(name);
  check_params(name, params);
  check_new(red_registry().contains(name), "RED", name, override_existing);
  if (!py::hasattr(cls, "respond"))
    throw PolicyError(fmt::format("RED policy '{}': the class has no respond(scenario, plan) method", name));
  python_classes()[py::str("red:" + name)] = cls;
  red_registry().add(python_info(name, Side::Red, thread_safe, description, params, py::hasattr(cls, "replan")),
                              [name](const PolicySpec&, const Params& p, const PolicyContext&) -> std::unique_ptr<RedPolicy> {
                                auto info = red_registry().info(name, "RED");
                                return std::make_unique<PyRedPolicy>(info, p, instantiate("red:" + name, p));
                              }, override_existing);
}

}  // namespace

void bind_policies(py::module_& m) {
  m.def("register_blue", &register_blue, py::arg("name"), py::arg("cls"), py::arg("thread_safe") = false,
        py::arg("description") = "", py::arg("params") = std::map<std::string, std::tuple<double, double, double>>{},
        py::arg("override") = false);
  m.def("register_red", &register_red, py::arg("name"), py::arg("cls"), py::arg("thread_safe") = false,
        py::arg("description") = "", py::arg("params") = std::map<std::string, std::tuple<double, double, double>>{},
        py::arg("override") = false);
  m.def("blue_policies", [] { return blue_registry().names(); });
  m.def("red_policies", [] { return red_registry().names(); });
}

}  // namespace advplan::python
