#include "advplan/scenario/scenario_template.hpp"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "advplan/io/yaml_reader.hpp"

namespace advplan {
using io::YamlReader;

namespace {

Category read_category(const YamlReader& r) {
  const std::string s = r.as_string();
  auto c = parse_category(s);
  if (!c) r.fail(fmt::format("unknown category '{}' (expected one of {})", s, category_names()));
  return *c;
}

std::vector<Category> read_categories(const YamlReader& r) {
  r.require_sequence();
  std::vector<Category> out;
  for (std::size_t i = 0; i < r.size(); ++i) out.push_back(read_category(r.at(i)));
  if (out.empty()) r.fail("must list at least one category");
  return out;
}

/// A map category -> number; missing categories get `dflt`.
std::array<double, kNumCategories> read_category_map(const YamlReader& r, double lo, double hi, double dflt) {
  r.require_map();
  std::array<double, kNumCategories> out;
  out.fill(dflt);
  for (const auto& k : r.keys()) {
    auto c = parse_category(k);
    if (!c) r.at(k).fail(fmt::format("unknown category '{}' (expected one of {})", k, category_names()));
    out[index(*c)] = r.at(k).as_double_in(lo, hi);
  }
  return out;
}

std::pair<int, int> read_range(const YamlReader& r, int lo, int hi) {
  r.require_sequence();
  if (r.size() != 2) r.fail("expected a two-element list [min, max]");
  const int a = static_cast<int>(r.at(0).as_int_in(lo, hi));
  const int b = static_cast<int>(r.at(1).as_int_in(lo, hi));
  if (a > b) r.fail(fmt::format("min {} is greater than max {}", a, b));
  return {a, b};
}

Side read_side_key(const YamlReader& parent, const std::string& key) {
  auto s = parse_side(key);
  if (!s) parent.at(key).fail("expected BLUE or RED");
  return *s;
}

}  // namespace

ScenarioTemplate parse_template(const std::string& yaml_text, const std::string& file) {
  const YamlReader root(io::parse_yaml(yaml_text, file), file);
  root.require_only({"id", "name", "domain", "terrain_families", "requirements", "exposure", "verbs", "assets",
                     "places", "objectives", "branch_kinds", "seed_plans", "framing"});
  ScenarioTemplate t;
  t.source = file;
  t.id = root.at("id").as_string();
  t.name = root.at("name").as_string();
  t.domain = root.at("domain").as_string();

  const auto terr = root.at("terrain_families");
  terr.require_sequence();
  if (terr.size() == 0) terr.fail("must list at least one terrain family");
  for (std::size_t i = 0; i < terr.size(); ++i) {
    const auto r = terr.at(i);
    r.require_only({"family", "weight", "mobility", "visibility", "exposure", "category_modifiers"});
    TerrainSpec ts;
    ts.terrain.family = r.at("family").as_string();
    ts.weight = r.at("weight").as_double_in(0, 1);
    ts.terrain.mobility = r.at("mobility").as_double_in(0.1, 2);
    ts.terrain.visibility = r.at("visibility").as_double_in(0.1, 2);
    ts.terrain.exposure = r.at("exposure").as_double_in(0.1, 2);
    if (r.has("category_modifiers")) ts.terrain.category_modifier = read_category_map(r.at("category_modifiers"), 0.1, 2, 1.0);
    t.terrains.push_back(ts);
  }

  const auto req = root.at("requirements");
  req.require_only({"BLUE", "RED"});
  for (const char* key : {"BLUE", "RED"}) {
    const auto r = req.at(key);
    r.require_only({"weights", "effort_scale", "budget"});
    auto& dst = t.requirements[index(read_side_key(req, key))];
    dst.weight = read_category_map(r.at("weights"), 0, 1, 0.0);
    double sum = 0;
    for (double w : dst.weight) sum += w;
    if (std::abs(sum - 1.0) > 1e-6) r.at("weights").fail(fmt::format("weights must sum to 1, while they sum to {}", sum));
    dst.effort_scale = r.at("effort_scale").as_double_in(0.01, 1000);
    dst.budget = r.at("budget").as_double_in(0.01, 1e6);
  }
  t.exposure = read_category_map(root.at("exposure"), 0, 1, 0.3);

  const auto verbs = root.at("verbs");
  verbs.require_map();
  std::set<std::string> seen;
  for (const auto& k : verbs.keys()) {
    auto c = parse_category(k);
    if (!c) verbs.at(k).fail(fmt::format("unknown category '{}' (expected one of {})", k, category_names()));
    const auto list = verbs.at(k).as_strings();
    for (const auto& v : list)
      if (!seen.insert(v).second) verbs.at(k).fail(fmt::format("verb '{}' appears in more than one category", v));
    t.verbs[index(*c)] = list;
  }
  for (std::size_t i = 0; i < kNumCategories; ++i)
    if (t.verbs[i].empty())
      verbs.fail(fmt::format("category '{}' has no verbs", to_string(static_cast<Category>(i))));

  const auto assets = root.at("assets");
  assets.require_only({"BLUE", "RED"});
  for (const char* key : {"BLUE", "RED"}) {
    const auto list = assets.at(key);
    list.require_sequence();
    if (list.size() == 0) list.fail("must list at least one asset type");
    std::set<std::string> prefixes;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const auto r = list.at(i);
      r.require_only({"type", "prefix", "domain", "role", "capability", "cost", "mobility", "categories", "count"});
      AssetSpec a;
      a.type = r.at("type").as_string();
      a.prefix = r.at("prefix").as_string();
      if (!prefixes.insert(a.prefix).second) r.at("prefix").fail(fmt::format("duplicate prefix '{}'", a.prefix));
      a.domain = r.at("domain").as_string();
      a.role = r.at("role").as_string();
      a.capability = r.at("capability").as_double_in(0, 1);
      a.cost = r.at("cost").as_double_in(0, 1000);
      a.mobility = r.at("mobility").as_double_in(0, 1);
      a.categories = read_categories(r.at("categories"));
      std::tie(a.count_min, a.count_max) = read_range(r.at("count"), 0, 20);
      t.assets[index(read_side_key(assets, key))].push_back(a);
    }
  }

  t.places = root.at("places").as_strings();
  if (t.places.size() < 2) root.at("places").fail("must list at least two places");
  const auto obj = root.at("objectives");
  obj.require_only({"BLUE", "RED"});
  for (const char* key : {"BLUE", "RED"}) {
    auto list = obj.at(key).as_strings();
    if (list.empty()) obj.at(key).fail("must list at least one objective phrase");
    for (std::size_t i = 0; i < list.size(); ++i)
      if (list[i].find("{place}") == std::string::npos) obj.at(key).at(i).fail("objective phrase must contain {place}");
    t.objectives[index(read_side_key(obj, key))] = list;
  }

  const auto bk = root.at("branch_kinds");
  bk.require_sequence();
  for (std::size_t i = 0; i < bk.size(); ++i) {
    const auto r = bk.at(i);
    r.require_only({"kind", "conditions", "categories"});
    BranchKind b;
    b.kind = r.at("kind").as_string();
    b.conditions = r.at("conditions").as_strings();
    if (b.conditions.empty()) r.at("conditions").fail("must list at least one condition");
    b.categories = read_categories(r.at("categories"));
    t.branch_kinds.push_back(b);
  }

  const auto sp = root.at("seed_plans");
  sp.require_only({"count", "chain_length", "branch_probability", "option_length"});
  std::tie(t.seed_plans.count_min, t.seed_plans.count_max) = read_range(sp.at("count"), 1, 20);
  std::tie(t.seed_plans.chain_min, t.seed_plans.chain_max) = read_range(sp.at("chain_length"), 1, 50);
  t.seed_plans.branch_probability = sp.at("branch_probability").as_double_in(0, 1);
  std::tie(t.seed_plans.option_min, t.seed_plans.option_max) = read_range(sp.at("option_length"), 1, 10);

  const auto fr = root.at("framing");
  fr.require_only({"weights", "effects"});
  const auto fw = fr.at("weights");
  fw.require_only({"neutral", "blue_favorable", "red_favorable"});
  const auto fe = fr.at("effects");
  fe.require_only({"neutral", "blue_favorable", "red_favorable"});
  double fsum = 0;
  for (std::size_t i = 0; i < kNumFramings; ++i) {
    const std::string key(to_string(static_cast<Framing>(i)));
    t.framing_weights[i] = fw.has(key) ? fw.at(key).as_double_in(0, 1) : 0.0;
    fsum += t.framing_weights[i];
    if (fe.has(key)) {
      const auto e = fe.at(key);
      e.require_only({"objective_suffix", "added_category"});
      t.framing_effects[i].objective_suffix = e.get_string("objective_suffix", "");
      if (e.has("added_category")) t.framing_effects[i].added_category = read_category(e.at("added_category"));
    }
  }
  if (!(fsum > 0)) fw.fail("framing weights must not all be 0");

  // Every category the BLUE side is asked for must be performable by some BLUE asset, else no plan exists.
  for (auto side : kSides) {
    bool any = false;
    for (const auto& a : t.assets[index(side)]) any = any || a.count_max > 0;
    if (!any) assets.at(std::string(to_string(side))).fail("every asset type has count max 0");
  }
  return t;
}

ScenarioTemplate load_template_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(fmt::format("{}: cannot read template file", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_template(ss.str(), path);
}

}  // namespace advplan
