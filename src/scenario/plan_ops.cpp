#include "advplan/scenario/plan_ops.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <span>

namespace advplan {

std::vector<const Asset*> able_assets(const Scenario& sc, Side side, Category c) {
  std::vector<const Asset*> able;
  for (const auto& a : sc.assets)
    if (is_able(a, side, c)) able.push_back(&a);
  return able;
}

std::array<bool, kNumCategories> available_categories(const Scenario& sc, Side side) {
  std::array<bool, kNumCategories> ok{};
  for (const auto& a : sc.assets)
    if (a.side == side)
      for (auto c : a.categories) ok[index(c)] = !sc.verbs[index(c)].empty();
  return ok;
}

namespace {
/// pick_asset's draw over the able assets, written into `able` and `w` (room for every asset of the scenario).
const Asset* pick_able(const Scenario& sc, Side side, Category c, Rng& rng, const Asset** able, double* w) {
  std::size_t n = 0;
  for (const auto& a : sc.assets)
    if (is_able(a, side, c)) {
      able[n] = &a;
      w[n++] = pick_weight(a);
    }
  if (n == 0) return nullptr;
  return able[rng.weighted_index(std::span<const double>(w, n))];
}
}  // namespace

const Asset* pick_asset(const Scenario& sc, Side side, Category c, Rng& rng) {
  // The able assets and their weights go on the stack for a scenario of up to 64 assets (per-thread buffers
  // beyond): the samplers call this for every action.
  constexpr std::size_t kStack = 64;
  if (sc.assets.size() <= kStack) {
    std::array<const Asset*, kStack> able;
    std::array<double, kStack> w;
    return pick_able(sc, side, c, rng, able.data(), w.data());
  }
  thread_local std::vector<const Asset*> able;
  thread_local std::vector<double> w;
  able.resize(sc.assets.size());
  w.resize(sc.assets.size());
  return pick_able(sc, side, c, rng, able.data(), w.data());
}

const std::string& pick_verb(const Scenario& sc, Category c, Rng& rng) { return rng.pick(sc.verbs[index(c)]); }

std::string default_target(const Scenario& sc) { return sc.places.empty() ? "" : sc.places.front(); }

std::optional<Action> draw_action(const Scenario& sc, Side side, Category c, Rng& rng, std::string_view verb,
                                  const Asset** drawn) {
  if (drawn) *drawn = nullptr;
  if (sc.verbs[index(c)].empty()) return std::nullopt;
  if (!verb.empty() && !sc.verb_allowed(c, verb)) return std::nullopt;
  const Asset* asset = pick_asset(sc, side, c, rng);
  if (!asset) return std::nullopt;
  if (drawn) *drawn = asset;
  Action a;
  a.asset = asset->id;
  a.category = c;
  a.verb = verb.empty() ? pick_verb(sc, c, rng) : std::string(verb);
  return a;
}

std::string next_action_id(const Plan& plan) {
  for (std::size_t n = plan.actions.size() + 1;; ++n) {
    char buf[24];
    const auto r = fmt::format_to_n(buf, sizeof buf, "a{}", n);
    const std::string_view id(buf, r.size);
    if (plan.find_action(id) < 0) return std::string(id);
  }
}

Action& add_option_action(Plan& plan, const Scenario& sc, Action action) {
  action.id = next_action_id(plan);
  if (const Asset* asset = sc.find_asset(action.asset)) plan.roles[asset->id] = asset->role;
  plan.actions.push_back(std::move(action));
  return plan.actions.back();
}

Action& append_new_action(Plan& plan, const Asset& asset, Action&& action) {
  char buf[24];
  buf[0] = 'a';
  const auto r = std::to_chars(buf + 1, buf + sizeof buf, plan.actions.size() + 1);
  action.id.assign(buf, r.ptr);
  plan.roles.try_emplace(asset.id, asset.role);  // an asset's role is fixed: an existing entry is the same
  plan.actions.push_back(std::move(action));
  return plan.actions.back();
}

Action& insert_action(Plan& plan, const Scenario& sc, Action action, std::size_t chain_pos) {
  Action& added = add_option_action(plan, sc, std::move(action));
  const std::size_t pos = std::min(chain_pos, plan.chain.size());
  plan.chain.insert(plan.chain.begin() + static_cast<std::ptrdiff_t>(pos), added.id);
  return added;
}

}  // namespace advplan
