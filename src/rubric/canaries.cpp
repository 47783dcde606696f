#include "advplan/rubric/canaries.hpp"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <tuple>

#include "advplan/core/random.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/rubric/plans.hpp"

namespace advplan::rubric {
namespace {

/// The planted canary's objective: it says what to do and names no place (must_fail_items checks that it names
/// none of the scenario's places before it counts objective_names_target as must-fail).
constexpr const char* kPlantedObjective = "Carry out the listed actions in order.";

/// ASCII lower case (place names and objectives are compared case-insensitively, as the items read them).
std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool names_a_place(const std::string& objective, const Scenario& sc) {
  const std::string obj = lower(objective);
  return std::any_of(sc.places.begin(), sc.places.end(),
                     [&](const std::string& p) { return obj.find(lower(p)) != std::string::npos; });
}

bool has_any(const Plan& p, std::initializer_list<Category> cats) {
  return std::any_of(p.actions.begin(), p.actions.end(), [&](const Action& a) {
    return std::find(cats.begin(), cats.end(), a.category) != cats.end();
  });
}

/// The categories the planted canary removes: what the positive items look for.
bool planted_removes(Category c) {
  return c == Category::information || c == Category::protection || c == Category::deception ||
         c == Category::sustainment || c == Category::civil || c == Category::public_information;
}

/// Whether chain step `pos` (1-based) names an action that is exposed in `sc`.
bool exposed_step(const Plan& p, std::size_t pos, const Scenario& sc) {
  if (pos == 0 || pos > p.chain.size()) return false;
  const int a = p.find_action(p.chain[pos - 1]);
  return a >= 0 && is_exposed(p.actions[static_cast<std::size_t>(a)].category, sc);
}

bool any_exposed_step(const Plan& p, const Scenario& sc) {
  for (std::size_t pos = 1; pos <= p.chain.size(); ++pos)
    if (exposed_step(p, pos, sc)) return true;
  return false;
}

/// Whether one positive item's pass condition cannot hold in `p` (see must_fail_items).
bool cannot_pass(const RubricItem& it, const Plan& p, const Scenario& sc) {
  const std::string kind = it.item_id.substr(0, it.item_id.find('@'));
  using C = Category;
  if (kind == "objective_names_target") return !names_a_place(p.objective, sc);
  if (kind == "sustainment_present") return !has_any(p, {C::sustainment});
  if (kind == "branch_contingency") return p.branches.empty();
  if (kind == "civil_engaged") return !has_any(p, {C::civil, C::public_information});
  if (kind == "information_before_exposure") return any_exposed_step(p, sc) && !has_any(p, {C::information});
  if (kind == "exposed_steps_covered") {
    const std::size_t at = it.item_id.find('@');
    if (at == std::string::npos) return false;
    std::size_t pos = 0;
    for (std::size_t i = at + 1; i < it.item_id.size(); ++i) {
      if (it.item_id[i] < '0' || it.item_id[i] > '9' || pos > 1000000) return false;
      pos = pos * 10 + static_cast<std::size_t>(it.item_id[i] - '0');
    }
    return exposed_step(p, pos, sc) && !has_any(p, {C::protection, C::deception});
  }
  return false;  // a kind this rule does not know is never must-fail
}

}  // namespace

std::string_view to_string(CanaryKind k) { return k == CanaryKind::empty ? "empty" : "planted"; }

std::vector<std::size_t> canary_scenarios(std::span<const Scenario> corpus,
                                          std::span<const std::vector<RubricItem>> items, std::uint64_t seed) {
  std::vector<std::tuple<std::uint64_t, std::string_view, std::size_t>> keyed;
  for (std::size_t i = 0; i < corpus.size(); ++i)
    if (i < items.size() && !items[i].empty())
      keyed.emplace_back(Rng::keyed(seed, corpus[i].id, "rubric/canary").next_u64(), corpus[i].id, i);
  const std::size_t k = std::min(kCanaryScenarios, keyed.size());
  std::partial_sort(keyed.begin(), keyed.begin() + static_cast<std::ptrdiff_t>(k), keyed.end());
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < k; ++i) out.push_back(std::get<2>(keyed[i]));
  std::sort(out.begin(), out.end());
  return out;
}

Plan empty_canary(const Scenario& sc) {
  Plan p;
  p.side = Side::Blue;
  // The reference plan's id and domain, so that nothing but its content tells the judge it is a canary.
  if (!sc.blue_seed_plans.empty()) {
    p.plan_id = sc.blue_seed_plans.front().plan_id;
    p.domain = sc.blue_seed_plans.front().domain;
  }
  return p;
}

std::optional<Plan> planted_canary(const Scenario& sc) {
  if (sc.blue_seed_plans.empty()) return std::nullopt;
  const Plan& ref = sc.blue_seed_plans.front();
  Plan p;
  p.plan_id = ref.plan_id;
  p.side = ref.side;
  p.domain = ref.domain;
  p.roles = ref.roles;
  p.objective = kPlantedObjective;
  // The chain's actions the canary keeps, in chain order; off-chain actions went with the branches.
  for (const auto& id : ref.chain) {
    const int a = ref.find_action(id);
    if (a < 0 || planted_removes(ref.actions[static_cast<std::size_t>(a)].category)) continue;
    if (p.find_action(id) >= 0) continue;  // a chain step listed twice keeps one action
    p.actions.push_back(ref.actions[static_cast<std::size_t>(a)]);
  }
  for (const auto& id : ref.chain)
    if (p.find_action(id) >= 0) p.chain.push_back(id);
  return p;
}

std::vector<std::size_t> must_fail_items(std::span<const RubricItem> items, const Plan& canary, const Scenario& sc) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < items.size(); ++i)
    if (!items[i].negative() && cannot_pass(items[i], canary, sc)) out.push_back(i);
  return out;
}

std::vector<Canary> build_canaries(std::span<const Scenario> corpus, std::span<const std::vector<RubricItem>> items,
                                   std::uint64_t seed) {
  std::vector<Canary> out;
  for (const std::size_t i : canary_scenarios(corpus, items, seed)) {
    const Scenario& sc = corpus[i];
    auto add = [&](CanaryKind kind, Plan plan) {
      Canary c;
      c.scenario = i;
      c.kind = kind;
      c.id = fmt::format("{}/canary:{}", sc.id, to_string(kind));
      c.must_fail = must_fail_items(items[i], plan, sc);
      c.plan = std::move(plan);
      out.push_back(std::move(c));
    };
    add(CanaryKind::empty, empty_canary(sc));
    if (auto planted = planted_canary(sc)) add(CanaryKind::planted, std::move(*planted));
  }
  return out;
}

std::vector<std::vector<CanaryGrade>> grade_canaries(std::span<const Canary> canaries,
                                                     std::span<const Scenario> corpus,
                                                     std::span<const std::vector<RubricItem>> items,
                                                     const CanaryJudging& judging) {
  const std::vector<std::string>& rules = rule_judges();
  const std::size_t n_llm = judging.llm_judges.size();
  std::vector<std::vector<CanaryGrade>> out(canaries.size(), std::vector<CanaryGrade>(rules.size() + n_llm));
  // One task per (canary, judge): a live judge's calls are the slow part, and each task writes its own cell.
  tbb::parallel_for(std::size_t{0}, canaries.size() * (1 + n_llm), [&](std::size_t task) {
    const std::size_t c = task / (1 + n_llm), j = task % (1 + n_llm);
    const Canary& can = canaries[c];
    const Scenario& sc = corpus[can.scenario];
    const std::vector<RubricItem>& its = items[can.scenario];
    if (j == 0) {  // every rule judge at once
      auto ruled = judge_plan_all(rules, its, can.plan, sc);
      for (std::size_t r = 0; r < rules.size(); ++r) out[c][r].passed = std::move(ruled[r]);
      return;
    }
    CanaryGrade& g = out[c][rules.size() + j - 1];
    const CompletionClient* client = judging.clients[j - 1];
    if (client) {
      g.llm = run_judge(*client, its, can.plan, sc, judging.retries, judging.generation);
      g.ok = g.llm.ok;
      g.reason = g.llm.reason;
    } else {
      g.ok = false;
      g.reason = "judge not available: " + judging.setup_errors[j - 1];
    }
    Verdict v;
    v.error = !g.ok;
    for (const auto& f : g.llm.failures) v.failed_items.push_back(f.item_id);
    g.passed = verdict_passed(its, v);
  });
  return out;
}

bool CanaryTally::flagged() const {
  return must_fail > 0 && static_cast<double>(passed) > kCanaryMaxPassShare * static_cast<double>(must_fail);
}

std::vector<CanaryTally> tally_canaries(std::span<const Canary> canaries,
                                        const std::vector<std::vector<CanaryGrade>>& grades,
                                        const std::vector<std::string>& all_judges) {
  std::vector<CanaryTally> out(all_judges.size());
  for (std::size_t j = 0; j < all_judges.size(); ++j) {
    CanaryTally& t = out[j];
    t.judge = all_judges[j];
    for (std::size_t c = 0; c < canaries.size(); ++c) {
      const CanaryGrade& g = grades[c][j];
      ++t.canaries;
      if (!g.ok) {  // a failure verifies nothing: no evidence for or against the judge
        ++t.errors;
        continue;
      }
      t.must_fail += canaries[c].must_fail.size();
      for (const std::size_t i : canaries[c].must_fail) t.passed += g.passed[i] ? 1 : 0;
    }
  }
  return out;
}

io::CsvTable canaries_csv(std::span<const Canary> canaries, std::span<const Scenario> corpus,
                          std::span<const std::vector<RubricItem>> items,
                          const std::vector<std::vector<CanaryGrade>>& grades, const std::vector<std::string>& all_judges) {
  io::CsvTable t({"judge", "canary_id", "case_id", "canary", "items", "must_fail", "passed_must_fail",
                  "must_fail_items", "passed_must_fail_items", "status", "attempts", "reason"});
  for (std::size_t j = 0; j < all_judges.size(); ++j)
    for (std::size_t c = 0; c < canaries.size(); ++c) {
      const Canary& can = canaries[c];
      const CanaryGrade& g = grades[c][j];
      const std::vector<RubricItem>& its = items[can.scenario];
      std::string must, passed;
      std::size_t n_passed = 0;
      for (const std::size_t i : can.must_fail) {
        must += (must.empty() ? "" : " ") + its[i].item_id;
        if (g.ok && g.passed[i]) {
          passed += (passed.empty() ? "" : " ") + its[i].item_id;
          ++n_passed;
        }
      }
      t.add({all_judges[j], can.id, corpus[can.scenario].id, std::string(to_string(can.kind)),
             std::to_string(its.size()), std::to_string(can.must_fail.size()), std::to_string(n_passed), must, passed,
             g.ok ? "ok" : "failed", std::to_string(g.llm.attempts), g.reason});
    }
  return t;
}

io::CsvTable canary_judges_csv(std::span<const CanaryTally> tallies) {
  io::CsvTable t({"judge", "canaries", "judge_errors", "must_fail", "passed_must_fail", "passed_share",
                  "max_share", "flagged"});
  for (const auto& x : tallies)
    t.add({x.judge, std::to_string(x.canaries), std::to_string(x.errors), std::to_string(x.must_fail),
           std::to_string(x.passed),
           io::fmt_real(x.must_fail > 0 ? static_cast<double>(x.passed) / static_cast<double>(x.must_fail)
                                        : std::numeric_limits<double>::quiet_NaN()),
           io::fmt_real(kCanaryMaxPassShare), x.flagged() ? "1" : "0"});
  return t;
}

TextTable canary_judges_table(const io::CsvTable& cj, const std::string& name) {
  TextTable t{name,
              "Judge canaries: must-fail items of known-bad plans that each judge passed (flagged above the stated "
              "share)",
              {"judge", "canaries", "judge errors", "must-fail passed", "share", "flag"},
              {}};
  for (std::size_t i = 0; i < cj.size(); ++i) {
    const double share = cj.real(i, "passed_share");
    t.rows.push_back({cj.at(i, "judge"), cj.at(i, "canaries"), cj.at(i, "judge_errors"),
                      cj.at(i, "passed_must_fail") + "/" + cj.at(i, "must_fail"),
                      std::isnan(share) ? "n/a" : fmt::format("{:.3f}", share),
                      cj.at(i, "flagged") == "1" ? fmt::format("FLAGGED (> {})", cj.at(i, "max_share")) : "ok"});
  }
  return t;
}

std::string canary_warning(const CanaryTally& t) {
  return fmt::format("advplan: warning: rubric judge {} passed {} of {} canary items that must fail (more than {:g} "
                     "of them): its verdicts are not trustworthy (rubric/canaries.csv)",
                     t.judge, t.passed, t.must_fail, kCanaryMaxPassShare);
}

}  // namespace advplan::rubric
