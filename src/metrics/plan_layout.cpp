#include "advplan/metrics/plan_layout.hpp"

#include <array>
#include <string_view>

#include "metrics/resolved_layout.hpp"

namespace advplan {

std::vector<PlacedAction> layout_plan(const Plan& plan, const Scenario& sc) {
  std::vector<PlacedAction> out;
  layout_plan_into(plan, sc, out);
  return out;
}

namespace {
/// The layout, with each placed action's asset from `asset_of` (its index in plan.actions, the action). With
/// `unique_ids` (a valid plan: no two actions share an id) an action is first looked for where a sampled plan keeps
/// it (the chain's actions first, then the options' in order), and searched for only when it is not there: the
/// only action with that id is the one find_action finds.
template <bool unique_ids, typename AssetOf>
void layout_with(const Plan& plan, std::vector<PlacedAction>& out, AssetOf asset_of) {
  out.clear();
  out.reserve(plan.actions.size());
  std::size_t expected = 0;  // where a sampled plan keeps the next placed action
  auto place = [&](const std::string& id, double pos, double weight, int branch, int option) {
    int i = -1;
    if (unique_ids && expected < plan.actions.size() && same_id(plan.actions[expected].id, id))
      i = static_cast<int>(expected);
    else
      i = plan.find_action(id);
    ++expected;
    if (i < 0) return;
    const Action& a = plan.actions[static_cast<std::size_t>(i)];
    out.push_back({&a, asset_of(static_cast<std::size_t>(i), a), pos, weight, branch < 0, branch, option});
  };
  for (std::size_t i = 0; i < plan.chain.size(); ++i) place(plan.chain[i], static_cast<double>(i), 1.0, -1, -1);
  for (std::size_t b = 0; b < plan.branches.size(); ++b) {
    const auto& br = plan.branches[b];
    double at = 0;
    for (std::size_t i = 0; i < plan.chain.size(); ++i)
      if (plan.chain[i] == br.at) at = static_cast<double>(i);
    const double w = br.options.empty() ? 0.0 : 1.0 / static_cast<double>(br.options.size());
    for (std::size_t k = 0; k < br.options.size(); ++k) {
      const auto& opt = br.options[k];
      for (std::size_t m = 0; m < opt.size(); ++m)
        place(opt[m], at + static_cast<double>(m + 1) / static_cast<double>(opt.size() + 1), w,
              static_cast<int>(b), static_cast<int>(k));
    }
  }
}
}  // namespace

void layout_plan_into(const Plan& plan, const Scenario& sc, std::vector<PlacedAction>& out) {
  layout_with<false>(plan, out, [&](std::size_t, const Action& a) { return sc.find_asset(a.asset); });
}

void detail::layout_resolved_into(const Plan& plan, const Asset* const* assets, std::vector<PlacedAction>& out) {
  layout_with<true>(plan, out, [&](std::size_t i, const Action&) { return assets[i]; });
}

namespace {
constexpr std::array<std::string_view, 7> kStart{"transit", "deploy", "marshal", "prepare", "assess", "scan", "recon"};
constexpr std::array<std::string_view, 8> kEnd{"return",   "withdraw", "hold",    "evade",
                                               "relocate", "continue", "support", "mitigate"};
}  // namespace

bool is_start_verb(std::string_view v) {
  for (auto s : kStart)
    if (s == v) return true;
  return false;
}
bool is_end_verb(std::string_view v) {
  for (auto s : kEnd)
    if (s == v) return true;
  return false;
}

}  // namespace advplan
