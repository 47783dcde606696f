#include "advplan/scenario/plan_sampler.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <span>

#include "advplan/core/error.hpp"
#include "advplan/scenario/plan_ops.hpp"
#include "core/det_math.hpp"
#include "scenario/sampled_plan.hpp"

namespace advplan {

namespace {

/// A chain or option step of category c, appended to the plan: draw_action's asset and verb (the same draws in the
/// same order: pick_asset, then pick_verb), then a drawn target and priority, written into the plan's new action in
/// place (no Action built and moved twice) with append_new_action's id and role (no lookup). With kFull false (the
/// lean draw, detail::sample_plan_lean) the action keeps its id, category and priority alone, and the plan no role:
/// the verb and target are drawn and not copied.
template <bool kFull>
Action& append_sampled(Plan& p, const Scenario& sc, Side side, Category c, Rng& rng,
                       std::vector<const Asset*>* assets, const detail::SamplerTables* tables) {
  const Asset* asset = nullptr;
  if (sc.verbs[index(c)].empty()) {
  } else if (tables) {  // pick_asset's draw over the same list and weights
    const std::size_t lo = tables->at[index(c)], n = tables->at[index(c) + 1] - lo;
    if (n > 0) asset = tables->able[lo + rng.weighted_index(std::span<const double>(tables->weight.data() + lo, n))];
  } else {
    asset = pick_asset(sc, side, c, rng);
  }
  if (!asset)
    throw PlanError(fmt::format("scenario {}: no {} asset can perform {} with a verb of the vocabulary", sc.id,
                                to_string(side), to_string(c)));
  [[maybe_unused]] const std::string& verb = pick_verb(sc, c, rng);
  [[maybe_unused]] const std::string* target = sc.places.empty() ? nullptr : &rng.pick(sc.places);
  const int priority = static_cast<int>(rng.uniform_int(1, 5));
  Action& a = p.actions.emplace_back();
  char buf[24];
  buf[0] = 'a';
  const auto r = std::to_chars(buf + 1, buf + sizeof buf, p.actions.size());
  a.id.assign(buf, r.ptr);
  a.category = c;
  a.priority = priority;
  if constexpr (kFull) {
    a.asset = asset->id;
    a.verb = verb;
    if (target) a.target = *target;
    p.roles.try_emplace(asset->id, asset->role);  // an asset's role is fixed: an existing entry is the same
  }
  if (assets) assets->push_back(asset);
  return a;
}

/// sample_plan_resolved's draws into `p` (kFull), or the lean draw's (detail::sample_plan_lean): the same draws in
/// the same order either way, so candidate i's lean plan is its full plan less the parts the lean one leaves out.
template <bool kFull>
void sample_into(Plan& p, const Scenario& sc, Side side, Rng& rng, const SampleOptions& opts,
                 std::vector<const Asset*>* assets, bool* by_construction, const detail::SamplerTables* tables) {
  if (assets) assets->clear();
  bool complete = true;  // every step the shape asks for is there (an option may draw no action)
  const std::string& objective = side == Side::Blue ? sc.blue_objective : sc.red_objective;
  p.side = side;
  if constexpr (kFull) {
    p.objective = objective;
    p.domain = sc.domain;
  } else {  // a reused plan: its vectors keep their capacity
    p.actions.clear();
    p.chain.clear();
    p.branches.clear();
  }
  const auto avail = tables ? tables->available : available_categories(sc, side);
  std::array<double, kNumCategories> w{};
  // Each available category's weight is jittered by exp(jitter * N(0, 1)): the normals are drawn in category order,
  // then the exps computed together (det::exp_n, the same bits as det::exp one at a time).
  // The normals' uniforms are drawn as Rng::normal draws them, one normal after another, and transformed together
  // (det::box_muller_n, Rng::normal's bits).
  std::array<double, kNumCategories> jitter{}, factor{}, u1{}, u2{};
  std::array<std::size_t, kNumCategories> cat{};
  std::size_t m = 0;
  for (std::size_t c = 0; c < kNumCategories; ++c)
    if (avail[c]) {
      rng.normal_uniforms(u1[m], u2[m]);
      cat[m++] = c;
    }
  det::box_muller_n(u1.data(), u2.data(), m, jitter.data());
  for (std::size_t k = 0; k < m; ++k) jitter[k] *= opts.weight_jitter;
  det::exp_n(jitter.data(), m, factor.data());
  double total = 0;
  for (std::size_t k = 0; k < m; ++k) {
    const std::size_t c = cat[k];
    w[c] = sc.req(side).weight[c] * opts.category_bias[c] * factor[k];
    total += w[c];
  }
  if (!(total > 0))
    for (std::size_t c = 0; c < kNumCategories; ++c) w[c] = avail[c] ? 1.0 : 0.0;

  const int len = static_cast<int>(rng.uniform_int(opts.shape.chain_min, opts.shape.chain_max));
  // Room for the chain and a two-option branch, so the actions are not moved as the vectors grow.
  p.actions.reserve(static_cast<std::size_t>(std::max(len, 0) + 2 * std::max(opts.shape.option_max, 0)));
  p.chain.reserve(static_cast<std::size_t>(std::max(len, 0)));
  for (int i = 0; i < len; ++i) {
    const auto c = static_cast<Category>(rng.weighted_index(w));
    p.chain.push_back(append_sampled<kFull>(p, sc, side, c, rng, assets, tables).id);
  }

  if (len >= 2 && !opts.branch_kinds.empty() && rng.bernoulli(opts.shape.branch_probability)) {
    const auto& kind = rng.pick(opts.branch_kinds);
    std::vector<Category> cats;
    for (auto c : kind.categories)
      if (avail[index(c)]) cats.push_back(c);
    if (!cats.empty()) {
      Branch br;
      br.at = p.chain[rng.pick_index(p.chain.size() - 1)];  // any step but the last
      [[maybe_unused]] const std::string& condition = rng.pick(kind.conditions);
      if constexpr (kFull) br.condition = condition;
      for (int o = 0; o < 2; ++o) {
        std::vector<std::string> opt;
        const int olen = static_cast<int>(rng.uniform_int(opts.shape.option_min, opts.shape.option_max));
        complete = complete && olen > 0;
        for (int m = 0; m < olen; ++m) {
          Action& a = append_sampled<kFull>(p, sc, side, rng.pick(cats), rng, assets, tables);
          if constexpr (kFull) a.metadata.try_emplace("branch_kind", kind.kind);
          opt.push_back(a.id);
        }
        br.options.push_back(std::move(opt));
      }
      if constexpr (kFull) {
        std::string args = R"({"at":")";  // {"at":"<at>","kind":"<kind>"}, as written (no escaping)
        args += br.at;
        args += R"(","kind":")";
        args += kind.kind;
        args += R"("})";
        p.tool_calls.push_back({"branch_planner", std::move(args)});
      }
      p.branches.push_back(std::move(br));
    }
  }
  if constexpr (kFull)
    for (std::size_t i = 0; i < p.chain.size(); ++i) p.actions[i].metadata["phase"] = std::to_string(i + 1);
  // What validation checks, the draws guarantee, but for these: each asset is one of the side's (pick_asset),
  // each verb one of the category's (pick_verb), the ids a1..an are distinct, the chain and each option place
  // their own new actions, and a branch sits at a chain step with two options.
  if (by_construction) *by_construction = complete && !objective.empty() && !p.chain.empty();
}

}  // namespace

detail::SamplerTables detail::sampler_tables(const Scenario& sc, Side side) {
  SamplerTables t;
  t.available = available_categories(sc, side);
  t.able.reserve(sc.assets.size() * 2);
  t.weight.reserve(sc.assets.size() * 2);
  for (std::size_t c = 0; c < kNumCategories; ++c) {
    t.at[c] = static_cast<std::uint32_t>(t.able.size());
    for (const Asset& a : sc.assets)  // able_assets, in scenario order
      if (is_able(a, side, static_cast<Category>(c))) {
        t.able.push_back(&a);
        t.weight.push_back(pick_weight(a));
      }
  }
  t.at[kNumCategories] = static_cast<std::uint32_t>(t.able.size());
  t.asset_ids_unique = asset_ids_unique(sc);
  return t;
}

Plan detail::sample_plan_resolved(const Scenario& sc, Side side, Rng& rng, const SampleOptions& opts,
                                  std::string plan_id, std::vector<const Asset*>* assets, bool* by_construction,
                                  const SamplerTables* tables) {
  Plan p;
  p.plan_id = std::move(plan_id);
  sample_into<true>(p, sc, side, rng, opts, assets, by_construction, tables);
  return p;
}

void detail::sample_plan_lean(Plan& p, const Scenario& sc, Side side, Rng& rng, const SampleOptions& opts,
                              std::vector<const Asset*>& assets, bool& by_construction, const SamplerTables& tables) {
  sample_into<false>(p, sc, side, rng, opts, &assets, &by_construction, &tables);
}

bool detail::asset_ids_unique(const Scenario& sc) {
  for (std::size_t i = 1; i < sc.assets.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (same_id(sc.assets[i].id, sc.assets[j].id)) return false;
  return true;
}

Plan sample_plan(const Scenario& sc, Side side, Rng& rng, const SampleOptions& opts, const std::string& plan_id) {
  return detail::sample_plan_resolved(sc, side, rng, opts, plan_id, nullptr, nullptr);
}

}  // namespace advplan
