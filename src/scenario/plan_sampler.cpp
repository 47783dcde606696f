#include "advplan/scenario/plan_sampler.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>

namespace advplan {

const Asset* pick_asset(const Scenario& sc, Side side, Category c, Rng& rng) {
  std::vector<const Asset*> able;
  std::vector<double> w;
  for (const auto& a : sc.assets) {
    if (a.side != side) continue;
    for (auto ac : a.categories)
      if (ac == c) {
        able.push_back(&a);
        w.push_back(0.2 + a.capability);
        break;
      }
  }
  if (able.empty()) return nullptr;
  return able[rng.weighted_index(w)];
}

std::string next_action_id(const Plan& plan) {
  std::set<std::string> used;
  for (const auto& a : plan.actions) used.insert(a.id);
  for (std::size_t n = plan.actions.size() + 1;; ++n) {
    std::string id = fmt::format("a{}", n);
    if (!used.contains(id)) return id;
  }
}

namespace {

std::array<bool, kNumCategories> available_categories(const Scenario& sc, Side side) {
  std::array<bool, kNumCategories> ok{};
  for (const auto& a : sc.assets)
    if (a.side == side)
      for (auto c : a.categories) ok[index(c)] = !sc.verbs[index(c)].empty();
  return ok;
}

Action make_action(const Scenario& sc, Side side, Category c, Rng& rng, std::string id) {
  Action a;
  a.id = std::move(id);
  a.category = c;
  a.asset = pick_asset(sc, side, c, rng)->id;
  const auto& verbs = sc.verbs[index(c)];
  a.verb = verbs[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(verbs.size()) - 1))];
  if (!sc.places.empty())
    a.target = sc.places[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(sc.places.size()) - 1))];
  a.priority = static_cast<int>(rng.uniform_int(1, 5));
  return a;
}

}  // namespace

Plan sample_plan(const Scenario& sc, Side side, Rng& rng, const SampleOptions& opts, const std::string& plan_id) {
  Plan p;
  p.plan_id = plan_id;
  p.side = side;
  p.objective = side == Side::Blue ? sc.blue_objective : sc.red_objective;
  p.domain = sc.domain;

  const auto avail = available_categories(sc, side);
  std::array<double, kNumCategories> w{};
  double total = 0;
  for (std::size_t c = 0; c < kNumCategories; ++c) {
    if (!avail[c]) continue;
    w[c] = sc.req(side).weight[c] * opts.category_bias[c] * std::exp(opts.weight_jitter * rng.normal());
    total += w[c];
  }
  if (!(total > 0))
    for (std::size_t c = 0; c < kNumCategories; ++c) w[c] = avail[c] ? 1.0 : 0.0;

  const int len = static_cast<int>(rng.uniform_int(opts.shape.chain_min, opts.shape.chain_max));
  int next = 1;
  for (int i = 0; i < len; ++i) {
    const auto c = static_cast<Category>(rng.weighted_index(w));
    p.actions.push_back(make_action(sc, side, c, rng, fmt::format("a{}", next++)));
    p.chain.push_back(p.actions.back().id);
  }

  if (len >= 2 && !opts.branch_kinds.empty() && rng.bernoulli(opts.shape.branch_probability)) {
    const auto& kind = opts.branch_kinds[static_cast<std::size_t>(
        rng.uniform_int(0, static_cast<std::int64_t>(opts.branch_kinds.size()) - 1))];
    std::vector<Category> cats;
    for (auto c : kind.categories)
      if (avail[index(c)]) cats.push_back(c);
    if (!cats.empty()) {
      Branch br;
      br.at = p.chain[static_cast<std::size_t>(rng.uniform_int(0, len - 2))];
      br.condition = kind.conditions[static_cast<std::size_t>(
          rng.uniform_int(0, static_cast<std::int64_t>(kind.conditions.size()) - 1))];
      for (int o = 0; o < 2; ++o) {
        std::vector<std::string> opt;
        const int olen = static_cast<int>(rng.uniform_int(opts.shape.option_min, opts.shape.option_max));
        for (int m = 0; m < olen; ++m) {
          const auto c = cats[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(cats.size()) - 1))];
          p.actions.push_back(make_action(sc, side, c, rng, fmt::format("a{}", next++)));
          p.actions.back().metadata["branch_kind"] = kind.kind;
          opt.push_back(p.actions.back().id);
        }
        br.options.push_back(std::move(opt));
      }
      p.tool_calls.push_back({"branch_planner", fmt::format(R"({{"at":"{}","kind":"{}"}})", br.at, kind.kind)});
      p.branches.push_back(std::move(br));
    }
  }
  for (std::size_t i = 0; i < p.chain.size(); ++i) p.actions[i].metadata["phase"] = std::to_string(i + 1);
  for (const auto& a : p.actions)
    if (const Asset* as = sc.find_asset(a.asset)) p.roles[as->id] = as->role;
  return p;
}

}  // namespace advplan
