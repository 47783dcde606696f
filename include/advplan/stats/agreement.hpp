#pragma once
// Chance-corrected agreement between judges (docs/METRICS.md "Judge agreement"): percent agreement, Cohen's kappa
// (unweighted, linear and quadratic weights) with its asymptotic standard error, Fleiss' kappa, Krippendorff's alpha
// (nominal, ordinal, interval; missing values allowed), ICC(2,1) and ICC(3,1), Kendall's W and Spearman's rho.
// Pure functions; a malformed input (ragged matrix, code out of range) throws advplan::Error with one sentence.
// A statistic whose denominator is zero (no variation at all) is NaN.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace advplan::agreement {

/// Rows of numbers: `m[i][j]`. Each function says what rows and columns mean.
using Matrix = std::vector<std::vector<double>>;

/// Fraction of positions where a[i] == b[i]; NaN when empty. The spans must have equal length.
double percent_agreement(std::span<const int> a, std::span<const int> b);

enum class KappaWeights { none, linear, quadratic };

struct KappaResult {
  double kappa = 0;
  double se = 0;   ///< asymptotic standard error (Fleiss, Cohen and Everitt 1969), as statsmodels' std_kappa
  double se0 = 0;  ///< standard error under kappa = 0, as statsmodels' std_kappa0
  std::size_t n = 0;
};

/// Cohen's kappa from a K x K contingency table (rows: judge A's category, columns: judge B's). Disagreement
/// weights on category indices: none 1[i != j]; linear |i - j| / (K - 1); quadratic (i - j)^2 / (K - 1)^2.
KappaResult cohen_kappa_table(const Matrix& table, KappaWeights weights = KappaWeights::none);
/// Cohen's kappa of two judges' codes, each a category index in [0, categories).
KappaResult cohen_kappa(std::span<const int> a, std::span<const int> b, int categories,
                        KappaWeights weights = KappaWeights::none);

/// Fleiss' kappa from counts[subject][category] (how many raters put the subject in the category); every subject
/// must have the same number of raters, at least 2.
double fleiss_kappa(const Matrix& counts);
/// counts[subject][category] from labels[subject][rater] (category indices in [0, categories)).
Matrix category_counts(const std::vector<std::vector<int>>& labels, int categories);

enum class AlphaLevel { nominal, ordinal, interval };

/// Krippendorff's alpha of data[coder][unit]; NaN marks a missing value. Units with fewer than two values are
/// not pairable and are ignored. Values are compared as numbers (interval), by rank (ordinal) or by identity.
double krippendorff_alpha(const Matrix& data, AlphaLevel level);

/// Shrout and Fleiss intraclass correlations of x[subject][rater] (complete, n >= 2 subjects, k >= 2 raters),
/// from the two-way ANOVA mean squares: ICC(2,1) two-way random, absolute agreement, single rater; ICC(3,1)
/// two-way mixed, consistency, single rater.
struct IccResult {
  double icc2_1 = 0, icc3_1 = 0;
  double ms_rows = 0, ms_cols = 0, ms_error = 0;
};
IccResult icc(const Matrix& x);

/// Kendall's coefficient of concordance W of x[subject][rater]: each rater ranks the subjects (ties get average
/// ranks), with the tie correction W = 12 S / (m^2 (n^3 - n) - m sum T), T = sum over tie groups of t^3 - t.
double kendall_w(const Matrix& x);

/// Kendall's W of bootstrap resamples of a fixed matrix whose rows come in blocks (a block = one case's rows):
/// w(counts) equals kendall_w of the matrix in which block b is repeated counts[b] times, in block order, bit for
/// bit, without building it. Each rater's tie groups are found once; a resample counts its drawn rows into them.
class KendallWResampler {
 public:
  /// `block_end[b]` is one past block b's last row; the last equals rows.size().
  KendallWResampler(Matrix rows, std::vector<std::size_t> block_end);
  /// NaN when the resample has fewer than two rows or no spread.
  double w(std::span<const std::uint32_t> counts) const;

 private:
  Matrix rows_;
  std::vector<std::size_t> block_end_, block_of_;
  // The tie groups of each rater's column (fixed by the values; a resample only changes how many times each row
  // counts), numbered in sorted order: row r's group for rater j is group_at_[j] + group_of_[r * m + j], an index
  // into one flat array of all raters' groups.
  std::vector<std::uint32_t> group_of_;
  std::vector<std::size_t> group_at_;  ///< per rater, then the total
};

/// Sufficient statistics, additive over subjects (units), of Fleiss' kappa, Krippendorff's alpha (nominal and
/// interval) and the ICCs: a bootstrap replicate that draws subjects with multiplicities is a weighted sum of the
/// statistics of the drawn subjects, with no matrix built per replicate. Each agrees with the function of the same
/// matrix above (to rounding); an empty sum gives NaN.
struct FleissSums {
  double subjects = 0, p_sum = 0, raters = 0;
  std::vector<double> category_totals;
  void add(const FleissSums& o, double weight = 1);
  double kappa() const;
};
FleissSums fleiss_sums(const Matrix& counts);

struct AlphaSums {
  AlphaLevel level = AlphaLevel::nominal;
  double n = 0;    ///< pairable values
  double d_o = 0;  ///< sum over pairable units of sum over ordered pairs of different coders of delta^2 / (m_u - 1)
  double sum = 0, sum_sq = 0;     ///< interval: of the pairable values
  std::vector<double> categories;  ///< nominal: the distinct values, sorted
  std::vector<double> counts;      ///< nominal: how often each appears among the pairable values
  void add(const AlphaSums& o, double weight = 1);
  double alpha() const;
};
/// data[coder][unit] as krippendorff_alpha; nominal or interval (ordinal ranks are not additive: Error).
AlphaSums alpha_sums(const Matrix& data, AlphaLevel level);

struct IccSums {
  double subjects = 0, total = 0, total_sq = 0, row_sq = 0;  ///< n, sum x, sum x^2, sum of squared row sums
  std::vector<double> col;                                    ///< column sums
  void add(const IccSums& o, double weight = 1);
  IccResult icc() const;
};
IccSums icc_sums(const Matrix& x);

/// Average ranks (1-based; ties share the mean of their positions).
std::vector<double> average_ranks(std::span<const double> v);
/// Pearson correlation of x and y; NaN when either is constant or the sizes differ from each other or are < 2.
double pearson(std::span<const double> x, std::span<const double> y);
/// Spearman's rho: Pearson correlation of the average ranks.
double spearman(std::span<const double> x, std::span<const double> y);

}  // namespace advplan::agreement
