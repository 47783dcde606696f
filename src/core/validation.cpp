#include "advplan/core/validation.hpp"
#include "core/validation_reference.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <array>
#include <unordered_map>
#include <unordered_set>

#include "advplan/core/action_graph.hpp"
#include "advplan/core/plan_json.hpp"
#include "advplan/core/untrusted.hpp"
#include "core/plan_text.hpp"
#include "core/resolved_plan.hpp"
#include "core/thread_buffer.hpp"

namespace advplan {

std::string PlanParse::summary() const {
  std::string out;
  for (const auto& v : violations) {
    if (!out.empty()) out += "; ";
    out += v.str();
  }
  return out;
}

namespace {

/// The fast acceptance check of validate_plan: true exactly when the full check (validate_impl, the oracle)
/// finds nothing, without building strings or the Boost graph, and allocation-free in steady state (the
/// scratch buffers are per thread and keep their capacity). It does not need the graph: when ids are unique and
/// defined, the chain is non-empty and every action is placed exactly once (in the chain, or in one option of a
/// branch whose `at` is a chain step), every edge of the action graph goes forward along the chain (an option
/// leaves its `at` and rejoins the next chain step), so the graph is acyclic and every action is reachable from
/// the first chain step. tests/core/validation_test.cpp checks the equivalence on thousands of corrupted plans.
bool valid_fast(const Plan& plan, const Scenario& sc, std::optional<Side> expected_side,
                const Asset** resolved = nullptr) {
  if (expected_side && plan.side != *expected_side) return false;
  if (plan.objective.empty() || plan.chain.empty()) return false;
  struct Scratch {
    std::vector<std::pair<std::string_view, std::uint32_t>> ids;  // sorted by id
    std::vector<unsigned char> placed, in_chain;
  };
  thread_local Scratch tls_scratch;
  Scratch& s = detail::bound(tls_scratch);  // src/core/thread_buffer.hpp
  const std::size_t n = plan.actions.size();
  AssetLookup assets(sc);
  s.ids.clear();
  for (std::size_t i = 0; i < n; ++i) {
    const Action& a = plan.actions[i];
    if (a.id.empty() || a.priority < 1 || a.priority > 5) return false;
    const Asset* asset = assets.find(a.asset);
    if (!asset || asset->side != plan.side) return false;
    if (!a.verb.empty() && !sc.verb_allowed(a.category, a.verb)) return false;
    if (resolved) resolved[i] = asset;
    s.ids.emplace_back(a.id, static_cast<std::uint32_t>(i));
  }
  // Short plans (all the samplers make) are checked by scans with same_id; longer ones by sorting the ids.
  constexpr std::size_t kScan = 32;
  const bool scan = n <= kScan;
  if (scan) {
    for (std::size_t i = 1; i < n; ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (same_id(s.ids[i].first, s.ids[j].first)) return false;  // duplicate id
  } else {
    std::sort(s.ids.begin(), s.ids.end());
    for (std::size_t i = 1; i < s.ids.size(); ++i)
      if (s.ids[i].first == s.ids[i - 1].first) return false;  // duplicate id
  }
  for (const auto& [asset_id, role] : plan.roles) {
    const Asset* asset = assets.find(asset_id);
    if (!asset || asset->side != plan.side) return false;
  }
  auto lookup = [&](std::string_view id) -> long {
    if (scan) {
      for (std::size_t i = 0; i < n; ++i)
        if (same_id(s.ids[i].first, id)) return static_cast<long>(i);
      return -1;
    }
    auto it = std::lower_bound(s.ids.begin(), s.ids.end(), id, [](const auto& e, std::string_view v) { return e.first < v; });
    return it != s.ids.end() && it->first == id ? static_cast<long>(it->second) : -1;
  };
  s.placed.assign(n, 0);
  s.in_chain.assign(n, 0);
  for (const auto& id : plan.chain) {
    const long i = lookup(id);
    if (i < 0 || s.placed[static_cast<std::size_t>(i)]++) return false;
    s.in_chain[static_cast<std::size_t>(i)] = 1;
  }
  for (const auto& br : plan.branches) {
    const long at = lookup(br.at);
    if (at < 0 || !s.in_chain[static_cast<std::size_t>(at)] || br.options.size() < 2) return false;
    for (const auto& opt : br.options) {
      if (opt.empty()) return false;
      for (const auto& id : opt) {
        const long i = lookup(id);
        if (i < 0 || s.in_chain[static_cast<std::size_t>(i)] || s.placed[static_cast<std::size_t>(i)]++) return false;
      }
    }
  }
  for (std::size_t i = 0; i < n; ++i)
    if (!s.placed[i]) return false;  // not reachable from the first chain step
  return true;
}

std::vector<Violation> validate_impl(const Plan& plan, const Scenario& sc, std::optional<Side> expected_side,
                                     const std::vector<std::size_t>& skip_verb) {
  std::vector<Violation> out;
  if (expected_side && plan.side != *expected_side)
    out.push_back({"side", fmt::format("plan side is {} but {} was expected", to_string(plan.side), to_string(*expected_side))});
  if (plan.objective.empty()) out.push_back({"objective", "must not be empty"});

  // Ids: unique and defined.
  std::unordered_map<std::string, std::size_t> first_def;
  for (std::size_t i = 0; i < plan.actions.size(); ++i) {
    const auto& a = plan.actions[i];
    const std::string path = fmt::format("actions[{}]", i);
    if (a.id.empty()) out.push_back({path + ".id", "must not be empty"});
    auto [it, fresh] = first_def.emplace(a.id, i);
    if (!fresh) out.push_back({path + ".id", fmt::format("duplicate id \"{}\" (first defined at actions[{}])", a.id, it->second)});
    const Asset* asset = sc.find_asset(a.asset);
    if (!asset)
      out.push_back({path + ".asset", fmt::format("unknown asset \"{}\"", a.asset)});
    else if (asset->side != plan.side)
      out.push_back({path + ".asset", fmt::format("asset \"{}\" belongs to {}, not to the plan's side {}", a.asset,
                                                  to_string(asset->side), to_string(plan.side))});
    if (a.priority < 1 || a.priority > 5)
      out.push_back({path + ".priority", fmt::format("priority {} is outside 1..5", a.priority)});
    const bool category_unknown = std::find(skip_verb.begin(), skip_verb.end(), i) != skip_verb.end();
    if (!category_unknown && !a.verb.empty() && !sc.verb_allowed(a.category, a.verb))
      out.push_back({path + ".verb", fmt::format("unknown verb \"{}\" for category {}", a.verb, to_string(a.category))});
  }
  for (const auto& [asset_id, role] : plan.roles) {
    const Asset* asset = sc.find_asset(asset_id);
    if (!asset)
      out.push_back({"roles." + asset_id, fmt::format("unknown asset \"{}\"", asset_id)});
    else if (asset->side != plan.side)
      out.push_back({"roles." + asset_id, fmt::format("asset \"{}\" belongs to {}, not to the plan's side {}", asset_id,
                                                      to_string(asset->side), to_string(plan.side))});
  }

  // References: every chain and option entry names a defined action; each action is placed exactly once.
  std::unordered_map<std::string, std::string> placed;  // id -> path of its first placement
  auto place = [&](const std::string& id, const std::string& path) {
    if (!first_def.contains(id)) {
      out.push_back({path, fmt::format("dangling reference to undefined action \"{}\"", id)});
      return;
    }
    auto [it, fresh] = placed.emplace(id, path);
    if (!fresh) out.push_back({path, fmt::format("action \"{}\" is placed twice (also at {})", id, it->second)});
  };
  if (plan.chain.empty()) out.push_back({"chain", "must hold at least one action"});
  for (std::size_t i = 0; i < plan.chain.size(); ++i) place(plan.chain[i], fmt::format("chain[{}]", i));
  std::unordered_set<std::string> chain_set(plan.chain.begin(), plan.chain.end());
  for (std::size_t b = 0; b < plan.branches.size(); ++b) {
    const auto& br = plan.branches[b];
    const std::string path = fmt::format("branches[{}]", b);
    if (!chain_set.contains(br.at))
      out.push_back({path + ".at", fmt::format("dangling reference: \"{}\" is not a chain step", br.at)});
    if (br.options.size() < 2) out.push_back({path + ".options", "a branch needs at least two options"});
    for (std::size_t k = 0; k < br.options.size(); ++k) {
      if (br.options[k].empty()) out.push_back({fmt::format("{}.options[{}]", path, k), "an option must not be empty"});
      for (std::size_t m = 0; m < br.options[k].size(); ++m) {
        const auto& id = br.options[k][m];
        const std::string p = fmt::format("{}.options[{}][{}]", path, k, m);
        if (chain_set.contains(id))
          out.push_back({p, fmt::format("action \"{}\" is a chain step; options hold actions outside the chain", id)});
        place(id, p);
      }
    }
  }

  // Graph: acyclic, every action reachable from the first chain step.
  const ActionGraph g = build_action_graph(plan);
  for (auto v : cycle_vertices(g))
    out.push_back({fmt::format("actions[{}]", v), fmt::format("action \"{}\" is on a cycle", g.ids[v])});
  if (!plan.chain.empty()) {
    auto it = first_def.find(plan.chain.front());
    if (it != first_def.end()) {
      for (auto v : unreachable_from(g, it->second)) {
        if (first_def.at(g.ids[v]) != v) continue;  // duplicate definitions are already reported
        out.push_back({fmt::format("actions[{}]", v),
                       fmt::format("action \"{}\" is not reachable from the first chain step", g.ids[v])});
      }
    }
  }
  return out;
}

}  // namespace

std::vector<Violation> validate_plan(const Plan& plan, const Scenario& sc, std::optional<Side> expected_side) {
  if (valid_fast(plan, sc, expected_side)) return {};
  return validate_impl(plan, sc, expected_side, {});
}

bool detail::accepts_resolving(const Plan& plan, const Scenario& sc, std::optional<Side> expected_side,
                               const Asset** assets) {
  return valid_fast(plan, sc, expected_side, assets);
}

std::vector<Violation> validate_plan_reference(const Plan& plan, const Scenario& sc, std::optional<Side> expected_side) {
  return validate_impl(plan, sc, expected_side, {});
}

PlanParse parse_plan_json(const nlohmann::json& j, const Scenario& scenario, std::optional<Side> expected_side) {
  PlanParse res;
  std::vector<std::size_t> unknown_category;
  res.plan = plan_from_json(j, res.violations, &unknown_category);
  if (res.plan && !(unknown_category.empty() && valid_fast(*res.plan, scenario, expected_side))) {
    auto more = validate_impl(*res.plan, scenario, expected_side, unknown_category);
    res.violations.insert(res.violations.end(), more.begin(), more.end());
  }
  return res;
}

PlanParse detail::validated_plan_parse(Plan plan, const Scenario& sc, std::optional<Side> expected_side) {
  PlanParse res;
  res.plan = std::move(plan);
  if (!valid_fast(*res.plan, sc, expected_side)) res.violations = validate_impl(*res.plan, sc, expected_side, {});
  return res;
}

PlanParse parse_plan_text(std::string_view text, const Scenario& scenario, std::optional<Side> expected_side) {
  PlanParse res;
  nlohmann::json j;
  if (const std::string err = untrusted::parse_json_bounded(text, j); !err.empty()) {
    res.violations.push_back({"", err});
    return res;
  }
  return parse_plan_json(j, scenario, expected_side);
}

}  // namespace advplan
