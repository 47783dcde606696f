// The model in the `advplan` Python module (docs/PYTHON.md): `Config` (a config, its corpus, scenarios and seed
// plans), plan parsing and validation, metrics, the simulator, RED candidates and the selectors; and the JSON
// conversions the other parts share. A scenario or plan becomes a Python dict through the library's own to_json
// and Python's json module, and a dict from Python is parsed and validated by the same parser and validator as
// every other plan (core/plan_json.cpp, core/validation.cpp).
#include <fmt/format.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "advplan/core/error.hpp"
#include "advplan/core/plan_json.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/metrics/coherence.hpp"
#include "advplan/metrics/frontier.hpp"
#include "advplan/metrics/plan_layout.hpp"
#include "advplan/metrics/pressure.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/metrics/structure.hpp"
#include "advplan/policy/red_candidate.hpp"
#include "advplan/policy/red_policy.hpp"
#include "advplan/sim/advantage.hpp"
#include "advplan/sim/wargame.hpp"
#include "bindings.hpp"

namespace py = pybind11;

namespace advplan::python {

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

namespace {

// ------------------------------------------------------------------------------------------------ configs

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

/// `Config`: its constructors, its fields and its corpus (scenarios and seed plans).
py::class_<ConfigHandle> bind_config(py::module_& m) {
  return py::class_<ConfigHandle>(m, "Config", "An experiment config (docs/CONFIG.md)")
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
           py::arg("scenario"), "The scenario's BLUE seed plans as dicts");
}

/// What `Config` does with plans: parses and validates them, their metrics, the simulator and RED candidates.
void bind_config_plans(py::class_<ConfigHandle>& cls) {
  cls.def("parse_plan",
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
}

/// A number from Python that must be finite (NaN or an infinity has no argmax, front or gap).
double finite(double v, const char* what) {
  if (!std::isfinite(v)) throw ConfigError(fmt::format("{}: {} is not a finite number", what, v));
  return v;
}

const std::vector<double>& finite(const std::vector<double>& v, const char* what) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]))
      throw ConfigError(fmt::format("{}: element {} ({}) is not a finite number", what, i, v[i]));
  return v;
}

/// The selectors, the Pareto front, advantage and the Nash gap.
void bind_selectors(py::module_& m) {
  m.def(
      "select_quality_greedy",
      [](const std::vector<double>& q) {
        return select_quality_greedy(finite(q, "select_quality_greedy: q"));
      },
      py::arg("q"), "argmax q (ties to the lowest index; -1 when empty)");
  m.def(
      "select_constraint_aware",
      [](const std::vector<double>& q, const std::vector<double>& D, double lambda) {
        if (q.size() != D.size()) throw ConfigError("select_constraint_aware: q and D differ in length");
        if (!(lambda >= 0 && lambda <= 1))
          throw ConfigError(fmt::format("select_constraint_aware: lam {} is not in [0, 1]", lambda));
        return select_constraint_aware(finite(q, "select_constraint_aware: q"),
                                       finite(D, "select_constraint_aware: D"), lambda);
      },
      py::arg("q"), py::arg("D"), py::arg("lam") = 0.7, "argmax lambda*q + (1-lambda)*D");
  m.def(
      "select_highest_pressure",
      [](const std::vector<double>& p) {
        return select_highest_pressure(finite(p, "select_highest_pressure: pressure"));
      },
      py::arg("pressure"));
  m.def(
      "pareto_front",
      [](const std::vector<double>& q, const std::vector<double>& D) {
        if (q.size() != D.size()) throw ConfigError("pareto_front: q and D differ in length");
        return pareto_front(finite(q, "pareto_front: q"), finite(D, "pareto_front: D"));
      },
      py::arg("q"), py::arg("D"));
  m.def(
      "advantage",
      [](double b, double r) {
        return advantage(finite(b, "advantage: q_blue"), finite(r, "advantage: q_red"));
      },
      py::arg("q_blue"), py::arg("q_red"));
  m.def(
      "nash_gap",
      [](double b, double r) {
        return nash_gap(finite(b, "nash_gap: q_blue"), finite(r, "nash_gap: q_red"));
      },
      py::arg("q_blue"), py::arg("q_red"));
}

}  // namespace

void bind_model(py::module_& m) {
  py::class_<ConfigHandle> cls = bind_config(m);
  bind_config_plans(cls);
  bind_selectors(m);
}

}  // namespace advplan::python
