// The geospatial layer's speed targets (docs/GEO.md "Speed"): one route on a 10^5-edge graph with polygon
// exclusion in <= 10 ms (corner to corner, the worst case on the grid, and random pairs), and map + question generation for the paper's 150 scenarios in < 2 s.
// Run: advplan_bench_geo --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <cmath>
#include <numbers>

#include "advplan/core/random.hpp"
#include "advplan/run/config.hpp"
#include "advplan/geo/map.hpp"
#include "advplan/geo/network.hpp"
#include "advplan/geo/questions.hpp"

namespace {
using namespace advplan;
using namespace advplan::geo;

/// A jittered 224 x 224 grid: 50,176 nodes and 99,904 edges; 60 avoided polygons in the middle band.
struct BigGraph {
  RoadNetwork net;
  std::vector<Polygon> zones;
  int from = 0, to = 0;
  BigGraph() {
    constexpr int n = 224;
    Rng rng(42);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) net.add_node({i + rng.uniform(-0.3, 0.3), j + rng.uniform(-0.3, 0.3)});
    auto link = [&](int a, int b) { net.add_edge(a, b, distance(net.node(a), net.node(b)) * rng.uniform(1.0, 1.2)); };
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        if (i + 1 < n) link(j * n + i, j * n + i + 1);
        if (j + 1 < n) link(j * n + i, (j + 1) * n + i);
      }
    for (int k = 0; k < 60; ++k) {
      const Point c{rng.uniform(20, n - 20.0), rng.uniform(40, n - 40.0)};
      const double r = rng.uniform(3, 9);
      Polygon p;
      for (int v = 0; v < 8; ++v) p.ring.push_back({c.x + r * std::cos(v * std::numbers::pi / 4), c.y + r * std::sin(v * std::numbers::pi / 4)});
      zones.push_back(p);
    }
    from = 0;
    to = n * n - 1;
  }
};

void BM_RouteWithExclusion100kEdges(benchmark::State& state) {
  static const BigGraph g;
  for (auto _ : state) {
    auto r = g.net.shortest_path(g.from, g.to, g.zones);
    benchmark::DoNotOptimize(r.length);
  }
  state.counters["edges"] = static_cast<double>(g.net.num_edges());
}
BENCHMARK(BM_RouteWithExclusion100kEdges)->Unit(benchmark::kMillisecond);

/// Random pairs (the typical route), with the same exclusion.
void BM_RouteRandomPairsWithExclusion100kEdges(benchmark::State& state) {
  static const BigGraph g;
  Rng rng(7);
  for (auto _ : state) {
    const int s = static_cast<int>(rng.pick_index(g.net.num_nodes())), t = static_cast<int>(rng.pick_index(g.net.num_nodes()));
    auto r = g.net.shortest_path(s, t, g.zones);
    benchmark::DoNotOptimize(r.length);
  }
}
BENCHMARK(BM_RouteRandomPairsWithExclusion100kEdges)->Unit(benchmark::kMillisecond);

void BM_RouteNoExclusion100kEdges(benchmark::State& state) {
  static const BigGraph g;
  for (auto _ : state) {
    auto r = g.net.shortest_path(g.from, g.to);
    benchmark::DoNotOptimize(r.length);
  }
}
BENCHMARK(BM_RouteNoExclusion100kEdges)->Unit(benchmark::kMillisecond);

void BM_Questions150Scenarios(benchmark::State& state) {
  const ExperimentConfig cfg = default_experiment_config();
  std::size_t n = 0;
  for (auto _ : state) {
    n = 0;
    for (std::size_t i = 0; i < corpus_size(cfg); ++i) n += generate_questions(generate_map(corpus_scenario(cfg, i))).size();
    benchmark::DoNotOptimize(n);
  }
  state.counters["questions"] = static_cast<double>(n);
}
BENCHMARK(BM_Questions150Scenarios)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
