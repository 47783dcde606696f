// One conformance suite for every registered RED policy (after OpenSpiel's RandomSimTest), run through
// INSTANTIATE_TEST_SUITE_P over RedRegistry::instance().names(), so a new plug-in is tested by registering it.
// Plus the candidate-stream contract (greedy@k and constraint@k share candidates; greedy@4's are the first 4 of
// greedy@16's) and the exact error messages of make_red_policy.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <cstring>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/core/plan_json.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/run/config.hpp"
#include "advplan/metrics/frontier.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/policy/red_policy.hpp"
#include "advplan/run/scenario_lookup.hpp"

#include "support/fixtures.hpp"
#include "support/plan_sets.hpp"

namespace advplan {
namespace {

using ::testing::HasSubstr;

const ExperimentConfig& paper() { return testing::paper_config(); }

/// The scenarios the suite runs on: one per corner of the corpus.
const std::vector<Scenario>& scenarios() {
  static const std::vector<Scenario> s = {find_scenario(paper(), "urban-100"), find_scenario(paper(), "air-defense-105"),
                                          find_scenario(paper(), "humanitarian-129")};
  return s;
}

/// The request the runner builds: the scenario's seed plan on the "baseline" stream, with another run seed.
RedRequest request_for(const Scenario& sc, std::uint64_t run_seed) {
  RedRequest req = red_request(sc, sc.blue_seed_plans.front(), policy_context(paper()), "baseline");
  req.run_seed = run_seed;
  return req;
}

bool in_unit(double x) { return x >= 0.0 && x <= 1.0; }

/// Plans of every candidate, in order.
std::vector<Plan> plans_of(const RedResponse& r) {
  std::vector<Plan> out;
  for (const auto& c : r.candidates) out.push_back(c.plan);
  return out;
}

/// Policies that need a network or a process outside the test cannot run here.
bool needs_outside_world(const std::string& name, const PolicyInfo& info) {
  for (const char* w : {"live", "http", "exec"})
    if (name.find(w) != std::string::npos) return true;
  for (const char* w : {"network", "HTTP", "endpoint", "external process"})
    if (info.description.find(w) != std::string::npos) return true;
  return false;
}

// ---- the parameterised conformance suite ------------------------------------------------------------------------

class RedPolicyConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    info_ = RedRegistry::instance().info(GetParam(), "RED");
    if (needs_outside_world(GetParam(), info_))
      GTEST_SKIP() << "policy '" << GetParam() << "' needs a network or external process: " << info_.description;
    // A plan set (plans:FILE) replays a file made for the suite's scenarios.
    policy_ = make_red_policy(GetParam() == "plans" ? testing::plan_set_spec(scenarios(), policy_context(paper())) : GetParam(),
                              policy_context(paper()));
  }
  PolicyInfo info_;
  std::unique_ptr<RedPolicy> policy_;
};

TEST_P(RedPolicyConformance, DescribesItself) {
  EXPECT_EQ(info_.short_name, GetParam());
  EXPECT_EQ(info_.side, Side::Red);
  EXPECT_FALSE(info_.description.empty());
  EXPECT_EQ(policy_->info().short_name, GetParam());
  EXPECT_EQ(policy_->k(), info_.samples_k ? info_.default_k : 1);
  for (const auto& p : info_.params) {
    ASSERT_TRUE(policy_->params().contains(p.name)) << p.name;
    EXPECT_EQ(policy_->params().at(p.name), p.default_value) << p.name;
    EXPECT_TRUE(p.default_value >= p.lo && p.default_value <= p.hi) << p.name;
  }
}

TEST_P(RedPolicyConformance, ResponseValidatesRoundTripsAndScoresInUnitInterval) {
  for (const Scenario& sc : scenarios()) {
    SCOPED_TRACE(sc.id);
    const RedResponse r = policy_->respond(request_for(sc, paper().seed));
    const RedCandidate* c = r.chosen();
    ASSERT_NE(c, nullptr) << r.failure;
    EXPECT_TRUE(r.failure.empty());
    EXPECT_EQ(c->plan.side, Side::Red);
    const auto v = validate_plan(c->plan, sc, Side::Red);
    EXPECT_TRUE(v.empty()) << v.front().str();
    if (info_.samples_k) {
      EXPECT_EQ(static_cast<int>(r.candidates.size()) + r.dropped, policy_->k());
    }
    for (const RedCandidate& x : r.candidates) {
      EXPECT_TRUE(x.valid) << "respond() must drop invalid candidates";
      EXPECT_TRUE(validate_plan(x.plan, sc, Side::Red).empty()) << x.plan.plan_id;
      // JSON round trip: decode(encode(plan)) == plan, with no violations.
      std::vector<Violation> violations;
      const auto back = plan_from_json(nlohmann::json::parse(plan_to_string(x.plan)), violations);
      ASSERT_TRUE(back.has_value());
      EXPECT_TRUE(violations.empty()) << violations.front().str();
      EXPECT_EQ(*back, x.plan);
      EXPECT_TRUE(in_unit(x.q.q)) << x.q.q;
      EXPECT_TRUE(in_unit(x.q.e) && in_unit(x.q.c) && in_unit(x.q.r));
      ASSERT_TRUE(x.d) << "a full answer has every candidate's coherence";
      EXPECT_TRUE(in_unit(x.d->D)) << x.d->D;
      for (double part : x.d->part) EXPECT_TRUE(in_unit(part)) << part;
      ASSERT_TRUE(x.raw_capability);
      EXPECT_EQ(*x.raw_capability, raw_capability(x.plan, sc));
      EXPECT_TRUE(in_unit(x.pressure.magnitude)) << x.pressure.magnitude;
    }
  }
}

TEST_P(RedPolicyConformance, SameRequestSameOutput) {
  for (const Scenario& sc : scenarios()) {
    SCOPED_TRACE(sc.id);
    const RedResponse a = policy_->respond(request_for(sc, paper().seed));
    const RedResponse b = policy_->respond(request_for(sc, paper().seed));
    const RedRequest req = request_for(sc, paper().seed);
    // Built for two requests: the first keeps the candidates, the second (the last) moves them out, and a request
    // after that draws them again.
    CandidateCache cache({{req.blue, 2}});
    const RedResponse c = policy_->respond(req, &cache);
    const RedResponse d = policy_->respond(req, &cache);
    const RedResponse e = policy_->respond(req, &cache);
    for (const RedResponse* r : {&b, &c, &d, &e}) {
      EXPECT_EQ(r->selected, a.selected);
      EXPECT_EQ(r->dropped, a.dropped);
      EXPECT_EQ(plans_of(*r), plans_of(a));
      ASSERT_EQ(r->candidates.size(), a.candidates.size());
      for (std::size_t i = 0; i < a.candidates.size(); ++i) {
        EXPECT_EQ(r->candidates[i].q.q, a.candidates[i].q.q);
        EXPECT_EQ(r->candidates[i].d->D, a.candidates[i].d->D);
        EXPECT_EQ(r->candidates[i].pressure.magnitude, a.candidates[i].pressure.magnitude);
      }
    }
  }
}

TEST(CandidateCache, TheLastRequestMovesTheCandidatesOutAndALaterOneDrawsThemAgain) {
  const Scenario& sc = scenarios().front();
  const RedRequest req = request_for(sc, paper().seed);
  const std::vector<RedCandidate> fresh = sample_red_candidates(req, 16);
  auto same = [&](const std::vector<RedCandidate>& got, std::size_t k) {
    ASSERT_EQ(got.size(), k);
    for (std::size_t i = 0; i < k; ++i) {
      EXPECT_EQ(got[i].plan, fresh[i].plan) << i;
      EXPECT_EQ(got[i].q.q, fresh[i].q.q) << i;
      EXPECT_EQ(got[i].pressure.magnitude, fresh[i].pressure.magnitude) << i;
    }
  };
  CandidateCache cache({{req.blue, 2}});  // two requests will answer this plan
  cache.start_request(*req.blue);
  EXPECT_FALSE(cache.in_last_request(*req.blue));
  same(sample_red_candidates(req, 8, &cache), 8);
  EXPECT_EQ(cache.entry(req.stream, *req.blue).size(), 8u);  // kept for the next request
  cache.start_request(*req.blue);
  EXPECT_TRUE(cache.in_last_request(*req.blue));
  same(sample_red_candidates(req, 16, &cache), 16);  // extends to 16, then hands them over
  EXPECT_TRUE(cache.entry(req.stream, *req.blue).empty());
  cache.start_request(*req.blue);                    // a request the cache was not built with
  same(sample_red_candidates(req, 4, &cache), 4);    // drawn again: the same candidates
  // A cache built without counts, or for another plan, keeps them.
  Plan other = *req.blue;
  CandidateCache uncounted({{&other, 1}});
  uncounted.start_request(*req.blue);
  same(sample_red_candidates(req, 12, &uncounted), 12);
  EXPECT_EQ(uncounted.entry(req.stream, *req.blue).size(), 12u);
}

/// A policy that marks some of its candidates invalid: RedPolicy::respond must drop them, keep the others' order and
/// point the selection at the same candidate.
class SomeInvalidRed final : public RedPolicy {
 public:
  explicit SomeInvalidRed(std::vector<bool> valid, int selected)
      : RedPolicy({"some_invalid", Side::Red, false, 1, ThreadSafety::constant, {}, "test"}, 1, {}),
        valid_(std::move(valid)), selected_(selected) {}

 protected:
  RedResponse do_respond(const RedRequest& req, CandidateCache*) const override {
    RedResponse r;
    r.candidates = sample_red_candidates(req, static_cast<int>(valid_.size()));
    for (std::size_t i = 0; i < valid_.size(); ++i) r.candidates[i].valid = valid_[i];
    r.selected = selected_;
    return r;
  }

 private:
  std::vector<bool> valid_;
  int selected_;
};

TEST(RedPolicyResponse, InvalidCandidatesAreDroppedInOrderAndTheSelectionFollows) {
  const Scenario& sc = scenarios().front();
  const RedRequest req = request_for(sc, paper().seed);
  const std::vector<RedCandidate> all = sample_red_candidates(req, 6);
  const RedResponse r = SomeInvalidRed({true, false, true, false, false, true}, 5).respond(req);
  EXPECT_EQ(r.dropped, 3);
  ASSERT_EQ(r.candidates.size(), 3u);
  for (const auto& [k, want] : {std::pair{0, 0}, std::pair{1, 2}, std::pair{2, 5}}) {
    EXPECT_EQ(r.candidates[static_cast<std::size_t>(k)].index, want);
    EXPECT_EQ(r.candidates[static_cast<std::size_t>(k)].plan, all[static_cast<std::size_t>(want)].plan);
  }
  EXPECT_EQ(r.selected, 2);
  const RedResponse none = SomeInvalidRed({false, true}, 0).respond(req);  // selected an invalid one
  EXPECT_EQ(none.selected, -1);
  EXPECT_EQ(none.candidates.size(), 1u);
  EXPECT_FALSE(none.failure.empty());
}

TEST(CandidateCache, AFailedDrawLeavesNoCandidatesBehind) {
  // A scenario where RED has no asset: the sampler throws, and the cache entry must not keep placeholder candidates
  // (valid by default) that a later request would return.
  Scenario sc = scenarios().front();
  std::erase_if(sc.assets, [](const Asset& a) { return a.side == Side::Red; });
  const RedRequest req = red_request(sc, sc.blue_seed_plans.front(), policy_context(paper()), "baseline");
  CandidateCache cache;
  EXPECT_THROW(sample_red_candidates(req, 4, &cache), Error);
  EXPECT_TRUE(cache.entry(req.stream, *req.blue).empty());
  EXPECT_THROW(sample_red_candidates(req, 2, &cache), Error);
}

TEST_P(RedPolicyConformance, DifferentRunSeedDifferentSample) {
  if (!info_.samples_k && GetParam() != "single")
    GTEST_SKIP() << "policy '" << GetParam() << "' does not sample from the run's random streams";
  for (const Scenario& sc : scenarios()) {
    SCOPED_TRACE(sc.id);
    const RedResponse a = policy_->respond(request_for(sc, paper().seed));
    const RedResponse b = policy_->respond(request_for(sc, paper().seed + 1));
    EXPECT_NE(plans_of(a), plans_of(b)) << "another run seed must draw other candidates";
  }
}

std::vector<std::string> red_names() { return RedRegistry::instance().names(); }

INSTANTIATE_TEST_SUITE_P(Registered, RedPolicyConformance, ::testing::ValuesIn(red_names()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string s = p.param;
                           for (char& ch : s)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return s;
                         });

// ---- the candidate-stream contract and the selectors --------------------------------------------------------------

TEST(RedPolicyStreams, RegistryHasThePaperBaselines) {
  const auto names = red_names();
  for (const char* n : {"single", "greedy", "constraint", "llm_offline"})
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
}

TEST(RedPolicyStreams, GreedyAndConstraintShareTheirCandidates) {
  const auto greedy = make_red_policy("greedy@8", policy_context(paper()));
  const auto constraint = make_red_policy("constraint@8", policy_context(paper()));
  for (const Scenario& sc : scenarios()) {
    SCOPED_TRACE(sc.id);
    const RedResponse g = greedy->respond(request_for(sc, paper().seed));
    const RedResponse c = constraint->respond(request_for(sc, paper().seed));
    EXPECT_EQ(plans_of(g), plans_of(c));
    EXPECT_EQ(g.dropped, c.dropped);
  }
}

TEST(RedPolicyStreams, SmallerBudgetIsAPrefixOfTheLargerOne) {
  const auto g4 = make_red_policy("greedy@4", policy_context(paper()));
  const auto g16 = make_red_policy("greedy@16", policy_context(paper()));
  const auto single = make_red_policy("single", policy_context(paper()));
  const auto g1 = make_red_policy("greedy@1", policy_context(paper()));
  for (const Scenario& sc : scenarios()) {
    SCOPED_TRACE(sc.id);
    // Compare the raw samples (before invalid candidates are dropped) by candidate index.
    const auto c4 = sample_red_candidates(request_for(sc, paper().seed), 4);
    const auto c16 = sample_red_candidates(request_for(sc, paper().seed), 16);
    ASSERT_EQ(c4.size(), 4u);
    ASSERT_EQ(c16.size(), 16u);
    for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(c4[i].plan, c16[i].plan) << "candidate " << i;
    // And through the policies: greedy@4's valid candidates are greedy@16's valid candidates with index < 4.
    const RedResponse r4 = g4->respond(request_for(sc, paper().seed));
    const RedResponse r16 = g16->respond(request_for(sc, paper().seed));
    std::vector<Plan> first4;
    for (const auto& c : r16.candidates)
      if (c.index < 4) first4.push_back(c.plan);
    EXPECT_EQ(plans_of(r4), first4);
    // single answers with candidate 0 of the same stream, as greedy@1 does.
    EXPECT_EQ(plans_of(single->respond(request_for(sc, paper().seed))),
              plans_of(g1->respond(request_for(sc, paper().seed))));
  }
}

TEST(RedPolicyStreams, SelectorsPickTheirArgmax) {
  const auto greedy = make_red_policy("greedy@16", policy_context(paper()));
  const auto constraint = make_red_policy("constraint@16", policy_context(paper()));
  const double lambda = constraint->params().at("lambda");
  EXPECT_EQ(lambda, 0.7);
  for (const Scenario& sc : scenarios()) {
    SCOPED_TRACE(sc.id);
    const RedResponse g = greedy->respond(request_for(sc, paper().seed));
    const RedResponse c = constraint->respond(request_for(sc, paper().seed));
    std::vector<double> q, D;
    for (const auto& x : g.candidates) {
      q.push_back(x.q.q);
      D.push_back(x.d->D);
    }
    EXPECT_EQ(g.selected, select_quality_greedy(q));
    EXPECT_EQ(c.selected, select_constraint_aware(q, D, lambda));
    // The diagnostics' guarantees on a real candidate set.
    EXPECT_GE(q[static_cast<std::size_t>(g.selected)], q[static_cast<std::size_t>(c.selected)]);
    EXPECT_GE(D[static_cast<std::size_t>(c.selected)], D[static_cast<std::size_t>(g.selected)]);
  }
}

// RedPolicy::pressures (the council's stress test): every policy's pressures are its full answer's valid
// candidates reduced to their ids, pressures and categories, bit for bit; single and greedy draw them lean
// (sample_red_pressures), constraint and the LLM contract through respond().
TEST(RedPolicyStreams, PressuresAreTheFullAnswersCandidatesReduced) {
  const auto ctx = policy_context(paper());
  std::size_t compared = 0;
  auto expect_reduced = [&](const RedResponse& a, const RedPressures& b, const std::string& where) {
    ASSERT_EQ(a.candidates.size(), b.candidates.size()) << where;
    for (std::size_t i = 0; i < a.candidates.size(); ++i) {
      const RedCandidate& x = a.candidates[i];
      const RedPressureCandidate& y = b.candidates[i];
      EXPECT_EQ(x.index, y.index) << where << " " << i;
      EXPECT_EQ(x.plan.plan_id, y.plan_id) << where << " " << i;
      EXPECT_EQ(std::memcmp(&x.pressure.magnitude, &y.pressure.magnitude, sizeof(double)), 0) << where << " " << i;
      EXPECT_EQ(x.pressure.category, y.pressure.category) << where << " " << i;
      EXPECT_EQ(x.categories, y.categories) << where << " " << i;
      ++compared;
    }
  };
  for (const Scenario& sc : scenarios())
    for (const char* spec : {"single", "greedy@8", "constraint@8", "llm_offline"}) {
      const auto policy = make_red_policy(spec, ctx);
      const RedRequest req = request_for(sc, paper().seed);
      expect_reduced(policy->respond(req), policy->pressures(req), sc.id + " " + spec);
    }
  EXPECT_GT(compared, 50u);
  // Where two assets share an id, no lean plan's layout stands for the full plan's (asset_ids_unique is false): every
  // plan is drawn in full, with the same result.
  const auto greedy = make_red_policy("greedy@8", ctx);
  Scenario shared = scenarios().front();
  shared.assets.back().id = shared.assets.front().id;
  const RedRequest req = request_for(shared, paper().seed);
  const RedResponse full = greedy->respond(req);
  ASSERT_FALSE(full.candidates.empty());
  expect_reduced(full, greedy->pressures(req), "shared asset id");
  // Where options may be empty, some plans are not valid by construction: those are drawn again in full and
  // validated (a plan with an empty option is invalid, and left out as respond drops it).
  std::size_t dropped = 0;
  for (const Scenario& sc : scenarios()) {
    RedRequest e = request_for(sc, paper().seed);
    e.shape.option_min = 0;
    e.shape.branch_probability = 1.0;
    const RedResponse x = greedy->respond(e);
    dropped += static_cast<std::size_t>(x.dropped);
    expect_reduced(x, greedy->pressures(e), sc.id + " empty options");
  }
  EXPECT_GT(dropped, 0u);
}

// The checked entry point: a policy whose pressures are out of [0, 1] or unnamed has them left out, and one that
// returns none says so.
TEST(RedPolicyStreams, PressuresAreChecked) {
  struct Bad final : RedPolicy {
    Bad() : RedPolicy(PolicyInfo{"bad_pressures", Side::Red, false, 1, ThreadSafety::constant, {}, "test"}, 1, {}) {}
    RedResponse do_respond(const RedRequest&, CandidateCache*) const override { return {}; }
    RedPressures do_pressures(const RedRequest&) const override {
      RedPressures r;
      r.candidates.push_back({0, "ok", PressureResult{Pressure::direct, 0.5}, {}});
      r.candidates.push_back({1, "", PressureResult{Pressure::direct, 0.5}, {}});
      r.candidates.push_back({2, "nan", PressureResult{Pressure::direct, std::nan("")}, {}});
      r.candidates.push_back({3, "big", PressureResult{Pressure::direct, 1.5}, {}});
      return r;
    }
  };
  const Scenario& sc = scenarios().front();
  const RedPressures r = Bad().pressures(request_for(sc, paper().seed));
  ASSERT_EQ(r.candidates.size(), 1u);
  EXPECT_EQ(r.candidates[0].plan_id, "ok");
  struct None final : RedPolicy {
    None() : RedPolicy(PolicyInfo{"no_pressures", Side::Red, false, 1, ThreadSafety::constant, {}, "test"}, 1, {}) {}
    RedResponse do_respond(const RedRequest&, CandidateCache*) const override { return {}; }
  };
  EXPECT_EQ(None().pressures(request_for(sc, paper().seed)).failure, "no_pressures returned no plan");
}

TEST(RedPolicyStreams, AnotherStreamNameDrawsOtherCandidates) {
  const Scenario& sc = scenarios().front();
  RedRequest a = request_for(sc, paper().seed), b = a;
  b.stream = "council/0";
  EXPECT_NE(plans_of(make_red_policy("greedy@4", policy_context(paper()))->respond(a)),
            plans_of(make_red_policy("greedy@4", policy_context(paper()))->respond(b)));
}

// RedDetail::quality (the framing study's arms): single and greedy leave the candidates' coherence and raw
// capability absent, and everything else they return is the same; constraint, whose choice reads coherence, and
// any cached candidate are still fully scored.
TEST(RedPolicyStreams, QualityDetailLeavesCoherenceAbsentOnlyWhereNothingReadsIt) {
  const auto ctx = policy_context(paper());
  for (const Scenario& sc : scenarios()) {
    SCOPED_TRACE(sc.id);
    const RedRequest full = request_for(sc, paper().seed);
    RedRequest lazy = full;
    lazy.detail = RedDetail::quality;
    for (const char* spec : {"single", "greedy@8", "constraint@8"}) {
      SCOPED_TRACE(spec);
      const auto policy = make_red_policy(spec, ctx);
      const RedResponse a = policy->respond(full), b = policy->respond(lazy);
      ASSERT_EQ(a.candidates.size(), b.candidates.size());
      EXPECT_EQ(a.selected, b.selected);
      EXPECT_EQ(a.dropped, b.dropped);
      const bool skips = std::string(spec) != "constraint@8";
      for (std::size_t i = 0; i < a.candidates.size(); ++i) {
        const RedCandidate &x = a.candidates[i], &y = b.candidates[i];
        EXPECT_EQ(x.plan, y.plan);
        EXPECT_EQ(x.q.q, y.q.q);
        EXPECT_EQ(x.pressure.magnitude, y.pressure.magnitude);
        EXPECT_EQ(x.pressure.category, y.pressure.category);
        EXPECT_EQ(x.categories, y.categories);
        ASSERT_TRUE(x.d && x.raw_capability);
        // The raw capability the rows report is kept with a fully scored candidate, and is the function's value.
        EXPECT_EQ(*x.raw_capability, raw_capability(x.plan, sc)) << "candidate " << i;
        if (skips) {
          EXPECT_FALSE(y.d) << "candidate " << i;
          EXPECT_FALSE(y.raw_capability) << "candidate " << i;
        } else {
          ASSERT_TRUE(y.d);
          EXPECT_EQ(x.d->D, y.d->D) << "candidate " << i;
        }
      }
      // Through a cache the candidates may serve a later request that reads coherence: always complete.
      CandidateCache cache;
      for (const auto& c : policy->respond(lazy, &cache).candidates) EXPECT_TRUE(c.d && std::isfinite(c.d->D));
      for (const auto& c : policy->respond(full, &cache).candidates) EXPECT_TRUE(c.d && std::isfinite(c.d->D));
    }
  }
}

// A full answer is complete whatever the policy returned: respond() scores the coherence and raw capability a
// policy left out, and validates the selection it returns.
TEST(RedPolicyStreams, AFullAnswerIsCompletedAndItsSelectionValidated) {
  struct Sparse final : RedPolicy {
    Sparse() : RedPolicy(PolicyInfo{"sparse", Side::Red, false, 1, ThreadSafety::constant, {}, "test"}, 1, {}) {}
    RedResponse do_respond(const RedRequest& req, CandidateCache*) const override {
      RedResponse r;
      r.candidates = sample_red_candidates(req, 2, nullptr);  // at the request's detail: quality here
      r.candidates[0].d.reset();
      r.candidates[0].raw_capability.reset();
      r.selected = 0;
      return r;
    }
  };
  const Scenario& sc = scenarios().front();
  RedRequest req = request_for(sc, paper().seed);
  const RedResponse full = Sparse().respond(req);
  ASSERT_FALSE(full.candidates.empty());
  for (const auto& c : full.candidates) {
    ASSERT_TRUE(c.d && c.raw_capability);
    EXPECT_EQ(c.d->D, coherence(c.plan, sc).D);
    EXPECT_EQ(*c.raw_capability, raw_capability(c.plan, sc));
  }
  req.detail = RedDetail::quality;
  EXPECT_FALSE(Sparse().respond(req).candidates[0].d);
  struct Liar final : RedPolicy {
    Liar() : RedPolicy(PolicyInfo{"liar", Side::Red, false, 1, ThreadSafety::constant, {}, "test"}, 1, {}) {}
    RedResponse do_respond(const RedRequest& req, CandidateCache*) const override {
      RedResponse r;
      r.candidates = sample_red_candidates(req, 1, nullptr);
      r.candidates[0].plan.actions.front().asset = "nobody";  // still flagged valid: respond must notice
      r.selected = 0;
      return r;
    }
  };
  const RedResponse lie = Liar().respond(request_for(sc, paper().seed));
  EXPECT_EQ(lie.selected, -1);
  EXPECT_EQ(lie.failure, "liar selected an invalid plan");
}

// ---- make_red_policy errors ---------------------------------------------------------------------------------------

std::string error_of(const std::string& spec, const ExperimentConfig& cfg) {
  try {
    make_red_policy(spec, policy_context(cfg));
  } catch (const PolicyError& e) {
    return e.what();
  }
  return "<no PolicyError>";
}

TEST(MakeRedPolicy, UnknownNameListsTheRegisteredNames) {
  std::string list;
  for (const auto& n : red_names()) list += (list.empty() ? "" : ", ") + n;
  EXPECT_EQ(error_of("nope", paper()), "unknown RED policy 'nope' (registered: " + list + ")");
  EXPECT_EQ(error_of("nope@4", paper()), "unknown RED policy 'nope' (registered: " + list + ")");
}

TEST(MakeRedPolicy, BadBudgets) {
  EXPECT_THAT(error_of("greedy@0", paper()), HasSubstr("k must be at least 1"));
  EXPECT_THAT(error_of("greedy@-3", paper()), HasSubstr("k must be at least 1"));
  EXPECT_THAT(error_of("greedy@x", paper()), HasSubstr("k must be an integer"));
  EXPECT_THAT(error_of("greedy@2000", paper()), HasSubstr("k must be at most 1024"));
  EXPECT_THAT(error_of("single@3", paper()), HasSubstr("does not sample k candidates"));
  EXPECT_THAT(error_of("llm_offline@2", paper()), HasSubstr("does not sample k candidates"));
  EXPECT_EQ(make_red_policy("greedy@3", policy_context(paper()))->k(), 3);
  EXPECT_EQ(make_red_policy("greedy@3", policy_context(paper()))->label(), "greedy@3");
  EXPECT_EQ(make_red_policy("single", policy_context(paper()))->label(), "single");
}

TEST(MakeRedPolicy, BadParameters) {
  ExperimentConfig cfg = paper();
  cfg.policy_params["constraint"]["lambda"] = 1.5;
  const std::string e = error_of("constraint@8", cfg);
  EXPECT_THAT(e, HasSubstr("must be in [0, 1]"));
  EXPECT_THAT(e, HasSubstr("lambda"));
  EXPECT_THAT(e, HasSubstr("1.5"));
  cfg.policy_params["constraint"]["lambda"] = -0.1;
  EXPECT_THAT(error_of("constraint@8", cfg), HasSubstr("must be in [0, 1]"));
  cfg.policy_params["constraint"] = {{"lamda", 0.5}};
  EXPECT_THAT(error_of("constraint@8", cfg), HasSubstr("unknown parameter 'lamda' of policy 'constraint' (valid: lambda)"));
  cfg.policy_params["constraint"] = {{"lambda", 0.25}};
  EXPECT_EQ(make_red_policy("constraint@8", policy_context(cfg))->params().at("lambda"), 0.25);
  cfg.policy_params["greedy"] = {{"lambda", 0.5}};
  EXPECT_THAT(error_of("greedy@8", cfg), HasSubstr("(valid: none)"));
}

}  // namespace
}  // namespace advplan
