#include "advplan/scenario/generator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "advplan/core/error.hpp"
#include "advplan/core/random.hpp"
#include "advplan/scenario/framing.hpp"
#include "advplan/scenario/plan_sampler.hpp"
#include "core/det_math.hpp"

namespace advplan {
namespace {

double clamp(double v, double lo, double hi) { return std::min(hi, std::max(lo, v)); }
/// Rounded to 4 decimals so the JSON corpus stays readable; the rounding is part of the definition.
double round4(double v) { return std::round(v * 1e4) / 1e4; }

std::string fill_objective(std::string phrase, const std::vector<std::string>& places) {
  auto replace = [&](const std::string& key, const std::string& val) {
    for (auto pos = phrase.find(key); pos != std::string::npos; pos = phrase.find(key, pos + val.size()))
      phrase.replace(pos, key.size(), val);
  };
  replace("{place2}", places.size() > 1 ? places[1] : places[0]);
  replace("{place}", places[0]);
  return phrase;
}

}  // namespace

Scenario generate_scenario(const ScenarioTemplate& tpl, std::uint64_t seed, const GeneratorOptions& opts) {
  Scenario s;
  s.template_id = tpl.id;
  s.seed = seed;
  s.id = fmt::format("{}-{}", tpl.id, seed);
  s.domain = tpl.domain;
  s.verbs = tpl.verbs;
  s.exposure = tpl.exposure;
  Rng rng = Rng::keyed(seed, tpl.id, "scenario");

  // Terrain family and its modifiers, jittered per seed.
  std::vector<double> tw;
  for (const auto& t : tpl.terrains) tw.push_back(t.weight);
  s.terrain = tpl.terrains[rng.weighted_index(tw)].terrain;
  s.terrain.mobility = round4(clamp(s.terrain.mobility * det::exp(0.08 * rng.normal()), 0.1, 2.0));
  s.terrain.visibility = round4(clamp(s.terrain.visibility * det::exp(0.08 * rng.normal()), 0.1, 2.0));
  s.terrain.exposure = round4(clamp(s.terrain.exposure * det::exp(0.08 * rng.normal()), 0.1, 2.0));

  // Places: a seed-specific selection and order.
  std::vector<std::string> places = tpl.places;
  for (std::size_t i = places.size(); i > 1; --i)
    std::swap(places[i - 1], places[rng.pick_index(i)]);
  places.resize(std::min<std::size_t>(places.size(), 4));
  s.places = places;

  // Assets per side.
  for (auto side : kSides) {
    const char tag = side == Side::Blue ? 'b' : 'r';
    for (const auto& spec : tpl.assets[index(side)]) {
      const int n = static_cast<int>(rng.uniform_int(spec.count_min, spec.count_max));
      for (int j = 0; j < n; ++j) {
        Asset a;
        a.id = fmt::format("{}-{}-{}", tag, spec.prefix, j + 1);
        a.side = side;
        a.type = spec.type;
        a.domain = spec.domain;
        a.role = spec.role;
        a.capability = round4(clamp(spec.capability * det::exp(0.12 * rng.normal()), 0.05, 1.0));
        a.cost = round4(std::max(0.0, spec.cost * det::exp(0.1 * rng.normal())));
        a.mobility = spec.mobility;
        a.categories = spec.categories;
        s.assets.push_back(std::move(a));
      }
    }
    if (s.assets_of(side).empty()) {
      // Every count range allowed 0 and all drew 0: keep the first asset type so the side can act.
      const auto& spec = *std::find_if(tpl.assets[index(side)].begin(), tpl.assets[index(side)].end(),
                                       [](const AssetSpec& a) { return a.count_max > 0; });
      s.assets.push_back(Asset{fmt::format("{}-{}-1", tag, spec.prefix), side, spec.type, spec.domain, spec.role,
                               spec.capability, spec.cost, spec.mobility, spec.categories});
    }
  }
  std::stable_sort(s.assets.begin(), s.assets.end(),
                   [](const Asset& a, const Asset& b) { return index(a.side) < index(b.side); });

  // Requirement weights, jittered and renormalised.
  for (auto side : kSides) {
    auto r = tpl.requirements[index(side)];
    double sum = 0;
    for (auto& w : r.weight) {
      w = w * det::exp(0.2 * rng.normal());
      sum += w;
    }
    for (auto& w : r.weight) w = sum > 0 ? w / sum : 0.0;
    s.requirements[index(side)] = r;
  }

  // Objectives.
  for (auto side : kSides) {
    const auto& phrases = tpl.objectives[index(side)];
    const auto& phrase = rng.pick(phrases);
    (side == Side::Blue ? s.blue_objective : s.red_objective) = fill_objective(phrase, places);
  }

  // Framing comes from its own stream, so forcing a framing changes nothing else in the scenario.
  Rng framing_rng = Rng::keyed(seed, tpl.id, "framing");
  s.framing = opts.framing_override ? *opts.framing_override
                                    : static_cast<Framing>(framing_rng.weighted_index(tpl.framing_weights));
  if (opts.framing_mode == FramingMode::applied) apply_framing_to_objective(s, tpl);

  // BLUE seed plans.
  const int n_plans = static_cast<int>(rng.uniform_int(tpl.seed_plans.count_min, tpl.seed_plans.count_max));
  SampleOptions so{tpl.seed_plans, tpl.branch_kinds, 0.35};
  for (int i = 0; i < n_plans; ++i) {
    Rng prng = rng.child("seed-plan", static_cast<std::uint64_t>(i));
    s.blue_seed_plans.push_back(sample_plan(s, Side::Blue, prng, so, fmt::format("{}/blue/seed-{}", s.id, i)));
  }
  if (opts.framing_mode == FramingMode::applied) apply_framing_to_plans(s, tpl);
  return s;
}

}  // namespace advplan
