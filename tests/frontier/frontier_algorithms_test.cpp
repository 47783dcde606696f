// Multi-objective algorithms of src/metrics/frontier.cpp (docs/METRICS.md "Pareto frontier analysis") against
// brute-force oracles: non-domination ranks against an O(N^2) peeling on random sets with ties and duplicates
// (both the 2-D sweep and pagmo2), hypervolume against inclusion-exclusion in 2-D, 3-D and 4-D, and the
// attainment surfaces and counts against a brute-force evaluation on the grid of every coordinate.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "advplan/core/random.hpp"
#include "advplan/metrics/frontier.hpp"

namespace advplan {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

PointSet points(std::size_t dim, std::vector<double> v) {
  PointSet p;
  p.dim = dim;
  p.v = std::move(v);
  return p;
}

/// n points of `dim` coordinates; with `grid` > 0 the coordinates are integers 0..grid-1 (many ties and
/// duplicates), else uniform in [0, 1).
PointSet random_points(Rng& rng, std::size_t n, std::size_t dim, int grid) {
  PointSet p;
  p.dim = dim;
  for (std::size_t i = 0; i < n * dim; ++i)
    p.v.push_back(grid > 0 ? static_cast<double>(rng.uniform_int(0, grid - 1)) : rng.uniform());
  return p;
}

bool dominates(const PointSet& p, std::size_t a, std::size_t b) {
  bool strict = false;
  for (std::size_t j = 0; j < p.dim; ++j) {
    if (p.at(a, j) > p.at(b, j)) return false;
    strict = strict || p.at(a, j) < p.at(b, j);
  }
  return strict;
}

/// Oracle: peel the non-dominated points off, front by front, O(N^2) per front.
std::vector<int> brute_ranks(const PointSet& p) {
  const std::size_t n = p.size();
  std::vector<int> rank(n, 0);
  std::vector<bool> valid(n, true);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < p.dim; ++j) valid[i] = valid[i] && !std::isnan(p.at(i, j));
  std::size_t left = 0;
  for (std::size_t i = 0; i < n; ++i) left += valid[i] ? 1 : 0;
  for (int r = 1; left > 0; ++r) {
    std::vector<std::size_t> front;
    for (std::size_t i = 0; i < n; ++i) {
      if (!valid[i] || rank[i] != 0) continue;
      bool dominated = false;
      for (std::size_t j = 0; j < n && !dominated; ++j)
        dominated = valid[j] && rank[j] == 0 && dominates(p, j, i);
      if (!dominated) front.push_back(i);
    }
    for (std::size_t i : front) rank[i] = r;
    left -= front.size();
  }
  return rank;
}

// ---- non-domination ranks -------------------------------------------------------------------------------------

TEST(NondominatedRanks, HandWorked2D) {
  // (1,4) (2,2) (4,1) form the front; (3,3) is dominated by (2,2) only; (4,4) by (3,3); (2,2) twice shares rank 1.
  const auto p = points(2, {1, 4, 2, 2, 4, 1, 3, 3, 4, 4, 2, 2});
  const std::vector<int> want{1, 1, 1, 2, 3, 1};
  EXPECT_EQ(nondominated_ranks_2d(p), want);
  EXPECT_EQ(nondominated_ranks_pagmo(p), want);
  EXPECT_EQ(nondominated_ranks(p), want);
}

TEST(NondominatedRanks, TiesOnOneCoordinateDominate) {
  // (1,1) dominates (1,2) and (2,1): equal in one objective, better in the other.
  const auto p = points(2, {1, 2, 2, 1, 1, 1});
  EXPECT_EQ(nondominated_ranks_2d(p), (std::vector<int>{2, 2, 1}));
}

TEST(NondominatedRanks, NaNPointsGetNoRankAndTakeNoPart) {
  const auto p = points(2, {kNaN, 0, 1, 1, 0.5, kNaN, 2, 2});
  EXPECT_EQ(nondominated_ranks_2d(p), (std::vector<int>{0, 1, 0, 2}));
  EXPECT_EQ(nondominated_ranks_pagmo(p), (std::vector<int>{0, 1, 0, 2}));
  const auto one = points(3, {0.1, 0.2, 0.3});  // pagmo needs two points: one point is rank 1 by itself
  EXPECT_EQ(nondominated_ranks(one), (std::vector<int>{1}));
  EXPECT_TRUE(nondominated_ranks(points(2, {})).empty());
}

TEST(NondominatedRanks, MatchBruteForceOnRandomSetsWithTiesAndDuplicates) {
  Rng rng(20240601);
  int checked = 0;
  for (std::size_t dim : {2u, 3u, 4u})
    for (int grid : {0, 3, 6})
      for (std::size_t n : {0u, 1u, 2u, 3u, 7u, 16u, 40u, 90u})
        for (int rep = 0; rep < 4; ++rep) {
          PointSet p = random_points(rng, n, dim, grid);
          if (n > 0 && rep == 3) p.v.insert(p.v.end(), p.v.begin(), p.v.begin() + static_cast<long>(dim));  // duplicate
          const auto want = brute_ranks(p);
          EXPECT_EQ(nondominated_ranks(p), want) << "dim " << dim << " grid " << grid << " n " << n;
          EXPECT_EQ(nondominated_ranks_pagmo(p), want) << "dim " << dim << " grid " << grid << " n " << n;
          if (dim == 2) {
            EXPECT_EQ(nondominated_ranks_2d(p), want) << "grid " << grid << " n " << n;
          }
          ++checked;
        }
  EXPECT_EQ(checked, 3 * 3 * 8 * 4);
}

TEST(NondominatedRanks, SweepMatchesPagmoOnALargerSet) {
  Rng rng(7);
  const PointSet p = random_points(rng, 3000, 2, 50);
  EXPECT_EQ(nondominated_ranks_2d(p), nondominated_ranks_pagmo(p));
}

// ---- hypervolume --------------------------------------------------------------------------------------------

/// Oracle: inclusion-exclusion over every non-empty subset; the intersection of the boxes [p, r] of a subset is
/// [max p, r]. Summed in long double, so the alternating sum's rounding stays far below the 1e-12 tolerance.
double brute_hypervolume(const PointSet& p, const std::vector<double>& ref) {
  std::vector<std::size_t> in;
  for (std::size_t i = 0; i < p.size(); ++i) {
    bool inside = true;
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
  return static_cast<double>(total);
}

TEST(Hypervolume, HandWorked2D) {
  // Boxes to (1,1): (.2,.6) -> .8*.4 = .32; (.5,.3) -> .5*.7 = .35; overlap .5*.4 = .2 -> .47.
  const auto p = points(2, {0.2, 0.6, 0.5, 0.3});
  const std::vector<double> ref{1, 1};
  EXPECT_NEAR(hypervolume(p, ref), 0.47, 1e-15);
  // A point on the reference boundary or beyond adds nothing; an empty set has volume 0.
  EXPECT_NEAR(hypervolume(points(2, {0.2, 0.6, 0.5, 0.3, 0.0, 1.0, 1.5, 0.0, kNaN, 0.1}), ref), 0.47, 1e-15);
  EXPECT_EQ(hypervolume(points(2, {}), ref), 0.0);
  EXPECT_EQ(hypervolume(points(2, {1.0, 0.0}), ref), 0.0);
  EXPECT_THROW(hypervolume(p, std::vector<double>{1, 1, 1}), std::invalid_argument);
}

TEST(Hypervolume, MatchesInclusionExclusionIn2D3DAnd4D) {
  Rng rng(99);
  int checked = 0;
  for (std::size_t dim : {2u, 3u, 4u})
    for (int grid : {0, 4})
      for (std::size_t n : {1u, 2u, 3u, 5u, 8u, 11u})
        for (int rep = 0; rep < 5; ++rep) {
          PointSet p = random_points(rng, n, dim, grid);
          if (grid > 0)
            for (double& x : p.v) x /= 4.0;  // ties and duplicates in [0, .75]
          const std::vector<double> ref(dim, 1.0);
          const double want = brute_hypervolume(p, ref), got = hypervolume(p, ref);
          EXPECT_LE(std::abs(got - want), 1e-12 * std::max(want, 1e-300)) << "dim " << dim << " n " << n;
          ++checked;
        }
  EXPECT_EQ(checked, 3 * 2 * 6 * 5);
}

// ---- empirical attainment -------------------------------------------------------------------------------------

/// Oracle: the attainment count at every point of the grid of all coordinates, by checking every point of every
/// run; the level-l surface is the set of minimal grid points whose count is at least l.
struct BruteEaf {
  std::vector<double> xs, ys;
  std::vector<int> count;  // row-major over xs then ys
};
BruteEaf brute_eaf(const std::vector<PointSet>& runs) {
  BruteEaf b;
  std::set<double> xs, ys;
  for (const auto& r : runs)
    for (std::size_t i = 0; i < r.size(); ++i) {
      xs.insert(r.at(i, 0));
      ys.insert(r.at(i, 1));
    }
  b.xs.assign(xs.begin(), xs.end());
  b.ys.assign(ys.begin(), ys.end());
  for (double x : b.xs)
    for (double y : b.ys) {
      int c = 0;
      for (const auto& r : runs) {
        bool hit = false;
        for (std::size_t i = 0; i < r.size() && !hit; ++i) hit = r.at(i, 0) <= x && r.at(i, 1) <= y;
        c += hit ? 1 : 0;
      }
      b.count.push_back(c);
    }
  return b;
}
std::vector<Point2> brute_surface(const BruteEaf& b, int level) {
  std::vector<Point2> in, out;
  for (std::size_t i = 0; i < b.xs.size(); ++i)
    for (std::size_t j = 0; j < b.ys.size(); ++j)
      if (b.count[i * b.ys.size() + j] >= level) in.push_back({b.xs[i], b.ys[j]});
  for (const auto& p : in) {
    bool minimal = true;
    for (const auto& q : in)
      if (q != p && q[0] <= p[0] && q[1] <= p[1]) minimal = false;
    if (minimal) out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Attainment, HandWorkedSurfaces) {
  // Run A: (1,3), (3,1). Run B: (2,2). Level 1 (the union's front): (1,3), (2,2), (3,1). Level 2 (both runs):
  // (2,3) and (3,2).
  const std::vector<PointSet> runs{points(2, {1, 3, 3, 1}), points(2, {2, 2})};
  EXPECT_EQ(attainment_surface(runs, 1), (std::vector<Point2>{{1, 3}, {2, 2}, {3, 1}}));
  EXPECT_EQ(attainment_surface(runs, 2), (std::vector<Point2>{{2, 3}, {3, 2}}));
  EXPECT_THROW(attainment_surface(runs, 0), std::invalid_argument);
  EXPECT_THROW(attainment_surface(runs, 3), std::invalid_argument);
  // Counts at (2,3): both runs; at (1.5,1.5): none; at (3,1): A only.
  const std::vector<double> xs{2, 1.5, 3}, ys{3, 1.5, 1};
  const auto c = attainment_counts(runs, xs, ys);
  EXPECT_EQ(c[0 * 3 + 0], 2);
  EXPECT_EQ(c[1 * 3 + 1], 0);
  EXPECT_EQ(c[2 * 3 + 2], 1);
}

TEST(Attainment, LevelsOfShares) {
  EXPECT_EQ(attainment_level(0.1, 150), 15u);
  EXPECT_EQ(attainment_level(0.5, 150), 75u);
  EXPECT_EQ(attainment_level(0.9, 150), 135u);
  EXPECT_EQ(attainment_level(0.1, 6), 1u);  // ceil(.6)
  EXPECT_EQ(attainment_level(0.5, 6), 3u);
  EXPECT_EQ(attainment_level(0.9, 6), 6u);  // ceil(5.4)
  EXPECT_EQ(attainment_level(0.01, 3), 1u);
}

TEST(Attainment, SurfacesAndCountsMatchBruteForceOnRandomRuns) {
  Rng rng(5);
  int checked = 0;
  for (int grid : {0, 4, 8})
    for (std::size_t n_runs : {1u, 2u, 5u, 9u})
      for (int rep = 0; rep < 6; ++rep) {
        std::vector<PointSet> runs;
        for (std::size_t r = 0; r < n_runs; ++r)
          runs.push_back(random_points(rng, static_cast<std::size_t>(rng.uniform_int(1, 7)), 2, grid));
        const BruteEaf b = brute_eaf(runs);
        for (std::size_t level = 1; level <= n_runs; ++level) {
          auto got = attainment_surface(runs, level);
          EXPECT_EQ(got, brute_surface(b, static_cast<int>(level))) << "grid " << grid << " runs " << n_runs;
          ++checked;
        }
        // Counts on the grid of every coordinate, and on points between and outside the coordinates.
        EXPECT_EQ(attainment_counts(runs, b.xs, b.ys), b.count);
        std::vector<double> qx{-1.0, 0.5, 2.5, 100.0}, qy{0.25, 3.5, -0.5};
        const auto c = attainment_counts(runs, qx, qy);
        for (std::size_t i = 0; i < qx.size(); ++i)
          for (std::size_t j = 0; j < qy.size(); ++j) {
            int want = 0;
            for (const auto& r : runs) {
              bool hit = false;
              for (std::size_t k = 0; k < r.size(); ++k) hit = hit || (r.at(k, 0) <= qx[i] && r.at(k, 1) <= qy[j]);
              want += hit ? 1 : 0;
            }
            EXPECT_EQ(c[i * qy.size() + j], want);
          }
      }
  EXPECT_GT(checked, 100);
}

// ---- category sets as written in candidates.csv -------------------------------------------------------------

TEST(CategorySetText, RoundTripsAndRejectsUnknownNames) {
  CategorySet s{};
  EXPECT_EQ(format_category_set(s), "none");
  EXPECT_EQ(parse_category_set("none"), s);
  s[index(Category::fires)] = true;
  s[index(Category::movement)] = true;
  s[index(Category::civil)] = true;
  EXPECT_EQ(format_category_set(s), "movement|fires|civil");
  EXPECT_EQ(parse_category_set("movement|fires|civil"), s);
  EXPECT_EQ(parse_category_set("civil|fires|movement"), s);
  EXPECT_FALSE(parse_category_set("movement|artillery").has_value());
  EXPECT_FALSE(parse_category_set("").has_value());
}

}  // namespace
}  // namespace advplan
