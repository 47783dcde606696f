// Proposer and revision operators: one legal action of a category, placed sensibly in the chain.
#include <fmt/format.h>

#include "advplan/council/council.hpp"
#include "advplan/metrics/plan_layout.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/scenario/plan_sampler.hpp"

namespace advplan {

namespace {

const Action* chain_action(const Plan& p, std::size_t i) {
  const int a = p.find_action(p.chain[i]);
  return a < 0 ? nullptr : &p.actions[static_cast<std::size_t>(a)];
}

/// Index of the first chain step satisfying `pred`, or npos.
template <typename Pred>
std::size_t first_step(const Plan& p, Pred pred) {
  for (std::size_t i = 0; i < p.chain.size(); ++i)
    if (const Action* a = chain_action(p, i); a && pred(*a)) return i;
  return std::string::npos;
}

/// Where an added action of category c goes in the chain:
///  information, protection, deception: before the first step it prepares or shields (fires/movement for
///    information; an exposed step, exposure >= .5, for protection and deception), else first;
///  cyber: before the first fires step, else after the first information step, else first;
///  movement: right after the first preparation step (information or command), else first;
///  sustainment: at the middle of the chain (after ceil(n/2) steps);
///  public_information, command: after the first step;
///  fires, civil: last.
std::size_t insert_position(const Plan& p, const Scenario& sc, Category c) {
  const std::size_t n = p.chain.size();
  auto exposed = [&](const Action& a) {
    return std::min(1.0, sc.exposure[index(a.category)] * sc.terrain.exposure) >= 0.5;
  };
  auto or_first = [](std::size_t i) { return i == std::string::npos ? std::size_t{0} : i; };
  switch (c) {
    case Category::information:
      return or_first(first_step(p, [](const Action& a) {
        return a.category == Category::fires || a.category == Category::movement;
      }));
    case Category::protection:
    case Category::deception:
      return or_first(first_step(p, exposed));
    case Category::cyber: {
      const auto f = first_step(p, [](const Action& a) { return a.category == Category::fires; });
      if (f != std::string::npos) return f;
      const auto i = first_step(p, [](const Action& a) { return a.category == Category::information; });
      return i == std::string::npos ? 0 : i + 1;
    }
    case Category::movement: {
      const auto i = first_step(p, [](const Action& a) {
        return a.category == Category::information || a.category == Category::command;
      });
      return i == std::string::npos ? 0 : i + 1;
    }
    case Category::sustainment:
      return (n + 1) / 2;
    case Category::public_information:
    case Category::command:
      return std::min<std::size_t>(1, n);
    case Category::fires:
    case Category::civil:
      return n;
  }
  return n;
}

}  // namespace

bool add_role_action(Plan& plan, const Scenario& sc, Category c, Rng& rng, const std::string& verb,
                     const std::string& tag) {
  const auto& verbs = sc.verbs[index(c)];
  if (verbs.empty()) return false;
  if (!verb.empty() && !sc.verb_allowed(c, verb)) return false;
  const Asset* asset = pick_asset(sc, Side::Blue, c, rng);
  if (!asset) return false;
  Action a;
  a.id = next_action_id(plan);
  a.asset = asset->id;
  a.category = c;
  a.verb = !verb.empty() ? verb
                         : verbs[static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(verbs.size()) - 1))];
  a.priority = 3;
  const std::size_t pos = std::min(insert_position(plan, sc, c), plan.chain.size());
  const Action* near = plan.chain.empty() ? nullptr : chain_action(plan, std::min(pos, plan.chain.size() - 1));
  a.target = near ? near->target : (sc.places.empty() ? "" : sc.places.front());
  if (!tag.empty()) a.metadata["added_by"] = tag;
  plan.chain.insert(plan.chain.begin() + static_cast<std::ptrdiff_t>(pos), a.id);
  plan.roles[asset->id] = asset->role;
  plan.actions.push_back(std::move(a));
  return true;
}

const std::vector<Mitigation>& mitigations_for(Pressure p) {
  static const std::array<std::vector<Mitigation>, kNumPressures> map{{
      {{Category::movement, "disperse"}, {Category::protection, "harden"}},        // direct
      {{Category::cyber, "oob-comms"}},                                             // cyber
      {{Category::sustainment, "reroute-supply"}},                                  // logistics
      {{Category::deception, "decoy"}, {Category::deception, "counter-recon"}},     // information gathering
      {{Category::public_information, "comm-cell"}},                                // public information
  }};
  return map[index(p)];
}

std::vector<std::string> apply_mitigation(Plan& plan, const Scenario& sc, Pressure p, Rng& rng) {
  std::vector<std::string> added;
  for (const auto& m : mitigations_for(p))
    if (add_role_action(plan, sc, m.category, rng, m.verb, fmt::format("mitigation:{}", to_string(p))))
      added.push_back(fmt::format("{}:{}", to_string(m.category), m.verb));
  return added;
}

}  // namespace advplan
