// The rubric layer's judge agreement (docs/RUBRIC.md, docs/METRICS.md "Judge agreement"): rubric.mean_over, and a
// bootstrap interval for every agreement statistic, equal to the statistics of the expanded resamples.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>
#include <string>
#include <thread>
#include <vector>

#include "advplan/pipeline/standard_run.hpp"
#include "advplan/core/error.hpp"
#include "advplan/run/config.hpp"
#include "advplan/rubric/judge.hpp"
#include "advplan/rubric/plans.hpp"
#include "advplan/rubric/score.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/run/scenario_lookup.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/stats/agreement.hpp"
#include "advplan/stats/statistics.hpp"
#include "advplan/core/random.hpp"
#include "advplan/io/sha256.hpp"
#include "advplan/policy/completion_cache.hpp"
#include "advplan/llm/providers.hpp"
#include "support/fixtures.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using namespace rubric;

// ---------------------------------------------------------------------------------------------------------
// mean_over, and the intervals of every agreement statistic.

RubricItem item(const std::string& c, const std::string& id) {
  RubricItem it;
  it.case_id = c;
  it.item_id = id;
  it.severity = Severity::I;
  return it;
}

TEST(RubricMeanOver, TemplatesAndScenariosDifferWhenGroupsDifferInSize) {
  RubricSet set;
  std::vector<Verdict> vs;
  // Template A: one scenario, scored 1. Template B: three scenarios, scored 0.
  for (const auto& [c, g, pass] : std::vector<std::tuple<std::string, std::string, bool>>{
           {"a1", "A", true}, {"b1", "B", false}, {"b2", "B", false}, {"b3", "B", false}}) {
    set[c] = {item(c, "x")};
    Verdict v;
    v.brief_id = c + "/p";
    v.judge = "j";
    v.case_id = c;
    v.model = "p";
    v.group = g;
    if (!pass) v.failed_items = {"x"};
    vs.push_back(v);
  }
  auto score = [&](MeanOver m) {
    for (const auto& [name, text] : score_verdicts(set, vs, m, 50, 1).files)
      if (name == "scores_per_policy.csv") return io::CsvTable::parse(text, name).at(0, "weighted_score");
    return std::string();
  };
  EXPECT_EQ(std::stod(score(MeanOver::group)), 0.5);
  EXPECT_EQ(std::stod(score(MeanOver::brief)), 0.25);
}

/// Three judges on 12 cases of 4 items and four policies: j2 flips one verdict every third case, j3 every fourth.
/// With `scores_in_one_case`, every case but c0 has only negative items, so its briefs have no weighted score (no
/// positive weight): a resample that does not draw c0 has no score rows, and no ICC or Kendall's W.
std::pair<RubricSet, std::vector<Verdict>> three_judge_panel(bool scores_in_one_case = false) {
  RubricSet set;
  std::vector<Verdict> vs;
  for (int c = 0; c < 12; ++c) {
    const std::string cid = "c" + std::to_string(c);
    for (int i = 0; i < 4; ++i) {
      set[cid].push_back(item(cid, "i" + std::to_string(i)));
      if (scores_in_one_case && c != 0) set[cid].back().severity = Severity::D;
    }
    for (const std::string j : {"j1", "j2", "j3"}) {
      for (int mi = 0; mi < 4; ++mi) {
        const std::string m = "p" + std::to_string(mi);
        Verdict v;
        v.brief_id = cid + "/" + m;
        v.judge = j;
        v.case_id = cid;
        v.model = m;
        v.group = "g";
        for (int i = 0; i < 4; ++i) {
          // Policies of different quality whose verdicts also vary from case to case (a fixed hash), so which
          // cases a resample draws can reorder the policies' means.
          const unsigned h = (static_cast<unsigned>(c) * 2654435761U) ^ (static_cast<unsigned>(i) * 40503U) ^
                             (static_cast<unsigned>(mi) * 9973U);
          bool fail = (h >> 7) % static_cast<unsigned>(3 + mi) == 0;
          if (j == "j2" && c % 3 == 0 && i == 0) fail = !fail;
          if (j == "j3" && c % 4 == 0 && i == 1) fail = !fail;
          if (fail) v.failed_items.push_back(std::string("i").append(std::to_string(i)));  // not "i" + ...: -Wrestrict
        }
        vs.push_back(v);
      }
    }
  }
  return {set, vs};
}

TEST(RubricAgreement, EveryStatisticHasABootstrapIntervalAroundItAndTheSameSeedGivesTheSameBytes) {
  const auto [set, vs] = three_judge_panel();
  const auto rep = judge_agreement(set, vs, 200, 11);
  std::map<std::string, std::string> files(rep.files.begin(), rep.files.end());
  const auto panel = io::CsvTable::parse(files.at("agreement_panel.csv"), "panel");
  std::set<std::string> seen;
  for (std::size_t r = 0; r < panel.size(); ++r) {
    const std::string name = panel.at(r, "statistic");
    seen.insert(name);
    const double v = std::stod(panel.at(r, "value")), lo = std::stod(panel.at(r, "lo")),
                 hi = std::stod(panel.at(r, "hi"));
    EXPECT_LE(lo, v) << name;
    EXPECT_LE(v, hi) << name;
    EXPECT_LT(lo, hi) << name;  // a real interval, not the point
  }
  for (const char* s : {"fleiss_kappa", "krippendorff_alpha_nominal_items", "krippendorff_alpha_interval_scores",
                        "icc2_1_scores", "icc3_1_scores", "kendall_w_scores"})
    EXPECT_TRUE(seen.count(s)) << s;
  const auto pairs = io::CsvTable::parse(files.at("agreement_pairs.csv"), "pairs");
  ASSERT_EQ(pairs.size(), 3u);
  for (std::size_t r = 0; r < pairs.size(); ++r) {
    EXPECT_LE(std::stod(pairs.at(r, "spearman_lo")), std::stod(pairs.at(r, "spearman_model_means")));
    EXPECT_LE(std::stod(pairs.at(r, "spearman_model_means")), std::stod(pairs.at(r, "spearman_hi")));
  }
  const auto again = judge_agreement(set, vs, 200, 11);
  EXPECT_EQ(again.files, rep.files);
  EXPECT_NE(judge_agreement(set, vs, 200, 12).files, rep.files);
}

/// The pairwise intervals against a brute force on the same resamples: each replicate draws the cases from the
/// stream every agreement interval shares (rubric-agreement, panel: the same multisets for every pair) and expands
/// them (every brief of a case as often as the case was drawn) into item lists and per-policy brief scores. The
/// implementation adds per-case sums instead, in another order, so the values agree to rounding; the four policies
/// make Spearman's interval more than a constant. With `j3_skips_first_case`, judge j3 grades no brief of the first
/// case: its pairs lack a case that the panel's draws count, so their counts are taken from the draws by case.
void expect_pair_intervals_of_expanded_resamples(bool j3_skips_first_case) {
  auto [set, vs] = three_judge_panel();
  if (j3_skips_first_case) {
    std::string first = vs.front().case_id;
    for (const auto& v : vs) first = std::min(first, v.case_id);
    std::erase_if(vs, [&](const Verdict& v) { return v.judge == "j3" && v.case_id == first; });
  }
  const int resamples = 300;
  const std::uint64_t seed = 5;
  const auto rep = judge_agreement(set, vs, resamples, seed);
  std::map<std::string, std::string> files(rep.files.begin(), rep.files.end());
  const auto pairs = io::CsvTable::parse(files.at("agreement_pairs.csv"), "pairs");
  // (case, policy) -> judge -> (item verdicts, weighted brief score)
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::pair<std::vector<bool>, double>>> graded;
  std::set<std::string> case_set;
  for (const auto& v : vs) {
    const auto& its = set.at(v.case_id);
    const auto passed = passed_from_failed(its, v.failed_items);
    graded[{v.case_id, v.model}][v.judge] = {passed, score_brief(its, passed).weighted};
    case_set.insert(v.case_id);
  }
  const std::vector<std::string> cases(case_set.begin(), case_set.end());
  ASSERT_EQ(pairs.size(), 3u);
  std::vector<std::vector<std::uint32_t>> draws(resamples, std::vector<std::uint32_t>(cases.size()));
  {
    Rng rng = Rng::keyed(seed, "rubric-agreement", "panel");
    for (auto& d : draws) resample_counts(rng, d);
  }
  bool spearman_varies = false;
  for (std::size_t r = 0; r < pairs.size(); ++r) {
    const std::string a = pairs.at(r, "judge_a"), b = pairs.at(r, "judge_b");
    SCOPED_TRACE(a + " vs " + b);
    std::vector<double> pct_b, kap_b, rho_b;
    for (int rep_i = 0; rep_i < resamples; ++rep_i) {
      const std::vector<std::uint32_t>& counts = draws[static_cast<std::size_t>(rep_i)];
      std::vector<int> va, vb;
      std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> by_model;
      for (std::size_t c = 0; c < cases.size(); ++c)
        for (std::uint32_t t = 0; t < counts[c]; ++t)
          for (const auto& [key, by_judge] : graded) {
            if (key.first != cases[c] || !by_judge.count(a) || !by_judge.count(b)) continue;
            const auto& [pa, sa] = by_judge.at(a);
            const auto& [pb, sb] = by_judge.at(b);
            for (std::size_t i = 0; i < pa.size(); ++i) {
              va.push_back(pa[i] ? 1 : 0);
              vb.push_back(pb[i] ? 1 : 0);
            }
            by_model[key.second].first.push_back(sa);
            by_model[key.second].second.push_back(sb);
          }
      double same = 0;
      for (std::size_t i = 0; i < va.size(); ++i) same += va[i] == vb[i] ? 1 : 0;
      pct_b.push_back(same / static_cast<double>(va.size()));
      if (const double k = agreement::cohen_kappa(va, vb, 2).kappa; !std::isnan(k)) kap_b.push_back(k);
      std::vector<double> ma, mb;
      for (const auto& [m, sc] : by_model) {
        ma.push_back(mean(sc.first));
        mb.push_back(mean(sc.second));
      }
      if (const double rho = agreement::spearman(ma, mb); !std::isnan(rho)) rho_b.push_back(rho);
    }
    const auto [p_lo, p_hi] = percentile_bounds(pct_b);
    const auto [k_lo, k_hi] = percentile_bounds(kap_b);
    const auto [s_lo, s_hi] = percentile_bounds(rho_b);
    spearman_varies = spearman_varies || s_lo < s_hi;
    // Printed to six decimals: the brute force's rounding differs from the sums' by far less than that.
    for (const auto& [col, want] : {std::pair{"percent_lo", p_lo}, std::pair{"percent_hi", p_hi},
                                    std::pair{"kappa_lo", k_lo}, std::pair{"kappa_hi", k_hi},
                                    std::pair{"spearman_lo", s_lo}, std::pair{"spearman_hi", s_hi}})
      EXPECT_NEAR(std::stod(pairs.at(r, col)), want, 1e-6 + 1e-12) << col;
  }
  EXPECT_TRUE(spearman_varies) << "the data should give Spearman an interval wider than a point";
}

TEST(RubricAgreement, PairIntervalsAreThoseOfTheExpandedResamples) { expect_pair_intervals_of_expanded_resamples(false); }

TEST(RubricAgreement, PairIntervalsOfAPairLackingACaseAreThoseOfTheExpandedResamples) {
  expect_pair_intervals_of_expanded_resamples(true);
}

// The panel's intervals against a brute force on the same resamples: each replicate expands the drawn cases (each
// as often as drawn, in case order) into the matrices the agreement functions take. The implementation adds per-case
// sums instead, so the values agree to rounding.
/// The panel file's intervals against a brute force that expands each replicate's drawn cases into the matrices
/// the agreement functions take (same stream), statistic by statistic.
void expect_panel_intervals_of_expanded_resamples(bool scores_in_one_case) {
  const auto [set, vs] = three_judge_panel(scores_in_one_case);
  const int resamples = 300;
  const std::uint64_t seed = 9;
  const auto rep = judge_agreement(set, vs, resamples, seed);
  std::map<std::string, std::string> files(rep.files.begin(), rep.files.end());
  const auto panel = io::CsvTable::parse(files.at("agreement_panel.csv"), "panel");
  // Per case (in id order), its briefs' rows: Fleiss counts per item, each judge's item values, the score rows.
  const std::vector<std::string> judges{"j1", "j2", "j3"};
  struct CaseRows {
    agreement::Matrix fleiss, scores;
    std::vector<agreement::Matrix> fleiss_without;  // [judge left out][item]
    std::vector<std::vector<double>> items, brief_scores;  // [judge][item], [judge][brief]
  };
  std::map<std::string, std::map<std::string, std::map<std::string, std::vector<bool>>>> by_case;  // case, brief, judge
  std::map<std::string, std::map<std::string, std::map<std::string, double>>> score_of;
  for (const auto& v : vs) {
    const auto& its = set.at(v.case_id);
    const auto passed = passed_from_failed(its, v.failed_items);
    by_case[v.case_id][v.brief_id][v.judge] = passed;
    score_of[v.case_id][v.brief_id][v.judge] = score_brief(its, passed).weighted;
  }
  std::vector<CaseRows> rows;
  for (const auto& [c, briefs] : by_case) {
    CaseRows cr;
    cr.items.resize(judges.size());
    cr.brief_scores.resize(judges.size());
    cr.fleiss_without.resize(judges.size());
    for (const auto& [b, by_judge] : briefs) {
      const std::size_t n = by_judge.at("j1").size();
      for (std::size_t i = 0; i < n; ++i) {
        double pass = 0;
        for (std::size_t j = 0; j < judges.size(); ++j) {
          const bool p = by_judge.at(judges[j])[i];
          pass += p ? 1 : 0;
          cr.items[j].push_back(p ? 1.0 : 0.0);
        }
        cr.fleiss.push_back({static_cast<double>(judges.size()) - pass, pass});
        for (std::size_t d = 0; d < judges.size(); ++d) {
          const double p = pass - (by_judge.at(judges[d])[i] ? 1 : 0);
          cr.fleiss_without[d].push_back({static_cast<double>(judges.size() - 1) - p, p});
        }
      }
      std::vector<double> row;
      for (std::size_t j = 0; j < judges.size(); ++j) {
        row.push_back(score_of[c][b].at(judges[j]));
        cr.brief_scores[j].push_back(row.back());
      }
      // A score row enters the ICC and Kendall's W only when every judge's score is defined.
      if (std::none_of(row.begin(), row.end(), [](double x) { return std::isnan(x); })) cr.scores.push_back(row);
    }
    rows.push_back(std::move(cr));
  }
  Rng rng = Rng::keyed(seed, "rubric-agreement", "panel");
  std::vector<std::uint32_t> counts(rows.size());
  std::map<std::string, std::vector<double>> reps;
  for (int r = 0; r < resamples; ++r) {
    resample_counts(rng, counts);
    agreement::Matrix fleiss, scores, items(judges.size()), brief_scores(judges.size());
    std::vector<agreement::Matrix> without(judges.size());
    for (std::size_t c = 0; c < rows.size(); ++c)
      for (std::uint32_t t = 0; t < counts[c]; ++t) {
        fleiss.insert(fleiss.end(), rows[c].fleiss.begin(), rows[c].fleiss.end());
        scores.insert(scores.end(), rows[c].scores.begin(), rows[c].scores.end());
        for (std::size_t j = 0; j < judges.size(); ++j) {
          items[j].insert(items[j].end(), rows[c].items[j].begin(), rows[c].items[j].end());
          brief_scores[j].insert(brief_scores[j].end(), rows[c].brief_scores[j].begin(), rows[c].brief_scores[j].end());
          without[j].insert(without[j].end(), rows[c].fleiss_without[j].begin(), rows[c].fleiss_without[j].end());
        }
      }
    std::vector<std::pair<std::string, double>> stats{
        {"fleiss_kappa", agreement::fleiss_kappa(fleiss)},
        {"krippendorff_alpha_nominal_items", agreement::krippendorff_alpha(items, agreement::AlphaLevel::nominal)},
        {"krippendorff_alpha_interval_scores",
         agreement::krippendorff_alpha(brief_scores, agreement::AlphaLevel::interval)}};
    if (scores.size() >= 2) {  // fewer than two score rows: no ICC and no W in this replicate
      const auto icc = agreement::icc(scores);
      stats.emplace_back("icc2_1_scores", icc.icc2_1);
      stats.emplace_back("icc3_1_scores", icc.icc3_1);
      stats.emplace_back("kendall_w_scores", agreement::kendall_w(scores));
    }
    for (std::size_t d = 0; d < judges.size(); ++d)
      stats.emplace_back("fleiss_kappa_without:" + judges[d], agreement::fleiss_kappa(without[d]));
    for (const auto& [name, value] : stats)
      if (std::isfinite(value)) reps[name].push_back(value);
  }
  std::size_t checked = 0;
  for (std::size_t r = 0; r < panel.size(); ++r) {
    const auto it = reps.find(panel.at(r, "statistic"));
    if (it == reps.end()) continue;
    SCOPED_TRACE(it->first);
    const auto [lo, hi] = percentile_bounds(it->second);
    EXPECT_NEAR(std::stod(panel.at(r, "lo")), lo, 1e-6 + 1e-12);
    EXPECT_NEAR(std::stod(panel.at(r, "hi")), hi, 1e-6 + 1e-12);
    // With one scoring case, a score statistic's replicates repeat c0's rows alone and can all be one value.
    if (!scores_in_one_case) {
      EXPECT_LT(lo, hi);
    }
    ++checked;
  }
  EXPECT_EQ(checked, reps.size());
  EXPECT_EQ(reps.size(), 9u);
  EXPECT_EQ(checked, panel.size()) << "every statistic of the panel file is compared";
  if (scores_in_one_case) {  // the replicates without score rows have no ICC: fewer values than resamples
    EXPECT_LT(reps.at("icc2_1_scores").size(), static_cast<std::size_t>(resamples) * 9 / 10);
  }
}

TEST(RubricAgreement, PanelIntervalsAreThoseOfTheExpandedResamples) { expect_panel_intervals_of_expanded_resamples(false); }

TEST(RubricAgreement, PanelIntervalsAreThoseOfTheExpandedResamplesWhenSomeReplicatesHaveNoScores) {
  expect_panel_intervals_of_expanded_resamples(true);
}

}  // namespace
}  // namespace advplan
