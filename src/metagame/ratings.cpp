// ratings.csv and ratings.json of `advplan metagame` (docs/METRICS.md "Ratings", "Nash averaging"): Bradley-Terry
// strengths with a bootstrap over scenarios, Elo in corpus order, and Nash averaging, for every BLUE and RED policy.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/core/random.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/metagame/metagame.hpp"
#include "advplan/stats/statistics.hpp"

namespace advplan::metagame {
namespace {

/// A cell's outcome as BLUE's score out of its games: wins out of R replications for win rates; for advantage one
/// game, 1 when the advantage is positive, 0 when negative, 1/2 for a tie at 0.
std::pair<double, double> cell_outcome(const MetaGameData& d, std::int64_t cell) {
  if (d.payoff == Payoff::win_rate) return {static_cast<double>(cell), static_cast<double>(d.unit)};
  return {cell > 0 ? 1.0 : cell < 0 ? 0.0 : 0.5, 1.0};
}

}  // namespace

PairwiseCounts pairwise_counts(const MetaGameData& d, const std::vector<std::size_t>& idx) {
  const std::size_t nb = d.blue.size(), nr = d.red.size(), per = nb * nr;
  PairwiseCounts c(nb + nr);
  auto add = [&](std::size_t s) {
    for (std::size_t i = 0; i < nb; ++i)
      for (std::size_t j = 0; j < nr; ++j) {
        const auto [score, games] = cell_outcome(d, d.cells[s * per + i * nr + j]);
        c.add(i, nb + j, score, games);
      }
  };
  if (idx.empty())
    for (std::size_t s = 0; s < d.scenarios.size(); ++s) add(s);
  else
    for (const std::size_t s : idx) add(s);
  return c;
}

std::vector<EloGame> elo_games(const MetaGameData& d) {
  const std::size_t nb = d.blue.size(), nr = d.red.size(), per = nb * nr;
  std::vector<EloGame> games;
  for (std::size_t s = 0; s < d.scenarios.size(); ++s)
    for (std::size_t i = 0; i < nb; ++i)
      for (std::size_t j = 0; j < nr; ++j) {
        const auto [score, n] = cell_outcome(d, d.cells[s * per + i * nr + j]);
        games.push_back({i, nb + j, score / n});
      }
  return games;
}

RatingsResult compute_ratings(const MetaGameData& d, const MetaGameOptions& opt, const IntMatrix& a,
                              const GameSolution& g) {
  const std::size_t nb = d.blue.size(), nr = d.red.size(), n = d.scenarios.size(), np = nb + nr;
  const bool win = d.payoff == Payoff::win_rate;
  RatingsResult r;
  r.key = std::string("ratings/") + (win ? "win_rate" : "advantage");
  r.bt = bradley_terry_mm(pairwise_counts(d, {}));
  r.elo = elo_ratings(np, elo_games(d));
  r.nash = nash_average(a, g, win);
  r.ci.assign(np, {NAN, NAN});
  const auto B = static_cast<std::size_t>(std::max(0, opt.resamples));
  r.resamples = B;
  if (n < 2 || !r.bt.exists || !r.bt.converged) return r;
  Rng rng = Rng::keyed(opt.seed, "bootstrap", r.key);
  std::vector<std::vector<double>> reps(np);
  std::vector<std::size_t> idx(n);
  for (std::size_t b = 0; b < B; ++b) {
    for (auto& s : idx) s = rng.pick_index(n);
    const BradleyTerryFit f = bradley_terry_mm(pairwise_counts(d, idx));
    if (!f.exists || !f.converged) continue;
    ++r.resamples_used;
    for (std::size_t p = 0; p < np; ++p) reps[p].push_back(f.theta[p]);
  }
  // Skipped resamples are the ones nearest separation, so an interval of the rest would be too narrow exactly when
  // the data are near it: no interval unless at least 95% of the resamples were used.
  if (r.resamples_used > 0 && 20 * r.resamples_used >= 19 * B)
    for (std::size_t p = 0; p < np; ++p) r.ci[p] = percentile_bounds(reps[p]);
  return r;
}

namespace {

std::string fixed(double v) {
  if (std::isnan(v)) return "";
  std::string s = fmt::format("{:.9f}", v);
  return s == "-0.000000000" ? "0.000000000" : s;
}

}  // namespace

void write_ratings(const MetaGameData& d, const MetaGameOptions& opt, const IntMatrix& a, const RatingsResult& r,
                   const std::string& csv_path, const std::string& json_path) {
  const std::size_t nb = d.blue.size(), nr = d.red.size();
  const bool win = d.payoff == Payoff::win_rate;
  const bool bt = r.bt.exists && r.bt.converged;
  io::CsvTable t({"side", "policy", "mean_payoff", "bt_theta", "bt_ci_lo", "bt_ci_hi", "elo", "nash_probability",
                  "nash_rating"});
  for (std::size_t p = 0; p < nb + nr; ++p) {
    const bool blue = p < nb;
    const std::size_t k = blue ? p : p - nb;
    double mean = 0;
    for (std::size_t o = 0; o < (blue ? nr : nb); ++o) {
      const double v = blue ? a.value(k, o) : a.value(o, k);
      mean += blue ? v : (win ? 1.0 - v : -v);
    }
    mean /= static_cast<double>(blue ? nr : nb);
    t.add({blue ? "blue" : "red", blue ? d.blue[k] : d.red[k], fixed(mean), bt ? fixed(r.bt.theta[p]) : "",
           fixed(r.ci[p].first), fixed(r.ci[p].second), fixed(r.elo[p]),
           fixed(blue ? r.nash.blue[k] : r.nash.red[k]), fixed(blue ? r.nash.blue_rating[k] : r.nash.red_rating[k])});
  }
  t.write(csv_path);
  nlohmann::json j;
  j["payoff"] = win ? "win_rate" : "advantage";
  j["bradley_terry"] = {{"mle_exists", r.bt.exists}, {"converged", r.bt.converged}, {"sweeps", r.bt.sweeps},
                        {"tolerance", kBradleyTerryTolerance}, {"max_sweeps", kBradleyTerryMaxSweeps},
                        {"bootstrap", {{"resamples", r.resamples}, {"used", r.resamples_used}, {"seed", opt.seed},
                                       {"key", r.key}}}};
  j["elo"] = {{"k", kEloK}, {"initial", kEloInitial}, {"scale", kEloScale},
              {"order", "scenarios in corpus order, then BLUE, then RED"}, {"games", d.scenarios.size() * nb * nr}};
  j["nash"] = {{"blue_exact_point", r.nash.blue_point}, {"red_exact_point", r.nash.red_point},
               {"blue_residual", r.nash.blue_residual}, {"red_residual", r.nash.red_residual},
               {"newton_steps", r.nash.newton_steps}};
  io::write_file_atomic(json_path, j.dump(2) + "\n");
}

}  // namespace advplan::metagame
