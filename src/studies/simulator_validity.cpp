// The simulator-validity study (docs/METRICS.md "Simulator validity"): in an engagement run, how well the
// Lanchester model's proxies, q, D, the paper's advantage and the Lanchester win rate itself, rank the engagement
// model's win rates over (scenario, condition) rows, with bootstrap intervals over scenarios; and, per condition,
// where the rankings of the conditions by the proxies and by the engagement model disagree.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>

#include "advplan/core/random.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/scenario_lookup.hpp"
#include "advplan/sim/wargame.hpp"
#include "advplan/stats/agreement.hpp"
#include "advplan/studies/studies.hpp"

namespace advplan {

using io::CsvTable;
using io::fmt_real;

namespace {

/// The proxies, in column order.
constexpr const char* kPredictors[] = {"blue_quality", "blue_coherence", "advantage", "lanchester_win_rate"};

struct Row {
  std::size_t scenario = 0;
  std::string condition;
  double x[4] = {0, 0, 0, 0};
  double y = 0;  ///< the engagement model's BLUE win rate
};

}  // namespace

std::vector<std::pair<std::string, std::string>> simulator_validity_files(const CsvTable& per, const ExperimentConfig& cfg,
                                                                         const BootstrapSettings& bs) {
  if (cfg.sim.model != "engagement") return {};
  // The rows a Lanchester run would have compared (not sweep points or attribution combinations), ok ones.
  std::vector<Row> rows;
  std::vector<std::string> scenario_ids;
  std::map<std::string, std::size_t> scenario_index;
  std::map<std::string, SimNoise> noise;  // per scenario, the Lanchester model's (the same draws)
  SimConfig lan = cfg.sim;
  lan.model = "lanchester";
  const std::size_t cs = per.col("scenario_id"), cc = per.col("condition"), cg = per.col("condition_group"),
                    st = per.col("status");
  for (std::size_t i = 0; i < per.size(); ++i) {
    const auto& r = per.rows()[i];
    if (r[st] != "ok" || is_replay_group(r[cg])) continue;
    const auto [it, added] = scenario_index.emplace(r[cs], scenario_ids.size());
    if (added) scenario_ids.push_back(r[cs]);
    Row row;
    row.scenario = it->second;
    row.condition = r[cc];
    row.x[0] = per.real(i, "blue_quality");
    row.x[1] = per.real(i, "blue_coherence");
    row.x[2] = per.real(i, "advantage");
    auto n = noise.find(r[cs]);
    if (n == noise.end()) n = noise.emplace(r[cs], draw_noise(cfg.seed, r[cs], lan)).first;
    // The Lanchester model on the row's forces (raw capability, q, D as the run recorded them, 6 decimals).
    const Force fb{per.real(i, "blue_raw_capability"), row.x[0], row.x[1], 1.0};
    const Force fr{per.real(i, "red_raw_capability"), per.real(i, "red_quality"), per.real(i, "red_coherence"), 1.0};
    row.x[3] = simulate(fb, fr, n->second, lan).win_rate;
    row.y = per.real(i, "blue_win_rate");
    rows.push_back(std::move(row));
  }
  // Spearman's rho of each proxy with the engagement win rate over the rows, and its percentile interval over B
  // resamples of the scenarios (a resampled scenario brings all its rows).
  std::vector<std::vector<std::size_t>> of_scenario(scenario_ids.size());
  for (std::size_t k = 0; k < rows.size(); ++k) of_scenario[rows[k].scenario].push_back(k);
  auto rho = [&](std::size_t p, const std::vector<std::size_t>& pick) {
    std::vector<double> x, y;
    for (const std::size_t s : pick)
      for (const std::size_t k : of_scenario[s]) {
        x.push_back(rows[k].x[p]);
        y.push_back(rows[k].y);
      }
    return agreement::spearman(x, y);
  };
  std::vector<std::size_t> all(scenario_ids.size());
  for (std::size_t s = 0; s < all.size(); ++s) all[s] = s;
  CsvTable t(schema::simulator_validity());
  const std::size_t B = static_cast<std::size_t>(std::max(0, bs.resamples));
  std::vector<std::vector<double>> boot(std::size(kPredictors));
  if (all.size() > 1) {
    Rng rng = Rng::keyed(bs.seed, "bootstrap", "studies/simulator_validity");
    std::vector<std::size_t> pick(all.size());
    for (std::size_t b = 0; b < B; ++b) {
      for (auto& s : pick) s = rng.pick_index(all.size());
      for (std::size_t p = 0; p < std::size(kPredictors); ++p) boot[p].push_back(rho(p, pick));
    }
  }
  for (std::size_t p = 0; p < std::size(kPredictors); ++p) {
    std::vector<double> v;
    for (double x : boot[p])
      if (!std::isnan(x)) v.push_back(x);
    std::sort(v.begin(), v.end());
    std::string lo, hi;
    if (!v.empty()) {
      const std::size_t n = v.size();
      const std::size_t l = std::min(static_cast<std::size_t>(std::floor(0.025 * static_cast<double>(n))), n - 1);
      const auto h = static_cast<std::size_t>(std::ceil(0.975 * static_cast<double>(n)));
      lo = fmt_real(v[l]);
      hi = fmt_real(v[h == 0 ? 0 : std::min(h - 1, n - 1)]);
    }
    const double r = rho(p, all);
    t.add({kPredictors[p], "engagement_win_rate", std::to_string(rows.size()), std::to_string(all.size()),
           std::isnan(r) ? "" : fmt_real(r), lo, hi});
  }
  // Per condition: the means, and each condition's rank (1 = highest) by the advantage, the Lanchester win rate and
  // the engagement win rate; `rank_shift` is the engagement rank minus the Lanchester rank.
  std::vector<std::string> conds;
  std::map<std::string, std::array<double, 4>> sums;  // advantage, lanchester, engagement, n
  for (const Row& r : rows) {
    auto [it, added] = sums.try_emplace(r.condition, std::array<double, 4>{0, 0, 0, 0});
    if (added) conds.push_back(r.condition);
    it->second[0] += r.x[2];
    it->second[1] += r.x[3];
    it->second[2] += r.y;
    it->second[3] += 1;
  }
  auto ranks = [&](int k) {
    std::vector<double> v;
    for (const auto& c : conds) v.push_back(-sums[c][static_cast<std::size_t>(k)] / sums[c][3]);
    return agreement::average_ranks(v);
  };
  const std::vector<double> ra = ranks(0), rl = ranks(1), re = ranks(2);
  CsvTable d(schema::simulator_disagreements());
  for (std::size_t i = 0; i < conds.size(); ++i) {
    const auto& s = sums[conds[i]];
    d.add({conds[i], std::to_string(static_cast<long long>(s[3])), fmt_real(s[0] / s[3]), fmt_real(s[1] / s[3]),
           fmt_real(s[2] / s[3]), fmt::format("{:g}", ra[i]), fmt::format("{:g}", rl[i]), fmt::format("{:g}", re[i]),
           fmt::format("{:g}", re[i] - rl[i])});
  }
  return {{"studies/simulator_validity.csv", t.to_string()}, {"studies/simulator_disagreements.csv", d.to_string()}};
}

namespace schema {
const std::vector<std::string>& simulator_validity() {
  static const std::vector<std::string> c{"predictor", "outcome", "rows", "scenarios", "spearman", "ci_lo", "ci_hi"};
  return c;
}
const std::vector<std::string>& simulator_disagreements() {
  static const std::vector<std::string> c{"condition",       "rows",           "mean_advantage", "mean_lanchester_win_rate",
                                          "mean_engagement_win_rate", "rank_advantage", "rank_lanchester",
                                          "rank_engagement", "rank_shift"};
  return c;
}
}  // namespace schema

}  // namespace advplan
