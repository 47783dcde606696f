#include "advplan/evaluation/leaderboard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <limits>
#include <numeric>
#include <set>

#include "advplan/core/error.hpp"
#include "advplan/core/random.hpp"
#include "advplan/evaluation/evaluation.hpp"
#include "advplan/stats/ratings.hpp"
#include "advplan/stats/text_table.hpp"

namespace advplan {
using io::CsvTable;
using io::fmt_real;

namespace {

bool ranked_group(const std::string& g) { return g == "main" || g == "evaluate" || g == "reference"; }

/// Sort key: a policy with no value on some baseline (NaN score) ranks last, and NaN never reaches a comparison.
double sort_key(double v) { return std::isnan(v) ? -std::numeric_limits<double>::infinity() : v; }

/// One policy's data: value of the metric per (RED, scenario index), NaN when there is no ok row.
struct PolicyData {
  std::string blue, run;
  std::size_t run_index = 0;
  std::map<std::string, std::vector<double>> by_red;
  std::vector<std::string> red_order;
  double validity = 0;
};

/// Mean over the common REDs of each RED's weighted mean over scenarios, and the minimum with its RED index.
void scores(const PolicyData& p, const std::vector<std::string>& reds, const std::vector<std::uint32_t>* w,
            double& mean_out, double& worst_out, std::size_t* worst_red = nullptr) {
  double sum = 0, worst = std::numeric_limits<double>::infinity();
  for (std::size_t r = 0; r < reds.size(); ++r) {
    const auto& v = p.by_red.at(reds[r]);
    double s = 0, n = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (std::isnan(v[i])) continue;
      const double wi = w ? (*w)[i] : 1.0;
      s += wi * v[i];
      n += wi;
    }
    const double m = n > 0 ? s / n : std::nan("");
    sum += m;
    if (m < worst || std::isnan(m)) {
      worst = m;
      if (worst_red) *worst_red = r;
    }
  }
  mean_out = sum / static_cast<double>(reds.size());
  worst_out = worst;
}

/// The corpus, the first run's scenario ids in order; every run must have the same scenarios.
std::vector<std::string> common_corpus(const std::vector<RunTraces>& runs) {
  std::vector<std::string> scenarios;
  for (std::size_t i = 0; i < runs[0].scenarios.size(); ++i) scenarios.push_back(runs[0].scenarios.at(i, "scenario_id"));
  const std::set<std::string> corpus(scenarios.begin(), scenarios.end());
  for (std::size_t k = 1; k < runs.size(); ++k) {
    std::set<std::string> other;
    for (std::size_t i = 0; i < runs[k].scenarios.size(); ++i) other.insert(runs[k].scenarios.at(i, "scenario_id"));
    if (other != corpus)
      throw CsvError(fmt::format("{}: its corpus ({} scenarios) is not the corpus of {} ({} scenarios); a leaderboard "
                                 "compares runs of the same corpus",
                                 runs[k].dir, other.size(), runs[0].dir, corpus.size()));
  }
  return scenarios;
}

/// Every BLUE policy of the ranked groups, from the first run that has it: its metric per (RED, scenario) and its
/// validity (the share of its scenarios without a BLUE failure).
std::vector<PolicyData> collect_policies(const std::vector<RunTraces>& runs, const std::vector<std::string>& scenarios,
                                         const std::string& metric) {
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < scenarios.size(); ++i) index[scenarios[i]] = i;
  std::vector<PolicyData> policies;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const CsvTable& per = runs[k].per_scenario;
    std::map<std::string, std::size_t> here;  // blue -> index into policies, for this run's new policies
    std::map<std::string, std::set<std::string>> seen, blue_failed;
    for (std::size_t i = 0; i < per.size(); ++i) {
      if (!ranked_group(per.at(i, "condition_group"))) continue;
      const std::string& blue = per.at(i, "blue_policy");
      auto it = here.find(blue);
      if (it == here.end()) {
        if (std::any_of(policies.begin(), policies.end(), [&](const PolicyData& p) { return p.blue == blue; })) continue;
        policies.push_back({blue, runs[k].dir, k, {}, {}, 0});
        it = here.emplace(blue, policies.size() - 1).first;
      }
      PolicyData& p = policies[it->second];
      const std::string& red = per.at(i, "red_policy");
      auto [v, fresh] = p.by_red.try_emplace(red, std::vector<double>(scenarios.size(), std::nan("")));
      if (fresh) p.red_order.push_back(red);
      const std::string& s = per.at(i, "scenario_id");
      seen[blue].insert(s);
      if (per.at(i, "status") == "ok")
        v->second[index.at(s)] = per.real(i, metric);
      else if (per.at(i, "failure_reason").starts_with("blue: "))
        blue_failed[blue].insert(s);
    }
    for (const auto& [blue, idx] : here)
      policies[idx].validity =
          seen[blue].empty() ? 0.0
                             : 1.0 - static_cast<double>(blue_failed[blue].size()) / static_cast<double>(seen[blue].size());
  }
  if (policies.empty()) throw CsvError("leaderboard: the runs have no rows of groups main, evaluate or reference");
  return policies;
}

/// The RED baselines every policy met, in the first policy's order.
std::vector<std::string> common_reds(const std::vector<PolicyData>& policies) {
  std::vector<std::string> reds;
  for (const auto& red : policies[0].red_order)
    if (std::all_of(policies.begin(), policies.end(), [&](const PolicyData& p) { return p.by_red.contains(red); }))
      reds.push_back(red);
  if (reds.empty())
    throw CsvError("leaderboard: no RED baseline is common to every BLUE policy of the runs");
  return reds;
}

/// The policies by score, best first (stable: ties keep the policies' order).
void order_by_score(std::vector<std::size_t>& ord, const std::vector<double>& score) {
  std::iota(ord.begin(), ord.end(), 0);
  std::stable_sort(ord.begin(), ord.end(),
                   [&](std::size_t x, std::size_t y) { return sort_key(score[x]) > sort_key(score[y]); });
}

/// Tied policies (equal scores) share their ranks: a group at sorted positions r..r+g-1 has best rank r+1 and
/// worst rank r+g. The point rank is the best rank (competition ranking, 1 2 2 4).
void tied_ranks(const std::vector<std::size_t>& ord, const std::vector<double>& score, std::vector<double>& best,
                std::vector<double>& worst_rank) {
  const std::size_t np = ord.size();
  for (std::size_t r = 0; r < np;) {
    std::size_t e = r + 1;
    while (e < np && sort_key(score[ord[e]]) == sort_key(score[ord[r]])) ++e;
    for (std::size_t i = r; i < e; ++i) {
      best[ord[i]] = static_cast<double>(r + 1);
      worst_rank[ord[i]] = static_cast<double>(e);
    }
    r = e;
  }
}

/// Per policy and replicate: its mean and worst score, its best and worst rank, and its gap to the next policy of
/// the point order.
struct Replicates {
  std::vector<std::vector<double>> mean, worst, rank, rank_hi, gap;
};

/// The joint bootstrap over scenarios: every policy's score on the same resample.
Replicates bootstrap_scores(const std::vector<PolicyData>& policies, const std::vector<std::string>& reds,
                            const std::vector<std::size_t>& order, std::size_t n_scenarios, const std::string& metric,
                            const BootstrapSettings& bs) {
  const std::size_t np = policies.size();
  const auto B = static_cast<std::size_t>(std::max(bs.resamples, 1));
  Replicates rep;
  rep.mean.assign(np, std::vector<double>(B));
  rep.worst = rep.rank = rep.rank_hi = rep.gap = rep.mean;
  std::vector<double> best(np), worst_rank(np);
  Rng rng = Rng::keyed(bs.seed, "bootstrap", "leaderboard|" + metric);
  std::vector<std::uint32_t> counts(n_scenarios);
  std::vector<double> m(np), wv(np);
  std::vector<std::size_t> ord(np);
  for (std::size_t b = 0; b < B; ++b) {
    resample_counts(rng, counts);
    for (std::size_t p = 0; p < np; ++p) scores(policies[p], reds, &counts, m[p], wv[p]);
    order_by_score(ord, m);
    tied_ranks(ord, m, best, worst_rank);
    for (std::size_t p = 0; p < np; ++p) {
      rep.rank[p][b] = best[p];
      rep.rank_hi[p][b] = worst_rank[p];
    }
    for (std::size_t p = 0; p < np; ++p) {
      rep.mean[p][b] = m[p];
      rep.worst[p][b] = wv[p];
    }
    for (std::size_t r = 0; r + 1 < np; ++r) rep.gap[order[r]][b] = m[order[r]] - m[order[r + 1]];
  }
  return rep;
}

/// Bradley-Terry and Elo over BLUE policies (players 0..np-1) and the common RED baselines (np..): one game per ok
/// (policy, RED, scenario) cell, BLUE's score its win rate (blue_win_rate) or 1, 1/2, 0 by the advantage's sign;
/// Elo's games in corpus order (scenario, then policy, then RED). Written into `bt` and `elo` per policy.
void pairwise_ratings(const std::vector<PolicyData>& policies, const std::vector<std::string>& reds,
                      std::size_t n_scenarios, const std::string& metric, std::vector<double>& bt,
                      std::vector<double>& elo) {
  const std::size_t np = policies.size(), nr = reds.size();
  PairwiseCounts counts(np + nr);
  std::vector<EloGame> games;
  for (std::size_t s = 0; s < n_scenarios; ++s)
    for (std::size_t p = 0; p < np; ++p)
      for (std::size_t r = 0; r < nr; ++r) {
        const double v = policies[p].by_red.at(reds[r])[s];
        if (std::isnan(v)) continue;
        const double score = metric == "blue_win_rate" ? std::clamp(v, 0.0, 1.0) : v > 0 ? 1.0 : v < 0 ? 0.0 : 0.5;
        counts.add(p, np + r, score, 1);
        games.push_back({p, np + r, score});
      }
  const BradleyTerryFit fit = bradley_terry_mm(counts);
  const std::vector<double> e = elo_ratings(np + nr, games);
  bt.assign(np, std::nan(""));
  elo.assign(e.begin(), e.begin() + static_cast<std::ptrdiff_t>(np));
  if (fit.exists && fit.converged) bt.assign(fit.theta.begin(), fit.theta.begin() + static_cast<std::ptrdiff_t>(np));
}

}  // namespace

Leaderboard build_leaderboard(const std::vector<RunTraces>& runs, const std::string& metric, const BootstrapSettings& bs) {
  if (runs.empty()) throw CsvError("leaderboard: no run directory given");
  if (metric != "advantage" && metric != "blue_win_rate")
    throw ConfigError(fmt::format("leaderboard: --metric {}: accepted values are advantage and blue_win_rate", metric));
  Leaderboard lb;
  lb.metric = metric;
  const std::vector<std::string> scenarios = common_corpus(runs);
  lb.scenarios = scenarios.size();
  const std::vector<PolicyData> policies = collect_policies(runs, scenarios, metric);
  lb.reds = common_reds(policies);

  const std::size_t np = policies.size();
  std::vector<double> mean(np), worst(np);
  std::vector<std::size_t> worst_red(np, 0);
  for (std::size_t p = 0; p < np; ++p) scores(policies[p], lb.reds, nullptr, mean[p], worst[p], &worst_red[p]);
  std::vector<std::size_t> order(np);
  order_by_score(order, mean);
  std::vector<double> point_best(np), point_worst(np);
  tied_ranks(order, mean, point_best, point_worst);
  Replicates rep = bootstrap_scores(policies, lb.reds, order, scenarios.size(), metric, bs);
  std::vector<double> bt, elo;
  pairwise_ratings(policies, lb.reds, scenarios.size(), metric, bt, elo);

  for (std::size_t r = 0; r < np; ++r) {
    const std::size_t p = order[r];
    LeaderboardEntry e;
    e.blue = policies[p].blue;
    e.run = policies[p].run;
    e.rank = static_cast<std::size_t>(point_best[p]);
    e.mean = {mean[p], 0, 0, scenarios.size()};
    std::tie(e.mean.lo, e.mean.hi) = percentile_bounds(rep.mean[p]);
    e.worst = {worst[p], 0, 0, scenarios.size()};
    std::tie(e.worst.lo, e.worst.hi) = percentile_bounds(rep.worst[p]);
    e.worst_red = lb.reds[worst_red[p]];
    // The interval runs from the lower bound of the best rank to the upper bound of the worst rank: exactly tied
    // policies get one interval.
    e.rank_lo = percentile_bounds(rep.rank[p]).first;
    e.rank_hi = percentile_bounds(rep.rank_hi[p]).second;
    e.validity = policies[p].validity;
    e.bt_theta = bt[p];
    e.elo = elo[p];
    const RobustnessSummary rs = robustness_summary(runs[policies[p].run_index].per_scenario, e.blue, metric, bs);
    e.slope = rs.slope;
    if (r + 1 < np) {
      e.gap_to_next = {mean[p] - mean[order[r + 1]], 0, 0, scenarios.size()};
      std::tie(e.gap_to_next.lo, e.gap_to_next.hi) = percentile_bounds(rep.gap[p]);
      e.separated_from_next = e.gap_to_next.lo > 0 || e.gap_to_next.hi < 0 ? "yes" : "no";
    } else {
      e.gap_to_next = {std::nan(""), std::nan(""), std::nan(""), 0};
    }
    lb.entries.push_back(std::move(e));
  }
  return lb;
}

std::vector<std::pair<std::string, std::string>> leaderboard_files(const Leaderboard& lb) {
  const std::string what = lb.metric == "advantage" ? "advantage" : "win rate";
  CsvTable csv({"rank", "rank_lo", "rank_hi", "blue_policy", "run", "mean", "mean_lo", "mean_hi", "worst", "worst_lo",
                "worst_hi", "worst_red", "slope", "slope_lo", "slope_hi", "validity", "gap_to_next", "gap_lo", "gap_hi",
                "separated_from_next", "bt_theta", "elo"});
  std::string reds;
  for (const auto& r : lb.reds) reds += (reds.empty() ? "" : ", ") + r;
  TextTable t{"leaderboard",
              fmt::format("Leaderboard by mean BLUE {} over the RED baselines ({}) on {} scenarios; 95% bootstrap "
                          "intervals resample scenarios jointly",
                          what, reds, lb.scenarios),
              {"Rank [95% CI]", "BLUE policy", fmt::format("Mean {}", what), fmt::format("Worst case {}", what),
               "Worst against", "Slope per doubling of k", "Valid plans", "Separated from next"},
              {}};
  nlohmann::ordered_json j;
  j["metric"] = lb.metric;
  j["red_baselines"] = lb.reds;
  j["scenarios"] = lb.scenarios;
  j["entries"] = nlohmann::ordered_json::array();
  auto num = [](double v) { return std::isnan(v) ? nlohmann::ordered_json() : nlohmann::ordered_json(v); };
  auto iv = [&](const Interval& i) { return nlohmann::ordered_json{{"value", num(i.mean)}, {"lo", num(i.lo)}, {"hi", num(i.hi)}}; };
  auto cell = [](const Interval& i) { return std::isnan(i.mean) ? std::string("n/a") : interval_cell(i); };
  for (const auto& e : lb.entries) {
    csv.add({std::to_string(e.rank), fmt::format("{}", e.rank_lo), fmt::format("{}", e.rank_hi), e.blue, e.run,
             fmt_real(e.mean.mean), fmt_real(e.mean.lo), fmt_real(e.mean.hi), fmt_real(e.worst.mean),
             fmt_real(e.worst.lo), fmt_real(e.worst.hi), e.worst_red, std::isnan(e.slope.mean) ? "" : fmt_real(e.slope.mean),
             std::isnan(e.slope.lo) ? "" : fmt_real(e.slope.lo), std::isnan(e.slope.hi) ? "" : fmt_real(e.slope.hi),
             fmt_real(e.validity), std::isnan(e.gap_to_next.mean) ? "" : fmt_real(e.gap_to_next.mean),
             std::isnan(e.gap_to_next.lo) ? "" : fmt_real(e.gap_to_next.lo),
             std::isnan(e.gap_to_next.hi) ? "" : fmt_real(e.gap_to_next.hi), e.separated_from_next,
             std::isnan(e.bt_theta) ? "" : fmt_real(e.bt_theta), fmt_real(e.elo)});
    t.rows.push_back({fmt::format("{} [{}, {}]", e.rank, e.rank_lo, e.rank_hi), e.blue, cell(e.mean), cell(e.worst),
                      e.worst_red, cell(e.slope), fmt::format("{:.3f}", e.validity),
                      e.separated_from_next.empty()
                          ? ""
                          : fmt::format("{} ({:+.3f} [{:+.3f}, {:+.3f}])", e.separated_from_next, e.gap_to_next.mean,
                                        e.gap_to_next.lo, e.gap_to_next.hi)});
    j["entries"].push_back({{"rank", e.rank}, {"rank_interval", {e.rank_lo, e.rank_hi}}, {"blue", e.blue}, {"run", e.run},
                            {"mean", iv(e.mean)}, {"worst", iv(e.worst)}, {"worst_red", e.worst_red},
                            {"slope", iv(e.slope)}, {"validity", e.validity}, {"gap_to_next", iv(e.gap_to_next)},
                            {"separated_from_next", e.separated_from_next}, {"bt_theta", num(e.bt_theta)},
                            {"elo", e.elo}});
  }
  return {{"leaderboard.csv", csv.to_string()},
          {"leaderboard.md", t.markdown()},
          {"leaderboard.tex", t.latex()},
          {"leaderboard.json", j.dump(2) + "\n"}};
}

}  // namespace advplan
