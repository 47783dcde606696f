// The RED candidate hot path (issue: speed): validating and scoring an internally generated plan allocates
// nothing per plan in steady state. Counted with a replacement of the global operator new that counts only while
// a thread-local flag is set, so the rest of the test binary is unaffected.
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <vector>

#include "advplan/core/random.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/metrics/plan_layout.hpp"
#include "advplan/metrics/pressure.hpp"
#include "advplan/policy/red_candidate.hpp"
#include "advplan/scenario/plan_sampler.hpp"
#include "support/fixtures.hpp"

namespace {
thread_local bool g_counting = false;
thread_local std::size_t g_allocations = 0;
}  // namespace

void* operator new(std::size_t n) {
  if (g_counting) ++g_allocations;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
// The nothrow forms too (std::stable_sort's temporary buffer uses them): replacing the plain delete alone paired a
// sanitizer's nothrow new with this free, which AddressSanitizer reports as a mismatch.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  if (g_counting) ++g_allocations;
  return std::malloc(n == 0 ? 1 : n);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace advplan {
namespace {

TEST(HotPath, ValidatingAndScoringASampledPlanAllocatesNothingInSteadyState) {
  const auto& cfg = testing::paper_config();
  const auto corpus = generate_corpus(cfg);
  std::size_t scored = 0, valid = 0;
  for (std::size_t s = 0; s < corpus.size(); s += 15) {
    const Scenario& sc = corpus[s];
    const ScenarioTemplate* tpl = &testing::template_of(cfg, sc);
    const auto vuln = vulnerability(layout_plan(sc.blue_seed_plans.front(), sc));
    SampleOptions opts{tpl->seed_plans, tpl->branch_kinds, 0.6, {}};
    std::vector<Plan> plans;
    for (std::uint64_t i = 0; i < 16; ++i) {
      Rng rng = Rng::keyed(cfg.seed, sc.id, "red/baseline", i);
      plans.push_back(sample_plan(sc, Side::Red, rng, opts, "p"));
    }
    // Warm-up: the per-thread buffers grow to this scenario's plan sizes.
    for (const auto& p : plans) (void)score_red_plan(p, sc, vuln, cfg.quality, 0);
    for (auto& p : plans) {
      Plan copy = p;  // made outside the count: score_red_plan takes the plan by value and keeps it
      g_allocations = 0;
      g_counting = true;
      RedCandidate c = score_red_plan(std::move(copy), sc, vuln, cfg.quality, 0);
      g_counting = false;
      EXPECT_EQ(g_allocations, 0u) << sc.id << ": " << g_allocations << " allocations for one plan";
      ++scored;
      valid += c.valid ? 1 : 0;
    }
  }
  EXPECT_EQ(valid, scored) << "sampled plans are valid";
  EXPECT_GE(scored, 100u);
}

TEST(HotPath, TheCounterSeesAnAllocation) {
  // The instrument itself: an allocation while counting is seen (so a zero above means something).
  g_allocations = 0;
  g_counting = true;
  auto* v = new std::vector<int>(100);
  g_counting = false;
  delete v;
  EXPECT_GE(g_allocations, 1u);
}

}  // namespace
}  // namespace advplan
