#include "advplan/core/plan.hpp"

#include <algorithm>

#include "advplan/core/scenario.hpp"

namespace advplan {

int Plan::find_action(std::string_view id) const {
  for (std::size_t i = 0; i < actions.size(); ++i)
    if (same_id(actions[i].id, id)) return static_cast<int>(i);
  return -1;
}

const Asset* Scenario::find_asset(std::string_view asset_id) const {
  for (const auto& a : assets)
    if (same_id(a.id, asset_id)) return &a;
  return nullptr;
}

std::vector<const Asset*> Scenario::assets_of(Side s) const {
  std::vector<const Asset*> out;
  for (const auto& a : assets)
    if (a.side == s) out.push_back(&a);
  return out;
}

bool Scenario::verb_allowed(Category c, std::string_view verb) const {
  const auto& v = verbs[index(c)];
  for (const auto& x : v)
    if (same_id(x, verb)) return true;
  return false;
}

}  // namespace advplan
