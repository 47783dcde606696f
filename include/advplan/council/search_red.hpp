#pragma once
// Search RED, `search@N` (docs/POLICIES.md "Search RED", docs/METRICS.md "Search RED"): a beam search over RED
// plans whose moves are plan edits (the council's placement rule for added actions, and drop, reorder, retarget,
// reassign, re-verb, re-prioritise, branch), scored by RED's own criterion (quality, or lambda q + (1 - lambda) D as
// constraint@k), spending exactly N plan evaluations: the currency of greedy@k's k. Registered as the RED policy
// "search"; it lives in council/ because it reuses the council's operators (layering: policy/ cannot see them).
#include <string>
#include <string_view>

#include "advplan/policy/red_policy.hpp"

namespace advplan {

/// The largest N: the bound of every spec's k (parse_policy_spec), kept by search_red_response for direct callers.
inline constexpr int kMaxSearchEvaluations = 1024;

struct SearchSettings {
  int evaluations = 16;  ///< N: plans scored (valid or not), seeds and edits alike
  int beam = 4;          ///< plans expanded per round, and the seeds drawn first (min(N, beam))
  int patience = 2;      ///< failed expansions (a child no better than its parent) before a plan is exhausted
  double lambda = 1.0;   ///< 1: quality q (greedy's criterion); below 1: lambda q + (1 - lambda) D
};

/// What one search did, for tests and the docs' accounting (evaluations == seeds + edits + restarts, always N).
struct SearchStats {
  int evaluations = 0;  ///< plans scored
  int seeds = 0;        ///< sampled plans scored first (candidates 0..seeds-1 of the request's stream)
  int edits = 0;        ///< children made by a move and scored
  int restarts = 0;     ///< fresh samples scored after every plan was exhausted (candidates seeds, seeds+1, ...)
  int improved = 0;     ///< children that scored above their parent
  int exhausted = 0;    ///< plans retired after `patience` failed expansions (the search backtracks past them)
  int invalid = 0;      ///< scored plans that failed validation (they cost an evaluation, as in greedy@k)
};

/// The move kinds, in the order a move is drawn from (uniformly; an inapplicable draw is redrawn).
inline constexpr std::string_view kSearchMoves[] = {"add",      "pressure", "drop",     "reorder",
                                                    "retarget", "reassign", "reverb",   "reprioritise",
                                                    "branch"};

/// The search's answer to `req`: every scored plan as a candidate (index = evaluation order 0..N-1), the chosen
/// one by the criterion over all of them (ties to the lowest index), so it never returns a plan scoring below one
/// it scored. Deterministic: every draw comes from Rng::keyed(run seed, scenario, sample_stream("red-search/" +
/// stream, sample), draw number), and the seeds are the request stream's candidates, so the answer does not depend
/// on the thread count. `stats`, when given, receives the accounting. Throws PolicyError for N outside 1 ..
/// kMaxSearchEvaluations, or a beam or patience below 1.
RedResponse search_red_response(const RedRequest& req, const SearchSettings& s, SearchStats* stats = nullptr);

}  // namespace advplan
