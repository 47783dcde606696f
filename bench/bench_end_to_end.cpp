// End-to-end throughput of the built-in paper config, plus micro-benchmarks of the hot paths: the wargame
// simulator, RED candidate sampling and scoring one plan. Run: advplan_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "advplan/pipeline/standard_run.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/metrics/coherence.hpp"
#include "advplan/metrics/plan_layout.hpp"
#include "advplan/metrics/quality.hpp"
#include "advplan/core/random.hpp"
#include "advplan/core/validation.hpp"
#include "advplan/metrics/pressure.hpp"
#include "advplan/policy/red_candidate.hpp"
#include "advplan/scenario/plan_sampler.hpp"
#include "advplan/sim/engagement.hpp"
#include "advplan/sim/wargame.hpp"
#include "advplan/policy/red_policy.hpp"
#include "policy/scored_candidate.hpp"
#include "scenario/sampled_plan.hpp"

namespace {
namespace fs = std::filesystem;
using namespace advplan;

const ExperimentConfig& paper_config() {
  static const ExperimentConfig cfg = default_experiment_config();
  return cfg;
}

/// The first scenario of the paper corpus (urban-100) and its template.
struct Fixture {
  Scenario sc;
  const ScenarioTemplate* tpl = nullptr;
};
const Fixture& first_scenario() {
  static const Fixture f = [] {
    Fixture x;
    const auto& cfg = paper_config();
    x.sc = generate_corpus(cfg).front();
    for (const auto& t : cfg.templates)
      if (t.id == x.sc.template_id) x.tpl = &t;
    return x;
  }();
  return f;
}

// A whole experiment into a temp dir, at state.range(0) threads (0: all cores).
void run_config(benchmark::State& state, const ExperimentConfig& cfg) {
  const RunPlan plan = prepare_run(cfg, run_conditions(cfg));
  const fs::path dir = fs::temp_directory_path() / ("advplan-bench-" + std::to_string(::getpid()));
  RunOptions opts;
  opts.out_dir = dir.string();
  opts.progress = false;
  opts.force = true;  // each iteration replaces the previous run
  opts.threads = static_cast<int>(state.range(0));
  std::size_t scenarios = 0;
  double seconds = 0;
  for (auto _ : state) {
    opts.observers = standard_observers(opts.studies);
    const RunSummary s = run_experiment(plan, opts);
    scenarios += s.scenarios;
    seconds += s.seconds;
  }
  fs::remove_all(dir);
  state.counters["wall_s_per_run"] = seconds / static_cast<double>(state.iterations());
  state.counters["scenarios_per_s"] = benchmark::Counter(static_cast<double>(scenarios), benchmark::Counter::kIsRate);
  state.counters["scenarios"] = static_cast<double>(scenarios) / static_cast<double>(state.iterations());
}

// The whole paper experiment (150 scenarios, every condition, the studies and the tables), at 1 and 2 threads:
// the ratio of the two is the thread speed-up (target >= 1.7 on 2 cores).
void BM_PaperConfig(benchmark::State& state) { run_config(state, paper_config()); }
BENCHMARK(BM_PaperConfig)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();

// The scale case: 1,500 scenarios (300 seeds x 5 templates), single and greedy@8, R = 50, no studies.
void BM_Scale1500(benchmark::State& state) {
  static const ExperimentConfig cfg = [] {
    ExperimentConfig c = paper_config();
    c.seed_from = 1;
    c.seed_to = 300;
    c.conditions = {{"single", "seed", "single", "main"}, {"greedy@8", "seed", "greedy@8", "main"}};
    c.budget_ks.clear();
    c.sim.replications = 50;
    c.studies.rubric = c.studies.framing = c.studies.components = false;
    return c;
  }();
  run_config(state, cfg);
}
BENCHMARK(BM_Scale1500)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kMillisecond)->UseRealTime();

// One scenario's wargame: R = 200 replications advanced together.
void BM_Simulate(benchmark::State& state) {
  SimConfig sim = paper_config().sim;
  sim.replications = static_cast<int>(state.range(0));
  const SimNoise noise = draw_noise(20240601, "urban-100", sim);
  const Force blue{3.0, 0.6, 0.55}, red{2.5, 0.5, 0.6};
  for (auto _ : state) benchmark::DoNotOptimize(simulate(blue, red, noise, sim));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Simulate)->Arg(200)->Unit(benchmark::kMicrosecond);

// The engagement wargame (docs/METRICS.md "Engagement wargame") on the paper corpus's first 30 scenarios: each
// scenario's seed plan against its greedy@8 answer, R = 200; items are replications (target: 10^5 per second per
// core). And the paper run under the engagement model (configs/experiments/engagement.yaml's simulator) against the
// Lanchester paper run (target: under 10x its CPU).
void BM_EngagementReplications(benchmark::State& state) {
  const ExperimentConfig& cfg = paper_config();
  SimConfig sim = cfg.sim;
  sim.model = "engagement";
  struct Game {
    Scenario sc;
    Plan blue, red;
    Force fb, fr;
    SimNoise noise;
  };
  std::vector<Game> games;
  const auto greedy = make_red_policy("greedy@8", policy_context(cfg));
  for (std::size_t i = 0; i < 30; ++i) {
    Scenario sc = corpus_scenario(cfg, i * 5);
    const Plan blue = sc.blue_seed_plans.front();
    const Plan red = greedy->respond(red_request(sc, blue, policy_context(cfg), "baseline")).chosen()->plan;
    const Force fb{raw_capability(blue, sc), quality(blue, sc, cfg.quality).q, coherence(blue, sc).D};
    const Force fr{raw_capability(red, sc), quality(layout_plan(red, sc), sc, Side::Red, cfg.quality).q,
                   coherence(red, sc).D};
    SimNoise noise = draw_noise(cfg.seed, sc.id, sim);
    games.push_back({std::move(sc), blue, red, fb, fr, std::move(noise)});
  }
  for (auto _ : state)
    for (const Game& g : games)
      benchmark::DoNotOptimize(simulate_engagement(g.sc, g.blue, g.fb, g.red, g.fr, g.noise, sim));
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(games.size()) * sim.replications);
}
BENCHMARK(BM_EngagementReplications)->Unit(benchmark::kMillisecond);

void BM_PaperConfigEngagement(benchmark::State& state) {
  static const ExperimentConfig cfg = [] {
    ExperimentConfig c = paper_config();
    c.sim.model = "engagement";
    return c;
  }();
  run_config(state, cfg);
}
BENCHMARK(BM_PaperConfigEngagement)->Arg(2)->ArgName("threads")->Unit(benchmark::kSecond)->UseRealTime()->Iterations(1);

// One scenario's simulator noise: R = 200 keyed streams of 2 normals and 2T uniforms each.
void BM_DrawNoise(benchmark::State& state) {
  SimConfig sim = paper_config().sim;
  sim.replications = static_cast<int>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(draw_noise(20240601, "urban-100", sim));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_DrawNoise)->Arg(200)->Unit(benchmark::kMicrosecond);

// The RED request answering the first scenario's seed plan, as a run makes it (stream "baseline").
RedRequest seed_plan_request(const Fixture& f) {
  RedRequest req;
  req.scenario = &f.sc;
  req.blue = &f.sc.blue_seed_plans.front();
  req.run_seed = paper_config().seed;
  req.weights = paper_config().quality;
  req.shape = f.tpl->seed_plans;
  req.branch_kinds = f.tpl->branch_kinds;
  return req;
}

// Drawing and scoring k RED candidates against the seed plan (no cache).
void BM_SampleRedCandidates(benchmark::State& state) {
  const RedRequest req = seed_plan_request(first_scenario());
  const int k = static_cast<int>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(sample_red_candidates(req, k));
  state.SetItemsProcessed(state.iterations() * k);
}
BENCHMARK(BM_SampleRedCandidates)->Arg(16)->Unit(benchmark::kMicrosecond);

// The per-plan cost of a RED candidate on one thread: sample + validate + score (q, D, pressure), as
// sample_red_candidates does for each candidate. Target (issue: speed): <= 5 us per plan.
void BM_CandidatePlan(benchmark::State& state) {
  const Fixture& f = first_scenario();
  const Plan& blue = f.sc.blue_seed_plans.front();
  const auto vuln = vulnerability(layout_plan(blue, f.sc));
  SampleOptions opts{f.tpl->seed_plans, f.tpl->branch_kinds, 0.6, {}};
  const std::string id = "urban-100/red/baseline/c";
  std::uint64_t i = 0;
  for (auto _ : state) {
    Rng rng = Rng::keyed(paper_config().seed, f.sc.id, "red/baseline", i++ % 64);
    Plan p = sample_plan(f.sc, Side::Red, rng, opts, id);
    benchmark::DoNotOptimize(score_red_plan(std::move(p), f.sc, vuln, paper_config().quality, 0));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CandidatePlan)->Unit(benchmark::kMicrosecond);

// The same candidates as sample_red_candidates draws them (detail::CandidateBatch::draw, the run's own code): the
// batch's sampler tables, and a plan valid by construction is not validated again but keeps the assets the sampler
// drew (src/scenario/sampled_plan.hpp). With range 0 the candidates are fully scored, as a run's conditions take
// them; with range 1 only their pressure (draw_pressure), on the lean draw, as the council's stress test takes them.
void BM_CandidatePlanAsRun(benchmark::State& state) {
  const RedRequest req = seed_plan_request(first_scenario());
  const detail::CandidateBatch batch(req, true);
  std::size_t i = 0;
  if (state.range(0) == 0)
    for (auto _ : state) benchmark::DoNotOptimize(batch.draw(i++ % 64));
  else
    for (auto _ : state) benchmark::DoNotOptimize(batch.draw_pressure(i++ % 64));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CandidatePlanAsRun)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// Validate + score alone (no sampling) of a fixed set of 64 sampled RED plans.
void BM_ValidateAndScore(benchmark::State& state) {
  const Fixture& f = first_scenario();
  const Plan& blue = f.sc.blue_seed_plans.front();
  const auto vuln = vulnerability(layout_plan(blue, f.sc));
  SampleOptions opts{f.tpl->seed_plans, f.tpl->branch_kinds, 0.6, {}};
  std::vector<Plan> plans;
  for (std::uint64_t i = 0; i < 64; ++i) {
    Rng rng = Rng::keyed(paper_config().seed, f.sc.id, "red/baseline", i);
    plans.push_back(sample_plan(f.sc, Side::Red, rng, opts, "urban-100/red/baseline/c"));
  }
  std::size_t i = 0;
  for (auto _ : state) {
    const Plan& p = plans[i++ % plans.size()];
    benchmark::DoNotOptimize(validate_plan(p, f.sc, Side::Red));
    const auto layout = layout_plan(p, f.sc);
    benchmark::DoNotOptimize(quality(layout, f.sc, Side::Red, paper_config().quality));
    benchmark::DoNotOptimize(coherence(p, layout, f.sc));
    benchmark::DoNotOptimize(pressure(pressure_shares(layout), 0.5, vuln));
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ValidateAndScore)->Unit(benchmark::kMicrosecond);

// q and D of one plan (the seed BLUE plan of urban-100), sharing one layout as the runner does.
void BM_QualityCoherence(benchmark::State& state) {
  const Fixture& f = first_scenario();
  const Plan& p = f.sc.blue_seed_plans.front();
  for (auto _ : state) {
    const auto layout = layout_plan(p, f.sc);
    benchmark::DoNotOptimize(quality(layout, f.sc, Side::Blue));
    benchmark::DoNotOptimize(coherence(p, layout, f.sc));
  }
}
BENCHMARK(BM_QualityCoherence)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
