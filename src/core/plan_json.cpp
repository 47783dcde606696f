#include "advplan/core/plan_json.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/io/untrusted.hpp"

namespace advplan {
using nlohmann::json;

json to_json(const Plan& p) {
  json actions = json::array();
  for (const auto& a : p.actions) {
    json meta = json::object();
    for (const auto& [k, v] : a.metadata) meta[k] = v;
    actions.push_back({{"id", a.id},
                       {"asset", a.asset},
                       {"verb", a.verb},
                       {"category", std::string(to_string(a.category))},
                       {"target", a.target},
                       {"priority", a.priority},
                       {"metadata", meta}});
  }
  json branches = json::array();
  for (const auto& b : p.branches) branches.push_back({{"at", b.at}, {"condition", b.condition}, {"options", b.options}});
  json tools = json::array();
  for (const auto& t : p.tool_calls) {
    json args = json::parse(t.arguments_json, nullptr, false);
    if (args.is_discarded()) args = json::object();
    tools.push_back({{"name", t.name}, {"arguments", args}});
  }
  json roles = json::object();
  for (const auto& [k, v] : p.roles) roles[k] = v;
  return json{{"plan_id", p.plan_id}, {"side", std::string(to_string(p.side))},
              {"objective", p.objective}, {"domain", p.domain},
              {"roles", roles},          {"actions", actions},
              {"chain", p.chain},        {"branches", branches},
              {"tool_calls", tools}};
}

std::string plan_to_string(const Plan& plan) { return to_json(plan).dump(); }

namespace {

json cat_map(const std::array<double, kNumCategories>& a) {
  json j = json::object();
  for (std::size_t i = 0; i < kNumCategories; ++i) j[std::string(to_string(static_cast<Category>(i)))] = a[i];
  return j;
}

// Structural decoding helpers: each records a violation at `path` and returns false on a bad field.
struct Decoder {
  std::vector<Violation>& out;

  const json* field(const json& obj, const std::string& path, const char* key, bool required) {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required) out.push_back({path.empty() ? key : path + "." + key, "missing required field"});
      return nullptr;
    }
    return &*it;
  }
  static std::string join(const std::string& path, const char* key) { return path.empty() ? key : path + "." + key; }

  bool str(const json& obj, const std::string& path, const char* key, std::string& dst, bool required) {
    const json* v = field(obj, path, key, required);
    if (!v) return !required;
    if (!v->is_string()) {
      out.push_back({join(path, key), fmt::format("wrong type: expected a string, got {}", v->type_name())});
      return false;
    }
    dst = v->get<std::string>();
    return true;
  }
  bool str_list(const json& v, const std::string& path, std::vector<std::string>& dst) {
    if (!v.is_array()) {
      out.push_back({path, fmt::format("wrong type: expected an array of strings, got {}", v.type_name())});
      return false;
    }
    bool ok = true;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) {
        out.push_back({fmt::format("{}[{}]", path, i), fmt::format("wrong type: expected a string, got {}", v[i].type_name())});
        ok = false;
      } else {
        dst.push_back(v[i].get<std::string>());
      }
    }
    return ok;
  }
  static std::string scalar_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }
};

}  // namespace

std::optional<Plan> plan_from_json(const json& j, std::vector<Violation>& violations,
                                   std::vector<std::size_t>* unknown_category) {
  Decoder d{violations};
  if (const std::string limit = io::plan_json_limit_error(j); !limit.empty()) {
    violations.push_back({"", limit});
    return std::nullopt;
  }
  if (!j.is_object()) {
    violations.push_back({"", fmt::format("wrong type: a plan must be a JSON object, got {}", j.type_name())});
    return std::nullopt;
  }
  Plan p;
  d.str(j, "", "plan_id", p.plan_id, true);
  std::string side;
  if (d.str(j, "", "side", side, true) && j.contains("side")) {
    if (auto s = parse_side(side))
      p.side = *s;
    else
      violations.push_back({"side", fmt::format("unknown side \"{}\" (expected BLUE or RED)", side)});
  }
  d.str(j, "", "objective", p.objective, true);
  d.str(j, "", "domain", p.domain, false);
  if (const json* roles = d.field(j, "", "roles", false)) {
    if (!roles->is_object()) {
      violations.push_back({"roles", fmt::format("wrong type: expected an object, got {}", roles->type_name())});
    } else {
      for (const auto& [k, v] : roles->items()) {
        if (!v.is_string())
          violations.push_back({"roles." + k, fmt::format("wrong type: expected a string, got {}", v.type_name())});
        else
          p.roles[k] = v.get<std::string>();
      }
    }
  }
  if (const json* acts = d.field(j, "", "actions", true)) {
    if (!acts->is_array()) {
      violations.push_back({"actions", fmt::format("wrong type: expected an array, got {}", acts->type_name())});
    } else {
      for (std::size_t i = 0; i < acts->size(); ++i) {
        const json& a = (*acts)[i];
        const std::string path = fmt::format("actions[{}]", i);
        if (!a.is_object()) {
          violations.push_back({path, fmt::format("wrong type: expected an object, got {}", a.type_name())});
          continue;
        }
        Action act;
        d.str(a, path, "id", act.id, true);
        d.str(a, path, "asset", act.asset, true);
        d.str(a, path, "verb", act.verb, true);
        d.str(a, path, "target", act.target, false);
        std::string cat;
        if (d.str(a, path, "category", cat, true) && a.contains("category")) {
          if (auto c = parse_category(cat))
            act.category = *c;
          else {
            violations.push_back({path + ".category",
                                  fmt::format("unknown category \"{}\" (expected one of {})", cat, category_names())});
            if (unknown_category) unknown_category->push_back(p.actions.size());
          }
        }
        if (const json* pr = d.field(a, path, "priority", true)) {
          if (!pr->is_number_integer()) {
            violations.push_back({path + ".priority", fmt::format("wrong type: expected an integer, got {}", pr->type_name())});
          } else if (pr->is_number_unsigned() ? (pr->get<std::uint64_t>() < 1 || pr->get<std::uint64_t>() > 5) : (pr->get<std::int64_t>() < 1 || pr->get<std::int64_t>() > 5)) {
            // Reported here with the value as written (it may not fit an int); the plan keeps a neutral 3.
            violations.push_back({path + ".priority", fmt::format("priority {} is outside 1..5", pr->dump())});
          } else {
            act.priority = static_cast<int>(pr->get<std::int64_t>());
          }
        }
        if (const json* meta = d.field(a, path, "metadata", false)) {
          if (!meta->is_object())
            violations.push_back({path + ".metadata", fmt::format("wrong type: expected an object, got {}", meta->type_name())});
          else
            for (const auto& [k, v] : meta->items()) act.metadata[k] = Decoder::scalar_text(v);
        }
        p.actions.push_back(std::move(act));
      }
    }
  }
  if (const json* chain = d.field(j, "", "chain", true)) d.str_list(*chain, "chain", p.chain);
  if (const json* brs = d.field(j, "", "branches", false)) {
    if (!brs->is_array()) {
      violations.push_back({"branches", fmt::format("wrong type: expected an array, got {}", brs->type_name())});
    } else {
      for (std::size_t i = 0; i < brs->size(); ++i) {
        const json& b = (*brs)[i];
        const std::string path = fmt::format("branches[{}]", i);
        if (!b.is_object()) {
          violations.push_back({path, fmt::format("wrong type: expected an object, got {}", b.type_name())});
          continue;
        }
        Branch br;
        d.str(b, path, "at", br.at, true);
        d.str(b, path, "condition", br.condition, false);
        if (const json* opts = d.field(b, path, "options", true)) {
          if (!opts->is_array()) {
            violations.push_back({path + ".options", fmt::format("wrong type: expected an array, got {}", opts->type_name())});
          } else {
            for (std::size_t k = 0; k < opts->size(); ++k) {
              std::vector<std::string> opt;
              d.str_list((*opts)[k], fmt::format("{}.options[{}]", path, k), opt);
              br.options.push_back(std::move(opt));
            }
          }
        }
        p.branches.push_back(std::move(br));
      }
    }
  }
  if (const json* tcs = d.field(j, "", "tool_calls", false)) {
    if (!tcs->is_array()) {
      violations.push_back({"tool_calls", fmt::format("wrong type: expected an array, got {}", tcs->type_name())});
    } else {
      for (std::size_t i = 0; i < tcs->size(); ++i) {
        const json& t = (*tcs)[i];
        const std::string path = fmt::format("tool_calls[{}]", i);
        if (!t.is_object()) {
          violations.push_back({path, fmt::format("wrong type: expected an object, got {}", t.type_name())});
          continue;
        }
        ToolCall tc;
        d.str(t, path, "name", tc.name, true);
        if (auto it = t.find("arguments"); it != t.end()) {
          if (!it->is_object())
            violations.push_back({path + ".arguments", fmt::format("wrong type: expected an object, got {}", it->type_name())});
          else
            tc.arguments_json = it->dump();
        }
        p.tool_calls.push_back(std::move(tc));
      }
    }
  }
  return p;
}

json to_json(const Scenario& s) {
  json assets = json::array();
  json red_pool = json::array();
  for (const auto& a : s.assets) {
    json cats = json::array();
    for (auto c : a.categories) cats.push_back(std::string(to_string(c)));
    assets.push_back({{"id", a.id},
                      {"side", std::string(to_string(a.side))},
                      {"type", a.type},
                      {"domain", a.domain},
                      {"role", a.role},
                      {"capability", a.capability},
                      {"cost", a.cost},
                      {"mobility", a.mobility},
                      {"categories", cats}});
    if (a.side == Side::Red) red_pool.push_back(a.id);
  }
  json req = json::object();
  for (auto side : kSides) {
    const auto& r = s.req(side);
    req[std::string(to_string(side))] = {{"weights", cat_map(r.weight)}, {"effort_scale", r.effort_scale}, {"budget", r.budget}};
  }
  json verbs = json::object();
  for (std::size_t i = 0; i < kNumCategories; ++i) verbs[std::string(to_string(static_cast<Category>(i)))] = s.verbs[i];
  json plans = json::array();
  for (const auto& p : s.blue_seed_plans) plans.push_back(to_json(p));
  return json{{"id", s.id},
              {"template", s.template_id},
              {"seed", s.seed},
              {"domain", s.domain},
              {"terrain",
               {{"family", s.terrain.family},
                {"mobility", s.terrain.mobility},
                {"visibility", s.terrain.visibility},
                {"exposure", s.terrain.exposure},
                {"category_modifiers", cat_map(s.terrain.category_modifier)}}},
              {"framing", std::string(to_string(s.framing))},
              {"objectives", {{"BLUE", s.blue_objective}, {"RED", s.red_objective}}},
              {"places", s.places},
              {"assets", assets},
              {"red_pool", red_pool},
              {"requirements", req},
              {"verbs", verbs},
              {"exposure", cat_map(s.exposure)},
              {"blue_seed_plans", plans}};
}

std::string scenario_to_string(const Scenario& s) { return to_json(s).dump(); }

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
