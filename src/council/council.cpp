#include "advplan/council/council.hpp"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <numeric>

#include "advplan/core/validation.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/metrics/frontier.hpp"

namespace advplan {
using io::fmt_real;

double adjudicator_score(const CouncilConfig& w, double q, double D, double diversity, double pressure,
                         std::array<double, 4>* parts) {
  const std::array<double, 4> p{w.w_quality * q, w.w_coherence * D, w.w_diversity * diversity,
                                w.w_pressure * (1.0 - pressure)};
  if (parts) *parts = p;
  return p[0] + p[1] + p[2] + p[3];
}

std::vector<std::size_t> shortlist(const std::vector<double>& scores, std::size_t n) {
  std::vector<std::size_t> idx(scores.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  idx.resize(std::min(n, idx.size()));
  return idx;
}

double diversity_contribution(const std::vector<CategorySet>& sets, std::size_t i) {
  if (sets.size() < 2) return 0.0;
  double s = 0;
  for (std::size_t j = 0; j < sets.size(); ++j)
    if (j != i) s += jaccard_distance(sets[i], sets[j]);
  return s / static_cast<double>(sets.size() - 1);
}

const TraceFile& council_trace_file() {
  static const TraceFile f{
      "council_trace.csv",
      {"scenario_id",       "selected_blue_id",   "selected_red_id",   "selected_advantage", "blue_coherence",
       "red_coherence",     "council_diversity",  "revised_diversity", "consensus_gap",      "adversarial_pressure",
       "robustness_margin", "pressure_reduction", "n_initial",         "n_revised",          "selected_round",
       "blue_win_rate",     "status",             "failure_reason"}};
  return f;
}

const TraceFile& council_candidates_file() {
  static const TraceFile f{
      "council_candidates.csv",
      {"scenario_id", "candidate_id", "round", "role", "parent_id", "quality", "coherence", "diversity_contribution",
       "pressure", "critique_category", "critique_red_id", "score_quality", "score_coherence", "score_diversity",
       "score_pressure", "score", "round1_score", "shortlisted", "selected", "mitigation"}};
  return f;
}

PolicyInfo CouncilPolicy::static_info() {
  PolicyInfo info{"council", Side::Blue, false, 1, ThreadSafety::constant, {},
                  "multi-agent council: five proposers, RED-team stress, adjudicator, revision by the "
                  "critique-to-mitigation map"};
  info.traces = {council_trace_file(), council_candidates_file()};
  return info;
}

CouncilPolicy::CouncilPolicy(Params p, const PolicyContext& ctx)
    : BluePolicy(static_info(), std::move(p)), council_(ctx.get<CouncilConfig>()), run_seed_(ctx.run_seed),
      weights_(ctx.quality), ctx_(ctx), red_(make_red_policy(council_.red, ctx)) {}

void CouncilPolicy::stress(CouncilCandidate& c, const Scenario& sc, const std::string& stream) const {
  // The critique is the highest-pressure response among the valid candidates: it reads their pressures alone.
  const RedPressures r = red_->pressures(red_request(sc, c.plan, ctx_, stream));
  std::vector<double> magnitudes;
  for (const auto& rc : r.candidates) magnitudes.push_back(rc.pressure.magnitude);
  if (const int best = select_highest_pressure(magnitudes); best >= 0) {
    const auto& rc = r.candidates[static_cast<std::size_t>(best)];
    c.pressure = rc.pressure.magnitude;
    c.critique = rc.pressure.category;
    c.critique_red_id = rc.plan_id;
  }
  const auto layout = layout_plan(c.plan, sc);
  std::vector<double> cov;
  coverage_into(layout, cov);  // once, for q's risk and D's risk mitigation
  c.q = quality(layout, sc, Side::Blue, weights_, cov);
  c.d = coherence(c.plan, layout, sc, cov);
  for (const auto& a : layout) c.categories[index(a.action->category)] = true;
}

CouncilRecord CouncilPolicy::deliberate(const Scenario& sc, Rng& rng) const {
  CouncilRecord rec;
  if (sc.blue_seed_plans.empty()) {
    rec.failure = fmt::format("scenario {} has no BLUE seed plan", sc.id);
    return rec;
  }
  const Plan& seed = sc.blue_seed_plans.front();

  // 1. Proposals: each role adds one action of its category to the seed plan. With `propose` off (the attribution
  // study's switch) the first round is the seed plan alone, under its own id.
  std::vector<CouncilCandidate> first;
  if (!council_.propose) {
    CouncilCandidate c;
    c.round = 1;
    c.role = "seed";
    c.parent_id = seed.plan_id;
    c.plan = seed;
    c.id = seed.plan_id;
    first.push_back(std::move(c));
  }
  for (std::size_t i = 0; council_.propose && i < kProposerRoles.size(); ++i) {
    const Category role = kProposerRoles[i];
    CouncilCandidate c;
    c.round = 1;
    c.role = std::string(to_string(role));
    c.parent_id = seed.plan_id;
    c.plan = seed;
    c.id = fmt::format("{}/blue/council/{}", sc.id, c.role);
    c.plan.plan_id = c.id;
    Rng r = rng.child("propose", i);
    if (add_role_action(c.plan, sc, role, r, "", "proposer:" + c.role)) first.push_back(std::move(c));
  }
  if (first.empty()) {
    rec.failure = "no proposer could add a legal action";
    return rec;
  }
  // 2. RED-team stress of every candidate, in parallel, each from its own stream.
  tbb::parallel_for(std::size_t{0}, first.size(), [&](std::size_t i) { stress(first[i], sc, "council/" + first[i].role); });

  // 3. Adjudication within the first round; shortlist.
  std::vector<CategorySet> sets;
  for (const auto& c : first) sets.push_back(c.categories);
  std::vector<double> s1;
  for (std::size_t i = 0; i < first.size(); ++i) {
    first[i].round1_score = adjudicator_score(council_, first[i].q.q, first[i].d.D, diversity_contribution(sets, i),
                                              first[i].pressure);
    s1.push_back(first[i].round1_score);
  }
  const auto picks = shortlist(s1, static_cast<std::size_t>(council_.shortlist));

  // 4. Revision by the critique-to-mitigation map, then re-stress (nothing with `revise` off).
  std::vector<CouncilCandidate> revised;
  for (std::size_t j = 0; council_.revise && j < picks.size(); ++j) {
    CouncilCandidate& parent = first[picks[j]];
    parent.shortlisted = true;
    CouncilCandidate c;
    c.round = 2;
    c.role = parent.role;
    c.parent_id = parent.id;
    c.plan = parent.plan;
    c.id = parent.id + "/revised";
    c.plan.plan_id = c.id;
    Rng r = rng.child("revise", j);
    const auto added = apply_mitigation(c.plan, sc, parent.critique, r);
    for (const auto& a : added) c.mitigation += (c.mitigation.empty() ? "" : ";") + a;
    if (c.mitigation.empty()) c.mitigation = "none";
    revised.push_back(std::move(c));
  }
  tbb::parallel_for(std::size_t{0}, revised.size(),
                    [&](std::size_t i) { stress(revised[i], sc, "council/revised/" + revised[i].role); });

  // 5. Final choice over first-round and revised candidates, diversity taken in the whole pool.
  rec.n_initial = static_cast<int>(first.size());
  rec.n_revised = static_cast<int>(revised.size());
  rec.candidates = std::move(first);
  for (auto& c : revised) rec.candidates.push_back(std::move(c));
  sets.clear();
  for (const auto& c : rec.candidates) sets.push_back(c.categories);
  std::vector<double> scores;
  for (std::size_t i = 0; i < rec.candidates.size(); ++i) {
    auto& c = rec.candidates[i];
    c.diversity = diversity_contribution(sets, i);
    c.score = adjudicator_score(council_, c.q.q, c.d.D, c.diversity, c.pressure, &c.parts);
    scores.push_back(c.score);
  }
  const auto order = shortlist(scores, scores.size());
  rec.selected = static_cast<int>(order.front());
  rec.candidates[order.front()].selected = true;
  rec.consensus_gap = order.size() > 1 ? scores[order[0]] - scores[order[1]] : 0.0;
  double best_first = -1e300;
  for (const auto& c : rec.candidates)
    if (c.round == 1) best_first = std::max(best_first, c.score);
  rec.robustness_margin = scores[order.front()] - best_first;

  std::vector<CategorySet> s_first, s_rev;
  double reduction = 0;
  for (const auto& c : rec.candidates) {
    (c.round == 1 ? s_first : s_rev).push_back(c.categories);
    if (c.round == 2)
      for (const auto& p : rec.candidates)
        if (p.id == c.parent_id) reduction += p.pressure - c.pressure;
  }
  rec.council_diversity = action_type_diversity(s_first);
  rec.revised_diversity = action_type_diversity(s_rev);
  rec.pressure_reduction = rec.n_revised > 0 ? reduction / rec.n_revised : 0.0;
  return rec;
}

BluePlanResult CouncilPolicy::do_plan(const Scenario& sc, Rng& rng) const {
  BluePlanResult r;
  auto rec = std::make_shared<const CouncilRecord>(deliberate(sc, rng));
  if (const auto* c = rec->chosen())
    r.plan = c->plan;
  else
    r.failure = rec->failure;
  r.details = std::move(rec);
  return r;
}

void CouncilPolicy::trace_rows(const Scenario& sc, const BluePlanResult& result, const PlanOutcome* outcome,
                               TraceRows& out) const {
  const auto* held = std::any_cast<std::shared_ptr<const CouncilRecord>>(&result.details);
  if (!held || !*held) return;
  const CouncilRecord& rec = **held;
  auto r = [](double v) { return fmt_real(v); };
  auto i = [](long long v) { return std::to_string(v); };
  auto& trace = out[council_trace_file().name];
  const CouncilCandidate* sel = rec.chosen();
  if (!sel || !outcome || !result.plan) {
    std::vector<std::string> row(council_trace_file().header.size());
    row[0] = sc.id;
    row[row.size() - 2] = "failed";
    row[row.size() - 1] = !sel ? rec.failure : !result.plan ? result.failure : "the council plan met no RED response";
    trace.push_back(std::move(row));
  } else {
    trace.push_back({sc.id, sel->id, outcome->red_plan_id, r(outcome->advantage), r(outcome->blue_coherence),
                     r(outcome->red_coherence), r(rec.council_diversity), r(rec.revised_diversity),
                     r(rec.consensus_gap), r(sel->pressure), r(rec.robustness_margin), r(rec.pressure_reduction),
                     i(rec.n_initial), i(rec.n_revised), i(sel->round), r(outcome->blue_win_rate), "ok", ""});
  }
  auto& cands = out[council_candidates_file().name];
  for (const auto& c : rec.candidates)
    cands.push_back({sc.id, c.id, i(c.round), c.role, c.parent_id, r(c.q.q), r(c.d.D), r(c.diversity),
                     r(c.pressure), std::string(to_string(c.critique)), c.critique_red_id, r(c.parts[0]),
                     r(c.parts[1]), r(c.parts[2]), r(c.parts[3]), r(c.score), r(c.round1_score),
                     c.shortlisted ? "1" : "0", c.selected ? "1" : "0", c.mitigation});
}

}  // namespace advplan

ADVPLAN_REGISTER_BLUE_POLICY(::advplan::CouncilPolicy::static_info(),
                             [](const ::advplan::PolicySpec&, const ::advplan::Params& p,
                                const ::advplan::PolicyContext& ctx) -> std::unique_ptr<::advplan::BluePolicy> {
                               return std::make_unique<::advplan::CouncilPolicy>(p, ctx);
                             })
