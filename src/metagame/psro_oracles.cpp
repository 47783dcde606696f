// PSRO's built-in best-response oracles (docs/METRICS.md "PSRO"): a local search over BLUE plans with the
// council's operators, and greedy@k over RED candidates against BLUE's mixture. Both score a cell exactly as a
// run's per_scenario row does (tests/metagame/psro_test.cpp checks the oracles' values against the rows the next
// run writes).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "advplan/core/validation.hpp"
#include "advplan/council/council.hpp"
#include "advplan/metagame/psro.hpp"
#include "advplan/metrics/coherence.hpp"
#include "advplan/metrics/plan_layout.hpp"
#include "advplan/metrics/pressure.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/sim/advantage.hpp"

namespace advplan::metagame {

ScoredBlue score_blue(Plan plan, const Scenario& sc, const QualityWeights& w) {
  // As the run's eval_blue: one layout and one coverage for q and D.
  ScoredBlue b;
  const auto layout = layout_plan(plan, sc);
  std::vector<double> cov;
  coverage_into(layout, cov);
  b.q = quality(layout, sc, Side::Blue, w, cov).q;
  b.D = coherence(plan, layout, sc, cov).D;
  b.raw = raw_capability(plan, sc);
  b.plan = std::move(plan);
  return b;
}

double cell_payoff(const ScoredBlue& b, const RedCandidate& r, const Scenario& sc, const OracleSettings& s,
                   const SimNoise* noise) {
  if (s.payoff == Payoff::advantage) return advantage(b.q, r.q.q);
  const double raw_r = r.raw_capability ? *r.raw_capability : raw_capability(r.plan, sc);
  const double d_r = r.d ? r.d->D : coherence(r.plan, sc).D;
  return simulate(Force{b.raw, b.q, b.D}, Force{raw_r, r.q.q, d_r}, *noise, s.sim).win_rate;
}

namespace {

constexpr double kNoValue = -std::numeric_limits<double>::infinity();

}  // namespace

double blue_value(const ScoredBlue& p, const Scenario& sc, const std::vector<const RedPolicy*>& reds,
                  const std::vector<double>& y, const OracleSettings& s, const SimNoise* noise) {
  double v = 0;
  CandidateCache cache;  // the support's samplers share their draws for this plan, as in a run's scenario task
  for (std::size_t j = 0; j < reds.size(); ++j) {
    if (!(y[j] > 0)) continue;
    RedRequest req = red_request(sc, p.plan, *s.ctx, "baseline");
    const RedResponse resp = reds[j]->respond(req, &cache);
    const RedCandidate* rc = resp.chosen();
    if (rc == nullptr) return kNoValue;
    v += y[j] * cell_payoff(p, *rc, sc, s, noise);
  }
  return v;
}

double red_value(const Plan& c, const Scenario& sc, const std::vector<const Plan*>& blues, const std::vector<double>& x,
                 const OracleSettings& s, const SimNoise* noise) {
  double v = 0;
  for (std::size_t b = 0; b < blues.size(); ++b) {
    if (!(x[b] > 0) || blues[b] == nullptr) continue;
    const RedCandidate answer = score_red_plan(c, sc, vulnerability(layout_plan(*blues[b], sc)), s.quality, 0, RedDetail::full);
    v += x[b] * cell_payoff(score_blue(*blues[b], sc, s.quality), answer, sc, s, noise);
  }
  return v;
}

BlueResponse blue_best_response(const Scenario& sc, const std::vector<const RedPolicy*>& reds,
                                const std::vector<double>& y, const OracleSettings& s, const SimNoise* noise) {
  BlueResponse out;
  if (sc.blue_seed_plans.empty()) {
    out.failure = fmt::format("scenario {} has no BLUE seed plan", sc.id);
    return out;
  }
  Plan start = sc.blue_seed_plans.front();
  start.plan_id = fmt::format("{}/blue/psro/{}", sc.id, s.iteration);
  ScoredBlue cur = score_blue(std::move(start), sc, s.quality);
  double cur_v = blue_value(cur, sc, reds, y, s, noise);
  out.seed_value = cur_v;
  out.evaluations = 1;
  const std::string purpose = fmt::format("psro/blue/{}", s.iteration);
  for (std::uint64_t step = 0; out.evaluations < s.blue_budget; ++step) {
    // The neighbours in a fixed order: each proposer role's action, then each pressure's mitigations.
    std::vector<Plan> next;
    for (std::size_t r = 0; r < kProposerRoles.size(); ++r) {
      Plan p = cur.plan;
      Rng rng = Rng::keyed(s.run_seed, sc.id, purpose, step * 16 + r);
      if (add_role_action(p, sc, kProposerRoles[r], rng, "", "psro")) next.push_back(std::move(p));
    }
    for (std::size_t k = 0; k < kNumPressures; ++k) {
      Plan p = cur.plan;
      Rng rng = Rng::keyed(s.run_seed, sc.id, purpose, step * 16 + 8 + k);
      if (!apply_mitigation(p, sc, static_cast<Pressure>(k), rng).empty()) next.push_back(std::move(p));
    }
    double best_v = kNoValue;
    std::optional<ScoredBlue> best;
    for (auto& p : next) {
      if (out.evaluations >= s.blue_budget) break;
      if (!validate_plan(p, sc, Side::Blue).empty()) continue;  // an operator may break a template's limits
      ScoredBlue cand = score_blue(std::move(p), sc, s.quality);
      const double v = blue_value(cand, sc, reds, y, s, noise);
      ++out.evaluations;
      if (v > best_v) {
        best_v = v;
        best = std::move(cand);
      }
    }
    if (!best || !(best_v > cur_v)) break;  // a local optimum (or the budget ran out on no better neighbour)
    cur = std::move(*best);
    cur_v = best_v;
    ++out.moves;
    if (next.empty()) break;
  }
  if (cur_v == kNoValue) {
    out.failure = fmt::format("scenario {}: some RED policy of the mixture answers no plan the search found", sc.id);
    return out;
  }
  out.plan = std::move(cur.plan);
  out.value = cur_v;
  return out;
}

RedResponseChoice red_best_response(const Scenario& sc, const std::vector<const Plan*>& blues,
                                    const std::vector<double>& x, const OracleSettings& s, const SimNoise* noise) {
  RedResponseChoice out;
  std::vector<std::size_t> support;
  for (std::size_t i = 0; i < blues.size(); ++i)
    if (x[i] > 0 && blues[i] != nullptr) support.push_back(i);
  if (support.empty()) {
    out.failure = fmt::format("scenario {}: no plan of BLUE's support", sc.id);
    return out;
  }
  const int per = (s.red_k + static_cast<int>(support.size()) - 1) / static_cast<int>(support.size());
  std::vector<ScoredBlue> scored;
  std::vector<std::array<double, kNumPressures>> vuln;
  for (const std::size_t i : support) {
    scored.push_back(score_blue(*blues[i], sc, s.quality));
    vuln.push_back(vulnerability(layout_plan(*blues[i], sc)));
  }
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t a = 0; a < support.size(); ++a) {
    RedRequest req = red_request(sc, *blues[support[a]], *s.ctx, fmt::format("psro/{}/{}", s.iteration, a));
    req.detail = RedDetail::full;
    const std::vector<RedCandidate> drawn = sample_red_candidates(req, per, nullptr, RedDetail::full);
    for (const RedCandidate& c : drawn) {
      if (!c.valid) continue;
      double v = 0;
      for (std::size_t b = 0; b < support.size(); ++b) {
        const RedCandidate answer = score_red_plan(c.plan, sc, vuln[b], s.quality, c.index, RedDetail::full);
        v += x[support[b]] * cell_payoff(scored[b], answer, sc, s, noise);
      }
      ++out.candidates;
      if (v < best) {
        best = v;
        out.plan = c.plan;
      }
    }
  }
  if (out.candidates == 0) {
    out.failure = fmt::format("scenario {}: no valid RED candidate", sc.id);
    return out;
  }
  out.plan.plan_id = fmt::format("{}/red/psro/{}", sc.id, s.iteration);
  out.value = best;
  return out;
}

double nash_conv(const IntMatrix& a, const std::vector<double>& x, const std::vector<double>& y) {
  double best_row = -std::numeric_limits<double>::infinity(), worst_col = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < a.rows; ++i) {
    double v = 0;
    for (std::size_t j = 0; j < a.cols && j < y.size(); ++j) v += a.value(i, j) * y[j];
    best_row = std::max(best_row, v);
  }
  for (std::size_t j = 0; j < a.cols; ++j) {
    double v = 0;
    for (std::size_t i = 0; i < a.rows && i < x.size(); ++i) v += a.value(i, j) * x[i];
    worst_col = std::min(worst_col, v);
  }
  return best_row - worst_col;
}

}  // namespace advplan::metagame
