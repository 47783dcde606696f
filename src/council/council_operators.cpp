// Proposer and revision operators: one legal action of a category, placed sensibly in the chain.
#include <fmt/format.h>

#include "advplan/council/council.hpp"
#include "advplan/metrics/plan_layout.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/scenario/plan_ops.hpp"

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
///    information; an exposed step (is_exposed) for protection and deception), else first;
///  cyber: before the first fires step, else after the first information step, else first;
///  movement: right after the first preparation step (information or command), else first;
///  sustainment: at the middle of the chain (after ceil(n/2) steps);
///  public_information, command: after the first step;
///  fires, civil: last.
std::size_t insert_position(const Plan& p, const Scenario& sc, Category c) {
  const std::size_t n = p.chain.size();
  auto exposed = [&](const Action& a) { return is_exposed(a.category, sc); };
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
  return add_side_action(plan, sc, Side::Blue, c, rng, verb, tag);
}

bool add_side_action(Plan& plan, const Scenario& sc, Side side, Category c, Rng& rng, const std::string& verb,
                     const std::string& tag) {
  auto a = draw_action(sc, side, c, rng, verb);
  if (!a) return false;
  const std::size_t pos = std::min(insert_position(plan, sc, c), plan.chain.size());
  const Action* near = plan.chain.empty() ? nullptr : chain_action(plan, std::min(pos, plan.chain.size() - 1));
  a->target = near ? near->target : default_target(sc);
  a->priority = 3;
  if (!tag.empty()) a->metadata["added_by"] = tag;
  insert_action(plan, sc, std::move(*a), pos);
  return true;
}

const std::vector<Mitigation>& mitigations_for(Pressure p) {
  // Each pressure is met with its counter category (kPressureTable); direct pressure is also met by dispersing.
  static const auto map = [] {
    std::array<std::vector<Mitigation>, kNumPressures> m;
    auto counter = [](Pressure q, const char* verb) { return Mitigation{pressure_categories(q).counter, verb}; };
    m[index(Pressure::direct)] = {{Category::movement, "disperse"}, counter(Pressure::direct, "harden")};
    m[index(Pressure::cyber)] = {counter(Pressure::cyber, "oob-comms")};
    m[index(Pressure::logistics)] = {counter(Pressure::logistics, "reroute-supply")};
    m[index(Pressure::information_gathering)] = {counter(Pressure::information_gathering, "decoy"),
                                                 counter(Pressure::information_gathering, "counter-recon")};
    m[index(Pressure::public_information)] = {counter(Pressure::public_information, "comm-cell")};
    return m;
  }();
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
