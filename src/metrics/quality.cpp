#include "advplan/metrics/quality.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>
#include "metrics/resolved_layout.hpp"
#include "core/thread_buffer.hpp"

namespace advplan {

namespace {
/// Terrain factor of one action: the category modifier, times terrain mobility scaled by the asset's own
/// mobility for movement, times terrain visibility for information.
double terrain_factor(const PlacedAction& a, const Scenario& sc) {
  const Category c = a.action->category;
  double f = sc.terrain.category_modifier[index(c)];
  if (c == Category::movement) f *= sc.terrain.mobility * (0.5 + 0.5 * (a.asset ? a.asset->mobility : 0.0));
  if (c == Category::information) f *= sc.terrain.visibility;
  return f;
}
bool is_protector(const Action& a) { return a.category == Category::protection || a.category == Category::deception; }
}  // namespace

double effectiveness(const std::vector<PlacedAction>& layout, const Scenario& sc, Side side) {
  std::array<double, kNumCategories> supply{};
  for (const auto& a : layout) {
    if (!a.asset) continue;
    supply[index(a.action->category)] +=
        a.weight * a.asset->capability * (a.action->priority / 5.0) * terrain_factor(a, sc);
  }
  const auto& req = sc.req(side);
  double e = 0;
  for (std::size_t c = 0; c < kNumCategories; ++c) e += std::min(req.weight[c], supply[c] / req.effort_scale);
  return std::clamp(e, 0.0, 1.0);
}

double cost(const std::vector<PlacedAction>& layout, const Scenario& sc, Side side) {
  double spend = 0;
  for (const auto& a : layout)
    if (a.asset) spend += a.weight * a.asset->cost;
  return std::clamp(spend / sc.req(side).budget, 0.0, 1.0);
}

void coverage_into(const std::vector<PlacedAction>& layout, std::vector<double>& cov) {
  // Only protectors can cover, so each action looks at the protector list alone, in layout order (the sum's
  // order, so results are bit-for-bit those of the plain double loop), and stops once the sum reaches 1:
  // further terms are positive and the result is capped at 1. Targets and assets are compared as small integer
  // ids (assigned by a scan over the distinct values so far, plans being short) instead of strings. The scratch
  // buffers are per thread and keep their capacity: no allocation per plan in steady state.
  struct Scratch {
    std::vector<std::string_view> targets, assets;
    std::vector<int> tgt, ast;
    std::vector<std::size_t> protectors;
  };
  thread_local Scratch tls_scratch;
  Scratch& sc = detail::bound(tls_scratch);  // src/core/thread_buffer.hpp
  auto intern = [](std::vector<std::string_view>& seen, std::string_view v) {
    for (std::size_t k = 0; k < seen.size(); ++k)
      if (same_id(seen[k], v)) return static_cast<int>(k);
    seen.push_back(v);
    return static_cast<int>(seen.size() - 1);
  };
  sc.targets.clear();
  sc.assets.clear();
  sc.protectors.clear();
  sc.tgt.resize(layout.size());
  sc.ast.resize(layout.size());
  for (std::size_t i = 0; i < layout.size(); ++i) {
    const Action& a = *layout[i].action;
    sc.tgt[i] = intern(sc.targets, a.target);
    sc.ast[i] = intern(sc.assets, a.asset);
    if (is_protector(a)) sc.protectors.push_back(i);
  }
  cov.assign(layout.size(), 0.0);
  for (std::size_t i = 0; i < layout.size(); ++i) {
    const auto& a = layout[i];
    double s = 0;
    for (const std::size_t j : sc.protectors) {
      if (j == i) continue;
      const auto& b = layout[j];
      if (b.position > a.position) continue;
      // An option action covers only what follows it on its own path: later chain steps after the rejoin,
      // and later actions of its own option, never the other options.
      if (!b.in_chain && !a.in_chain && (b.branch != a.branch || b.option != a.option)) continue;
      if (!b.in_chain && a.in_chain && b.position >= a.position) continue;
      const bool close = sc.tgt[j] == sc.tgt[i] || sc.ast[j] == sc.ast[i];
      // A protector on one option covers a later chain step only on that path: weight it by its option weight.
      s += (close ? 1.0 : 0.5) * (!b.in_chain && a.in_chain ? b.weight : 1.0);
      if (s >= 1.0) break;
    }
    cov[i] = std::min(1.0, s);
  }
}

std::vector<double> coverage(const std::vector<PlacedAction>& layout) {
  std::vector<double> cov;
  coverage_into(layout, cov);
  return cov;
}

double exposure(Category c, const Scenario& sc) { return std::min(1.0, sc.exposure[index(c)] * sc.terrain.exposure); }
double exposure(const PlacedAction& a, const Scenario& sc) { return exposure(a.action->category, sc); }

double risk(const std::vector<PlacedAction>& layout, const Scenario& sc) {
  if (layout.empty()) return 1.0;
  thread_local std::vector<double> tls_cov;
  std::vector<double>& cov = detail::bound(tls_cov);
  coverage_into(layout, cov);
  return risk(layout, sc, cov);
}

double risk(const std::vector<PlacedAction>& layout, const Scenario& sc, std::span<const double> cov) {
  if (layout.empty()) return 1.0;
  double num = 0, den = 0;
  for (std::size_t i = 0; i < layout.size(); ++i) {
    num += layout[i].weight * exposure(layout[i], sc) * (1.0 - 0.7 * cov[i]);
    den += layout[i].weight;
  }
  return den > 0 ? std::clamp(num / den, 0.0, 1.0) : 1.0;
}

namespace {
QualityParts combine(const std::vector<PlacedAction>& layout, const Scenario& sc, Side side, const QualityWeights& w,
                     double r) {
  QualityParts p;
  p.e = effectiveness(layout, sc, side);
  p.c = cost(layout, sc, side);
  p.r = r;
  p.q = std::clamp(w.effectiveness * p.e + w.cost * (1.0 - p.c) + w.risk * (1.0 - p.r), 0.0, 1.0);
  return p;
}
}  // namespace

QualityParts quality(const std::vector<PlacedAction>& layout, const Scenario& sc, Side side, const QualityWeights& w) {
  return combine(layout, sc, side, w, risk(layout, sc));
}

QualityParts quality(const std::vector<PlacedAction>& layout, const Scenario& sc, Side side, const QualityWeights& w,
                     std::span<const double> cov) {
  return combine(layout, sc, side, w, risk(layout, sc, cov));
}

double raw_capability(const Plan& p, const Scenario& sc) {
  // The distinct assets the plan names (ids are unique in a scenario, so distinct ids are distinct assets; an
  // unknown id adds nothing), summed in id order, from a per-thread buffer.
  thread_local std::vector<const Asset*> tls_used;
  std::vector<const Asset*>& used = detail::bound(tls_used);  // src/core/thread_buffer.hpp
  used.clear();
  AssetLookup assets(sc);
  for (const auto& a : p.actions)
    if (const Asset* x = assets.find(a.asset); x && std::find(used.begin(), used.end(), x) == used.end())
      used.push_back(x);
  std::sort(used.begin(), used.end(), [](const Asset* a, const Asset* b) { return a->id < b->id; });
  double s = 0;
  for (const Asset* a : used) s += a->capability;
  return s;
}

double detail::raw_capability_of_layout(const std::vector<PlacedAction>& layout) {
  thread_local std::vector<const Asset*> tls_used;
  std::vector<const Asset*>& used = detail::bound(tls_used);  // src/core/thread_buffer.hpp
  used.clear();
  for (const auto& p : layout)
    if (p.asset && std::find(used.begin(), used.end(), p.asset) == used.end()) used.push_back(p.asset);
  std::sort(used.begin(), used.end(), [](const Asset* a, const Asset* b) { return a->id < b->id; });
  double s = 0;
  for (const Asset* a : used) s += a->capability;
  return s;
}

QualityParts quality(const Plan& plan, const Scenario& sc, const QualityWeights& w) {
  return quality(layout_plan(plan, sc), sc, plan.side, w);
}

}  // namespace advplan
