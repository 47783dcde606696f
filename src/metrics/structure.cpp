#include "advplan/metrics/structure.hpp"

#include <map>
#include <set>
#include <tuple>

#include "advplan/metrics/plan_layout.hpp"

namespace advplan {

double path_optionality(const Plan& plan) {
  if (plan.chain.empty()) return 0.0;
  std::size_t with_branch = 0;
  for (const auto& step : plan.chain) {
    for (const auto& br : plan.branches)
      if (br.at == step) {
        ++with_branch;
        break;
      }
  }
  return static_cast<double>(with_branch) / static_cast<double>(plan.chain.size());
}

namespace {
/// Every action event: chain actions then option actions, as referenced (ids resolved through plan.actions).
template <typename F>
void for_each_event(const Plan& plan, F&& f) {
  auto visit = [&](const std::string& id) {
    const int i = plan.find_action(id);
    if (i >= 0) f(plan.actions[static_cast<std::size_t>(i)]);
  };
  for (const auto& id : plan.chain) visit(id);
  for (const auto& br : plan.branches)
    for (const auto& opt : br.options)
      for (const auto& id : opt) visit(id);
}
}  // namespace

double vertex_parsimony(const Plan& plan) {
  std::set<std::tuple<std::string, std::string, Category>> unique;
  std::size_t total = 0;
  for_each_event(plan, [&](const Action& a) {
    unique.emplace(a.asset, a.verb, a.category);
    ++total;
  });
  return total == 0 ? 1.0 : static_cast<double>(unique.size()) / static_cast<double>(total);
}

double worldline_completion(const Plan& plan) {
  std::map<std::string, std::pair<bool, bool>> per_asset;  // asset -> (has start, has end)
  for_each_event(plan, [&](const Action& a) {
    auto& [s, e] = per_asset[a.asset];
    s = s || is_start_verb(a.verb);
    e = e || is_end_verb(a.verb);
  });
  if (per_asset.empty()) return 0.0;
  std::size_t complete = 0;
  for (const auto& [asset, se] : per_asset)
    if (se.first && se.second) ++complete;
  return static_cast<double>(complete) / static_cast<double>(per_asset.size());
}

StructureParts structure(const Plan& plan) {
  return {path_optionality(plan), vertex_parsimony(plan), worldline_completion(plan)};
}

}  // namespace advplan
