// Search RED, search@N: a beam search over RED plans with plan edits as moves, N plan evaluations
// (docs/POLICIES.md "Search RED", docs/METRICS.md "Search RED", docs/DECISIONS.md "Search RED").
#include "advplan/council/search_red.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "advplan/core/error.hpp"
#include "advplan/core/random.hpp"
#include "advplan/council/council.hpp"
#include "advplan/metrics/frontier.hpp"
#include "advplan/metrics/plan_layout.hpp"
#include "advplan/metrics/pressure.hpp"
#include "advplan/scenario/plan_ops.hpp"
#include "policy/scored_candidate.hpp"

namespace advplan {
namespace {

constexpr double kNoScore = -std::numeric_limits<double>::infinity();
/// Draws of a move kind before an expansion gives up without spending an evaluation (every kind may not apply).
constexpr int kMoveTries = 8;
constexpr std::size_t kNumMoves = std::size(kSearchMoves);

/// What the moves read besides the plan: the scenario, the BLUE plan's vulnerabilities, and the weight of each
/// category in an added action's draw (RED's requirement weight times 1 + v_p(c), as the sampler leans).
struct MoveContext {
  const Scenario& sc;
  std::array<double, kNumPressures> vuln{};
  std::array<double, kNumCategories> add_weight{};
};

MoveContext move_context(const RedRequest& req) {
  MoveContext m{*req.scenario, vulnerability(layout_plan(*req.blue, *req.scenario)), {}};
  const auto can = available_categories(m.sc, Side::Red);
  for (std::size_t c = 0; c < kNumCategories; ++c) {
    const auto p = pressure_of(static_cast<Category>(c));
    const double w = m.sc.req(Side::Red).weight[c] + 0.05;  // every available category stays reachable
    m.add_weight[c] = can[c] ? w * (p ? 1.0 + m.vuln[index(*p)] : 1.0) : 0.0;
  }
  return m;
}

bool any_positive(const std::array<double, kNumCategories>& w) {
  return std::any_of(w.begin(), w.end(), [](double x) { return x > 0; });
}

/// Chain steps no branch is attached to: the ones drop may remove and branch may attach to.
std::vector<std::size_t> free_steps(const Plan& p) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < p.chain.size(); ++i)
    if (std::none_of(p.branches.begin(), p.branches.end(), [&](const Branch& b) { return b.at == p.chain[i]; }))
      out.push_back(i);
  return out;
}

bool move_add(Plan& p, const MoveContext& m, Rng& rng) {
  if (!any_positive(m.add_weight)) return false;
  const auto c = static_cast<Category>(rng.weighted_index(m.add_weight));
  return add_side_action(p, m.sc, Side::Red, c, rng, "", "search:add");
}

/// The council's mitigation turned round: an action of the category that exerts a pressure, drawn with weight
/// BLUE's vulnerability to it (uniform when BLUE is vulnerable to none).
bool move_pressure(Plan& p, const MoveContext& m, Rng& rng) {
  const auto pr = static_cast<Pressure>(rng.weighted_index(m.vuln));
  const Category c = pressure_categories(pr).main_effort;
  return add_side_action(p, m.sc, Side::Red, c, rng, "", fmt::format("search:pressure:{}", to_string(pr)));
}

bool move_drop(Plan& p, Rng& rng) {
  if (p.chain.size() < 2) return false;
  const auto steps = free_steps(p);
  if (steps.empty()) return false;
  const std::size_t i = steps[rng.pick_index(steps.size())];
  const std::string id = p.chain[i];
  p.chain.erase(p.chain.begin() + static_cast<std::ptrdiff_t>(i));
  std::erase_if(p.actions, [&](const Action& a) { return a.id == id; });
  return true;
}

bool move_reorder(Plan& p, Rng& rng) {
  if (p.chain.size() < 2) return false;
  const std::size_t i = rng.pick_index(p.chain.size() - 1);
  std::swap(p.chain[i], p.chain[i + 1]);
  return true;
}

bool move_retarget(Plan& p, const MoveContext& m, Rng& rng) {
  if (p.actions.empty() || m.sc.places.size() < 2) return false;
  Action& a = p.actions[rng.pick_index(p.actions.size())];
  std::vector<const std::string*> others;
  for (const auto& place : m.sc.places)
    if (place != a.target) others.push_back(&place);
  if (others.empty()) return false;
  a.target = *others[rng.pick_index(others.size())];
  return true;
}

bool move_reassign(Plan& p, const MoveContext& m, Rng& rng) {
  if (p.actions.empty()) return false;
  Action& a = p.actions[rng.pick_index(p.actions.size())];
  std::vector<const Asset*> others;
  std::vector<double> w;
  for (const Asset* x : able_assets(m.sc, Side::Red, a.category))
    if (x->id != a.asset) others.push_back(x), w.push_back(pick_weight(*x));
  if (others.empty()) return false;
  const Asset* to = others[rng.weighted_index(w)];
  a.asset = to->id;
  p.roles[to->id] = to->role;
  return true;
}

bool move_reverb(Plan& p, const MoveContext& m, Rng& rng) {
  if (p.actions.empty()) return false;
  Action& a = p.actions[rng.pick_index(p.actions.size())];
  std::vector<const std::string*> others;
  for (const auto& v : m.sc.verbs[index(a.category)])
    if (v != a.verb) others.push_back(&v);
  if (others.empty()) return false;
  a.verb = *others[rng.pick_index(others.size())];
  return true;
}

bool move_reprioritise(Plan& p, Rng& rng) {
  if (p.actions.empty()) return false;
  Action& a = p.actions[rng.pick_index(p.actions.size())];
  const int to = a.priority + (rng.bernoulli(0.5) ? 1 : -1);
  if (to < 1 || to > 5) return false;
  a.priority = to;
  return true;
}

/// A branch at a chain step without one: two options of one new action each, aimed at the step's target.
bool move_branch(Plan& p, const MoveContext& m, Rng& rng) {
  const auto steps = free_steps(p);
  if (steps.empty() || !any_positive(m.add_weight)) return false;
  const std::string at = p.chain[steps[rng.pick_index(steps.size())]];
  const std::string target = p.actions[static_cast<std::size_t>(p.find_action(at))].target;
  Branch b{at, "search: if the first course is blocked", {}};
  for (int o = 0; o < 2; ++o) {
    auto a = draw_action(m.sc, Side::Red, static_cast<Category>(rng.weighted_index(m.add_weight)), rng);
    if (!a) return false;  // nothing added yet to a plan the caller discards on failure
    a->target = target;
    a->metadata["added_by"] = "search:branch";
    b.options.push_back({add_option_action(p, m.sc, std::move(*a)).id});
  }
  p.branches.push_back(std::move(b));
  return true;
}

bool apply_move(std::size_t kind, Plan& p, const MoveContext& m, Rng& rng) {
  switch (kind) {
    case 0: return move_add(p, m, rng);
    case 1: return move_pressure(p, m, rng);
    case 2: return move_drop(p, rng);
    case 3: return move_reorder(p, rng);
    case 4: return move_retarget(p, m, rng);
    case 5: return move_reassign(p, m, rng);
    case 6: return move_reverb(p, m, rng);
    case 7: return move_reprioritise(p, rng);
    default: return move_branch(p, m, rng);
  }
}

/// One search's state: every scored plan (candidates_, in evaluation order) and its node.
class BeamSearch {
 public:
  BeamSearch(const RedRequest& req, const SearchSettings& s)
      : req_(req), s_(s), full_(s.lambda < 1 || req.detail == RedDetail::full), batch_(req, full_),
        moves_(move_context(req)),
        key_(Rng::key_prefix(req.run_seed, req.scenario->id, sample_stream("red-search/" + req.stream, req.sample))) {}
  RedResponse run(SearchStats* stats);

 private:
  struct Node {
    double score = kNoScore;
    int failures = 0;
    bool done = false;  ///< exhausted, pruned or invalid: never expanded again
  };
  double criterion(const RedCandidate& c) const;
  void add(RedCandidate c);
  void score_sample(std::size_t i);
  void expand(std::size_t parent);
  void fail(std::size_t parent);
  std::vector<std::size_t> beam() const;
  int evaluations() const { return static_cast<int>(candidates_.size()); }

  const RedRequest& req_;
  SearchSettings s_;
  bool full_;
  detail::CandidateBatch batch_;
  MoveContext moves_;
  std::uint64_t key_;
  std::uint64_t draws_ = 0;  ///< the move stream's next index
  std::vector<RedCandidate> candidates_;
  std::vector<Node> nodes_;
  SearchStats stats_;
};

double BeamSearch::criterion(const RedCandidate& c) const {
  if (!c.valid) return kNoScore;
  return s_.lambda >= 1 ? c.q.q : s_.lambda * c.q.q + (1 - s_.lambda) * c.d->D;
}

void BeamSearch::add(RedCandidate c) {
  c.index = evaluations();
  Node n;
  n.score = criterion(c);
  n.done = !c.valid;
  stats_.invalid += c.valid ? 0 : 1;
  candidates_.push_back(std::move(c));
  nodes_.push_back(n);
}

/// Candidate i of the request's stream (greedy@k's candidate i), scored: one evaluation.
void BeamSearch::score_sample(std::size_t i) { add(batch_.draw(i)); }

void BeamSearch::fail(std::size_t parent) {
  Node& n = nodes_[parent];
  if (!n.done && ++n.failures >= s_.patience) {
    n.done = true;
    ++stats_.exhausted;
  }
}

/// One child of `parent`: a move drawn from the move stream (redrawn while it does not apply, at most kMoveTries
/// times; a parent with no applicable move fails without spending an evaluation), then scored. A child no better
/// than its parent is pruned (never expanded) and counts as the parent's failure.
void BeamSearch::expand(std::size_t parent) {
  Rng rng = Rng::keyed_at(key_, draws_++);
  Plan child = candidates_[parent].plan;
  bool moved = false;
  std::size_t kind = 0;
  for (int t = 0; t < kMoveTries && !moved; ++t) moved = apply_move(kind = rng.pick_index(kNumMoves), child, moves_, rng);
  if (!moved) return fail(parent);
  child.plan_id = fmt::format("{}/red/{}/s{}-{}-p{}", req_.scenario->id, req_.stream, evaluations(), kSearchMoves[kind],
                              parent);
  const auto& sc = *req_.scenario;
  add(score_red_plan(std::move(child), sc, moves_.vuln, req_.weights, 0, full_ ? RedDetail::full : RedDetail::quality));
  ++stats_.edits;
  Node& c = nodes_.back();
  if (c.score > nodes_[parent].score) {
    ++stats_.improved;
    return;
  }
  c.done = true;
  fail(parent);
}

/// The plans expanded this round: the best `beam` plans not done, by score then evaluation order.
std::vector<std::size_t> BeamSearch::beam() const {
  std::vector<std::size_t> open;
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    if (!nodes_[i].done) open.push_back(i);
  const std::size_t b = std::min(open.size(), static_cast<std::size_t>(s_.beam));
  std::partial_sort(open.begin(), open.begin() + static_cast<std::ptrdiff_t>(b), open.end(),
                    [&](std::size_t x, std::size_t y) {
                      return nodes_[x].score != nodes_[y].score ? nodes_[x].score > nodes_[y].score : x < y;
                    });
  open.resize(b);
  return open;
}

RedResponse BeamSearch::run(SearchStats* stats) {
  const int n = s_.evaluations;
  std::size_t next_sample = static_cast<std::size_t>(std::min(n, s_.beam));
  for (std::size_t i = 0; i < next_sample; ++i) score_sample(i);
  stats_.seeds = evaluations();
  while (evaluations() < n) {
    const auto parents = beam();
    if (parents.empty()) {  // every plan exhausted: backtrack to the sampler, a fresh seed
      score_sample(next_sample++);
      ++stats_.restarts;
      continue;
    }
    for (std::size_t p : parents)
      if (evaluations() < n) expand(p);
  }
  stats_.evaluations = evaluations();
  RedResponse r;
  std::vector<double> q, d;
  for (const auto& c : candidates_) {
    q.push_back(c.valid ? c.q.q : std::numeric_limits<double>::quiet_NaN());
    d.push_back(c.valid && c.d ? c.d->D : std::numeric_limits<double>::quiet_NaN());
  }
  r.selected = s_.lambda >= 1 ? select_quality_greedy(q) : select_constraint_aware(q, d, s_.lambda);
  r.candidates = std::move(candidates_);
  if (stats) *stats = stats_;
  return r;
}

int integer_param(const Params& p, const char* name) {
  const double v = p.at(name);
  if (v != std::floor(v))
    throw PolicyError(fmt::format("policies.search.{}: {} must be an integer, while {} was given", name, name, v));
  return static_cast<int>(v);
}

class SearchPolicy final : public RedPolicy {
 public:
  static PolicyInfo static_info() {
    PolicyInfo info{"search",
                    Side::Red,
                    true,
                    16,
                    ThreadSafety::constant,
                    {{"beam", 4, 1, 64, "plans expanded per round, and the sampled seeds"},
                     {"patience", 2, 1, 16, "failed expansions before a plan is exhausted"},
                     {"lambda", 1.0, 0.0, 1.0, "criterion: 1 quality, below 1 lambda q + (1 - lambda) D"}},
                    "beam search over plan edits, N plan evaluations"};
    info.reads_framing = false;
    return info;
  }
  SearchPolicy(int n, Params p) : RedPolicy(static_info(), n, std::move(p)) {
    settings_.evaluations = n;
    settings_.beam = integer_param(params(), "beam");
    settings_.patience = integer_param(params(), "patience");
    settings_.lambda = params().at("lambda");
  }

 protected:
  RedResponse do_respond(const RedRequest& req, CandidateCache*) const override {
    return search_red_response(req, settings_);
  }

 private:
  SearchSettings settings_;
};

}  // namespace

RedResponse search_red_response(const RedRequest& req, const SearchSettings& s, SearchStats* stats) {
  if (s.evaluations < 1 || s.beam < 1 || s.patience < 1)
    throw PolicyError(fmt::format("search: N, beam and patience must be at least 1, while {}, {} and {} were given",
                                  s.evaluations, s.beam, s.patience));
  if (s.evaluations > kMaxSearchEvaluations)  // the bound a spec's N has (parse_policy_spec), for direct callers
    throw PolicyError(fmt::format("search: N must be at most {}, while {} was given", kMaxSearchEvaluations,
                                  s.evaluations));
  BeamSearch search(req, s);
  return search.run(stats);
}

ADVPLAN_REGISTER_RED_POLICY(SearchPolicy::static_info(),
                            [](const PolicySpec& s, const Params& p, const PolicyContext&) -> std::unique_ptr<RedPolicy> {
                              return std::make_unique<SearchPolicy>(s.k.value_or(16), p);
                            })

}  // namespace advplan
