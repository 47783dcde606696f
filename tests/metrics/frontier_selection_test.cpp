// Candidate-set selectors and diagnostics (docs/METRICS.md "Selectors and candidate diagnostics") on hand-made
// candidate sets, plus a property test over random sets. Conventions under test: q and D are maximised, ties go
// to the lowest index, a NaN score never wins and never dominates, equal points do not dominate each other.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "advplan/core/random.hpp"
#include "advplan/metrics/frontier.hpp"

namespace advplan {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
using V = std::vector<double>;

CategorySet cats(std::initializer_list<Category> cs) {
  CategorySet s{};
  for (Category c : cs) s[index(c)] = true;
  return s;
}

// ---- quality-greedy: c_q = argmax q -------------------------------------------------------------------------

TEST(SelectQualityGreedy, PicksTheMaximum) {
  EXPECT_EQ(select_quality_greedy(V{0.2, 0.9, 0.5}), 1);
  EXPECT_EQ(select_quality_greedy(V{0.7}), 0);
  EXPECT_EQ(select_quality_greedy(V{0.1, 0.2, 0.3, 0.4}), 3);
}

TEST(SelectQualityGreedy, TiesGoToTheLowestIndex) {
  EXPECT_EQ(select_quality_greedy(V{0.5, 0.9, 0.9, 0.9}), 1);
  EXPECT_EQ(select_quality_greedy(V{0.4, 0.4}), 0);
  EXPECT_EQ(select_quality_greedy(V{0.0, 0.0, 0.0}), 0);
}

TEST(SelectQualityGreedy, EmptySetSelectsNothing) { EXPECT_EQ(select_quality_greedy(V{}), -1); }

TEST(SelectQualityGreedy, NaNNeverWins) {
  EXPECT_EQ(select_quality_greedy(V{kNaN, 0.1, 0.05}), 1);  // a leading NaN does not seed the maximum
  EXPECT_EQ(select_quality_greedy(V{0.1, kNaN, 0.3}), 2);
  EXPECT_EQ(select_quality_greedy(V{0.3, kNaN}), 0);
  EXPECT_EQ(select_quality_greedy(V{kNaN, kNaN}), -1);  // nothing selectable
}

// ---- constraint-aware: c_D = argmax lambda q + (1 - lambda) D -----------------------------------------------

TEST(SelectConstraintAware, HandWorkedComposite) {
  // lambda = .7: composites .7*.9+.3*.1 = .66, .7*.8+.3*.6 = .74, .7*.5+.3*1 = .65 -> candidate 1.
  EXPECT_EQ(select_constraint_aware(V{0.9, 0.8, 0.5}, V{0.1, 0.6, 1.0}, 0.7), 1);
  // lambda = .5: composites .5, .7, .75 -> candidate 2.
  EXPECT_EQ(select_constraint_aware(V{0.9, 0.8, 0.5}, V{0.1, 0.6, 1.0}, 0.5), 2);
}

TEST(SelectConstraintAware, LambdaOneIsQualityGreedy) {
  const V q{0.3, 0.8, 0.8, 0.1}, D{1.0, 0.0, 0.9, 1.0};
  EXPECT_EQ(select_constraint_aware(q, D, 1.0), 1);  // D is ignored; the tie at .8 goes to index 1
  EXPECT_EQ(select_constraint_aware(q, D, 1.0), select_quality_greedy(q));
}

TEST(SelectConstraintAware, LambdaZeroMaximisesCoherence) {
  const V q{0.9, 0.1, 0.2, 0.0}, D{0.2, 0.7, 0.7, 0.6};
  EXPECT_EQ(select_constraint_aware(q, D, 0.0), 1);  // q is ignored; the tie at .7 goes to index 1
}

TEST(SelectConstraintAware, TiesGoToTheLowestIndex) {
  // Values exact in binary so the composites tie exactly: .5*.75+.5*.25 = .5*.25+.5*.75 = .5.
  EXPECT_EQ(select_constraint_aware(V{0.75, 0.25, 0.5}, V{0.25, 0.75, 0.5}, 0.5), 0);
  EXPECT_EQ(select_constraint_aware(V{0.25, 0.75, 0.25}, V{0.25, 0.25, 0.75}, 0.5), 1);
}

TEST(SelectConstraintAware, NaNNeverWins) {
  EXPECT_EQ(select_constraint_aware(V{kNaN, 0.2}, V{1.0, 0.2}, 0.7), 1);
  EXPECT_EQ(select_constraint_aware(V{1.0, 0.2}, V{kNaN, 0.2}, 0.7), 1);
  EXPECT_EQ(select_constraint_aware(V{kNaN, kNaN}, V{kNaN, kNaN}, 0.7), -1);
  EXPECT_EQ(select_constraint_aware(V{}, V{}, 0.7), -1);
}

// ---- Pareto front on (q, D), both maximised -------------------------------------------------------------------

TEST(ParetoFront, HandCase) {
  // (0.9,0.1) (0.5,0.5) (0.4,0.4) (0.1,0.9) (0.5,0.3): (0.4,0.4) and (0.5,0.3) are dominated by (0.5,0.5).
  const V q{0.9, 0.5, 0.4, 0.1, 0.5}, D{0.1, 0.5, 0.4, 0.9, 0.3};
  EXPECT_EQ(pareto_front(q, D), (std::vector<bool>{true, true, false, true, false}));
  EXPECT_EQ(pareto_count(q, D), 3u);
}

TEST(ParetoFront, WeakDominanceNeedsOneStrictCoordinate) {
  // Same q, higher D dominates; same D, higher q dominates.
  EXPECT_EQ(pareto_front(V{0.5, 0.5}, V{0.2, 0.3}), (std::vector<bool>{false, true}));
  EXPECT_EQ(pareto_front(V{0.6, 0.5}, V{0.3, 0.3}), (std::vector<bool>{true, false}));
}

TEST(ParetoFront, EqualPointsDoNotDominateEachOther) {
  EXPECT_EQ(pareto_front(V{0.5, 0.5, 0.5}, V{0.5, 0.5, 0.5}), (std::vector<bool>{true, true, true}));
  // Duplicates of a dominated point stay dominated; duplicates of a front point all stay on it.
  EXPECT_EQ(pareto_front(V{0.7, 0.2, 0.7, 0.2}, V{0.7, 0.2, 0.7, 0.2}), (std::vector<bool>{true, false, true, false}));
  EXPECT_EQ(pareto_count(V{0.7, 0.2, 0.7, 0.2}, V{0.7, 0.2, 0.7, 0.2}), 2u);
}

TEST(ParetoFront, SingleCandidateAndEmptySet) {
  EXPECT_EQ(pareto_count(V{0.3}, V{0.1}), 1u);  // docs/METRICS.md: 1 when k = 1
  EXPECT_EQ(pareto_count(V{}, V{}), 0u);
}

TEST(ParetoFront, NaNIsNeverOnTheFrontAndNeverDominates) {
  // (NaN, 1) would dominate (0.2, 0.2) on D if NaN compared as anything; it must not.
  EXPECT_EQ(pareto_front(V{kNaN, 0.2}, V{1.0, 0.2}), (std::vector<bool>{false, true}));
  EXPECT_EQ(pareto_front(V{0.9, 0.2}, V{kNaN, 0.2}), (std::vector<bool>{false, true}));
}

// ---- action-type diversity and quality spread -----------------------------------------------------------------

TEST(ActionTypeDiversity, OneOrNoCandidateIsZero) {
  const std::vector<CategorySet> one{cats({Category::fires, Category::cyber})};
  EXPECT_EQ(action_type_diversity(one), 0.0);
  EXPECT_EQ(action_type_diversity(std::vector<CategorySet>{}), 0.0);
}

TEST(ActionTypeDiversity, HandComputedJaccard) {
  using C = Category;
  const CategorySet a = cats({C::movement, C::fires});                  // {m, f}
  const CategorySet b = cats({C::fires, C::cyber});                     // {f, c}
  const CategorySet c = cats({C::movement, C::fires, C::information});  // {m, f, i}
  // d(a,b) = 1 - 1/3 = 2/3; d(a,c) = 1 - 2/3 = 1/3; d(b,c) = 1 - 1/4 = 3/4.
  EXPECT_DOUBLE_EQ(jaccard_distance(a, b), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(jaccard_distance(a, c), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(jaccard_distance(b, c), 3.0 / 4.0);
  const std::vector<CategorySet> sets{a, b, c};
  EXPECT_DOUBLE_EQ(action_type_diversity(sets), (2.0 / 3.0 + 1.0 / 3.0 + 3.0 / 4.0) / 3.0);
}

TEST(ActionTypeDiversity, IdenticalSetsAreZeroDisjointSetsAreOne) {
  using C = Category;
  const std::vector<CategorySet> same{cats({C::fires}), cats({C::fires}), cats({C::fires})};
  EXPECT_EQ(action_type_diversity(same), 0.0);
  const std::vector<CategorySet> disjoint{cats({C::fires}), cats({C::cyber}), cats({C::civil, C::command})};
  EXPECT_EQ(action_type_diversity(disjoint), 1.0);
  EXPECT_EQ(jaccard_distance(CategorySet{}, CategorySet{}), 0.0);  // both empty
  EXPECT_EQ(jaccard_distance(CategorySet{}, cats({C::fires})), 1.0);
}

TEST(QualitySpread, MaxMinusMin) {
  EXPECT_DOUBLE_EQ(quality_spread(V{0.3, 0.9, 0.1, 0.5}), 0.8);
  EXPECT_EQ(quality_spread(V{0.4}), 0.0);
  EXPECT_EQ(quality_spread(V{}), 0.0);
}

// ---- property test over random candidate sets ----------------------------------------------------------------
//
// What is guaranteed, for any finite set and lambda in [0, 1]:
//   regret Δq = q(c_q) - q(c_D) >= 0, since c_q maximises q.
//   gain   ΔD = D(c_D) - D(c_q) >= 0 when lambda < 1: composite(c_D) >= composite(c_q) gives
//          (1 - lambda)(D(c_D) - D(c_q)) >= lambda (q(c_q) - q(c_D)) >= 0.
//   lambda = 1: c_D = c_q, so both are exactly 0.
//   0 < lambda < 1: c_D is on the Pareto front (a dominating point would have a strictly larger composite).
//   c_q has the maximal q and no lower index has it; likewise c_D for the composite.
// Quantised sets (multiples of 1/16, exact in binary) make ties common; continuous sets use a 1e-12 slack for
// the rounding of the composite.

struct Set {
  V q, D;
};

Set random_set(Rng& rng, bool quantised) {
  const auto n = static_cast<std::size_t>(rng.uniform_int(1, 16));
  Set s;
  for (std::size_t i = 0; i < n; ++i) {
    s.q.push_back(quantised ? static_cast<double>(rng.uniform_int(0, 16)) / 16.0 : rng.uniform());
    s.D.push_back(quantised ? static_cast<double>(rng.uniform_int(0, 16)) / 16.0 : rng.uniform());
  }
  return s;
}

bool dominates(const Set& s, std::size_t j, std::size_t i) {
  return s.q[j] >= s.q[i] && s.D[j] >= s.D[i] && (s.q[j] > s.q[i] || s.D[j] > s.D[i]);
}

TEST(FrontierProperty, RegretGainAndFrontOverRandomSets) {
  Rng rng = Rng::keyed(11, "frontier_test", "property");
  const double lambdas[] = {0.0, 0.3, 0.7, 0.99, 1.0};
  for (int trial = 0; trial < 2000; ++trial) {
    const bool quantised = trial % 2 == 0;
    const Set s = random_set(rng, quantised);
    const double slack = quantised ? 0.0 : 1e-12;
    const int cq = select_quality_greedy(s.q);
    ASSERT_GE(cq, 0);
    const auto ucq = static_cast<std::size_t>(cq);
    for (std::size_t i = 0; i < s.q.size(); ++i) {
      ASSERT_LE(s.q[i], s.q[ucq]) << "trial " << trial;
      if (i < ucq) {
        ASSERT_LT(s.q[i], s.q[ucq]) << "trial " << trial << ": tie not broken to the lowest index";
      }
    }
    const auto front = pareto_front(s.q, s.D);
    std::size_t n_front = 0;
    for (std::size_t i = 0; i < s.q.size(); ++i) {
      bool dominated = false;
      for (std::size_t j = 0; j < s.q.size(); ++j) dominated = dominated || dominates(s, j, i);
      ASSERT_EQ(front[i], !dominated) << "trial " << trial << " candidate " << i;
      n_front += front[i] ? 1 : 0;
    }
    ASSERT_EQ(pareto_count(s.q, s.D), n_front);
    ASSERT_GE(n_front, 1u);  // a finite non-empty set always has a non-dominated point

    for (double lambda : lambdas) {
      const int cd = select_constraint_aware(s.q, s.D, lambda);
      ASSERT_GE(cd, 0);
      const auto ucd = static_cast<std::size_t>(cd);
      auto comp = [&](std::size_t i) { return lambda * s.q[i] + (1 - lambda) * s.D[i]; };
      for (std::size_t i = 0; i < s.q.size(); ++i) {
        ASSERT_LE(comp(i), comp(ucd));
        if (i < ucd) {
          ASSERT_LT(comp(i), comp(ucd)) << "trial " << trial << ": tie not broken to the lowest index";
        }
      }
      const double regret = s.q[ucq] - s.q[ucd];
      const double gain = s.D[ucd] - s.D[ucq];
      ASSERT_GE(regret, 0.0) << "trial " << trial << " lambda " << lambda;
      if (lambda < 1.0) {
        ASSERT_GE(gain, -slack) << "trial " << trial << " lambda " << lambda;
      }
      if (lambda == 1.0) {
        ASSERT_EQ(cd, cq);
        ASSERT_EQ(regret, 0.0);
        ASSERT_EQ(gain, 0.0);
      }
      if (lambda > 0.0 && lambda < 1.0) {
        ASSERT_TRUE(front[ucd]) << "trial " << trial << " lambda " << lambda;
      }
    }
  }
}

}  // namespace
}  // namespace advplan

// Regression: a NaN once changed the spread depending on where it stood in the set.
TEST(QualitySpread, IgnoresNaNWhereverItStands) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> first{nan, 0.2, 0.5}, middle{0.2, nan, 0.5}, only{nan};
  EXPECT_NEAR(advplan::quality_spread(first), 0.3, 1e-12);
  EXPECT_NEAR(advplan::quality_spread(middle), 0.3, 1e-12);
  EXPECT_EQ(advplan::quality_spread(only), 0.0);
}
