#include "advplan/core/plan_json.hpp"

#include <fmt/format.h>

#include <type_traits>

#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "core/plan_fields.hpp"

namespace advplan {
using nlohmann::json;

namespace {

// A plan type's object, field by field through its table (core/plan_fields.hpp). The objects are filled key by key
// and moved into place: nlohmann's initializer-list form copies every nested value once more. The keys are ordered
// by the object type either way, so the text is the same.
json value(const std::string& s) { return s; }
json value(Category c) { return std::string(to_string(c)); }
json value(Side s) { return std::string(to_string(s)); }
json value(int i) { return i; }
json value(const std::vector<std::string>& v) { return v; }
json value(const std::vector<std::vector<std::string>>& v) { return v; }
json value(const std::map<std::string, std::string>& m) {
  json o = json::object();
  for (const auto& [k, v] : m) o[k] = v;
  return o;
}
/// A tool call's arguments: the object the text holds, or {} when it is not JSON.
json arguments(const std::string& text) {
  json args = json::parse(text, nullptr, false);
  if (args.is_discarded()) args = json::object();
  return args;
}
template <class T>
json object(const T& x);
template <class T>
json value(const std::vector<T>& v) {
  json a = json::array();
  a.get_ref<json::array_t&>().reserve(v.size());
  for (const T& e : v) a.push_back(object(e));
  return a;
}
template <class T>
json object(const T& x) {
  json o = json::object();
  plan_fields::for_each(plan_fields::table<T>(), [&](const auto& field) {
    if constexpr (std::decay_t<decltype(field)>::json_text)
      o[std::string(field.name)] = arguments(x.*field.member);
    else
      o[std::string(field.name)] = value(x.*field.member);
  });
  return o;
}

}  // namespace

json to_json(const Plan& p) { return object(p); }

namespace {

json cat_map(const std::array<double, kNumCategories>& a) {
  json j = json::object();
  for (std::size_t i = 0; i < kNumCategories; ++i) j[std::string(to_string(static_cast<Category>(i)))] = a[i];
  return j;
}

// Structural decoding: each step records a violation at the field's JSON path for a missing required field or
// a wrong type, and keeps whatever it could decode.
struct Decoder {
  std::vector<Violation>& out;

  static std::string join(const std::string& path, const char* key) { return path.empty() ? key : path + "." + key; }
  static std::string scalar_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

  void wrong_type(const std::string& path, const char* expected, const json& v) {
    out.push_back({path, fmt::format("wrong type: expected {}, got {}", expected, v.type_name())});
  }
  const json* field(const json& obj, const std::string& path, const char* key, bool required) {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) out.push_back({join(path, key), "missing required field"});
      return nullptr;
    }
    return &*it;
  }
  /// The field when it is present with type `want` (an object or an array); a wrong-type violation when it has
  /// another type.
  const json* typed(const json& obj, const std::string& path, const char* key, bool required, json::value_t want) {
    const json* v = field(obj, path, key, required);
    if (v && v->type() != want) {
      wrong_type(join(path, key), want == json::value_t::object ? "an object" : "an array", *v);
      return nullptr;
    }
    return v;
  }
  bool str(const json& obj, const std::string& path, const char* key, std::string& dst, bool required) {
    const json* v = field(obj, path, key, required);
    if (!v) return !required;
    if (!v->is_string()) {
      wrong_type(join(path, key), "a string", *v);
      return false;
    }
    dst = v->get<std::string>();
    return true;
  }
  bool str_list(const json& v, const std::string& path, std::vector<std::string>& dst) {
    if (!v.is_array()) {
      wrong_type(path, "an array of strings", v);
      return false;
    }
    bool ok = true;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) {
        wrong_type(fmt::format("{}[{}]", path, i), "a string", v[i]);
        ok = false;
      } else {
        dst.push_back(v[i].get<std::string>());
      }
    }
    return ok;
  }
  /// Calls `each(element, "key[i]")` for every object in the top-level array `key`; other elements are violations.
  template <typename Each>
  void object_list(const json& plan, const char* key, bool required, Each each) {
    const json* arr = typed(plan, "", key, required, json::value_t::array);
    if (!arr) return;
    for (std::size_t i = 0; i < arr->size(); ++i) {
      const json& e = (*arr)[i];
      const std::string path = fmt::format("{}[{}]", key, i);
      if (e.is_object())
        each(e, path);
      else
        wrong_type(path, "an object", e);
    }
  }

  // The steps of plan_from_json, in the order the plan's fields are decoded.

  void header(const json& j, Plan& p) {
    str(j, "", "plan_id", p.plan_id, true);
    std::string side;
    if (str(j, "", "side", side, true) && j.contains("side")) {
      if (auto s = parse_side(side))
        p.side = *s;
      else
        out.push_back({"side", fmt::format("unknown side \"{}\" (expected BLUE or RED)", side)});
    }
    str(j, "", "objective", p.objective, true);
    str(j, "", "domain", p.domain, false);
  }

  void roles(const json& j, Plan& p) {
    const json* roles = typed(j, "", "roles", false, json::value_t::object);
    if (!roles) return;
    for (const auto& [k, v] : roles->items()) {
      if (!v.is_string())
        wrong_type("roles." + k, "a string", v);
      else
        p.roles[k] = v.get<std::string>();
    }
  }

  /// The priority, kept at a neutral 3 when it is not an integer in 1..5.
  void priority(const json& a, const std::string& path, int& dst) {
    const json* pr = field(a, path, "priority", true);
    if (!pr) return;
    if (!pr->is_number_integer()) {
      wrong_type(path + ".priority", "an integer", *pr);
    } else if (pr->is_number_unsigned() ? (pr->get<std::uint64_t>() < 1 || pr->get<std::uint64_t>() > 5)
                                         : (pr->get<std::int64_t>() < 1 || pr->get<std::int64_t>() > 5)) {
      // Reported with the value as written (it may not fit an int).
      out.push_back({path + ".priority", fmt::format("priority {} is outside 1..5", pr->dump())});
    } else {
      dst = static_cast<int>(pr->get<std::int64_t>());
    }
  }

  /// One action; `unknown_category` is set when its category is not in the vocabulary.
  Action action(const json& a, const std::string& path, bool& unknown_category) {
    Action act;
    str(a, path, "id", act.id, true);
    str(a, path, "asset", act.asset, true);
    str(a, path, "verb", act.verb, true);
    str(a, path, "target", act.target, false);
    std::string cat;
    if (str(a, path, "category", cat, true) && a.contains("category")) {
      if (auto c = parse_category(cat)) {
        act.category = *c;
      } else {
        out.push_back({path + ".category",
                       fmt::format("unknown category \"{}\" (expected one of {})", cat, category_names())});
        unknown_category = true;
      }
    }
    priority(a, path, act.priority);
    if (const json* meta = typed(a, path, "metadata", false, json::value_t::object))
      for (const auto& [k, v] : meta->items()) act.metadata[k] = scalar_text(v);
    return act;
  }

  Branch branch(const json& b, const std::string& path) {
    Branch br;
    str(b, path, "at", br.at, true);
    str(b, path, "condition", br.condition, false);
    if (const json* opts = typed(b, path, "options", true, json::value_t::array)) {
      for (std::size_t k = 0; k < opts->size(); ++k) {
        std::vector<std::string> opt;
        str_list((*opts)[k], fmt::format("{}.options[{}]", path, k), opt);
        br.options.push_back(std::move(opt));
      }
    }
    return br;
  }

  ToolCall tool_call(const json& t, const std::string& path) {
    ToolCall tc;
    str(t, path, "name", tc.name, true);
    if (const json* args = typed(t, path, "arguments", false, json::value_t::object))
      tc.arguments_json = args->dump();
    return tc;
  }
};

}  // namespace

std::optional<Plan> plan_from_json(const json& j, std::vector<Violation>& violations,
                                   std::vector<std::size_t>* unknown_category) {
  Decoder d{violations};
  if (const std::string limit = untrusted::plan_json_limit_error(j); !limit.empty()) {
    violations.push_back({"", limit});
    return std::nullopt;
  }
  if (!j.is_object()) {
    violations.push_back({"", fmt::format("wrong type: a plan must be a JSON object, got {}", j.type_name())});
    return std::nullopt;
  }
  Plan p;
  d.header(j, p);
  d.roles(j, p);
  d.object_list(j, "actions", true, [&](const json& a, const std::string& path) {
    bool unknown = false;
    p.actions.push_back(d.action(a, path, unknown));
    if (unknown && unknown_category) unknown_category->push_back(p.actions.size() - 1);
  });
  if (const json* chain = d.field(j, "", "chain", true)) d.str_list(*chain, "chain", p.chain);
  d.object_list(j, "branches", false,
                [&](const json& b, const std::string& path) { p.branches.push_back(d.branch(b, path)); });
  d.object_list(j, "tool_calls", false,
                [&](const json& t, const std::string& path) { p.tool_calls.push_back(d.tool_call(t, path)); });
  return p;
}

json to_json(const Scenario& s) { return to_json(s, ScenarioJson::with_seed_plans); }

json to_json(const Scenario& s, ScenarioJson what) {
  json assets = json::array();
  json red_pool = json::array();
  for (const auto& a : s.assets) {
    json cats = json::array();
    for (auto c : a.categories) cats.push_back(std::string(to_string(c)));
    json o = json::object();
    o["id"] = a.id;
    o["side"] = std::string(to_string(a.side));
    o["type"] = a.type;
    o["domain"] = a.domain;
    o["role"] = a.role;
    o["capability"] = a.capability;
    o["cost"] = a.cost;
    o["mobility"] = a.mobility;
    o["categories"] = std::move(cats);
    assets.push_back(std::move(o));
    if (a.side == Side::Red) red_pool.push_back(a.id);
  }
  json req = json::object();
  for (auto side : kSides) {
    const auto& r = s.req(side);
    json o = json::object();
    o["weights"] = cat_map(r.weight);
    o["effort_scale"] = r.effort_scale;
    o["budget"] = r.budget;
    req[std::string(to_string(side))] = std::move(o);
  }
  json verbs = json::object();
  for (std::size_t i = 0; i < kNumCategories; ++i) verbs[std::string(to_string(static_cast<Category>(i)))] = s.verbs[i];
  json plans = json::array();
  if (what == ScenarioJson::with_seed_plans)
    for (const auto& p : s.blue_seed_plans) plans.push_back(to_json(p));
  json terrain = json::object();
  terrain["family"] = s.terrain.family;
  terrain["mobility"] = s.terrain.mobility;
  terrain["visibility"] = s.terrain.visibility;
  terrain["exposure"] = s.terrain.exposure;
  terrain["category_modifiers"] = cat_map(s.terrain.category_modifier);
  json objectives = json::object();
  objectives["BLUE"] = s.blue_objective;
  objectives["RED"] = s.red_objective;
  json out = json::object();
  out["id"] = s.id;
  out["template"] = s.template_id;
  out["seed"] = s.seed;
  out["domain"] = s.domain;
  out["terrain"] = std::move(terrain);
  out["framing"] = std::string(to_string(s.framing));
  out["objectives"] = std::move(objectives);
  out["places"] = s.places;
  out["assets"] = std::move(assets);
  out["red_pool"] = std::move(red_pool);
  out["requirements"] = std::move(req);
  out["verbs"] = std::move(verbs);
  out["exposure"] = cat_map(s.exposure);
  out["blue_seed_plans"] = std::move(plans);
  return out;
}

Scenario scenario_from_json(const json& j) {
  auto read_cats = [](const json& m, std::array<double, kNumCategories>& dst) {
    for (const auto& [k, v] : m.items()) {
      auto c = parse_category(k);
      if (!c) throw PlanError(fmt::format("unknown category \"{}\"", k));
      dst[index(*c)] = v.get<double>();
    }
  };
  try {
    Scenario s;
    s.id = j.at("id").get<std::string>();
    s.template_id = j.at("template").get<std::string>();
    s.seed = j.at("seed").get<std::uint64_t>();
    s.domain = j.value("domain", "");
    const auto& t = j.at("terrain");
    s.terrain.family = t.at("family").get<std::string>();
    s.terrain.mobility = t.at("mobility").get<double>();
    s.terrain.visibility = t.at("visibility").get<double>();
    s.terrain.exposure = t.at("exposure").get<double>();
    read_cats(t.at("category_modifiers"), s.terrain.category_modifier);
    auto fr = parse_framing(j.at("framing").get<std::string>());
    if (!fr) throw PlanError("unknown framing");
    s.framing = *fr;
    s.blue_objective = j.at("objectives").at("BLUE").get<std::string>();
    s.red_objective = j.at("objectives").at("RED").get<std::string>();
    s.places = j.at("places").get<std::vector<std::string>>();
    for (const auto& a : j.at("assets")) {
      Asset as;
      as.id = a.at("id").get<std::string>();
      // Asset ids are keys (plans name assets by id; the sampler records the drawn asset's role under its id).
      if (s.find_asset(as.id)) throw PlanError(fmt::format("duplicate asset id \"{}\"", as.id));
      auto side = parse_side(a.at("side").get<std::string>());
      if (!side) throw PlanError("asset side must be BLUE or RED");
      as.side = *side;
      as.type = a.at("type").get<std::string>();
      as.domain = a.at("domain").get<std::string>();
      as.role = a.at("role").get<std::string>();
      as.capability = a.at("capability").get<double>();
      as.cost = a.at("cost").get<double>();
      as.mobility = a.at("mobility").get<double>();
      for (const auto& c : a.at("categories")) {
        auto cat = parse_category(c.get<std::string>());
        if (!cat) throw PlanError("unknown asset category");
        as.categories.push_back(*cat);
      }
      s.assets.push_back(std::move(as));
    }
    for (auto side : kSides) {
      const auto& r = j.at("requirements").at(std::string(to_string(side)));
      auto& dst = s.requirements[index(side)];
      read_cats(r.at("weights"), dst.weight);
      dst.effort_scale = r.at("effort_scale").get<double>();
      dst.budget = r.at("budget").get<double>();
    }
    for (const auto& [k, v] : j.at("verbs").items()) {
      auto c = parse_category(k);
      if (!c) throw PlanError(fmt::format("unknown category \"{}\"", k));
      s.verbs[index(*c)] = v.get<std::vector<std::string>>();
    }
    read_cats(j.at("exposure"), s.exposure);
    for (const auto& pj : j.at("blue_seed_plans")) {
      std::vector<Violation> v;
      auto p = plan_from_json(pj, v);
      if (!p || !v.empty()) throw PlanError("blue_seed_plans: " + (v.empty() ? std::string("bad plan") : v.front().str()));
      s.blue_seed_plans.push_back(std::move(*p));
    }
    return s;
  } catch (const json::exception& e) {
    throw PlanError(std::string("scenario JSON: ") + e.what());
  }
}

}  // namespace advplan
