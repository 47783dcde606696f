#pragma once
// Reducers over a sampled run's samples (config `samples: N`, N >= 2): worst-of-N and majority per (scenario,
// condition), pass@k and pass^k of a declared event, and the flaky scenarios (docs/METRICS.md "Reducers over
// samples", docs/TRACES.md "samples/").

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "advplan/io/csv.hpp"
#include "advplan/run/observer.hpp"
#include "advplan/stats/statistics.hpp"

namespace advplan {

/// Chen et al.'s unbiased pass@k from c successes in n trials: 1 - C(n - c, k) / C(n, k), as the running product
/// 1 - prod_{i = n - c + 1}^{n} (1 - k / i) (1 when n - c < k). NaN when k > n or n = 0.
double pass_at_k(std::size_t n, std::size_t c, std::size_t k);
/// The unbiased pass^k (all k of k draws without replacement succeed): C(c, k) / C(n, k), as prod_{i=0}^{k-1}
/// (c - i) / (n - i). NaN when k > n or n = 0.
double pass_hat_k(std::size_t n, std::size_t c, std::size_t k);

/// The reducer files of a sampled per_scenario.csv (the per-sample rows, with its `sample` column):
/// samples/reducers.csv, samples/pass_at_k.csv, samples/flaky.csv and samples/flakiness.csv. Empty when the table
/// has no `sample` column or every (scenario, condition) has one sample.
std::vector<std::pair<std::string, std::string>> sample_reducer_files(const io::CsvTable& per,
                                                                      const BootstrapSettings& bs);

/// The reducers as a run observer: reads the run's per_scenario.csv (every sample) when the run has samples.
std::shared_ptr<RunObserver> make_sample_reducer_observer();

}  // namespace advplan
