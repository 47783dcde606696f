// Frontier indicators of src/metrics/frontier_indicators.cpp (docs/METRICS.md "Frontier indicators") against
// brute-force oracles: exclusive hypervolume contributions against counting the unit cells of an integer grid
// (exact) and against leave-one-out inclusion-exclusion on real coordinates; the 2-D sort against the plain O(N²)
// route bit for bit; the additive epsilon-indicator against its translation form; IGD+ against the distance to
// each reference point's dominating orthant; the attainment staircases and the exact EAF differences against
// brute-force counting on every corner point of the grid of all coordinates.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <vector>

#include "advplan/core/random.hpp"
#include "advplan/metrics/frontier.hpp"
#include "advplan/metrics/frontier_indicators.hpp"

namespace advplan {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

PointSet pts(std::size_t dim, std::vector<double> v) {
  PointSet p;
  p.dim = dim;
  p.v = std::move(v);
  return p;
}

PointSet random_set(Rng& rng, std::size_t n, std::size_t dim, int grid) {
  PointSet p;
  p.dim = dim;
  for (std::size_t i = 0; i < n * dim; ++i)
    p.v.push_back(grid > 0 ? static_cast<double>(rng.uniform_int(0, grid - 1)) : rng.uniform());
  return p;
}

// ---- hypervolume contributions ---------------------------------------------------------------------------------

/// Oracle on integer coordinates 0..g-1 with reference (g, ..., g): the unit cells [c, c + 1) that point i
/// dominates and no other point does, counted one by one.
std::vector<double> cell_count_contributions(const PointSet& p, int g) {
  const std::size_t m = p.dim, n = p.size();
  std::vector<double> out(n, 0.0);
  std::vector<int> c(m, 0);
  std::size_t cells = 1;
  for (std::size_t d = 0; d < m; ++d) cells *= static_cast<std::size_t>(g);
  for (std::size_t cell = 0; cell < cells; ++cell) {
    std::size_t rest = cell;
    for (std::size_t d = 0; d < m; ++d) {
      c[d] = static_cast<int>(rest % static_cast<std::size_t>(g));
      rest /= static_cast<std::size_t>(g);
    }
    int owner = -1, owners = 0;
    for (std::size_t i = 0; i < n; ++i) {
      bool dom = true;
      for (std::size_t d = 0; d < m && dom; ++d) dom = p.at(i, d) <= c[d];
      if (dom) {
        owner = static_cast<int>(i);
        ++owners;
      }
    }
    if (owners == 1) out[static_cast<std::size_t>(owner)] += 1;
  }
  return out;
}

/// Inclusion-exclusion hypervolume (long double), as in frontier_algorithms_test.cpp.
long double ie_hypervolume(const PointSet& p, const std::vector<double>& ref, std::size_t skip) {
  std::vector<std::size_t> in;
  for (std::size_t i = 0; i < p.size(); ++i) {
    bool inside = i != skip;
    for (std::size_t j = 0; j < p.dim; ++j) inside = inside && p.at(i, j) < ref[j];
    if (inside) in.push_back(i);
  }
  long double total = 0;
  for (unsigned mask = 1; mask < (1u << in.size()); ++mask) {
    std::vector<double> corner(p.dim, -std::numeric_limits<double>::infinity());
    int bits = 0;
    for (std::size_t b = 0; b < in.size(); ++b)
      if (mask & (1u << b)) {
        ++bits;
        for (std::size_t j = 0; j < p.dim; ++j) corner[j] = std::max(corner[j], p.at(in[b], j));
      }
    long double vol = 1;
    for (std::size_t j = 0; j < p.dim; ++j) vol *= static_cast<long double>(ref[j]) - corner[j];
    total += (bits % 2 ? 1 : -1) * vol;
  }
  return total;
}

TEST(HvContributions, HandWorked2D) {
  // (.2,.6) and (.5,.3) to (1,1): slabs [.2,.5) x [.6,1) = .12 and [.5,1) x [.3,.6) = .15; a dominated point
  // inside the first slab, (.3,.8), takes .7 x .2 = .14 off it; a duplicate makes both copies worth 0.
  const std::vector<double> ref{1, 1};
  auto c = hypervolume_contributions(pts(2, {0.2, 0.6, 0.5, 0.3}), ref);
  EXPECT_NEAR(c[0], 0.12, 1e-15);
  EXPECT_NEAR(c[1], 0.15, 1e-15);
  c = hypervolume_contributions(pts(2, {0.0, 0.0, 0.5, 0.5}), ref);
  EXPECT_NEAR(c[0], 0.75, 1e-15);  // removing (0,0) leaves (.5,.5)'s quarter
  EXPECT_EQ(c[1], 0.0);
  c = hypervolume_contributions(pts(2, {0.2, 0.6, 0.2, 0.6, kNaN, 0.1, 1.0, 0.0}), ref);
  EXPECT_EQ(c, (std::vector<double>{0, 0, 0, 0}));
  EXPECT_THROW(hypervolume_contributions(pts(2, {0.1, 0.1}), std::vector<double>{1, 1, 1}), std::invalid_argument);
}

TEST(HvContributions, MatchCountedCellsExactlyOnIntegerGridsIn2D3DAnd4D) {
  Rng rng(35);
  int checked = 0;
  for (std::size_t dim : {2u, 3u, 4u})
    for (int g : {3, 5})
      for (std::size_t n : {1u, 2u, 4u, 7u, 12u})
        for (int rep = 0; rep < 6; ++rep) {
          const PointSet p = random_set(rng, n, dim, g);  // many ties and duplicates
          const std::vector<double> ref(dim, static_cast<double>(g));
          EXPECT_EQ(hypervolume_contributions(p, ref), cell_count_contributions(p, g)) << "dim " << dim << " n " << n;
          ++checked;
        }
  EXPECT_EQ(checked, 3 * 2 * 5 * 6);
}

TEST(HvContributions, MatchLeaveOneOutInclusionExclusionOnRealCoordinates) {
  Rng rng(36);
  for (std::size_t dim : {2u, 3u, 4u})
    for (std::size_t n : {1u, 3u, 6u, 10u})
      for (int rep = 0; rep < 5; ++rep) {
        const PointSet p = random_set(rng, n, dim, 0);
        const std::vector<double> ref(dim, 1.0);
        const auto got = hypervolume_contributions(p, ref);
        const long double all = ie_hypervolume(p, ref, n);
        for (std::size_t i = 0; i < n; ++i) {
          const double want = static_cast<double>(all - ie_hypervolume(p, ref, i));
          EXPECT_NEAR(got[i], want, 1e-12) << "dim " << dim << " n " << n << " point " << i;
        }
      }
}

TEST(HvContributions, TheSortAgreesWithThePlainRouteBitForBit) {
  Rng rng(37);
  for (int grid : {0, 6, 40})
    for (std::size_t n : {0u, 1u, 2u, 5u, 30u, 200u})
      for (int rep = 0; rep < 4; ++rep) {
        PointSet p = random_set(rng, n, 2, grid);
        if (grid > 0)
          for (double& x : p.v) x /= grid;
        if (n > 3) p.v[3] = kNaN;
        const std::vector<double> ref{grid == 6 ? 0.9 : 1.0, 1.0};  // some points outside the reference box
        const auto fast = hypervolume_contributions_2d(p, ref), plain = hypervolume_contributions_2d_plain(p, ref);
        ASSERT_EQ(fast.size(), plain.size());
        for (std::size_t i = 0; i < n; ++i)
          EXPECT_EQ(std::bit_cast<std::uint64_t>(fast[i]), std::bit_cast<std::uint64_t>(plain[i]))
              << "grid " << grid << " n " << n << " point " << i << ": " << fast[i] << " vs " << plain[i];
      }
}

// ---- epsilon and IGD+ ------------------------------------------------------------------------------------------

/// Oracle: the least eps among every difference a_d − r_d such that A translated by −eps weakly dominates all of R.
double translation_epsilon(const PointSet& a, const PointSet& r) {
  std::vector<double> cand;
  for (std::size_t i = 0; i < a.size(); ++i)
    for (std::size_t k = 0; k < r.size(); ++k)
      for (std::size_t d = 0; d < a.dim; ++d) cand.push_back(a.at(i, d) - r.at(k, d));
  std::sort(cand.begin(), cand.end());
  for (double eps : cand) {
    bool all = true;
    for (std::size_t k = 0; k < r.size() && all; ++k) {
      bool some = false;
      for (std::size_t i = 0; i < a.size() && !some; ++i) {
        bool weak = true;
        for (std::size_t d = 0; d < a.dim && weak; ++d) weak = a.at(i, d) - eps <= r.at(k, d);
        some = weak;
      }
      all = some;
    }
    if (all) return eps;
  }
  return kNaN;
}

/// Oracle: the mean over r of the Euclidean distance from the nearest a to the orthant {x <= r}, through the
/// projection min(a, r), in long double.
double orthant_igd_plus(const PointSet& a, const PointSet& r) {
  long double sum = 0;
  for (std::size_t k = 0; k < r.size(); ++k) {
    long double best = std::numeric_limits<long double>::infinity();
    for (std::size_t i = 0; i < a.size(); ++i) {
      long double s = 0;
      for (std::size_t d = 0; d < a.dim; ++d) {
        const long double proj = std::min<long double>(a.at(i, d), r.at(k, d));
        s += (a.at(i, d) - proj) * (a.at(i, d) - proj);
      }
      best = std::min(best, std::sqrt(s));
    }
    sum += best;
  }
  return static_cast<double>(sum / static_cast<long double>(r.size()));
}

TEST(EpsilonIndicator, HandWorkedAndEdgeCases) {
  EXPECT_EQ(epsilon_additive(pts(2, {1, 2}), pts(2, {0, 0})), 2.0);
  EXPECT_EQ(epsilon_additive(pts(2, {0.5, 0.5}), pts(2, {0, 1, 1, 0})), 0.5);
  EXPECT_EQ(epsilon_additive(pts(2, {0, 1, 1, 0}), pts(2, {0, 1, 1, 0})), 0.0);  // A = R
  EXPECT_EQ(epsilon_additive(pts(2, {0, 0}), pts(2, {0.5, 0.5})), -0.5);          // A strictly better
  EXPECT_TRUE(std::isnan(epsilon_additive(pts(2, {}), pts(2, {0, 0}))));
  EXPECT_TRUE(std::isnan(epsilon_additive(pts(2, {kNaN, 0}), pts(2, {0, 0}))));
  EXPECT_THROW(epsilon_additive(pts(2, {0, 0}), pts(3, {0, 0, 0})), std::invalid_argument);
}

TEST(EpsilonIndicator, MatchesTheTranslationFormOnRandomSets) {
  Rng rng(38);
  for (std::size_t dim : {2u, 3u, 4u})
    for (int grid : {0, 4})
      for (std::size_t na : {1u, 3u, 8u})
        for (std::size_t nr : {1u, 4u, 9u}) {
          const PointSet a = random_set(rng, na, dim, grid), r = random_set(rng, nr, dim, grid);
          EXPECT_EQ(epsilon_additive(a, r), translation_epsilon(a, r)) << "dim " << dim;
        }
}

TEST(IgdPlus, HandWorkedAndEdgeCases) {
  EXPECT_DOUBLE_EQ(igd_plus(pts(2, {1, 2}), pts(2, {0, 0})), std::sqrt(5.0));
  EXPECT_DOUBLE_EQ(igd_plus(pts(2, {0.5, 0.5}), pts(2, {0, 1, 1, 0})), 0.5);
  EXPECT_EQ(igd_plus(pts(2, {0, 0}), pts(2, {0.5, 0.5})), 0.0);  // A dominates R: nothing to cover
  // Ishibuchi et al.'s point: IGD would charge A = {(.5,.5)} for R = {(0,1)} the distance sqrt(.5); IGD+ only
  // the part A is worse by, .5.
  EXPECT_DOUBLE_EQ(igd_plus(pts(2, {0.5, 0.5}), pts(2, {0, 1})), 0.5);
  EXPECT_TRUE(std::isnan(igd_plus(pts(2, {0, 0}), pts(2, {}))));
}

TEST(IgdPlus, MatchesTheOrthantDistanceAndIsWeaklyParetoCompliant) {
  Rng rng(39);
  for (std::size_t dim : {2u, 3u, 4u})
    for (int grid : {0, 5})
      for (std::size_t na : {1u, 4u, 10u})
        for (std::size_t nr : {1u, 5u, 12u}) {
          const PointSet a = random_set(rng, na, dim, grid), r = random_set(rng, nr, dim, grid);
          EXPECT_NEAR(igd_plus(a, r), orthant_igd_plus(a, r), 1e-12);
          // B = A with every point worsened: A weakly dominates B, so IGD+(A) <= IGD+(B).
          PointSet b = a;
          for (double& x : b.v) x += rng.uniform();
          EXPECT_LE(igd_plus(a, r), igd_plus(b, r));
        }
}

TEST(IgdPlus, NondominatedPointsKeepTheFrontOnceEach) {
  const PointSet f = nondominated_points(pts(2, {0.2, 0.6, 0.5, 0.3, 0.2, 0.6, 0.6, 0.6, kNaN, 0.0}));
  EXPECT_EQ(f.v, (std::vector<double>{0.2, 0.6, 0.5, 0.3}));
}

// ---- exact attainment ------------------------------------------------------------------------------------------

int attained_by(const std::vector<PointSet>& runs, double x, double y) {
  int c = 0;
  for (const auto& r : runs) {
    bool hit = false;
    for (std::size_t i = 0; i < r.size() && !hit; ++i) hit = r.at(i, 0) <= x && r.at(i, 1) <= y;
    c += hit ? 1 : 0;
  }
  return c;
}

std::vector<double> all_coordinates(const std::vector<PointSet>& runs, std::size_t axis, double top) {
  std::set<double> s{top};
  for (const auto& r : runs)
    for (std::size_t i = 0; i < r.size(); ++i) s.insert(r.at(i, axis));
  return {s.begin(), s.end()};
}

std::vector<PointSet> random_runs(Rng& rng, std::size_t n, int grid) {
  std::vector<PointSet> runs;
  for (std::size_t r = 0; r < n; ++r) {
    PointSet p = random_set(rng, static_cast<std::size_t>(rng.uniform_int(1, 5)), 2, grid);
    if (grid > 0)
      for (double& x : p.v) x /= grid;  // in [0, 1)
    runs.push_back(p);
  }
  return runs;
}

TEST(AttainmentStaircase, HandWorked) {
  const std::vector<PointSet> runs{pts(2, {1, 3, 3, 1}), pts(2, {2, 2})};
  EXPECT_EQ(attainment_staircase(runs, 1, 4, 4),
            (std::vector<Point2>{{1, 4}, {1, 3}, {2, 3}, {2, 2}, {3, 2}, {3, 1}, {4, 1}}));
  EXPECT_EQ(attainment_staircase(runs, 2, 4, 4), (std::vector<Point2>{{2, 4}, {2, 3}, {3, 3}, {3, 2}, {4, 2}}));
}

TEST(AttainmentStaircase, SeparatesThePointsAttainedByTheLevelOnEveryCornerPoint) {
  Rng rng(40);
  for (int grid : {0, 5})
    for (std::size_t n : {1u, 2u, 5u, 9u})
      for (int rep = 0; rep < 4; ++rep) {
        const auto runs = random_runs(rng, n, grid);
        const auto xs = all_coordinates(runs, 0, 1.0), ys = all_coordinates(runs, 1, 1.0);
        for (std::size_t level = 1; level <= n; ++level) {
          const auto st = attainment_staircase(runs, level, 1.0, 1.0);
          ASSERT_EQ(st.size() % 2, 1u);
          for (std::size_t i = 1; i < st.size(); ++i) {  // alternately a vertical and a horizontal segment
            EXPECT_EQ(st[i][i % 2 == 1 ? 0 : 1], st[i - 1][i % 2 == 1 ? 0 : 1]);
            EXPECT_LE(st[i - 1][0], st[i][0]);
            EXPECT_GE(st[i - 1][1], st[i][1]);
          }
          // z is attained by at least `level` runs exactly when some corner (odd positions) weakly dominates it.
          for (double x : xs)
            for (double y : ys) {
              bool above = false;
              for (std::size_t i = 1; i + 1 < st.size(); i += 2) above = above || (st[i][0] <= x && st[i][1] <= y);
              EXPECT_EQ(attained_by(runs, x, y) >= static_cast<int>(level), above)
                  << "level " << level << " at (" << x << ", " << y << ")";
            }
        }
      }
}

// ---- exact EAF differences --------------------------------------------------------------------------------------

TEST(EafRegions, HandWorked) {
  // A: one run at (1,1); B: one run at (2,2); box to (3,3). A attains [1,3)^2, B [2,3)^2: the difference is 1 on
  // [1,2) x [1,3) and [2,3) x [1,2), 0 elsewhere.
  const std::vector<PointSet> a{pts(2, {1, 1})}, b{pts(2, {2, 2})};
  const auto r = eaf_difference_regions(a, b, 3, 3);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ((std::vector<double>{r[0].x_lo, r[0].x_hi, r[0].y_lo, r[0].y_hi}), (std::vector<double>{1, 2, 1, 3}));
  EXPECT_EQ((std::vector<double>{r[1].x_lo, r[1].x_hi, r[1].y_lo, r[1].y_hi}), (std::vector<double>{2, 3, 1, 2}));
  EXPECT_EQ(r[0].count_a, 1);
  EXPECT_EQ(r[0].count_b, 0);
  EXPECT_TRUE(eaf_difference_regions(a, a, 3, 3).empty());
}

TEST(EafRegions, MatchBruteForceCountsOnEveryCellOfTheCoordinateGrid) {
  Rng rng(41);
  for (int grid : {0, 4})
    for (std::size_t na : {1u, 3u, 6u})
      for (std::size_t nb : {1u, 2u, 7u})
        for (int rep = 0; rep < 3; ++rep) {
          const auto a = random_runs(rng, na, grid), b = random_runs(rng, nb, grid);
          std::vector<PointSet> both = a;
          both.insert(both.end(), b.begin(), b.end());
          const auto xs = all_coordinates(both, 0, 1.0), ys = all_coordinates(both, 1, 1.0);
          const auto regions = eaf_difference_regions(a, b, 1.0, 1.0);
          for (const auto& r : regions) {
            EXPECT_LT(r.x_lo, r.x_hi);
            EXPECT_LT(r.y_lo, r.y_hi);
            EXPECT_NE(r.count_a * static_cast<int>(nb), r.count_b * static_cast<int>(na));
          }
          // Each cell [xs_i, xs_i+1) x [ys_j, ys_j+1) has constant counts, read at its lower corner; it lies in
          // exactly one region with those counts when the shares differ, in none when they agree.
          for (std::size_t i = 0; i + 1 < xs.size(); ++i)
            for (std::size_t j = 0; j + 1 < ys.size(); ++j) {
              const double x = xs[i], y = ys[j];
              const int ca = attained_by(a, x, y), cb = attained_by(b, x, y);
              int hits = 0;
              for (const auto& r : regions)
                if (r.x_lo <= x && x < r.x_hi && r.y_lo <= y && y < r.y_hi) {
                  ++hits;
                  EXPECT_EQ(r.count_a, ca);
                  EXPECT_EQ(r.count_b, cb);
                }
              EXPECT_EQ(hits, ca * static_cast<int>(nb) != cb * static_cast<int>(na) ? 1 : 0)
                  << "cell (" << x << ", " << y << ")";
            }
        }
}

}  // namespace
}  // namespace advplan
