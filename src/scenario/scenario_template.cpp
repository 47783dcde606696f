#include "advplan/scenario/scenario_template.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>

#include "advplan/io/atomic_file.hpp"
#include "advplan/io/yaml_reader.hpp"

// Every rule below is written down in docs/TEMPLATES.md ("Loader rules"); a change here changes that list.
namespace advplan {
using io::YamlReader;

namespace {

// ---------------------------------------------------------------------------------------------- vocabularies

constexpr std::array<std::string_view, 4> kTemplateDomains{"land", "sea", "air", "joint"};
constexpr std::array<std::string_view, 8> kTerrainFamilies{"urban", "littoral", "open",   "mountain",
                                                           "mixed", "open-sea", "desert", "forest"};
constexpr std::array<std::string_view, 6> kAssetDomains{"land",  "sea",   "air",
                                                        "cyber", "space", "information"};
constexpr std::array<std::string_view, 3> kBranchKinds{"route", "proceed-or-withdraw", "support-package"};

/// Verbs every template must offer, per category: the council's mitigation map and the worldline metric use
/// them.
struct MandatoryVerbs {
  Category category;
  std::vector<std::string_view> verbs;
};
const MandatoryVerbs kMandatoryVerbs[] = {
    {Category::movement,
     {"transit", "deploy", "relocate", "withdraw", "return", "continue", "evade", "disperse"}},
    {Category::information, {"scan", "recon", "assess"}},
    {Category::cyber, {"oob-comms"}},
    {Category::sustainment, {"marshal", "support", "reroute-supply"}},
    {Category::protection, {"harden", "hold", "mitigate"}},
    {Category::command, {"prepare"}},
    {Category::public_information, {"comm-cell"}},
    {Category::deception, {"decoy", "counter-recon"}},
};

/// Categories each side's asset kinds must cover together (the council's proposers and mitigations need
/// them).
const std::array<std::vector<Category>, 2> kRequiredCoverage{
    std::vector<Category>{Category::movement, Category::information, Category::cyber, Category::sustainment,
                          Category::protection, Category::deception, Category::public_information,
                          Category::command, Category::fires},
    std::vector<Category>{Category::movement, Category::fires, Category::cyber, Category::sustainment,
                          Category::information, Category::public_information, Category::deception}};

constexpr double kSumTolerance = 1e-9;

template <std::size_t N>
std::string join(const std::array<std::string_view, N>& words) {
  std::string out;
  for (auto w : words) out += (out.empty() ? "" : ", ") + std::string(w);
  return out;
}

std::string join(const std::vector<Category>& cats) {
  std::string out;
  for (auto c : cats) out += (out.empty() ? "" : ", ") + std::string(to_string(c));
  return out;
}

// ---------------------------------------------------------------------------------------------- small
// readers

/// Lowercase words joined by single hyphens (`reroute-supply`); digits allowed in words when `digits`.
bool hyphenated_lowercase(std::string_view s, bool digits) {
  if (s.empty() || s.front() == '-' || s.back() == '-') return false;
  char prev = '-';
  for (char ch : s) {
    const bool word = (ch >= 'a' && ch <= 'z') || (digits && ch >= '0' && ch <= '9');
    if (!word && !(ch == '-' && prev != '-')) return false;
    prev = ch;
  }
  return true;
}

template <std::size_t N>
std::string read_one_of(const YamlReader& r, const std::array<std::string_view, N>& allowed,
                        const char* what) {
  const std::string s = r.as_string();
  if (std::find(allowed.begin(), allowed.end(), s) == allowed.end())
    r.fail(fmt::format("unknown {} '{}' (expected one of {})", what, s, join(allowed)));
  return s;
}

std::string read_nonempty_string(const YamlReader& r) {
  std::string s = r.as_string();
  if (s.empty()) r.fail("must not be empty");
  return s;
}

/// A finite number > 0 (costs, budgets, effort scales have no upper bound).
double read_positive(const YamlReader& r) {
  const double v = r.as_double();
  if (!(v > 0) || !std::isfinite(v)) r.fail(fmt::format("must be a positive number, got {}", v));
  return v;
}

/// A list of `lo`..`hi` non-empty strings.
std::vector<std::string> read_strings(const YamlReader& r, std::size_t lo, std::size_t hi, const char* what) {
  r.require_sequence();
  if (r.size() < lo || r.size() > hi)
    r.fail(fmt::format("must list {} to {} {}, got {}", lo, hi, what, r.size()));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < r.size(); ++i) out.push_back(read_nonempty_string(r.at(i)));
  return out;
}

Category read_category(const YamlReader& r) {
  const std::string s = r.as_string();
  auto c = parse_category(s);
  if (!c) r.fail(fmt::format("unknown category '{}' (expected one of {})", s, category_names()));
  return *c;
}

/// A list of `lo`..`hi` distinct categories.
std::vector<Category> read_categories(const YamlReader& r, std::size_t lo, std::size_t hi) {
  r.require_sequence();
  if (r.size() < lo || r.size() > hi)
    r.fail(fmt::format("must list {} to {} categories, got {}", lo, hi, r.size()));
  std::vector<Category> out;
  for (std::size_t i = 0; i < r.size(); ++i) {
    const Category c = read_category(r.at(i));
    if (std::find(out.begin(), out.end(), c) != out.end())
      r.at(i).fail(fmt::format("category '{}' is listed twice", to_string(c)));
    out.push_back(c);
  }
  return out;
}

/// A map category -> number in [lo, hi]. With `all_ten`, every category must be named; otherwise an unnamed
/// category gets `dflt`.
std::array<double, kNumCategories> read_category_map(const YamlReader& r, double lo, double hi, bool all_ten,
                                                     double dflt) {
  r.require_map();
  std::array<double, kNumCategories> out;
  out.fill(dflt);
  for (const auto& k : r.keys()) {
    auto c = parse_category(k);
    if (!c) r.at(k).fail(fmt::format("unknown category '{}' (expected one of {})", k, category_names()));
    out[index(*c)] = r.at(k).as_double_in(lo, hi);
  }
  if (all_ten)
    for (std::size_t i = 0; i < kNumCategories; ++i)
      if (!r.has(std::string(to_string(static_cast<Category>(i)))))
        r.fail(fmt::format("missing category '{}' (all ten categories must be named)",
                           to_string(static_cast<Category>(i))));
  return out;
}

/// `[min, max]` integers with lo <= min <= max <= hi.
std::pair<int, int> read_range(const YamlReader& r, int lo, int hi) {
  r.require_sequence();
  if (r.size() != 2) r.fail("expected a two-element list [min, max]");
  const int a = static_cast<int>(r.at(0).as_int_in(lo, hi));
  const int b = static_cast<int>(r.at(1).as_int_in(lo, hi));
  if (a > b) r.fail(fmt::format("min {} is greater than max {}", a, b));
  return {a, b};
}

void require_sum_one(const YamlReader& r, double sum) {
  if (std::abs(sum - 1.0) > kSumTolerance)
    r.fail(fmt::format("weights must sum to 1, while they sum to {}", sum));
}

Side read_side_key(const YamlReader& parent, const std::string& key) {
  auto s = parse_side(key);
  if (!s) parent.at(key).fail("expected BLUE or RED");
  return *s;
}

// ---------------------------------------------------------------------------------------------- the steps

void read_identity(const YamlReader& root, ScenarioTemplate& t) {
  t.id = root.at("id").as_string();
  if (!hyphenated_lowercase(t.id, true))
    root.at("id").fail(fmt::format("id '{}' must be lowercase letters or digits joined by hyphens", t.id));
  t.name = read_nonempty_string(root.at("name"));
  t.domain = read_one_of(root.at("domain"), kTemplateDomains, "domain");
}

void read_terrains(const YamlReader& root, ScenarioTemplate& t) {
  const auto terr = root.at("terrain_families");
  terr.require_sequence();
  if (terr.size() < 2 || terr.size() > 3)
    terr.fail(fmt::format("must list 2 to 3 terrain families, got {}", terr.size()));
  double sum = 0;
  for (std::size_t i = 0; i < terr.size(); ++i) {
    const auto r = terr.at(i);
    r.require_only({"family", "weight", "mobility", "visibility", "exposure", "category_modifiers"});
    TerrainSpec ts;
    ts.terrain.family = read_one_of(r.at("family"), kTerrainFamilies, "terrain family");
    for (const auto& earlier : t.terrains)
      if (earlier.terrain.family == ts.terrain.family)
        r.at("family").fail(fmt::format("terrain family '{}' is listed twice", ts.terrain.family));
    ts.weight = r.at("weight").as_double_in(0, 1);
    sum += ts.weight;
    ts.terrain.mobility = r.at("mobility").as_double_in(0.5, 1.5);
    ts.terrain.visibility = r.at("visibility").as_double_in(0.5, 1.5);
    ts.terrain.exposure = r.at("exposure").as_double_in(0.5, 1.5);
    ts.terrain.category_modifier = read_category_map(r.at("category_modifiers"), 0.5, 1.5, false, 1.0);
    t.terrains.push_back(ts);
  }
  require_sum_one(terr, sum);
}

void read_requirements(const YamlReader& root, ScenarioTemplate& t) {
  const auto req = root.at("requirements");
  req.require_only({"BLUE", "RED"});
  for (const char* key : {"BLUE", "RED"}) {
    const auto r = req.at(key);
    r.require_only({"weights", "effort_scale", "budget"});
    auto& dst = t.requirements[index(read_side_key(req, key))];
    const auto w = r.at("weights");
    dst.weight = read_category_map(w, 0, 1, true, 0.0);
    double sum = 0;
    for (std::size_t i = 0; i < kNumCategories; ++i) {
      const double hundredths = dst.weight[i] * 100;
      if (std::abs(hundredths - std::round(hundredths)) > 1e-6)
        w.at(std::string(to_string(static_cast<Category>(i))))
            .fail(fmt::format("must be written with at most two decimals, got {}", dst.weight[i]));
      sum += dst.weight[i];
    }
    require_sum_one(w, sum);
    dst.effort_scale = read_positive(r.at("effort_scale"));
    dst.budget = read_positive(r.at("budget"));
  }
  t.exposure = read_category_map(root.at("exposure"), 0, 1, true, 0.0);
}

void read_verbs(const YamlReader& root, ScenarioTemplate& t) {
  const auto verbs = root.at("verbs");
  verbs.require_map();
  std::set<std::string> seen;
  for (const auto& k : verbs.keys()) {
    auto c = parse_category(k);
    if (!c) verbs.at(k).fail(fmt::format("unknown category '{}' (expected one of {})", k, category_names()));
    const auto list = verbs.at(k);
    const auto words = list.as_strings();
    for (std::size_t i = 0; i < words.size(); ++i) {
      if (!hyphenated_lowercase(words[i], false))
        list.at(i).fail(fmt::format("verb '{}' must be lowercase words joined by hyphens", words[i]));
      if (std::find(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(i), words[i]) !=
          words.begin() + static_cast<std::ptrdiff_t>(i))
        list.at(i).fail(fmt::format("verb '{}' is listed twice", words[i]));
      if (!seen.insert(words[i]).second)
        list.at(i).fail(fmt::format("verb '{}' appears in more than one category", words[i]));
    }
    t.verbs[index(*c)] = words;
  }
  for (std::size_t i = 0; i < kNumCategories; ++i)
    if (t.verbs[i].empty())
      verbs.fail(fmt::format("category '{}' has no verbs", to_string(static_cast<Category>(i))));
  for (const auto& m : kMandatoryVerbs) {
    const auto& have = t.verbs[index(m.category)];
    for (auto v : m.verbs)
      if (std::find(have.begin(), have.end(), v) == have.end()) {
        std::string all;
        for (auto x : m.verbs) all += (all.empty() ? "" : ", ") + std::string(x);
        verbs.at(std::string(to_string(m.category)))
            .fail(fmt::format("must include the mandatory verb '{}' (mandatory here: {})", v, all));
      }
  }
}

AssetSpec read_asset(const YamlReader& r, const std::vector<AssetSpec>& earlier) {
  r.require_only(
      {"type", "prefix", "domain", "role", "capability", "cost", "mobility", "categories", "count"});
  AssetSpec a;
  a.type = r.at("type").as_string();
  if (!hyphenated_lowercase(a.type, false))
    r.at("type").fail(fmt::format("type '{}' must be lowercase words joined by hyphens", a.type));
  a.prefix = r.at("prefix").as_string();
  if (a.prefix.empty() || a.prefix.size() > 5 ||
      !std::all_of(a.prefix.begin(), a.prefix.end(), [](char ch) { return ch >= 'a' && ch <= 'z'; }))
    r.at("prefix").fail(fmt::format("prefix '{}' must be 1 to 5 lowercase letters", a.prefix));
  for (const auto& e : earlier) {
    if (e.type == a.type) r.at("type").fail(fmt::format("type '{}' is listed twice", a.type));
    if (e.prefix == a.prefix) r.at("prefix").fail(fmt::format("duplicate prefix '{}'", a.prefix));
  }
  a.domain = read_one_of(r.at("domain"), kAssetDomains, "asset domain");
  a.role = read_nonempty_string(r.at("role"));
  a.capability = r.at("capability").as_double_in(0, 1);
  a.cost = read_positive(r.at("cost"));
  a.mobility = r.at("mobility").as_double_in(0, 1);
  a.categories = read_categories(r.at("categories"), 2, 3);
  std::tie(a.count_min, a.count_max) = read_range(r.at("count"), 1, 4);
  return a;
}

void read_assets(const YamlReader& root, ScenarioTemplate& t) {
  const auto assets = root.at("assets");
  assets.require_only({"BLUE", "RED"});
  for (const char* key : {"BLUE", "RED"}) {
    const auto list = assets.at(key);
    list.require_sequence();
    if (list.size() == 0) list.fail("must list at least one asset type");
    auto& dst = t.assets[index(read_side_key(assets, key))];
    for (std::size_t i = 0; i < list.size(); ++i) dst.push_back(read_asset(list.at(i), dst));
  }
}

void read_places_and_objectives(const YamlReader& root, ScenarioTemplate& t) {
  const auto places = root.at("places");
  t.places = read_strings(places, 7, 10, "places");
  for (std::size_t i = 0; i < t.places.size(); ++i) {
    const auto& p = t.places[i];
    if (std::any_of(p.begin(), p.end(), [](char ch) { return ch >= 'A' && ch <= 'Z'; }))
      places.at(i).fail(fmt::format("place '{}' must be lowercase", p));
    if (std::find(t.places.begin(), t.places.begin() + static_cast<std::ptrdiff_t>(i), p) !=
        t.places.begin() + static_cast<std::ptrdiff_t>(i))
      places.at(i).fail(fmt::format("place '{}' is listed twice", p));
  }

  const auto obj = root.at("objectives");
  obj.require_only({"BLUE", "RED"});
  for (const char* key : {"BLUE", "RED"}) {
    const auto list = obj.at(key);
    auto phrases = read_strings(list, 2, 3, "objective phrases");
    for (std::size_t i = 0; i < phrases.size(); ++i) {
      const std::string& ph = phrases[i];
      if (ph.find("{place}") == std::string::npos) list.at(i).fail("objective phrase must contain {place}");
      for (auto open = ph.find('{'); open != std::string::npos; open = ph.find('{', open + 1)) {
        const auto close = ph.find('}', open);
        const std::string holder =
            ph.substr(open, close == std::string::npos ? std::string::npos : close - open + 1);
        if (holder != "{place}" && holder != "{place2}")
          list.at(i).fail(
              fmt::format("unknown placeholder '{}' (only {{place}} and {{place2}} are filled)", holder));
      }
    }
    t.objectives[index(read_side_key(obj, key))] = phrases;
  }
}

void read_branch_kinds(const YamlReader& root, ScenarioTemplate& t) {
  const auto bk = root.at("branch_kinds");
  bk.require_sequence();
  if (bk.size() != kBranchKinds.size())
    bk.fail(fmt::format("must list exactly the three branch kinds {}, got {} entries", join(kBranchKinds),
                        bk.size()));
  for (std::size_t i = 0; i < bk.size(); ++i) {
    const auto r = bk.at(i);
    r.require_only({"kind", "conditions", "categories"});
    BranchKind b;
    b.kind = r.at("kind").as_string();
    if (b.kind != kBranchKinds[i])
      r.at("kind").fail(fmt::format("expected '{}' (the three kinds come in the order {}), got '{}'",
                                    kBranchKinds[i], join(kBranchKinds), b.kind));
    b.conditions = read_strings(r.at("conditions"), 2, 3, "conditions");
    b.categories = read_categories(r.at("categories"), 1, 3);
    t.branch_kinds.push_back(b);
  }
}

void read_seed_plans(const YamlReader& root, ScenarioTemplate& t) {
  const auto sp = root.at("seed_plans");
  sp.require_only({"count", "chain_length", "branch_probability", "option_length"});
  std::tie(t.seed_plans.count_min, t.seed_plans.count_max) = read_range(sp.at("count"), 2, 3);
  std::tie(t.seed_plans.chain_min, t.seed_plans.chain_max) = read_range(sp.at("chain_length"), 3, 8);
  t.seed_plans.branch_probability = sp.at("branch_probability").as_double_in(0.3, 0.5);
  std::tie(t.seed_plans.option_min, t.seed_plans.option_max) = read_range(sp.at("option_length"), 1, 2);
}

void read_framing(const YamlReader& root, ScenarioTemplate& t) {
  const auto fr = root.at("framing");
  fr.require_only({"weights", "effects"});
  const auto fw = fr.at("weights");
  fw.require_only({"neutral", "blue_favorable", "red_favorable"});
  const auto fe = fr.at("effects");
  fe.require_only({"neutral", "blue_favorable", "red_favorable"});
  double sum = 0;
  for (std::size_t i = 0; i < kNumFramings; ++i) {
    const auto framing = static_cast<Framing>(i);
    const std::string key(to_string(framing));
    t.framing_weights[i] = fw.at(key).as_double_in(0, 1);
    sum += t.framing_weights[i];
    const auto e = fe.at(key);
    e.require_only({"objective_suffix", "added_category"});
    t.framing_effects[i].objective_suffix = e.at("objective_suffix").as_string();
    if (framing == Framing::neutral && !t.framing_effects[i].objective_suffix.empty())
      e.at("objective_suffix")
          .fail(fmt::format("must be \"\" for the neutral framing, got '{}'",
                            t.framing_effects[i].objective_suffix));
    if (framing == Framing::blue_favorable)
      t.framing_effects[i].added_category = read_category(e.at("added_category"));
    else if (e.has("added_category"))
      e.at("added_category").fail("only the blue_favorable framing may add a category");
  }
  require_sum_one(fw, sum);
}

/// Cross-references: each side's asset kinds cover the categories the council needs; every category BLUE is
/// asked for, every branch category and the framing's added category can be performed by a BLUE asset kind
/// (else the generator would silently drop it).
void check_references(const YamlReader& root, const ScenarioTemplate& t) {
  std::array<std::array<bool, kNumCategories>, 2> covered{};
  for (auto side : kSides)
    for (const auto& a : t.assets[index(side)])
      for (auto c : a.categories) covered[index(side)][index(c)] = true;
  const auto blue_can = [&](Category c) { return covered[index(Side::Blue)][index(c)]; };

  for (auto side : kSides)
    for (auto c : kRequiredCoverage[index(side)])
      if (!covered[index(side)][index(c)])
        root.at("assets")
            .at(std::string(to_string(side)))
            .fail(fmt::format("no {} asset kind performs '{}' ({} must cover {})", to_string(side),
                              to_string(c), to_string(side), join(kRequiredCoverage[index(side)])));

  const auto blue_weights = root.at("requirements").at("BLUE").at("weights");
  for (std::size_t i = 0; i < kNumCategories; ++i) {
    const auto c = static_cast<Category>(i);
    const double w = t.requirements[index(Side::Blue)].weight[i];
    if (w > 0 && !blue_can(c))
      blue_weights.at(std::string(to_string(c)))
          .fail(fmt::format("weight {} but no BLUE asset kind performs '{}'", w, to_string(c)));
  }

  const auto bk = root.at("branch_kinds");
  for (std::size_t i = 0; i < t.branch_kinds.size(); ++i)
    for (std::size_t j = 0; j < t.branch_kinds[i].categories.size(); ++j) {
      const Category c = t.branch_kinds[i].categories[j];
      if (!blue_can(c))
        bk.at(i)
            .at("categories")
            .at(j)
            .fail(fmt::format("no BLUE asset kind performs '{}', so no seed plan branch could use it",
                              to_string(c)));
    }

  const auto& added = t.framing_effects[static_cast<std::size_t>(Framing::blue_favorable)].added_category;
  if (added && !blue_can(*added))
    root.at("framing")
        .at("effects")
        .at("blue_favorable")
        .at("added_category")
        .fail(fmt::format("no BLUE asset kind performs '{}', so the framing would add nothing",
                          to_string(*added)));
}

void read_rubric(const YamlReader& root, ScenarioTemplate& t) {
  if (!root.has("rubric")) return;
  const auto rb = root.at("rubric");
  rb.require_only({"items"});
  const auto items = rb.at("items");
  const auto names = items.as_strings();
  if (names.empty()) items.fail("the list is empty (omit the rubric section instead)");
  const auto& kinds = rubric_item_kinds();
  std::set<std::string> seen;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (std::find(kinds.begin(), kinds.end(), names[i]) == kinds.end()) {
      std::string all;
      for (const auto& k : kinds) all += (all.empty() ? "" : ", ") + k;
      items.at(i).fail(fmt::format("unknown rubric item kind '{}' (expected one of {})", names[i], all));
    }
    if (!seen.insert(names[i]).second) items.at(i).fail(fmt::format("rubric item kind '{}' is listed twice", names[i]));
  }
  t.rubric_items = names;
}

}  // namespace

const std::vector<std::string>& rubric_item_kinds() {
  static const std::vector<std::string> kinds{"objective_names_target", "exposed_steps_covered",
                                              "information_before_exposure", "fires_before_information",
                                              "sustainment_present", "branch_contingency", "single_asset_overload",
                                              "civil_engaged"};
  return kinds;
}

ScenarioTemplate parse_template(const std::string& yaml_text, const std::string& file) {
  const YamlReader root(io::parse_yaml(yaml_text, file), file);
  root.require_only({"id", "name", "domain", "terrain_families", "requirements", "exposure", "verbs",
                     "assets", "places", "objectives", "branch_kinds", "seed_plans", "framing", "rubric"});
  ScenarioTemplate t;
  t.source = file;
  read_identity(root, t);
  read_terrains(root, t);
  read_requirements(root, t);
  read_verbs(root, t);
  read_assets(root, t);
  read_places_and_objectives(root, t);
  read_branch_kinds(root, t);
  read_seed_plans(root, t);
  read_framing(root, t);
  read_rubric(root, t);
  check_references(root, t);
  return t;
}

ScenarioTemplate load_template_file(const std::string& path) { return parse_template(io::read_text_file(path, io::kMaxDocumentBytes), path); }

}  // namespace advplan
