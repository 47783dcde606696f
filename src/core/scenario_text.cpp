// Scenario JSON as text, without the nlohmann DOM: a writer that produces to_json(s, what).dump() byte for byte,
// and a simdjson reader that gives scenario_from_json(json::parse(text)) (docs/DECISIONS.md "Speed"). An LLM
// prompt carries the scenario as this text, and the offline client reads it back for every completion; through the
// DOM the two were about a tenth of a paper run.
//
// Each is exact by construction, not by a second reading of the schema: the writer hands anything it does not
// write itself (a string that needs escaping, a seed plan) to nlohmann, and the reader hands every input it does not
// accept in full (a wrong type, a duplicate asset, a seed plan, invalid JSON) to the DOM path, which then gives the
// result or the error it always gave.
#include <algorithm>
#include <array>
#include <bitset>
#include <nlohmann/json.hpp>
#include <optional>

#include "advplan/core/plan_json.hpp"
#include "core/json_dom.hpp"
#include "core/scenario_text.hpp"
#include "core/json_text.hpp"

namespace advplan {

namespace {

// ------------------------------------------------------------------------------------------------------------
// Writer. nlohmann's object is a std::map, so its keys come out sorted; the fixed key orders below are those.

/// The categories in the order of their names (cat_map and the verbs are objects keyed by name).
const std::array<std::size_t, kNumCategories>& categories_by_name() {
  static const auto order = [] {
    std::array<std::size_t, kNumCategories> o{};
    for (std::size_t i = 0; i < kNumCategories; ++i) o[i] = i;
    std::sort(o.begin(), o.end(), [](std::size_t a, std::size_t b) {
      return to_string(static_cast<Category>(a)) < to_string(static_cast<Category>(b));
    });
    return o;
  }();
  return order;
}

struct Writer {
  std::string& out;

  void raw(std::string_view s) { out.append(s); }
  void str(std::string_view s) { json_text::string(out, s); }
  void key(std::string_view k) { json_text::key(out, k); }
  void num(double x) { json_text::number(out, x); }
  void str_list(const std::vector<std::string>& v) { json_text::strings(out, v); }
  void cat_map(const std::array<double, kNumCategories>& a) {
    out.push_back('{');
    bool first = true;
    for (std::size_t i : categories_by_name()) {
      if (!first) out.push_back(',');
      first = false;
      key(to_string(static_cast<Category>(i)));
      num(a[i]);
    }
    out.push_back('}');
  }
  /// The assets array's elements.
  void assets(const std::vector<Asset>& assets) {
    for (std::size_t i = 0; i < assets.size(); ++i) {
      const Asset& a = assets[i];
      if (i) raw(",");
      raw("{");
      key("capability");
      num(a.capability);
      raw(",");
      key("categories");
      raw("[");
      for (std::size_t c = 0; c < a.categories.size(); ++c) {
        if (c) raw(",");
        str(to_string(a.categories[c]));
      }
      raw("],");
      key("cost");
      num(a.cost);
      raw(",");
      key("domain");
      str(a.domain);
      raw(",");
      key("id");
      str(a.id);
      raw(",");
      key("mobility");
      num(a.mobility);
      raw(",");
      key("role");
      str(a.role);
      raw(",");
      key("side");
      str(to_string(a.side));
      raw(",");
      key("type");
      str(a.type);
      raw("}");
    }
  }
  /// The requirements object's members.
  void requirements(const Scenario& s) {
    for (Side side : {Side::Blue, Side::Red}) {  // "BLUE" < "RED"
      const SideRequirements& r = s.req(side);
      if (side == Side::Red) raw(",");
      key(to_string(side));
      raw("{");
      key("budget");
      num(r.budget);
      raw(",");
      key("effort_scale");
      num(r.effort_scale);
      raw(",");
      key("weights");
      cat_map(r.weight);
      raw("}");
    }
  }
  /// The terrain object's members.
  void terrain(const Terrain& t) {
    key("category_modifiers");
    cat_map(t.category_modifier);
    raw(",");
    key("exposure");
    num(t.exposure);
    raw(",");
    key("family");
    str(t.family);
    raw(",");
    key("mobility");
    num(t.mobility);
    raw(",");
    key("visibility");
    num(t.visibility);
  }
  /// The verbs object's members, by category name.
  void verbs(const Scenario& s) {
    bool first = true;
    for (std::size_t i : categories_by_name()) {
      if (!first) raw(",");
      first = false;
      key(to_string(static_cast<Category>(i)));
      str_list(s.verbs[i]);
    }
  }
};

}  // namespace

std::string scenario_to_string(const Scenario& s, ScenarioJson what) {
  std::string out;
  out.reserve(4096 + 512 * s.assets.size());
  Writer w{out};
  w.raw("{");
  w.key("assets");
  w.raw("[");
  w.assets(s.assets);
  w.raw("],");
  w.key("blue_seed_plans");
  w.raw("[");
  if (what == ScenarioJson::with_seed_plans)
    for (std::size_t i = 0; i < s.blue_seed_plans.size(); ++i) {
      if (i) w.raw(",");
      w.raw(plan_to_string(s.blue_seed_plans[i]));
    }
  w.raw("],");
  w.key("domain");
  w.str(s.domain);
  w.raw(",");
  w.key("exposure");
  w.cat_map(s.exposure);
  w.raw(",");
  w.key("framing");
  w.str(to_string(s.framing));
  w.raw(",");
  w.key("id");
  w.str(s.id);
  w.raw(",");
  w.key("objectives");
  w.raw("{");
  w.key("BLUE");
  w.str(s.blue_objective);
  w.raw(",");
  w.key("RED");
  w.str(s.red_objective);
  w.raw("},");
  w.key("places");
  w.str_list(s.places);
  w.raw(",");
  w.key("red_pool");
  w.raw("[");
  bool first = true;
  for (const Asset& a : s.assets)
    if (a.side == Side::Red) {
      if (!first) w.raw(",");
      first = false;
      w.str(a.id);
    }
  w.raw("],");
  w.key("requirements");
  w.raw("{");
  w.requirements(s);
  w.raw("},");
  w.key("seed");
  w.raw(std::to_string(s.seed));
  w.raw(",");
  w.key("template");
  w.str(s.template_id);
  w.raw(",");
  w.key("terrain");
  w.raw("{");
  w.terrain(s.terrain);
  w.raw("},");
  w.key("verbs");
  w.raw("{");
  w.verbs(s);
  w.raw("}}");
  return out;
}

std::string scenario_to_string(const Scenario& s) { return scenario_to_string(s, ScenarioJson::with_seed_plans); }

// ------------------------------------------------------------------------------------------------------------
// Reader. nlohmann keeps the last of duplicate keys; walking each object's fields in order and assigning as they
// come keeps the last as well. Anything the reader does not take in full returns nullopt, and the DOM path decides.

namespace {

using namespace detail::json_dom;

bool get_num(element e, double& dst) {
  // nlohmann's get<double>() converts an integer as static_cast does; simdjson's get_double() does the same.
  return !e.get_double().get(dst);
}
bool get_cats(element e, std::array<double, kNumCategories>& dst) {
  object o;
  if (e.get_object().get(o)) return false;
  for (auto [k, v] : o) {
    const auto c = parse_category(k);
    if (!c || !get_num(v, dst[index(*c)])) return false;
  }
  return true;
}
}  // namespace

std::optional<Scenario> detail::scenario_from_text_fast(std::string_view text) {
  thread_local simdjson::dom::parser parser;
  element root;
  if (parser.parse(text.data(), text.size(), true).get(root)) return std::nullopt;
  enum { kId, kTemplate, kSeed, kDomain, kTerrain, kFraming, kObjectives, kPlaces, kAssets, kRequirements, kVerbs,
         kExposure, kSeedPlans, kTop };
  static constexpr std::array<std::string_view, kTop> top_names{
      "id", "template", "seed", "domain", "terrain", "framing", "objectives", "places", "assets", "requirements",
      "verbs", "exposure", "blue_seed_plans"};
  std::array<element, kTop> f;
  std::bitset<kTop> has;
  if (!fields(root, top_names, f, has)) return std::nullopt;
  // Every field but the domain is required.
  for (std::size_t i = 0; i < kTop; ++i)
    if (i != kDomain && !has[i]) return std::nullopt;
  Scenario s;
  if (!get_str(f[kId], s.id) || !get_str(f[kTemplate], s.template_id) || f[kSeed].get_uint64().get(s.seed))
    return std::nullopt;
  if (has[kDomain] && !get_str(f[kDomain], s.domain)) return std::nullopt;
  {
    static constexpr std::array<std::string_view, 5> names{"family", "mobility", "visibility", "exposure",
                                                           "category_modifiers"};
    std::array<element, 5> t;
    std::bitset<5> h;
    if (!fields(f[kTerrain], names, t, h) || !h.all() || !get_str(t[0], s.terrain.family) ||
        !get_num(t[1], s.terrain.mobility) || !get_num(t[2], s.terrain.visibility) ||
        !get_num(t[3], s.terrain.exposure) || !get_cats(t[4], s.terrain.category_modifier))
      return std::nullopt;
  }
  {
    std::string_view fr;
    if (f[kFraming].get_string().get(fr)) return std::nullopt;
    const auto framing = parse_framing(fr);
    if (!framing) return std::nullopt;
    s.framing = *framing;
  }
  {
    static constexpr std::array<std::string_view, 2> names{"BLUE", "RED"};
    std::array<element, 2> o;
    std::bitset<2> h;
    if (!fields(f[kObjectives], names, o, h) || !h.all() || !get_str(o[0], s.blue_objective) ||
        !get_str(o[1], s.red_objective))
      return std::nullopt;
  }
  if (!get_str_list(f[kPlaces], s.places)) return std::nullopt;
  {
    array assets;
    if (f[kAssets].get_array().get(assets)) return std::nullopt;
    static constexpr std::array<std::string_view, 9> names{"id",         "side", "type",     "domain",    "role",
                                                           "capability", "cost", "mobility", "categories"};
    for (element ae : assets) {
      std::array<element, 9> a;
      std::bitset<9> h;
      if (!fields(ae, names, a, h) || !h.all()) return std::nullopt;
      Asset as;
      if (!get_str(a[0], as.id) || s.find_asset(as.id)) return std::nullopt;  // a duplicate id is the DOM path's error
      std::string_view side;
      if (a[1].get_string().get(side)) return std::nullopt;
      const auto sd = parse_side(side);
      if (!sd) return std::nullopt;
      as.side = *sd;
      if (!get_str(a[2], as.type) || !get_str(a[3], as.domain) || !get_str(a[4], as.role) ||
          !get_num(a[5], as.capability) || !get_num(a[6], as.cost) || !get_num(a[7], as.mobility))
        return std::nullopt;
      array cats;
      if (a[8].get_array().get(cats)) return std::nullopt;
      for (element c : cats) {
        std::string_view name;
        if (c.get_string().get(name)) return std::nullopt;
        const auto cat = parse_category(name);
        if (!cat) return std::nullopt;
        as.categories.push_back(*cat);
      }
      s.assets.push_back(std::move(as));
    }
  }
  {
    static constexpr std::array<std::string_view, 2> sides{"BLUE", "RED"};
    std::array<element, 2> r;
    std::bitset<2> h;
    if (!fields(f[kRequirements], sides, r, h) || !h.all()) return std::nullopt;
    static constexpr std::array<std::string_view, 3> names{"weights", "effort_scale", "budget"};
    for (Side side : kSides) {
      std::array<element, 3> q;
      std::bitset<3> hq;
      SideRequirements& dst = s.requirements[index(side)];
      if (!fields(r[side == Side::Blue ? 0 : 1], names, q, hq) || !hq.all() || !get_cats(q[0], dst.weight) ||
          !get_num(q[1], dst.effort_scale) || !get_num(q[2], dst.budget))
        return std::nullopt;
    }
  }
  {
    object verbs;
    if (f[kVerbs].get_object().get(verbs)) return std::nullopt;
    for (auto [k, v] : verbs) {
      const auto c = parse_category(k);
      if (!c || !get_str_list(v, s.verbs[index(*c)])) return std::nullopt;
    }
  }
  if (!get_cats(f[kExposure], s.exposure)) return std::nullopt;
  {
    // Seed plans go through the plan decoder, which reads the DOM: a scenario with any is the DOM path's.
    array plans;
    if (f[kSeedPlans].get_array().get(plans) || plans.size() != 0) return std::nullopt;
  }
  return s;
}

Scenario scenario_from_text(std::string_view text) {
  if (auto s = detail::scenario_from_text_fast(text)) return std::move(*s);
  return scenario_from_json(nlohmann::json::parse(text));
}

}  // namespace advplan
