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
#include <fmt/format.h>
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <tbb/task_arena.h>

#include <signal.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "advplan/pipeline/standard_run.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/core/error.hpp"
#include "advplan/core/plan_json.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/tables/tables.hpp"
#include "advplan/run/config.hpp"
#include "advplan/evaluation/evaluation.hpp"
#include "advplan/run/interrupt.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/run/scenario_lookup.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/metrics/coherence.hpp"
#include "advplan/metrics/frontier.hpp"
#include "advplan/metrics/plan_layout.hpp"
#include "advplan/metrics/pressure.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/metrics/structure.hpp"
#include "advplan/policy/blue_policy.hpp"
#include "advplan/policy/red_candidate.hpp"
#include "advplan/policy/red_policy.hpp"
#include "advplan/policy/registry_access.hpp"
#include "advplan/sim/advantage.hpp"
#include "advplan/sim/wargame.hpp"
#include "advplan/version.hpp"

namespace py = pybind11;
namespace fs = std::filesystem;
using namespace advplan;

namespace {

// ---------------------------------------------------------------------------------------------- JSON <-> Python

py::object json_module() { return py::module_::import("json"); }

py::object to_py(const nlohmann::json& j) { return json_module().attr("loads")(j.dump()); }

/// A plan given as a dict (or as JSON text) to JSON text. Bounded before any conversion: a dict whose actions,
/// chain or branches list is longer than untrusted::kMaxPlanActions, or a text longer than 64 MiB, is refused at once
/// (a 1.2M-action plan once took 24 s and 2.2 GB on its way to the validator's refusal). `who` names the policy.
std::string plan_text(const py::handle& obj, const std::string& who) {
  constexpr std::size_t kMaxPlanText = std::size_t{64} << 20;
  if (py::isinstance<py::str>(obj)) {
    const auto n = static_cast<std::size_t>(PyUnicode_GetLength(obj.ptr()));
    if (n > kMaxPlanText)
      throw PolicyError(fmt::format("{}: the plan text has {} characters, more than the limit of {}", who, n, kMaxPlanText));
    return obj.cast<std::string>();
  }
  if (py::isinstance<py::dict>(obj)) {
    const py::dict d = py::reinterpret_borrow<py::dict>(obj);
    for (const char* key : {"actions", "chain", "branches"}) {
      if (!d.contains(key)) continue;
      const py::handle v = d[key];
      if (!py::isinstance<py::list>(v) && !py::isinstance<py::tuple>(v)) continue;
      const auto n = static_cast<std::size_t>(py::len(v));
      if (n > untrusted::kMaxPlanActions)
        throw PolicyError(fmt::format("{}: the plan has {} {}, more than the limit of {}", who, n, key,
                                      untrusted::kMaxPlanActions));
    }
  }
  return json_module().attr("dumps")(obj).cast<std::string>();
}

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

// ------------------------------------------------------------------------------------------------ configs

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

ConfigHandle make_config(ExperimentConfig c) {
  ConfigHandle p;
  p.cfg = std::make_shared<ExperimentConfig>(std::move(c));
  return p;
}

py::dict condition_dict(const Condition& c) {
  py::dict d;
  d["label"] = c.label;
  d["blue"] = c.blue;
  d["red"] = c.red;
  d["group"] = c.group;
  return d;
}

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

// ------------------------------------------------------------------------------------------------ plans, metrics

Plan parse_or_throw(const std::string& text, const Scenario& sc, std::optional<Side> side) {
  const PlanParse p = parse_plan_text(text, sc, side);
  if (!p.ok()) {
    if (p.violations.empty()) throw PlanError(fmt::format("invalid plan for scenario {}", sc.id));
    throw PlanError(fmt::format("invalid plan for scenario {}: {}", sc.id, p.summary()));
  }
  return *p.plan;
}

std::optional<Side> side_from(const std::string& s) {
  if (s.empty()) return std::nullopt;
  if (s == "BLUE" || s == "blue") return Side::Blue;
  if (s == "RED" || s == "red") return Side::Red;
  throw ConfigError(fmt::format("side '{}': accepted values are BLUE and RED", s));
}


/// The object `advplan validate --json` prints for a valid plan, without the "plan" file name.
py::dict metrics_dict(const Plan& p, const Scenario& sc, const QualityWeights& w) {
  const auto q = quality(p, sc, w);
  const auto d = coherence(p, sc);
  const auto st = structure(p);
  py::dict out;
  out["plan_id"] = p.plan_id;
  out["side"] = std::string(to_string(p.side));
  out["scenario"] = sc.id;
  out["valid"] = true;
  out["q"] = q.q;
  out["e"] = q.e;
  out["c"] = q.c;
  out["r"] = q.r;
  out["D"] = d.D;
  out["O"] = st.O;
  out["P_V"] = st.P_V;
  out["W"] = st.W;
  py::dict parts;
  for (std::size_t i = 0; i < kNumCoherenceParts; ++i)
    parts[py::str(std::string(to_string(static_cast<CoherencePart>(i))))] = d.part[i];
  out["D_parts"] = parts;
  return out;
}

py::dict candidate_dict(const RedCandidate& c) {
  py::dict d;
  d["index"] = c.index;
  d["plan"] = to_py(to_json(c.plan));
  d["valid"] = c.valid;
  d["invalid_reason"] = c.invalid_reason;
  d["q"] = c.q.q;
  d["e"] = c.q.e;
  d["c"] = c.q.c;
  d["r"] = c.q.r;
  if (c.d) d["D"] = c.d->D;
  d["pressure"] = c.pressure.magnitude;
  py::list cats;
  for (std::size_t i = 0; i < kNumCategories; ++i)
    if (c.categories[i]) cats.append(std::string(to_string(static_cast<Category>(i))));
  d["categories"] = cats;
  return d;
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
  for (const auto& [k, v] : params) kw[py::str(k)] = v;
  try {
    return std::make_unique<PyObjectHolder>(kw.empty() ? cls() : cls(**kw));
  } catch (py::error_already_set& e) {
    throw PolicyError(fmt::format("python policy '{}': creating it raised {}", key, python_error_sentence(e)));
  }
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
    // Isolated: parallel work the callback starts (cfg.red_candidates) never picks up another scenario task of
    // the run, which could wait on the lock this thread holds for a ThreadSafety::none policy.
    tbb::this_task_arena::isolate([&] {
      py::gil_scoped_acquire gil;
      try {
        py::object scenario = json_module().attr("loads")(scenario_json);
        scenario["rng_seed"] = seed;
        py::object out = holder_->obj.attr("plan")(scenario);
        if (out.is_none()) throw PolicyError(fmt::format("{}: plan() returned None", label()));
        text = plan_text(out, label());
      } catch (py::error_already_set& e) {
        // Ctrl-C reached Python inside the policy: the run stops (this scenario's rows are dropped), rather than
        // recording an interrupt as the policy's failure and going on.
        if (e.matches(PyExc_KeyboardInterrupt)) request_run_interrupt();
        throw PolicyError(fmt::format("{}: {}", label(), python_error_sentence(e)));
      }
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
        Rng::keyed(req.run_seed, sc.id, "red/" + info().short_name).next_u64() & 0x7fffffffffffffffULL;
    std::string text;
    // Isolated: parallel work the callback starts (cfg.red_candidates) never picks up another scenario task of
    // the run, which could wait on the lock this thread holds for a ThreadSafety::none policy.
    tbb::this_task_arena::isolate([&] {
      py::gil_scoped_acquire gil;
      try {
        py::object loads = json_module().attr("loads");
        py::object scenario = loads(scenario_json);
        scenario["rng_seed"] = seed;
        py::object out = holder_->obj.attr("respond")(scenario, loads(blue_json));
        if (out.is_none()) throw PolicyError(fmt::format("{}: respond() returned None", label()));
        text = plan_text(out, label());
      } catch (py::error_already_set& e) {
        // Ctrl-C reached Python inside the policy: the run stops (this scenario's rows are dropped), rather than
        // recording an interrupt as the policy's failure and going on.
        if (e.matches(PyExc_KeyboardInterrupt)) request_run_interrupt();
        throw PolicyError(fmt::format("{}: {}", label(), python_error_sentence(e)));
      }
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

 private:
  std::unique_ptr<PyObjectHolder> holder_;
};

PolicyInfo python_info(const std::string& name, Side side, bool thread_safe, const std::string& description,
                       const std::map<std::string, std::tuple<double, double, double>>& params) {
  PolicyInfo info;
  info.short_name = name;
  info.side = side;
  info.thread_safety = thread_safe ? ThreadSafety::constant : ThreadSafety::none;
  info.description = description.empty() ? "a Python policy (in-process)" : description;
  for (const auto& [k, v] : params) info.params.push_back({k, std::get<0>(v), std::get<1>(v), std::get<2>(v), ""});
  return info;
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
  check_new(blue_registry().contains(name), "BLUE", name, override_existing);
  if (!py::hasattr(cls, "plan")) throw PolicyError(fmt::format("BLUE policy '{}': the class has no plan(scenario) method", name));
  python_classes()[py::str("blue:" + name)] = cls;
  blue_registry().add(python_info(name, Side::Blue, thread_safe, description, params),
                               [name](const PolicySpec&, const Params& p, const PolicyContext&) -> std::unique_ptr<BluePolicy> {
                                 auto info = blue_registry().info(name, "BLUE");
                                 return std::make_unique<PyBluePolicy>(info, p, instantiate("blue:" + name, p));
                               }, override_existing);
}

void register_red(const std::string& name, py::object cls, bool thread_safe, const std::string& description,
                  const std::map<std::string, std::tuple<double, double, double>>& params, bool override_existing) {
  check_name(name);
  check_new(red_registry().contains(name), "RED", name, override_existing);
  if (!py::hasattr(cls, "respond"))
    throw PolicyError(fmt::format("RED policy '{}': the class has no respond(scenario, plan) method", name));
  python_classes()[py::str("red:" + name)] = cls;
  red_registry().add(python_info(name, Side::Red, thread_safe, description, params),
                              [name](const PolicySpec&, const Params& p, const PolicyContext&) -> std::unique_ptr<RedPolicy> {
                                auto info = red_registry().info(name, "RED");
                                return std::make_unique<PyRedPolicy>(info, p, instantiate("red:" + name, p));
                              }, override_existing);
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
  opts.observers = standard_observers(opts.studies);
  opts.command = "evaluate";
  RunSummary s;
  {
    const InterruptScope interrupt;
    py::gil_scoped_release nogil;
    s = run_experiment(plan, opts);
    const io::CsvTable per = io::CsvTable::read((fs::path(out) / "per_scenario.csv").string());
    const io::CsvTable cand = io::CsvTable::read((fs::path(out) / "candidates.csv").string());
    const io::CsvTable boot = io::CsvTable::read((fs::path(out) / "bootstrap_summary.csv").string());
    const BootstrapSettings bs{c.cfg->bootstrap.resamples, c.cfg->bootstrap.seed};
    std::string exempt;
    const io::CsvTable repro = check_reproducibility(plan, per, rerun, &exempt);
    io::write_files(out, evaluation_report(per, cand, boot, repro, exempt, spec, bs));
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

  py::class_<ConfigHandle>(m, "Config", "An experiment config (docs/CONFIG.md)")
      .def(py::init([] { return make_config(default_experiment_config()); }), "The built-in paper config")
      .def_static("load", [](const std::string& path) { return make_config(load_experiment_config(path)); },
                  py::arg("path"), "Reads a config file (templates relative to it)")
      .def_static("from_yaml",
                  [](const std::string& text, const std::string& file, const std::string& base_dir) {
                    return make_config(parse_experiment_config(text, file, base_dir));
                  },
                  py::arg("text"), py::arg("file") = "<python>", py::arg("base_dir") = "",
                  "Parses config text; `file` names it in errors; templates from base_dir or built in")
      .def_property_readonly("name", [](const ConfigHandle& c) { return c.cfg->name; })
      .def_property_readonly("source", [](const ConfigHandle& c) { return c.cfg->source; })
      .def_property_readonly("text", [](const ConfigHandle& c) { return c.cfg->text; })
      .def_property_readonly("seed", [](const ConfigHandle& c) { return c.cfg->seed; })
      .def_property_readonly("templates", [](const ConfigHandle& c) { return c.cfg->template_ids; })
      .def_property_readonly("seeds", [](const ConfigHandle& c) { return std::make_pair(c.cfg->seed_from, c.cfg->seed_to); })
      .def_property_readonly("budget_ks", [](const ConfigHandle& c) { return c.cfg->budget_ks; })
      .def_property_readonly("quality_weights",
                             [](const ConfigHandle& c) {
                               return std::map<std::string, double>{{"effectiveness", c.cfg->quality.effectiveness},
                                                                    {"cost", c.cfg->quality.cost},
                                                                    {"risk", c.cfg->quality.risk}};
                             })
      .def("conditions",
           [](const ConfigHandle& c) {
             py::list l;
             for (const auto& x : run_conditions(*c.cfg)) l.append(condition_dict(x));
             return l;
           },
           "The run's conditions (config conditions, then the budget sweep) as dicts")
      .def("scenario_ids",
           [](ConfigHandle& c) {
             std::vector<std::string> ids;
             for (const auto& s : c.corpus()) ids.push_back(s.id);
             return ids;
           })
      .def("scenarios",
           [](ConfigHandle& c) {
             py::list l;
             for (const auto& s : c.corpus()) l.append(to_py(to_json(s)));
             return l;
           },
           "The generated corpus, one dict per scenario (the JSON of `advplan scenarios`)")
      .def("scenario", [](ConfigHandle& c, const std::string& id) { return to_py(to_json(c.scenario(id))); },
           py::arg("id"), "One scenario by id, e.g. 'urban-100'")
      .def("seed_plans",
           [](ConfigHandle& c, const std::string& id) {
             py::list l;
             for (const auto& p : c.scenario(id).blue_seed_plans) l.append(to_py(to_json(p)));
             return l;
           },
           py::arg("scenario"), "The scenario's BLUE seed plans as dicts")
      .def("parse_plan",
           [](ConfigHandle& c, const py::object& plan, const std::string& scenario, const std::string& side) {
             const Scenario sc = c.scenario(scenario);
             return to_py(to_json(parse_or_throw(plan_text(plan, "plan"), sc, side_from(side))));
           },
           py::arg("plan"), py::arg("scenario"), py::arg("side") = "",
           "Parses and validates a plan (dict or JSON text); raises PlanError with every violation")
      .def("violations",
           [](ConfigHandle& c, const py::object& plan, const std::string& scenario, const std::string& side) {
             const Scenario sc = c.scenario(scenario);
             std::vector<std::string> out;
             for (const auto& v : parse_plan_text(plan_text(plan, "plan"), sc, side_from(side)).violations) out.push_back(v.str());
             return out;
           },
           py::arg("plan"), py::arg("scenario"), py::arg("side") = "",
           "The plan's violations, one sentence each with its JSON path (empty when valid)")
      .def("metrics",
           [](ConfigHandle& c, const py::object& plan, const std::string& scenario) {
             const Scenario sc = c.scenario(scenario);
             return metrics_dict(parse_or_throw(plan_text(plan, "plan"), sc, std::nullopt), sc, c.cfg->quality);
           },
           py::arg("plan"), py::arg("scenario"),
           "q, e, c, r, D, D_parts, O, P_V and W of a valid plan: the object of `advplan validate --json`")
      .def("simulate",
           [](ConfigHandle& c, const py::object& blue, const py::object& red, const std::string& scenario) {
             const Scenario sc = c.scenario(scenario);
             const Plan b = parse_or_throw(plan_text(blue, "blue plan"), sc, Side::Blue);
             const Plan r = parse_or_throw(plan_text(red, "red plan"), sc, Side::Red);
             const auto qb = quality(b, sc, c.cfg->quality);
             const auto qr = quality(r, sc, c.cfg->quality);
             const Force fb{raw_capability(b, sc), qb.q, coherence(b, sc).D};
             const Force fr{raw_capability(r, sc), qr.q, coherence(r, sc).D};
             const SimNoise noise = draw_noise(c.cfg->seed, sc.id, c.cfg->sim);
             const SimResult s = simulate(fb, fr, noise, c.cfg->sim);
             py::dict d;
             d["blue_win_rate"] = s.win_rate;
             d["blue_final_strength"] = s.blue_final;
             d["red_final_strength"] = s.red_final;
             d["mean_steps"] = s.mean_steps;
             d["advantage"] = advantage(qb.q, qr.q);
             d["nash_gap"] = nash_gap(qb.q, qr.q);
             d["blue_power"] = effective_power(fb);
             d["red_power"] = effective_power(fr);
             return d;
           },
           py::arg("blue"), py::arg("red"), py::arg("scenario"),
           "Simulates the pair with the run's noise for the scenario (common random numbers), as a run does")
      .def("red_candidates",
           [](ConfigHandle& c, const py::object& blue, const std::string& scenario, int k, const std::string& stream) {
             if (k < 1 || k > 1024) throw ConfigError(fmt::format("red_candidates: k {} is not in 1..1024", k));
             const Scenario sc = c.scenario(scenario);
             const Plan b = parse_or_throw(plan_text(blue, "blue plan"), sc, Side::Blue);
             const PolicyContext ctx = policy_context(*c.cfg);
             std::vector<RedCandidate> cands;
             {
               py::gil_scoped_release nogil;
               cands = sample_red_candidates(red_request(sc, b, ctx, stream), k);
             }
             py::list l;
             for (const auto& x : cands) l.append(candidate_dict(x));
             return l;
           },
           py::arg("blue"), py::arg("scenario"), py::arg("k"), py::arg("stream") = "baseline",
           "Samples RED candidates 0..k-1 answering the BLUE plan, from the run's candidate stream");

  m.def("select_quality_greedy", [](const std::vector<double>& q) { return select_quality_greedy(q); }, py::arg("q"),
        "argmax q (ties to the lowest index; -1 when empty)");
  m.def("select_constraint_aware",
        [](const std::vector<double>& q, const std::vector<double>& D, double lambda) {
          if (q.size() != D.size()) throw ConfigError("select_constraint_aware: q and D differ in length");
          return select_constraint_aware(q, D, lambda);
        },
        py::arg("q"), py::arg("D"), py::arg("lam") = 0.7, "argmax lambda*q + (1-lambda)*D");
  m.def("select_highest_pressure", [](const std::vector<double>& p) { return select_highest_pressure(p); },
        py::arg("pressure"));
  m.def("pareto_front",
        [](const std::vector<double>& q, const std::vector<double>& D) {
          if (q.size() != D.size()) throw ConfigError("pareto_front: q and D differ in length");
          return pareto_front(q, D);
        },
        py::arg("q"), py::arg("D"));
  m.def("advantage", &advantage, py::arg("q_blue"), py::arg("q_red"));
  m.def("nash_gap", &nash_gap, py::arg("q_blue"), py::arg("q_red"));

  m.def("register_blue", &register_blue, py::arg("name"), py::arg("cls"), py::arg("thread_safe") = false,
        py::arg("description") = "", py::arg("params") = std::map<std::string, std::tuple<double, double, double>>{},
        py::arg("override") = false);
  m.def("register_red", &register_red, py::arg("name"), py::arg("cls"), py::arg("thread_safe") = false,
        py::arg("description") = "", py::arg("params") = std::map<std::string, std::tuple<double, double, double>>{},
        py::arg("override") = false);
  m.def("blue_policies", [] { return blue_registry().names(); });
  m.def("red_policies", [] { return red_registry().names(); });

  m.def("_run", &run_impl, py::arg("config"), py::arg("out"), py::arg("threads"), py::arg("conditions"),
        py::arg("studies"), py::arg("resume") = false);
  m.def("_evaluate", &evaluate_impl, py::arg("config"), py::arg("blue"), py::arg("out"), py::arg("reds"),
        py::arg("references"), py::arg("budget"), py::arg("threads"), py::arg("rerun"));
  m.def("_tables", &tables_impl, py::arg("dir"), py::arg("out"));
}
