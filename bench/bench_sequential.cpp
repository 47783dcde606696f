// The simulation study of anytime-valid early stopping (docs/METRICS.md "Anytime-valid stopping", RESULTS.md
// "Stopping when decided"): not a speed target but a documented simulation, run as
//   build/bench/advplan_bench_sequential --benchmark_counters_tabular=true
// Each benchmark plays studies of m paired comparisons over n scenarios in blocks of b, tests after each block
// with the confidence sequences' anytime p-values under Holm (alpha = 0.05), and stops when every comparison is
// decided. The counters: the share of studies with a false verdict (null studies) and, on effects resampled from a
// run's per-scenario rows (ADVPLAN_SEQUENTIAL_RUN=RUN_DIR, BLUE A and B against the same RED), the share of
// scenarios saved and how often the stopped verdicts equal the full corpus's. Deterministic: keyed streams.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "advplan/core/random.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/stats/confidence_sequence.hpp"

namespace advplan {
namespace {

constexpr double kAlpha = 0.05;

struct StudyOutcome {
  std::size_t stopped_at = 0;  ///< scenarios played
  std::vector<bool> rejected;  ///< per comparison, at the stop
};

/// Whether every comparison not rejected has its confidence sequence (at Holm's strictest level) inside
/// [-futility, futility]: nothing left to decide that matters.
bool futile(const std::vector<ConfidenceSequence>& cs, const std::vector<bool>& rejected, double futility) {
  if (futility <= 0) return false;
  for (std::size_t j = 0; j < cs.size(); ++j) {
    if (rejected[j]) continue;
    const auto [lo, hi] = cs[j].interval(kAlpha / static_cast<double>(cs.size()));
    if (!(lo >= -futility && hi <= futility)) return false;
  }
  return true;
}

/// Plays one study: diffs[j][s] for comparison j (values in [-1, 1]) in scenario order.
StudyOutcome play(const std::vector<std::vector<double>>& diffs, std::size_t block, double futility = 0) {
  const std::size_t m = diffs.size(), n = diffs.front().size();
  std::vector<ConfidenceSequence> cs(m, ConfidenceSequence(-1, 1, 0, kAlpha / static_cast<double>(m)));
  StudyOutcome out{n, std::vector<bool>(m, false)};
  for (std::size_t s = 0; s < n; ++s) {
    for (std::size_t j = 0; j < m; ++j) cs[j].add(diffs[j][s]);
    if ((s + 1) % block != 0 && s + 1 != n) continue;
    std::vector<double> p(m);
    for (std::size_t j = 0; j < m; ++j) p[j] = cs[j].p_value();
    out.rejected = holm_rejections(p, kAlpha);
    bool all = true;
    for (bool r : out.rejected) all = all && r;
    if (all || futile(cs, out.rejected, futility)) {
      out.stopped_at = s + 1;
      break;
    }
  }
  return out;
}

/// 1,000 null studies: m = 8 comparisons of n = 150 symmetric differences (U - U', U, U' uniform on [0, 1]).
void BM_NullStudiesFalseVerdictRate(benchmark::State& state) {
  std::size_t false_verdicts = 0, studies = 0;
  for (auto _ : state) {
    false_verdicts = studies = 0;
    for (int k = 0; k < 1000; ++k, ++studies) {
      Rng rng = Rng::keyed(49, "sequential-null", std::to_string(k));
      std::vector<std::vector<double>> d(8, std::vector<double>(150));
      for (auto& row : d)
        for (auto& x : row) x = rng.uniform() - rng.uniform();
      const StudyOutcome o = play(d, 10);
      for (bool r : o.rejected)
        if (r) {
          ++false_verdicts;
          break;
        }
    }
  }
  state.counters["studies"] = static_cast<double>(studies);
  state.counters["false_verdict_rate"] = static_cast<double>(false_verdicts) / static_cast<double>(studies);
}
BENCHMARK(BM_NullStudiesFalseVerdictRate)->Iterations(1)->Unit(benchmark::kMillisecond);

/// Per-scenario differences of BLUE `a` minus BLUE `b` against `red` in a run, for the verdict metrics.
std::vector<std::vector<double>> run_differences(const std::string& dir, const std::string& a, const std::string& b,
                                                 const std::string& red) {
  const io::CsvTable per = io::CsvTable::read(dir + "/per_scenario.csv");
  std::map<std::string, std::map<std::string, std::size_t>> rows;  // BLUE -> scenario -> row
  for (std::size_t i = 0; i < per.size(); ++i)
    if (per.at(i, "red_policy") == red && per.at(i, "status") == "ok")
      rows[per.at(i, "blue_policy")][per.at(i, "scenario_id")] = i;
  std::vector<std::vector<double>> d(4);
  const char* metrics[] = {"advantage", "blue_win_rate", "blue_quality", "blue_coherence"};
  for (const auto& [sc, i] : rows[a]) {
    auto j = rows[b].find(sc);
    if (j == rows[b].end()) continue;
    for (std::size_t m = 0; m < 4; ++m) d[m].push_back(per.real(i, metrics[m]) - per.real(j->second, metrics[m]));
  }
  return d;
}

/// 1,000 studies each playing the run's scenarios in a keyed random order: the share of scenarios saved, and how
/// often the stopped verdicts (rejections with the sign of the mean so far) equal a full-corpus sequential verdict.
void BM_RunEffectsScenariosSaved(benchmark::State& state) {
  const char* dir = std::getenv("ADVPLAN_SEQUENTIAL_RUN");
  if (!dir) {
    state.SkipWithError("set ADVPLAN_SEQUENTIAL_RUN to a paper run directory");
    return;
  }
  const auto d = run_differences(dir, "council", "seed", "greedy@8");
  const std::size_t n = d.front().size();
  double played = 0;
  std::size_t decided_all = 0, decided = 0;
  for (auto _ : state)
    for (int k = 0; k < 1000; ++k) {
      Rng rng = Rng::keyed(49, "sequential-run", std::to_string(k));
      std::vector<std::size_t> order(n);
      for (std::size_t i = 0; i < n; ++i) order[i] = i;
      for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.pick_index(i)]);
      std::vector<std::vector<double>> shuffled(d.size(), std::vector<double>(n));
      for (std::size_t j = 0; j < d.size(); ++j)
        for (std::size_t i = 0; i < n; ++i) shuffled[j][i] = d[j][order[i]];
      const StudyOutcome o = play(shuffled, 10, static_cast<double>(state.range(0)) / 100);
      played += static_cast<double>(o.stopped_at);
      bool all = true;
      for (bool r : o.rejected) all = all && r;
      decided_all += all;
      for (bool r : o.rejected) decided += r;
    }
  state.counters["scenarios"] = static_cast<double>(n);
  state.counters["mean_played"] = played / 1000;
  state.counters["share_saved"] = 1 - played / 1000 / static_cast<double>(n);
  state.counters["all_decided_share"] = static_cast<double>(decided_all) / 1000;
  state.counters["decided_share"] = static_cast<double>(decided) / (1000.0 * static_cast<double>(d.size()));
}
// The argument is the futility margin delta in hundredths (0: stop only when every comparison is decided).
BENCHMARK(BM_RunEffectsScenariosSaved)->Arg(0)->Arg(10)->Arg(15)->Arg(20)->Arg(25)->Iterations(1)->Unit(benchmark::kMillisecond);

/// 1,000 null studies with the paper run's spread: each draws the run's scenarios with replacement (keyed) and
/// gives each draw's council - seed differences a keyed random sign (the same for its four metrics, which keeps
/// their correlation), so every mean difference is 0. The counter: the share of studies with any verdict.
void BM_RunNullSignFlips(benchmark::State& state) {
  const char* dir = std::getenv("ADVPLAN_SEQUENTIAL_RUN");
  if (!dir) {
    state.SkipWithError("set ADVPLAN_SEQUENTIAL_RUN to a paper run directory");
    return;
  }
  const auto d = run_differences(dir, "council", "seed", "greedy@8");
  const std::size_t n = d.front().size();
  std::size_t false_verdicts = 0;
  for (auto _ : state)
    for (int k = 0; k < 1000; ++k) {
      Rng rng = Rng::keyed(49, "sequential-run-null", std::to_string(k));
      std::vector<std::vector<double>> flipped(d.size(), std::vector<double>(n));
      for (std::size_t i = 0; i < n; ++i) {
        const std::size_t from = rng.pick_index(n);  // a bootstrap draw of a scenario
        const double sign = rng.uniform() < 0.5 ? -1.0 : 1.0;
        for (std::size_t j = 0; j < d.size(); ++j) flipped[j][i] = sign * d[j][from];
      }
      const StudyOutcome o = play(flipped, 10, static_cast<double>(state.range(0)) / 100);
      for (bool r : o.rejected)
        if (r) {
          ++false_verdicts;
          break;
        }
    }
  state.counters["false_verdict_rate"] = static_cast<double>(false_verdicts) / 1000;
}
BENCHMARK(BM_RunNullSignFlips)->Arg(0)->Arg(20)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace advplan

BENCHMARK_MAIN();
