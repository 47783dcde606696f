#pragma once
// `advplan leaderboard RUN_DIR...`: every BLUE policy of several runs of the same corpus, ranked by its mean over
// the RED baselines, with the worst case, the robustness slope and validity, and with the ranking's uncertainty
// from a bootstrap that resamples scenarios jointly for all policies (docs/METRICS.md "Leaderboard").
#include <string>
#include <utility>
#include <vector>

#include "advplan/run/run_reader.hpp"
#include "advplan/run/summaries.hpp"
#include "advplan/stats/statistics.hpp"

namespace advplan {

struct LeaderboardEntry {
  std::string blue, run;          ///< the policy and the run its rows come from (the first run that has it)
  Interval mean, worst;           ///< mean over the RED baselines of the per-baseline means, and their minimum
  std::string worst_red;          ///< the baseline of the worst case
  Interval slope;                 ///< robustness slope of the metric per doubling of k (NaN without a sweep)
  double validity = 0;            ///< share of scenarios where the policy produced a valid plan
  std::size_t rank = 0;           ///< 1 = best, by the mean; tied policies share the best rank of their group
  double rank_lo = 0, rank_hi = 0;  ///< 95% bootstrap interval: best rank's lower bound, worst rank's upper
  std::string separated_from_next;  ///< "yes"/"no": the paired interval of (this - next) excludes 0; "" for the last
  Interval gap_to_next;           ///< paired bootstrap interval of this policy's mean minus the next one's
  /// Bradley-Terry log-strength and Elo from the pairwise outcomes against the common RED baselines (docs/METRICS.md
  /// "Ratings", leaderboard): NaN when the Bradley-Terry MLE does not exist or did not converge.
  double bt_theta = 0, elo = 0;
};

struct Leaderboard {
  std::string metric;                 ///< advantage or blue_win_rate
  std::vector<std::string> reds;      ///< the RED baselines every policy met
  std::size_t scenarios = 0;
  std::vector<LeaderboardEntry> entries;  ///< by rank
};

/// Ranks every BLUE policy of the runs (rows of groups main, evaluate and reference) over the RED baselines that
/// every policy met. Throws CsvError naming the run when the runs' corpora differ, and when no RED baseline is
/// common to all policies.
Leaderboard build_leaderboard(const std::vector<RunTraces>& runs, const std::string& metric, const BootstrapSettings& bs);

/// leaderboard.{csv,md,tex,json}.
std::vector<std::pair<std::string, std::string>> leaderboard_files(const Leaderboard& lb);

}  // namespace advplan
