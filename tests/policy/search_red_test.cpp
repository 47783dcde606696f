// Search RED, search@N (src/council/search_red.cpp): N counts plan evaluations exactly, the answer is never below
// the best plan scored, the answer does not depend on the thread count, and malformed specs fail in one sentence.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <fmt/format.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "advplan/core/error.hpp"
#include "advplan/core/plan_json.hpp"
#include "advplan/council/search_red.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/scenario_lookup.hpp"

#include "support/cli.hpp"
#include "support/fixtures.hpp"

namespace advplan {
namespace {

using ::testing::HasSubstr;

const ExperimentConfig& paper() { return testing::paper_config(); }

const std::vector<Scenario>& scenarios() {
  static const std::vector<Scenario> s = {find_scenario(paper(), "urban-100"), find_scenario(paper(), "maritime-103"),
                                          find_scenario(paper(), "air-defense-105"),
                                          find_scenario(paper(), "humanitarian-129")};
  return s;
}

RedRequest request_for(const Scenario& sc) {
  return red_request(sc, sc.blue_seed_plans.front(), policy_context(paper()), "baseline");
}

/// Every candidate's plan as JSON text, then the selection: the whole answer as bytes.
std::string answer_bytes(const RedResponse& r) {
  std::string out;
  for (const auto& c : r.candidates) out += std::to_string(c.index) + plan_to_string(c.plan) + "\n";
  return out + "selected " + std::to_string(r.selected);
}

TEST(SearchRed, SpendsExactlyNEvaluations) {
  for (const Scenario& sc : scenarios())
    for (int n : {1, 2, 4, 5, 16, 64}) {
      SearchStats st;
      const RedResponse r = search_red_response(request_for(sc), {n, 4, 2, 1.0}, &st);
      EXPECT_EQ(st.evaluations, n) << sc.id;
      EXPECT_EQ(st.seeds + st.edits + st.restarts, n) << sc.id << " N=" << n;
      EXPECT_EQ(st.seeds, std::min(n, 4));
      ASSERT_EQ(static_cast<int>(r.candidates.size()), n) << sc.id;
      std::set<std::string> ids;
      for (std::size_t i = 0; i < r.candidates.size(); ++i) {
        EXPECT_EQ(r.candidates[i].index, static_cast<int>(i));
        ids.insert(r.candidates[i].plan.plan_id);
      }
      EXPECT_EQ(static_cast<int>(ids.size()), n) << "every evaluation is a distinct plan";
    }
  // Through the registry: what respond() keeps plus what it drops is N.
  const auto policy = make_red_policy("search@16", policy_context(paper()));
  for (const Scenario& sc : scenarios()) {
    const RedResponse r = policy->respond(request_for(sc));
    EXPECT_EQ(static_cast<int>(r.candidates.size()) + r.dropped, 16) << sc.id;
    ASSERT_NE(r.chosen(), nullptr) << r.failure;
  }
}

TEST(SearchRed, NeverReturnsAPlanBelowTheBestItScored) {
  for (const Scenario& sc : scenarios())
    for (double lambda : {1.0, 0.7}) {
      RedRequest req = request_for(sc);
      const RedResponse r = search_red_response(req, {32, 4, 2, lambda});
      ASSERT_GE(r.selected, 0);
      auto score = [&](const RedCandidate& c) { return lambda * c.q.q + (1 - lambda) * (lambda < 1 ? c.d->D : 0.0); };
      const double chosen = score(r.candidates[static_cast<std::size_t>(r.selected)]);
      for (const auto& c : r.candidates)
        if (c.valid) {
          EXPECT_LE(score(c), chosen) << sc.id << " candidate " << c.index;
        }
    }
}

TEST(SearchRed, TheSearchImprovesOnItsSeedsAndAtNAtMostBeamIsGreedy) {
  int better = 0;
  for (const Scenario& sc : scenarios()) {
    SearchStats st;
    const RedResponse r = search_red_response(request_for(sc), {16, 4, 2, 1.0}, &st);
    double seed_best = -1;
    for (int i = 0; i < st.seeds; ++i) seed_best = std::max(seed_best, r.candidates[static_cast<std::size_t>(i)].q.q);
    better += r.candidates[static_cast<std::size_t>(r.selected)].q.q > seed_best ? 1 : 0;
    EXPECT_GT(st.improved, 0) << sc.id;
    // search@N with N <= beam scores the stream's first N candidates: greedy@N's.
    const auto greedy = make_red_policy("greedy@3", policy_context(paper()))->respond(request_for(sc));
    const RedResponse small = search_red_response(request_for(sc), {3, 4, 2, 1.0});
    ASSERT_EQ(small.candidates.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(small.candidates[i].plan.plan_id, greedy.candidates[i].plan.plan_id);
  }
  EXPECT_GT(better, 0);
}

TEST(SearchRed, TheAnswerIsTheSameBytesAtAnyThreadCount) {
  std::vector<std::string> one, many;
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 1);
    for (const Scenario& sc : scenarios()) one.push_back(answer_bytes(search_red_response(request_for(sc), {24, 4, 2, 0.7})));
  }
  {
    tbb::global_control c(tbb::global_control::max_allowed_parallelism, 4);
    for (const Scenario& sc : scenarios()) many.push_back(answer_bytes(search_red_response(request_for(sc), {24, 4, 2, 0.7})));
  }
  ASSERT_EQ(one.size(), many.size());
  for (std::size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(one[i] == many[i]) << scenarios()[i].id << "'s answer differs";
  // Another run seed is another search.
  RedRequest other = request_for(scenarios().front());
  other.run_seed += 1;
  EXPECT_FALSE(answer_bytes(search_red_response(other, {24, 4, 2, 0.7})) == one.front());
}

std::string spec_error(const std::string& spec) {
  try {
    make_red_policy(spec, policy_context(paper()));
  } catch (const PolicyError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SearchRed, MalformedSpecsFailInOneSentence) {
  EXPECT_EQ(spec_error("search@0"), "policy 'search@0': k must be at least 1 (accepted: 1..1024), while 0 was given");
  EXPECT_EQ(spec_error("search@abc"), "policy 'search@abc': k must be an integer (accepted: 1..1024), got 'abc'");
  EXPECT_EQ(spec_error("search@100000000000"), "policy 'search@100000000000': k must be at most 1024, while 100000000000 was given");
  EXPECT_EQ(spec_error("search@99999999999999999999999"),
            "policy 'search@99999999999999999999999': k must be an integer (accepted: 1..1024), got '99999999999999999999999'");
  EXPECT_EQ(spec_error("search@16"), "no error");
  // A direct caller is held to the same bound.
  try {
    search_red_response(request_for(scenarios().front()), {1 << 30, 4, 2, 1.0});
    ADD_FAILURE() << "N = 2^30 accepted";
  } catch (const PolicyError& e) {
    EXPECT_STREQ(e.what(), "search: N must be at most 1024, while 1073741824 was given");
  }
  PolicyContext ctx = policy_context(paper());
  ctx.policy_params["search"]["beam"] = 2.5;
  try {
    make_red_policy("search@16", ctx);
    ADD_FAILURE() << "beam 2.5 accepted";
  } catch (const PolicyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("policies.search.beam: beam must be an integer, while 2.5 was given"));
  }
}

TEST(SearchRed, AConfigWithAMalformedSearchSpecStopsInOneLine) {
  testing::TempDir dir("search-spec");
  for (const char* spec : {"search@0", "search@abc", "search@5000"}) {
    const std::string cfg = testing::small_config(
        dir, {{"conditions: [single, greedy@8, constraint@8, llm_offline, {label: council, blue: council, red: greedy@8}]",
               std::string("conditions: [single, ") + spec + "]"}});
    const auto x = testing::advplan(fmt::format("run {} --out {}", testing::quote(cfg), testing::quote(dir / "run")), dir);
    testing::expect_one_line_error(x);
    EXPECT_THAT(x.err, HasSubstr(std::string("'") + spec + "'")) << x.err;
  }
}

}  // namespace
}  // namespace advplan
