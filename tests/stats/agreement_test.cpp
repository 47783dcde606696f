// Agreement statistics against oracles: statsmodels and scipy values (and Krippendorff's published reliability
// data) computed once by tests/data/oracles/make_agreement_fixtures.py and stored with their inputs in
// tests/data/oracles/agreement_fixtures.json. Tolerance 1e-10 throughout; ICC's fixtures come from two
// independent formulations of the mean squares that the script checks agree to 1e-12.
#include <gtest/gtest.h>
#include <cstring>
#include <random>

#include <algorithm>
#include <cstdint>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/stats/agreement.hpp"
#include "stats/agreement_row.hpp"
#include "stats/weighted_rows.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using namespace agreement;
constexpr double kTol = 1e-10;

const nlohmann::json& fixtures() {
  static const nlohmann::json j =
      nlohmann::json::parse(testing::read_file(std::string(ADVPLAN_SOURCE_DIR) + "/tests/data/oracles/agreement_fixtures.json"));
  return j;
}

Matrix matrix_of(const nlohmann::json& rows) {
  Matrix m;
  for (const auto& r : rows) {
    std::vector<double> row;
    for (const auto& v : r) row.push_back(v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>());
    m.push_back(row);
  }
  return m;
}

TEST(Agreement, CohenKappaMatchesStatsmodels) {
  ASSERT_GE(fixtures()["cohen"].size(), 9U);
  for (const auto& c : fixtures()["cohen"]) {
    const auto a = c["a"].get<std::vector<int>>();
    const auto b = c["b"].get<std::vector<int>>();
    const std::string w = c["weights"];
    const KappaWeights kw = w == "none" ? KappaWeights::none : w == "linear" ? KappaWeights::linear : KappaWeights::quadratic;
    const auto r = cohen_kappa(a, b, c["categories"].get<int>(), kw);
    const std::string name = c["name"].get<std::string>() + "/" + w;
    EXPECT_NEAR(r.kappa, c["kappa"].get<double>(), kTol) << name;
    EXPECT_NEAR(r.se, c["se"].get<double>(), kTol) << name;
    EXPECT_NEAR(r.se0, c["se0"].get<double>(), kTol) << name;
    EXPECT_EQ(r.n, a.size());
  }
}

TEST(Agreement, PercentAgreementCountsEqualCodes) {
  const std::vector<int> a{0, 1, 1, 0, 1}, b{0, 1, 0, 0, 0};
  EXPECT_DOUBLE_EQ(percent_agreement(a, b), 0.6);
  EXPECT_TRUE(std::isnan(percent_agreement(std::span<const int>{}, std::span<const int>{})));
  EXPECT_THROW(percent_agreement(a, std::vector<int>{0}), Error);
}

TEST(Agreement, CohenKappaRejectsCodesOutOfRange) {
  const std::vector<int> a{0, 1, 2}, b{0, 1, 1};
  EXPECT_THROW(cohen_kappa(a, b, 2), Error);
}

TEST(Agreement, FleissKappaMatchesStatsmodels) {
  ASSERT_GE(fixtures()["fleiss"].size(), 2U);
  for (const auto& c : fixtures()["fleiss"]) {
    const auto labels = c["labels"].get<std::vector<std::vector<int>>>();
    EXPECT_NEAR(fleiss_kappa(category_counts(labels, c["categories"].get<int>())), c["kappa"].get<double>(), kTol)
        << c["name"];
  }
  EXPECT_THROW(fleiss_kappa(Matrix{{2, 0}, {1, 0}}), Error);  // unequal numbers of raters
}

TEST(Agreement, SpearmanMatchesScipy) {
  for (const auto& c : fixtures()["spearman"]) {
    const auto x = c["x"].get<std::vector<double>>(), y = c["y"].get<std::vector<double>>();
    EXPECT_NEAR(spearman(x, y), c["rho"].get<double>(), kTol) << c["name"];
  }
}

// Up to 32 values without NaN, spearman ranks on the stack; it must be the ranks-then-Pearson definition bit for
// bit, ties and signed zeros included, and NaN inputs keep the general path.
TEST(Agreement, SpearmanOfFewValuesIsTheRanksThenPearsonBitForBit) {
  std::mt19937_64 g(3);
  const std::vector<double> pool{-1.5, -0.0, 0.0, 0.25, 0.25, 1.0, 2.0, 1e300, -1e-300, 3.0};
  std::size_t nonzero = 0;
  for (int t = 0; t < 20000; ++t) {
    const std::size_t n = 2 + g() % 33;  // 2 .. 34: both sides of the limit
    std::vector<double> x(n), y(n);
    for (std::size_t i = 0; i < n; ++i) {
      x[i] = t % 2 ? pool[g() % pool.size()] : static_cast<double>(g() % 1000) / 7.0;
      y[i] = pool[g() % pool.size()];
    }
    if (t % 97 == 0) x[g() % n] = std::nan("");
    const double got = spearman(x, y), want = pearson(average_ranks(x), average_ranks(y));
    ASSERT_EQ(std::memcmp(&got, &want, sizeof got), 0) << "trial " << t << " n " << n;
    nonzero += got != 0.0 ? 1 : 0;
  }
  EXPECT_GT(nonzero, 1000u);
}

TEST(Agreement, KendallWMatchesFriedman) {
  ASSERT_GE(fixtures()["kendall_w"].size(), 2U);
  for (const auto& c : fixtures()["kendall_w"]) EXPECT_NEAR(kendall_w(matrix_of(c["x"])), c["w"].get<double>(), kTol) << c["name"];
}

TEST(Agreement, IccMatchesAnovaFormulas) {
  ASSERT_GE(fixtures()["icc"].size(), 2U);
  for (const auto& c : fixtures()["icc"]) {
    const auto r = icc(matrix_of(c["x"]));
    EXPECT_NEAR(r.icc2_1, c["icc2_1"].get<double>(), kTol) << c["name"];
    EXPECT_NEAR(r.icc3_1, c["icc3_1"].get<double>(), kTol) << c["name"];
    EXPECT_NEAR(r.ms_rows, c["ms_rows"].get<double>(), kTol) << c["name"];
    EXPECT_NEAR(r.ms_cols, c["ms_cols"].get<double>(), kTol) << c["name"];
    EXPECT_NEAR(r.ms_error, c["ms_error"].get<double>(), kTol) << c["name"];
  }
}

TEST(Agreement, KrippendorffAlphaReproducesPublishedValues) {
  // Krippendorff's 3-coder x 15-unit reliability data with missing values.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Matrix k15{{nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3},
                   {1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan},
                   {nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4}};
  EXPECT_NEAR(krippendorff_alpha(k15, AlphaLevel::nominal), 0.691358, 5e-7);
  EXPECT_NEAR(krippendorff_alpha(k15, AlphaLevel::interval), 0.810845, 5e-7);
  for (const auto& c : fixtures()["krippendorff"]) {
    const Matrix data = matrix_of(c["data"]);
    EXPECT_NEAR(krippendorff_alpha(data, AlphaLevel::nominal), c["nominal"].get<double>(), kTol) << c["name"];
    EXPECT_NEAR(krippendorff_alpha(data, AlphaLevel::ordinal), c["ordinal"].get<double>(), kTol) << c["name"];
    EXPECT_NEAR(krippendorff_alpha(data, AlphaLevel::interval), c["interval"].get<double>(), kTol) << c["name"];
  }
}

TEST(Agreement, DegenerateInputsGiveNaNOrOneSentence) {
  EXPECT_TRUE(std::isnan(krippendorff_alpha(Matrix{{1, 1}, {1, 1}}, AlphaLevel::nominal)));
  EXPECT_TRUE(std::isnan(spearman(std::vector<double>{1, 1, 1}, std::vector<double>{1, 2, 3})));
  EXPECT_THROW(icc(Matrix{{1, 2}, {3}}), Error);
  EXPECT_THROW(kendall_w(Matrix{{1, 2}}), Error);
}


TEST(KendallWResampler, EqualsKendallWOfTheExpandedMatrixBitForBit) {
  // Oracle: kendall_w on the matrix with each block repeated counts[b] times, built explicitly. Scores on a coarse
  // grid so raters tie often; some blocks are never drawn, some drawn several times.
  std::uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::uint32_t>(state >> 33);
  };
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t raters = 2 + next() % 4, blocks = 1 + next() % 12;
    agreement::Matrix rows;
    std::vector<std::size_t> block_end;
    for (std::size_t b = 0; b < blocks; ++b) {
      const std::size_t n = 1 + next() % 3;
      for (std::size_t i = 0; i < n; ++i) {
        std::vector<double> r(raters);
        for (auto& x : r) x = static_cast<double>(next() % 5) / 4.0;
        rows.push_back(r);
      }
      block_end.push_back(rows.size());
    }
    const agreement::KendallWResampler kw(rows, block_end);
    std::vector<std::uint32_t> counts(blocks);
    for (auto& c : counts) c = next() % 3;
    agreement::Matrix expanded;
    for (std::size_t b = 0, first = 0; b < blocks; first = block_end[b++])
      for (std::uint32_t t = 0; t < counts[b]; ++t)
        expanded.insert(expanded.end(), rows.begin() + static_cast<long>(first), rows.begin() + static_cast<long>(block_end[b]));
    const double got = kw.w(counts);
    if (expanded.size() < 2) {
      EXPECT_TRUE(std::isnan(got));
      continue;
    }
    const double want = agreement::kendall_w(expanded);
    if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << trial;
    else EXPECT_EQ(got, want) << "trial " << trial;
  }
}

// The flattened row (stats/agreement_row.hpp): subjects' sums written into rows, added weighted by their counts and
// read back, are the structs' add() of the same subjects with the same weights, field for field and bit for bit,
// with empty subjects, a zero weight and a nominal category only some subjects have.
TEST(AgreementRow, WeightedRowsReadBackAsTheStructsAddBitForBit) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::mt19937_64 gen(11);
  std::uniform_real_distribution<double> u(0, 1);
  const std::size_t n = 7, raters = 3;
  std::vector<FleissSums> fl(n);
  std::vector<AlphaSums> nominal(n), interval(n);
  std::vector<IccSums> ic(n);
  for (std::size_t s = 0; s < n; ++s) {
    if (s == 3) continue;  // an empty subject: every sum empty
    Matrix counts, codes(raters), scores;
    for (int item = 0; item < 4; ++item) {
      const double pass = static_cast<double>(gen() % (raters + 1));
      counts.push_back({static_cast<double>(raters) - pass, pass});
      for (std::size_t j = 0; j < raters; ++j) codes[j].push_back(u(gen) < 0.1 ? nan : static_cast<double>(gen() % (s == 5 ? 3 : 2)));
      std::vector<double> row;
      for (std::size_t j = 0; j < raters; ++j) row.push_back(u(gen));
      scores.push_back(row);
    }
    Matrix by_rater(raters);
    for (const auto& row : scores)
      for (std::size_t j = 0; j < raters; ++j) by_rater[j].push_back(row[j]);
    fl[s] = fleiss_sums(counts);
    nominal[s] = alpha_sums(codes, AlphaLevel::nominal);
    interval[s] = alpha_sums(by_rater, AlphaLevel::interval);
    ic[s] = icc_sums(scores);
  }
  std::vector<double> cats;
  for (const auto& a : nominal)
    for (double c : a.categories)
      if (std::find(cats.begin(), cats.end(), c) == cats.end()) cats.push_back(c);
  std::sort(cats.begin(), cats.end());
  ASSERT_EQ(cats.size(), 3u);  // category 2 only in subject 5

  detail::AgreementRow layout;
  const auto bf = layout.add_fleiss(static_cast<double>(raters), 2);
  const auto bn = layout.add_alpha(AlphaLevel::nominal, cats);
  const auto bi = layout.add_alpha(AlphaLevel::interval, {});
  const auto bc = layout.add_icc(raters);
  const std::size_t stride = layout.stride();
  std::vector<double> rows(n * stride, 0.0);
  std::vector<std::vector<std::uint32_t>> flags(n);
  for (std::size_t s = 0; s < n; ++s) {
    detail::AgreementRow::put(bf, fl[s], rows.data() + s * stride, flags[s]);
    detail::AgreementRow::put(bn, nominal[s], rows.data() + s * stride, flags[s]);
    detail::AgreementRow::put(bi, interval[s], rows.data() + s * stride, flags[s]);
    detail::AgreementRow::put(bc, ic[s], rows.data() + s * stride, flags[s]);
  }
  auto bits = [](double x) {
    std::uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
  };
  auto same = [&](const std::vector<double>& a, const std::vector<double>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(bits(a[i]), bits(b[i])) << i;
  };
  for (const std::vector<std::uint32_t>& counts : {std::vector<std::uint32_t>{2, 0, 1, 3, 0, 1, 4},
                                                   std::vector<std::uint32_t>{1, 1, 1, 1, 1, 0, 1},
                                                   std::vector<std::uint32_t>{0, 0, 0, 5, 0, 0, 0}}) {
    std::vector<double> sums(stride, 0.0);
    detail::add_weighted_rows(counts.data(), rows.data(), n, stride, sums.data());
    std::vector<char> on(layout.flags(), 0);
    FleissSums ef;
    AlphaSums en, ei;
    IccSums ec;
    for (std::size_t s = 0; s < n; ++s) {
      if (counts[s] == 0) continue;
      for (const std::uint32_t f : flags[s]) on[f] = 1;
      ef.add(fl[s], counts[s]);
      en.add(nominal[s], counts[s]);
      ei.add(interval[s], counts[s]);
      ec.add(ic[s], counts[s]);
    }
    const FleissSums gf = detail::AgreementRow::fleiss(bf, sums.data(), on.data());
    const AlphaSums gn = detail::AgreementRow::alpha(bn, sums.data(), on.data());
    const AlphaSums gi = detail::AgreementRow::alpha(bi, sums.data(), on.data());
    const IccSums gc = detail::AgreementRow::icc(bc, sums.data(), on.data());
    same({gf.subjects, gf.p_sum, gf.raters}, {ef.subjects, ef.p_sum, ef.raters});
    same(gf.category_totals, ef.category_totals);
    for (const auto& [g, e] : {std::pair{&gn, &en}, std::pair{&gi, &ei}}) {
      EXPECT_EQ(g->level, e->level);
      same({g->n, g->d_o, g->sum, g->sum_sq}, {e->n, e->d_o, e->sum, e->sum_sq});
      same(g->categories, e->categories);
      same(g->counts, e->counts);
    }
    same({gc.subjects, gc.total, gc.total_sq, gc.row_sq}, {ec.subjects, ec.total, ec.total_sq, ec.row_sq});
    same(gc.col, ec.col);
    EXPECT_EQ(bits(gf.kappa()), bits(ef.kappa()));
    EXPECT_EQ(bits(gn.alpha()), bits(en.alpha()));
    EXPECT_EQ(bits(gi.alpha()), bits(ei.alpha()));
    EXPECT_EQ(bits(gc.icc().icc2_1), bits(ec.icc().icc2_1));
  }
  // Sums that do not fit the layout are refused with the structs' sentence.
  std::vector<double> row(stride, 0.0);
  std::vector<std::uint32_t> f;
  EXPECT_THROW(detail::AgreementRow::put(layout.add_icc(raters + 1), ic[0], row.data(), f), Error);
}


TEST(AgreementSums, AgreeWithTheMatrixFunctionsAndAddOverSubjects) {
  using namespace agreement;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Krippendorff's 3-coder x 15-unit reliability data with missing values (published: 0.691358, 0.810845).
  const Matrix k15{{nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3},
                   {1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan},
                   {nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4}};
  EXPECT_NEAR(alpha_sums(k15, AlphaLevel::nominal).alpha(), 0.691358, 5e-7);
  EXPECT_NEAR(alpha_sums(k15, AlphaLevel::interval).alpha(), 0.810845, 5e-7);
  EXPECT_THROW((void)alpha_sums(k15, AlphaLevel::ordinal), Error);
  // Units split in two halves and added back; the second half counted twice equals the matrix with it repeated.
  auto cols = [&](std::size_t from, std::size_t to, int times) {
    Matrix m(k15.size());
    for (int t = 0; t < times; ++t)
      for (std::size_t c = 0; c < k15.size(); ++c) m[c].insert(m[c].end(), k15[c].begin() + from, k15[c].begin() + to);
    return m;
  };
  for (AlphaLevel level : {AlphaLevel::nominal, AlphaLevel::interval}) {
    AlphaSums sum = alpha_sums(cols(0, 7, 1), level);
    sum.add(alpha_sums(cols(7, 15, 1), level), 2);
    Matrix both = cols(0, 7, 1);
    const Matrix twice = cols(7, 15, 2);
    for (std::size_t c = 0; c < both.size(); ++c) both[c].insert(both[c].end(), twice[c].begin(), twice[c].end());
    EXPECT_NEAR(sum.alpha(), krippendorff_alpha(both, level), 1e-12);
  }
  // Fleiss and ICC on a 6 x 3 table, whole and as 2 + 4 rows with the second part weighted 3.
  const Matrix counts{{3, 0, 0}, {1, 2, 0}, {0, 2, 1}, {1, 1, 1}, {0, 0, 3}, {2, 0, 1}};
  EXPECT_NEAR(fleiss_sums(counts).kappa(), fleiss_kappa(counts), 1e-12);
  const Matrix scores{{0.1, 0.3, 0.2}, {0.8, 0.6, 0.9}, {0.5, 0.5, 0.4}, {-0.2, 0.1, 0.0}, {1.0, 0.7, 0.9}, {0.3, 0.2, 0.6}};
  const IccResult whole = icc(scores), by_sums = icc_sums(scores).icc();
  EXPECT_NEAR(by_sums.icc2_1, whole.icc2_1, 1e-12);
  EXPECT_NEAR(by_sums.icc3_1, whole.icc3_1, 1e-12);
  auto rows = [](const Matrix& m, std::size_t from, std::size_t to, int times) {
    Matrix out;
    for (int t = 0; t < times; ++t) out.insert(out.end(), m.begin() + from, m.begin() + to);
    return out;
  };
  FleissSums f = fleiss_sums(rows(counts, 0, 2, 1));
  f.add(fleiss_sums(rows(counts, 2, 6, 1)), 3);
  IccSums is = icc_sums(rows(scores, 0, 2, 1));
  is.add(icc_sums(rows(scores, 2, 6, 1)), 3);
  Matrix cw = rows(counts, 0, 2, 1), sw = rows(scores, 0, 2, 1);
  for (const auto& r : rows(counts, 2, 6, 3)) cw.push_back(r);
  for (const auto& r : rows(scores, 2, 6, 3)) sw.push_back(r);
  EXPECT_NEAR(f.kappa(), fleiss_kappa(cw), 1e-12);
  EXPECT_NEAR(is.icc().icc2_1, icc(sw).icc2_1, 1e-12);
  EXPECT_NEAR(is.icc().icc3_1, icc(sw).icc3_1, 1e-12);
  EXPECT_TRUE(std::isnan(FleissSums{}.kappa()));
  EXPECT_TRUE(std::isnan(AlphaSums{}.alpha()));
}

}  // namespace
}  // namespace advplan
