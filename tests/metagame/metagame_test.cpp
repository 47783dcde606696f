// The meta-game (docs/METRICS.md "Meta-game"): the exact solver against lrsnash (Debian lrslib) on random and
// degenerate games, alpha-Rank against the Han et al. (2013) fixture that OpenSpiel tests against, alpha sweeps
// over reducible chains, and the command's reading of trace CSVs with its bootstrap.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <set>
#include <sstream>

#include "advplan/core/error.hpp"
#include "advplan/metagame/metagame.hpp"
#include "advplan/io/csv.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {
using namespace metagame;
using testing::TempDir;

// ---- lrsnash oracle ---------------------------------------------------------------------------------------------

struct LrsEquilibrium {
  std::vector<std::string> x, y;  // player 1 (rows), player 2 (columns)
  std::string value;              // player 1's payoff
};

/// "p/q" reduced, or "p".
std::string frac(std::int64_t p, std::int64_t q) {
  if (q < 0) p = -p, q = -q;
  const std::int64_t g = std::gcd(p < 0 ? -p : p, q);
  p /= g, q /= g;
  return q == 1 ? std::to_string(p) : std::to_string(p) + "/" + std::to_string(q);
}

/// Every extreme equilibrium lrsnash finds for the zero-sum game (A, -A), A = num / den given as fractions.
std::vector<LrsEquilibrium> lrsnash(const IntMatrix& a, const TempDir& dir) {
  std::ostringstream in;
  in << a.rows << " " << a.cols << "\n\n";
  for (int sign : {1, -1}) {
    for (std::size_t i = 0; i < a.rows; ++i) {
      for (std::size_t j = 0; j < a.cols; ++j) in << frac(sign * a.at(i, j), a.den) << " ";
      in << "\n";
    }
    in << "\n";
  }
  const std::string file = dir / "game.txt";
  testing::write_file(file, in.str());
  const auto r = testing::run_command("lrsnash " + testing::shell_quote(file), dir);
  EXPECT_EQ(r.status, 0) << "lrsnash failed (install Debian lrslib: scripts/setup.sh): " << r.err;
  std::vector<LrsEquilibrium> out;
  std::vector<std::vector<std::string>> pending;  // "2" lines: player 2's strategy, then player 1's payoff
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream f(line);
    std::string tag;
    if (!(f >> tag) || (tag != "1" && tag != "2")) continue;
    std::vector<std::string> v;
    for (std::string t; f >> t;) v.push_back(t);
    if (tag == "2") {
      pending.push_back(v);
    } else {
      for (const auto& p : pending) {
        LrsEquilibrium e;
        e.x.assign(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(a.rows));
        e.y.assign(p.begin(), p.begin() + static_cast<std::ptrdiff_t>(a.cols));
        e.value = p.back();
        out.push_back(e);
      }
      pending.clear();
    }
  }
  return out;
}

/// lrsnash prints 0 for zero probabilities and reduced fractions otherwise, as Fraction::str does.
std::vector<std::string> strs(const std::vector<Fraction>& v) {
  std::vector<std::string> s;
  for (const auto& f : v) s.push_back(f.str());
  return s;
}

double as_double(const std::string& s) {
  const auto slash = s.find('/');
  return slash == std::string::npos ? std::stod(s) : std::stod(s.substr(0, slash)) / std::stod(s.substr(slash + 1));
}

/// Compares solve_game with lrsnash: value, membership of the equilibrium, uniqueness and probability ranges.
void expect_agrees_with_lrsnash(const IntMatrix& a, const std::string& what) {
  SCOPED_TRACE(what);
  TempDir dir("lrs");
  const auto eqs = lrsnash(a, dir);
  ASSERT_FALSE(eqs.empty());
  const GameSolution g = solve_game(a, true);
  for (const auto& e : eqs) {
    EXPECT_EQ(e.value, g.value.str());
    EXPECT_NEAR(as_double(e.value), g.value.value, 1e-12);
  }
  const auto x = strs(g.blue), y = strs(g.red);
  EXPECT_TRUE(std::any_of(eqs.begin(), eqs.end(), [&](const LrsEquilibrium& e) { return e.x == x && e.y == y; }))
      << "equilibrium not among lrsnash's";
  EXPECT_EQ(g.unique, eqs.size() == 1);
  auto check_range = [&](std::size_t k, bool row, const std::pair<Fraction, Fraction>& range) {
    double lo = 2, hi = -1;
    std::string los, his;
    for (const auto& e : eqs) {
      const std::string& s = row ? e.x[k] : e.y[k];
      const double v = as_double(s);
      if (v < lo) lo = v, los = s;
      if (v > hi) hi = v, his = s;
    }
    EXPECT_EQ(range.first.str(), los) << (row ? "row " : "column ") << k;
    EXPECT_EQ(range.second.str(), his) << (row ? "row " : "column ") << k;
  };
  for (std::size_t i = 0; i < a.rows; ++i) check_range(i, true, g.blue_range[i]);
  for (std::size_t j = 0; j < a.cols; ++j) check_range(j, false, g.red_range[j]);
  // Exploitability: zero for the equilibrium mixtures, v - min_j A_ij for a pure row.
  EXPECT_EQ(g.blue_mix_exploit.str(), "0");
  EXPECT_EQ(g.red_mix_exploit.str(), "0");
  for (std::size_t i = 0; i < a.rows; ++i) {
    std::int64_t worst = a.at(i, 0);
    for (std::size_t j = 1; j < a.cols; ++j) worst = std::min(worst, a.at(i, j));
    EXPECT_NEAR(g.blue_exploit[i].value, g.value.value - static_cast<double>(worst) / static_cast<double>(a.den), 1e-12);
    EXPECT_GE(g.blue_exploit[i].value, 0);
  }
}

IntMatrix matrix_of(std::vector<std::vector<std::int64_t>> rows, std::int64_t den = 1) {
  IntMatrix a;
  a.rows = rows.size();
  a.cols = rows.front().size();
  for (const auto& r : rows) a.num.insert(a.num.end(), r.begin(), r.end());
  a.den = den;
  return a;
}

TEST(MetagameSolver, AgreesWithLrsnashOnRandomFractionGames) {
  std::mt19937_64 gen(20240601);
  const std::vector<std::pair<std::size_t, std::size_t>> sizes{{2, 2}, {2, 3}, {3, 2}, {3, 3}, {2, 5}, {4, 3},
                                                                 {4, 4}, {5, 5}, {6, 4}, {5, 7}, {7, 7}, {8, 8},
                                                                 {8, 12}, {8, 12}, {6, 9}, {3, 8}};
  for (std::size_t t = 0; t < sizes.size(); ++t) {
    const auto [m, n] = sizes[t];
    // Entries p/q with q in 1..12; the common denominator makes them integers over one den.
    const std::int64_t den = 27720;  // lcm(1..12)
    IntMatrix a;
    a.rows = m;
    a.cols = n;
    a.den = den;
    std::uniform_int_distribution<int> p(-30, 30), q(1, 12);
    for (std::size_t k = 0; k < m * n; ++k) a.num.push_back(p(gen) * (den / q(gen)));
    expect_agrees_with_lrsnash(a, "random " + std::to_string(m) + "x" + std::to_string(n) + " #" + std::to_string(t));
  }
}

double entropy(const std::vector<double>& x) {
  double h = 0;
  for (const double v : x)
    if (v > 0) h -= v * std::log(v);
  return h;
}

/// Brute force for Nash averaging's maxent mixture (docs/METRICS.md "Nash averaging"): Frank-Wolfe over the convex
/// hull of lrsnash's extreme mixtures (the step towards the vertex with the largest entropy gradient, its length by
/// 100 ternary-search rounds), 4000 steps from the vertices' centroid. Entropy is concave, so it converges to the
/// maximum from below.
std::vector<double> frank_wolfe_maxent(const std::vector<std::vector<double>>& vertices) {
  const std::size_t n = vertices[0].size();
  std::vector<double> x(n, 0.0), t(n);
  for (const auto& v : vertices)
    for (std::size_t i = 0; i < n; ++i) x[i] += v[i] / static_cast<double>(vertices.size());
  for (int it = 0; it < 4000; ++it) {
    std::size_t best = 0;
    double best_g = -INFINITY;
    for (std::size_t k = 0; k < vertices.size(); ++k) {
      double g = 0;
      for (std::size_t i = 0; i < n; ++i)
        if (x[i] > 0) g -= (std::log(x[i]) + 1) * (vertices[k][i] - x[i]);
      if (g > best_g) best_g = g, best = k;
    }
    auto at = [&](double s) {
      for (std::size_t i = 0; i < n; ++i) t[i] = x[i] + s * (vertices[best][i] - x[i]);
      return entropy(t);
    };
    double lo = 0, hi = 1;
    for (int r = 0; r < 100; ++r) {
      const double m1 = lo + (hi - lo) / 3, m2 = hi - (hi - lo) / 3;
      (at(m1) < at(m2) ? lo : hi) = at(m1) < at(m2) ? m1 : m2;
    }
    at((lo + hi) / 2);
    x = t;
  }
  return x;
}

TEST(MetagameSolver, NashAveragingIsTheMaxentPointOfLrsnashsEquilibria) {
  // Degenerate games (entries in {-1, 0, 1}) with several equilibria: each side's maxent mixture must be inside the
  // hull of the extreme equilibria lrsnash enumerates and have at least the entropy Frank-Wolfe reaches over it.
  std::mt19937_64 gen(49);
  std::uniform_int_distribution<int> e(-1, 1);
  std::size_t checked = 0;
  for (int t = 0; t < 60 && checked < 6; ++t) {
    IntMatrix a;
    a.rows = 4;
    a.cols = 5;
    for (std::size_t k = 0; k < 20; ++k) a.num.push_back(e(gen));
    TempDir dir("lrs-maxent");
    const auto eqs = lrsnash(a, dir);
    std::set<std::vector<std::string>> xs, ys;
    for (const auto& q : eqs) xs.insert(q.x), ys.insert(q.y);
    if (xs.size() < 2 && ys.size() < 2) continue;
    ++checked;
    const NashAverage na = nash_average(a, solve_game(a, true), false);
    auto check = [&](const std::set<std::vector<std::string>>& vs, const std::vector<double>& mix, const char* side) {
      std::vector<std::vector<double>> v;
      for (const auto& s : vs) {
        v.emplace_back();
        for (const auto& c : s) v.back().push_back(as_double(c));
      }
      const std::vector<double> fw = frank_wolfe_maxent(v);
      EXPECT_GE(entropy(mix) + 1e-12, entropy(fw)) << side << " game " << t;
      EXPECT_LE(entropy(mix) - entropy(fw), 1e-4) << side << " game " << t;  // Frank-Wolfe is O(1 / steps)
      for (std::size_t i = 0; i < mix.size(); ++i) EXPECT_NEAR(mix[i], fw[i], 2e-3) << side << " game " << t << " " << i;
    };
    check(xs, na.blue, "BLUE");
    check(ys, na.red, "RED");
    EXPECT_LE(na.blue_residual, 1e-15);
    EXPECT_LE(na.red_residual, 1e-15);
  }
  EXPECT_GE(checked, 3u);
}

TEST(MetagameSolver, DegenerateAndDominatedGames) {
  // A zero matrix: every mixture is optimal, value 0, every probability ranges over [0, 1].
  const IntMatrix zero = matrix_of({{0, 0, 0}, {0, 0, 0}});
  expect_agrees_with_lrsnash(zero, "zero");
  const GameSolution z = solve_game(zero);
  EXPECT_FALSE(z.unique);
  EXPECT_EQ(z.value.str(), "0");
  EXPECT_EQ(z.blue_range[0].first.str(), "0");
  EXPECT_EQ(z.blue_range[0].second.str(), "1");
  // A pure saddle point at (row 1, column 1): value 2, unique.
  const IntMatrix saddle = matrix_of({{3, 1}, {4, 2}});
  expect_agrees_with_lrsnash(saddle, "saddle");
  const GameSolution s = solve_game(saddle);
  EXPECT_TRUE(s.unique);
  EXPECT_EQ(s.value.str(), "2");
  EXPECT_EQ(strs(s.blue), (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(strs(s.red), (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(s.blue_exploit[0].str(), "1");  // row 0's worst case is 1
  EXPECT_EQ(s.blue_best_reply[0], 1u);
  EXPECT_EQ(s.red_exploit[0].str(), "2");   // column 0 concedes up to 4
  EXPECT_EQ(s.red_best_reply[0], 1u);
  // A dominant row with indifferent columns: several equilibria (RED may mix freely).
  const IntMatrix several = matrix_of({{1, 1}, {0, 0}, {-1, 1}});
  expect_agrees_with_lrsnash(several, "several");
  const GameSolution sv = solve_game(several);
  EXPECT_FALSE(sv.unique);
  EXPECT_EQ(sv.blue_best_reply[0], 0u);  // a tie between the columns goes to the first
  EXPECT_EQ(sv.red_best_reply[0], 0u);
  // Only BLUE's optimal set is not a point: two identical rows, RED's column 1 strictly better for RED.
  const IntMatrix rows_tie = matrix_of({{1, 0}, {1, 0}, {0, -1}});
  expect_agrees_with_lrsnash(rows_tie, "identical rows");
  const GameSolution rt = solve_game(rows_tie);
  EXPECT_FALSE(rt.unique);
  EXPECT_EQ(rt.blue_range[0].first.str(), "0");
  EXPECT_EQ(rt.blue_range[0].second.str(), "1");
  EXPECT_EQ(rt.red_range[1].first.str(), "1");
  // Dominated strategies and a mixed equilibrium (values as fractions over den 6).
  expect_agrees_with_lrsnash(matrix_of({{3, -1, 5}, {-2, 4, 6}, {-3, -2, -1}}, 6), "dominated");
  // Matching pennies: the unique mixture 1/2, 1/2.
  const GameSolution mp = solve_game(matrix_of({{1, -1}, {-1, 1}}));
  EXPECT_EQ(strs(mp.blue), (std::vector<std::string>{"1/2", "1/2"}));
  EXPECT_TRUE(mp.unique);
  // A 1 x 1 game and a constant row.
  EXPECT_EQ(solve_game(matrix_of({{7}}, 3)).value.str(), "7/3");
  expect_agrees_with_lrsnash(matrix_of({{5, 5, 5}}), "one row");
}

// ---- alpha-Rank ------------------------------------------------------------------------------------------------

TEST(MetagameAlphaRank, HanEtAlFixtureMatchesOpenSpiel) {
  // Han et al. (2013), as in OpenSpiel's alpharank_test.py: R = 1, T = 2, P = 0, S = -1, delta = 4, eps = 0.25.
  const double r = 1, t = 2, p = 0, s = -1, delta = 4, eps = 0.25;
  const std::vector<double> m{r - eps / 2, r - eps, 0, s + delta - eps, r - eps,  //
                              r,           r,       s, s,               s,        //
                              0,           t,       p, p,               p,        //
                              t - delta,   t,       p, p,               p,        //
                              r,           t,       p, p,               p};
  const AlphaRank ar = alpharank_single_population(m, 5, 0.1, 20);
  const std::vector<double> expected{0.40966787, 0.07959841, 0.20506998, 0.08505983, 0.2206039};
  for (std::size_t i = 0; i < 5; ++i) EXPECT_NEAR(ar.pi[i], expected[i], 1e-6) << i;
  EXPECT_EQ(ar.closed_classes, 1u);
}

bool is_distribution(const std::vector<double>& pi) {
  double s = 0;
  for (double x : pi) {
    if (!std::isfinite(x) || x < 0) return false;
    s += x;
  }
  return std::abs(s - 1) < 1e-9;
}

TEST(MetagameAlphaRank, SweepNeverFailsOnReducibleChains) {
  // A coordination game: two sink profiles; at infinite alpha the chain is reducible (two closed classes).
  const std::vector<double> coord{1, 0, 0, 1};
  const AlphaRank inf = alpharank_two_population(coord, coord, 2, 2, kInfiniteAlpha, 50);
  EXPECT_EQ(inf.closed_classes, 2u);
  EXPECT_NEAR(inf.pi[0], 0.5, 1e-12);
  EXPECT_NEAR(inf.pi[3], 0.5, 1e-12);
  EXPECT_NEAR(inf.pi[1] + inf.pi[2], 0, 1e-12);
  // A constant-sum game with a strict saddle: every alpha gives a distribution, large alpha approaches the limit.
  const std::vector<double> blue{0.3, 0.1, 0.6, 0.4}, red{0.7, 0.9, 0.4, 0.6};
  for (double alpha : {1e-3, 0.1, 1.0, 10.0, 100.0, 1e3, 1e6, 1e300, kInfiniteAlpha}) {
    const AlphaRank ar = alpharank_two_population(blue, red, 2, 2, alpha, 50);
    EXPECT_TRUE(is_distribution(ar.pi)) << alpha;
    const AlphaRank single = alpharank_single_population({0, 1, -1, -1, 0, 1, 1, -1, 0}, 3, alpha, 20);
    EXPECT_TRUE(is_distribution(single.pi)) << alpha;
  }
  const AlphaRank big = alpharank_two_population(blue, red, 2, 2, 1e6, 50);
  const AlphaRank lim = alpharank_two_population(blue, red, 2, 2, kInfiniteAlpha, 50);
  EXPECT_NEAR(lim.pi[3], 1.0, 1e-12);  // (row 1, column 1): BLUE's 0.4 is the saddle
  EXPECT_NEAR(big.pi[3], 1.0, 1e-9);
  // Matching pennies in two populations: uniform by symmetry.
  const AlphaRank mp = alpharank_two_population({1, 0, 0, 1}, {0, 1, 1, 0}, 2, 2, 1.0, 10);
  for (double x : mp.pi) EXPECT_NEAR(x, 0.25, 1e-12);
}

TEST(MetagameAlphaRank, StationaryDistributionOfATransientChain) {
  // 0 -> 1 and 0 -> 2 with equal probability; 1 and 2 absorbing: from the uniform start, 1/2 each.
  const std::vector<double> p{0, 0.5, 0.5, 0, 1, 0, 0, 0, 1};
  std::size_t classes = 0;
  const auto pi = stationary_distribution(p, 3, &classes);
  EXPECT_EQ(classes, 2u);
  EXPECT_NEAR(pi[0], 0, 1e-12);
  EXPECT_NEAR(pi[1], 0.5, 1e-12);
  EXPECT_NEAR(pi[2], 0.5, 1e-12);
}

TEST(MetagameResponseGraph, EdgesPointToStrictImprovements) {
  const std::vector<double> blue{0.3, 0.1, 0.6, 0.4}, red{0.7, 0.9, 0.4, 0.6};
  const auto edges = response_graph(blue, red, 2, 2);
  // BLUE improves from row 0 to row 1 in both columns; RED from column 0 to column 1 in both rows.
  ASSERT_EQ(edges.size(), 4u);
  for (const auto& e : edges) {
    EXPECT_GT(e.gain, 0);
    EXPECT_TRUE(e.best);
    if (e.blue_moves)
      EXPECT_EQ(e.to_blue, 1u);
    else
      EXPECT_EQ(e.to_red, 1u);
  }
}

// ---- reading runs and the outputs -------------------------------------------------------------------------------

/// A synthetic run: 2 BLUE x 3 RED on `n` scenarios, R replications, wins drawn at random.
void write_run(const TempDir& dir, int n, int R, std::uint64_t seed, bool fail_one = false) {
  std::mt19937_64 gen(seed);
  io::CsvTable t({"scenario_id", "condition_group", "blue_policy", "red_policy", "status", "advantage",
                  "blue_win_rate"});
  const std::vector<std::string> blues{"seed", "council"}, reds{"single", "greedy@8", "constraint@8"};
  for (int s = 0; s < n; ++s)
    for (std::size_t b = 0; b < blues.size(); ++b)
      for (std::size_t r = 0; r < reds.size(); ++r) {
        std::uniform_int_distribution<int> w(0, R);
        const int wins = std::min(R, w(gen) / 2 + static_cast<int>(b) * R / 3 + static_cast<int>(r == 0) * R / 4);
        std::uniform_int_distribution<int> adv(0, 1000000);  // A lies in [0, 1]; readers refuse anything else
        const bool failed = fail_one && s == 1 && b == 1 && r == 2;
        std::string id = "s";  // not "s" + to_string: GCC 12 warns falsely (-Wrestrict) on that form
        id += std::to_string(s);
        t.add({id, "main", blues[b], reds[r], failed ? "failed" : "ok",
               io::fmt_real(adv(gen) / 1e6), io::fmt_real(static_cast<double>(wins) / R)});
      }
  t.write(dir / "per_scenario.csv");
  testing::write_file(dir / "run_metadata.json",
                      nlohmann::json{{"simulator", {{"replications", R}}}, {"bootstrap", {{"seed", 7}}}}.dump());
}

TEST(MetagameData, WinRatesAreExactRationals) {
  TempDir dir("mg-data");
  write_run(dir, 7, 200, 1);
  const MetaGameData d = read_metagame_data({dir.path().string()}, Payoff::win_rate);
  EXPECT_EQ(d.blue, (std::vector<std::string>{"seed", "council"}));
  EXPECT_EQ(d.red, (std::vector<std::string>{"single", "greedy@8", "constraint@8"}));
  EXPECT_EQ(d.unit, 200);
  const IntMatrix a = d.matrix();
  EXPECT_EQ(a.den, 200 * 7);
  // The cell equals the sum of wins over R * n, exactly: recompute from the CSV.
  const io::CsvTable t = io::CsvTable::read(dir / "per_scenario.csv");
  std::int64_t wins = 0;
  for (std::size_t i = 0; i < t.size(); ++i)
    if (t.at(i, "blue_policy") == "council" && t.at(i, "red_policy") == "greedy@8")
      wins += std::llround(t.real(i, "blue_win_rate") * 200);
  EXPECT_EQ(a.at(1, 1), wins);
  const IntMatrix adv = read_metagame_data({dir.path().string()}, Payoff::advantage).matrix();
  EXPECT_EQ(adv.den, 1000000 * 7);
}

TEST(MetagameData, BadInputIsOneSentenceNamingTheFileAndField) {
  TempDir dir("mg-bad");
  write_run(dir, 3, 200, 2);
  // A win rate that is not a whole number of wins out of R.
  io::CsvTable t = io::CsvTable::read(dir / "per_scenario.csv");
  io::CsvTable u(t.header());
  for (std::size_t i = 0; i < t.size(); ++i) {
    auto row = t.rows()[i];
    if (i == 4) row[6] = "0.123457";
    u.add(row);
  }
  u.write(dir / "per_scenario.csv");
  try {
    (void)read_metagame_data({dir.path().string()}, Payoff::win_rate);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("per_scenario.csv: line 6, column blue_win_rate"), std::string::npos) << e.what();
  }
  // A missing pairing.
  TempDir dir2("mg-missing");
  io::CsvTable v(t.header());
  for (std::size_t i = 0; i < t.size(); ++i)
    if (!(t.at(i, "blue_policy") == "council" && t.at(i, "red_policy") == "single")) v.add(t.rows()[i]);
  v.write(dir2 / "per_scenario.csv");
  std::filesystem::copy_file(dir / "run_metadata.json", dir2 / "run_metadata.json");
  try {
    (void)read_metagame_data({dir2.path().string()}, Payoff::advantage);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("BLUE 'council' against RED 'single'"), std::string::npos) << e.what();
  }
  // Missing replications.
  testing::write_file(dir2 / "run_metadata.json", "{}");
  EXPECT_THROW((void)read_metagame_data({dir2.path().string()}, Payoff::win_rate), Error);
}

TEST(MetagameData, AFailedCellDropsItsScenario) {
  TempDir dir("mg-fail");
  write_run(dir, 5, 100, 3, true);
  const MetaGameData d = read_metagame_data({dir.path().string()}, Payoff::win_rate);
  EXPECT_EQ(d.scenarios.size(), 4u);
  EXPECT_EQ(d.dropped_scenarios, 1u);
}

TEST(MetagameOutputs, BootstrapIntervalsCoverTheFullSampleValues) {
  TempDir dir("mg-out");
  write_run(dir, 40, 200, 4);
  const MetaGameData d = read_metagame_data({dir.path().string()}, Payoff::win_rate);
  MetaGameOptions opt;
  opt.resamples = 300;
  const std::string out = dir / "metagame";
  const std::string md = write_metagame(d, opt, out);
  for (const char* f : {"payoff_matrix.csv", "equilibrium.json", "exploitability.csv", "alpharank.csv",
                        "response_graph.csv", "ratings.csv", "ratings.json", "metagame.md", "metagame.tex"})
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(out) / f)) << f;
  const auto j = nlohmann::json::parse(testing::read_file(out + "/equilibrium.json"));
  const double v = j["value"]["value"];
  EXPECT_LE(j["value"]["ci_lo"].get<double>(), v);
  EXPECT_GE(j["value"]["ci_hi"].get<double>(), v);
  EXPECT_EQ(j["bootstrap"]["resamples"], 300);
  const io::CsvTable ex = io::CsvTable::read(out + "/exploitability.csv");
  for (std::size_t i = 0; i < ex.size(); ++i) {
    if (ex.at(i, "policy") == "equilibrium") continue;
    EXPECT_LE(ex.real(i, "ci_lo"), ex.real(i, "exploitability") + 1e-12) << ex.at(i, "policy");
    EXPECT_GE(ex.real(i, "ci_hi"), ex.real(i, "exploitability") - 1e-12) << ex.at(i, "policy");
  }
  // The same seed gives the same files; another seed other intervals.
  const std::string again = dir / "again";
  write_metagame(d, opt, again);
  EXPECT_EQ(testing::read_file(out + "/exploitability.csv"), testing::read_file(again + "/exploitability.csv"));
  opt.seed = 8;
  write_metagame(d, opt, dir / "other");
  EXPECT_NE(testing::read_file(out + "/exploitability.csv"), testing::read_file(dir / "other/exploitability.csv"));
  // The exact matrix in equilibrium.json is the mean of wins over R * n.
  const IntMatrix a = d.matrix();
  EXPECT_EQ(j["matrix"][1][1].get<std::string>(), make_fraction(a.at(1, 1), a.den).str());
  EXPECT_NE(md.find("| BLUE \\ RED |"), std::string::npos);
}

TEST(MetagameOutputs, PlotDrawsTheMetagameFigures) {
  TempDir dir("mg-plot");
  const auto probe = testing::run_command("/usr/bin/python3 -c 'import matplotlib, numpy'", dir);
  if (probe.status != 0) GTEST_SKIP() << "matplotlib/numpy not installed for /usr/bin/python3";
  const std::string script = testing::shell_quote(std::string(ADVPLAN_SOURCE_DIR) + "/experiments/plot.py");
  // No metagame/ yet: one sentence naming the file, exit status 1.
  const auto missing = testing::run_command("/usr/bin/python3 " + script + " " + testing::shell_quote(dir.path().string()) + " --metagame", dir);
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("payoff_matrix.csv: missing"), std::string::npos) << missing.err;
  write_run(dir, 12, 100, 5);
  MetaGameOptions opt;
  opt.resamples = 50;
  write_metagame(read_metagame_data({dir.path().string()}, Payoff::advantage), opt, dir / "metagame");
  const auto r = testing::run_command("/usr/bin/python3 " + script + " " + testing::shell_quote(dir.path().string()) + " --metagame", dir);
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* f : {"metagame_payoff", "metagame_exploitability", "metagame_response_graph"})
    for (const char* ext : {".png", ".svg"})
      EXPECT_TRUE(std::filesystem::exists(dir.path() / "metagame" / "figures" / (std::string(f) + ext))) << f << ext;
}

}  // namespace
}  // namespace advplan
