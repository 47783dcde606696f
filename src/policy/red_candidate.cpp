#include "advplan/policy/red_candidate.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <charconv>
#include <iterator>
#include <limits>
#include <tbb/parallel_for.h>

#include "advplan/core/error.hpp"
#include "advplan/core/random.hpp"
#include "advplan/core/validation.hpp"
#include "core/validation_reference.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/scenario/plan_sampler.hpp"
#include "core/resolved_plan.hpp"
#include "metrics/resolved_layout.hpp"
#include "core/thread_buffer.hpp"
#include "policy/scored_candidate.hpp"
#include "scenario/sampled_plan.hpp"

namespace advplan {

RedCandidate score_red_plan(Plan plan, const Scenario& sc, const std::array<double, kNumPressures>& vuln,
                            const QualityWeights& weights, int candidate_index, RedDetail detail) {
  return detail::score_red_plan_resolved(std::move(plan), nullptr, sc, vuln, weights, candidate_index,
                                         detail == RedDetail::full);
}

RedCandidate detail::score_red_plan_resolved(Plan plan, const Asset* const* valid_assets, const Scenario& sc,
                                             const std::array<double, kNumPressures>& vuln,
                                             const QualityWeights& weights, int candidate_index, bool with_coherence) {
  RedCandidate c;
  c.index = candidate_index;
  // Validation, layout, q, D and pressure allocate nothing in steady state (per-thread buffers): the RED
  // candidate loop is the hottest path of a run.
  const Asset* const* assets = valid_assets;
  if (!assets) {
    thread_local std::vector<const Asset*> tls_assets;  // each action's asset, as validation resolves it
    std::vector<const Asset*>& resolved = detail::bound(tls_assets);  // src/core/thread_buffer.hpp
    resolved.resize(plan.actions.size());
    if (!detail::accepts_resolving(plan, sc, Side::Red, resolved.data())) {
      const auto violations = validate_plan_reference(plan, sc, Side::Red);  // the fast check said no: the full one
      if (!violations.empty()) {
        c.valid = false;
        for (const auto& v : violations) c.invalid_reason += (c.invalid_reason.empty() ? "" : "; ") + v.str();
        c.plan = std::move(plan);
        return c;
      }
      for (std::size_t i = 0; i < plan.actions.size(); ++i) resolved[i] = sc.find_asset(plan.actions[i].asset);
    }
    assets = resolved.data();
  }
  c.plan = std::move(plan);
  // Moving the plan moves its actions' storage, not the actions: the assets and the layout stay valid.
  score_valid_into(c, c.plan, assets, sc, vuln, weights, with_coherence);
  return c;
}

namespace {
/// A thread's layout and coverage buffers, reused by every candidate it scores.
struct Scratch {
  std::vector<PlacedAction> layout;
  std::vector<double> cov;
};
Scratch& scratch() {
  thread_local Scratch tls_scratch;
  return detail::bound(tls_scratch);  // src/core/thread_buffer.hpp
}
}  // namespace

void detail::score_valid_into(RedCandidate& c, const Plan& plan, const Asset* const* assets, const Scenario& sc,
                              const std::array<double, kNumPressures>& vuln, const QualityWeights& weights,
                              bool with_coherence) {
  Scratch& s = scratch();
  detail::layout_resolved_into(plan, assets, s.layout);
  const auto& layout = s.layout;
  coverage_into(s.layout, s.cov);  // once, for r and D's risk_mitigation
  c.q = quality(layout, sc, Side::Red, weights, s.cov);
  if (with_coherence) {
    c.d = coherence(plan, layout, sc, s.cov);
    // Once per candidate, for every row that reports it; a valid plan places every action, so the layout names
    // every asset the plan does.
    c.raw_capability = detail::raw_capability_of_layout(layout);
  }
  c.pressure = pressure(pressure_shares(layout), c.q.e, vuln);
  for (const auto& a : layout) c.categories[index(a.action->category)] = true;
}

void detail::pressure_valid_into(RedPressureCandidate& p, const Plan& plan, const Asset* const* assets,
                                 const Scenario& sc, const std::array<double, kNumPressures>& vuln) {
  Scratch& s = scratch();
  detail::layout_resolved_into(plan, assets, s.layout);
  // q's e by quality's own function: the pressure's one input from q.
  p.pressure = pressure(pressure_shares(s.layout), effectiveness(s.layout, sc, Side::Red), vuln);
  for (const auto& a : s.layout) p.categories[index(a.action->category)] = true;
}

RedRequest red_request(const Scenario& sc, const Plan& blue, const PolicyContext& ctx, std::string stream) {
  RedRequest req;
  req.scenario = &sc;
  req.blue = &blue;
  req.run_seed = ctx.run_seed;
  req.stream = std::move(stream);
  req.weights = ctx.quality;
  const TemplateShape& t = ctx.shape_of(sc.template_id, sc.id);
  req.shape = t.shape;
  req.branch_kinds = t.branch_kinds;
  return req;
}

std::vector<RedCandidate>& CandidateCache::entry(const std::string& stream, const Plan& blue) {
  return entries_[{stream, &blue, blue.plan_id}];
}

void CandidateCache::start_request(const Plan& blue) {
  const auto it = remaining_.find(&blue);
  if (it == remaining_.end() || it->second <= 0) return;
  if (--it->second == 0) last_.insert(&blue);
}

bool CandidateCache::in_last_request(const Plan& blue) const { return last_.contains(&blue); }

detail::CandidateBatch::CandidateBatch(const RedRequest& req, bool with_coherence)
    : sc_(*req.scenario),
      weights_(req.weights),
      vuln_(vulnerability(layout_plan(*req.blue, *req.scenario))),
      opts_{req.shape, req.branch_kinds, 0.6, {}},
      // A plan valid by construction skips validation and keeps the assets the sampler drew (src/scenario/
      // sampled_plan.hpp); that needs every asset id to name one asset, which the batch's tables record.
      tables_(sampler_tables(*req.scenario, Side::Red)),
      // The key's strings are hashed once (Rng::key_prefix), and each id is the batch's prefix and its index.
      key_(Rng::key_prefix(req.run_seed, req.scenario->id, sample_stream("red/" + req.stream, req.sample))),
      id_prefix_(fmt::format("{}/red/{}/c", req.scenario->id, req.stream)),
      with_coherence_(with_coherence) {
  // RED category weights lean towards the pressures the BLUE plan leaves uncovered.
  for (std::size_t c = 0; c < kNumCategories; ++c) {
    const auto p = pressure_of(static_cast<Category>(c));
    opts_.category_bias[c] = p ? 1.0 + vuln_[index(*p)] : 1.0;
  }
}

std::string detail::CandidateBatch::id_of(std::size_t i) const {
  std::string id;
  id.reserve(id_prefix_.size() + 20);
  id.append(id_prefix_);
  char digits[24];
  id.append(digits, std::to_chars(digits, digits + sizeof digits, i).ptr);
  return id;
}

RedCandidate detail::CandidateBatch::draw(std::size_t i) const {
  thread_local std::vector<const Asset*> tls_assets;
  std::vector<const Asset*>& assets = detail::bound(tls_assets);  // src/core/thread_buffer.hpp
  Rng rng = Rng::keyed_at(key_, static_cast<std::uint64_t>(i));
  bool valid = false;
  Plan p = sample_plan_resolved(sc_, Side::Red, rng, opts_, id_of(i), &assets, &valid, &tables_);
  const Asset* const* drawn = valid && tables_.asset_ids_unique ? assets.data() : nullptr;
  return score_red_plan_resolved(std::move(p), drawn, sc_, vuln_, weights_, static_cast<int>(i), with_coherence_);
}

std::optional<RedPressureCandidate> detail::CandidateBatch::draw_pressure(std::size_t i) const {
  if (tables_.asset_ids_unique) {
    // The lean draw into this thread's scratch plan. A plan not valid by construction is drawn again in full
    // (and where two assets share an id, where no plan's layout is the lean one's, every plan is drawn in full).
    thread_local std::vector<const Asset*> tls_assets;
    std::vector<const Asset*>& assets = detail::bound(tls_assets);  // src/core/thread_buffer.hpp
    thread_local Plan tls_plan;
    Plan& lean = detail::bound(tls_plan);
    Rng rng = Rng::keyed_at(key_, static_cast<std::uint64_t>(i));
    bool valid = false;
    sample_plan_lean(lean, sc_, Side::Red, rng, opts_, assets, valid, tables_);
    if (valid) {
      RedPressureCandidate p;
      p.index = static_cast<int>(i);
      p.plan_id = id_of(i);
      pressure_valid_into(p, lean, assets.data(), sc_, vuln_);
      return p;
    }
  }
  RedCandidate c = draw(i);
  if (!c.valid) return std::nullopt;
  return RedPressureCandidate{c.index, std::move(c.plan.plan_id), c.pressure, c.categories};
}

std::vector<RedCandidate> sample_red_candidates(const RedRequest& req, int k, CandidateCache* cache, RedDetail reads) {
  // A cache entry may answer a later request that reads coherence, so it is always complete.
  const bool with_coherence = cache || req.detail == RedDetail::full || reads == RedDetail::full;
  const auto want = static_cast<std::size_t>(std::max(k, 0));
  std::vector<RedCandidate> local;
  std::vector<RedCandidate>& have = cache ? cache->entry(req.stream, *req.blue) : local;
  if (have.size() < want) {
    // Candidate i depends only on (run seed, scenario, stream, i) and the BLUE plan, so the missing indices are
    // drawn and appended: greedy@16 after greedy@8 draws candidates 8..15 only.
    const detail::CandidateBatch batch(req, with_coherence);
    const std::size_t first = have.size();
    // A failed draw (a PlanError from the sampler) leaves the cache as it was: no default candidates behind.
    have.resize(want);
    struct Undo {
      std::vector<RedCandidate>& have;
      std::size_t first;
      bool done = false;
      ~Undo() {
        if (!done) have.resize(first);
      }
    } undo{have, first};
    tbb::parallel_for(first, want, [&](std::size_t i) { have[i] = batch.draw(i); });
    undo.done = true;
  }
  if (!cache) return local;  // drawn for this call alone: moved out, not copied
  if (cache->in_last_request(*req.blue)) {  // no later request: moved out, and the entry starts again
    std::vector<RedCandidate> out(std::make_move_iterator(have.begin()),
                                  std::make_move_iterator(have.begin() + static_cast<std::ptrdiff_t>(want)));
    have.clear();
    return out;
  }
  return {have.begin(), have.begin() + static_cast<std::ptrdiff_t>(want)};
}

std::vector<RedPressureCandidate> sample_red_pressures(const RedRequest& req, int k) {
  const auto want = static_cast<std::size_t>(std::max(k, 0));
  const detail::CandidateBatch batch(req, false);
  std::vector<std::optional<RedPressureCandidate>> drawn(want);
  tbb::parallel_for(std::size_t{0}, want, [&](std::size_t i) { drawn[i] = batch.draw_pressure(i); });
  std::vector<RedPressureCandidate> out;
  out.reserve(want);
  for (auto& p : drawn)
    if (p) out.push_back(std::move(*p));
  return out;
}

}  // namespace advplan
