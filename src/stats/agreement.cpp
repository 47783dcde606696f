#include "advplan/stats/agreement.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "advplan/core/error.hpp"
#include "core/thread_buffer.hpp"

namespace advplan::agreement {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Checks that m is a non-empty rectangular matrix of finite numbers (NaN allowed when `missing_ok`).
void require_rectangular(const Matrix& m, const char* what, bool missing_ok = false) {
  if (m.empty() || m.front().empty()) throw Error(fmt::format("{}: the matrix is empty", what));
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (m[i].size() != m.front().size())
      throw Error(fmt::format("{}: row {} has {} values, row 0 has {}", what, i, m[i].size(), m.front().size()));
    for (double v : m[i])
      if (std::isinf(v) || (!missing_ok && std::isnan(v)))
        throw Error(fmt::format("{}: row {} holds a value that is not a finite number", what, i));
  }
}

}  // namespace

double percent_agreement(std::span<const int> a, std::span<const int> b) {
  if (a.size() != b.size())
    throw Error(fmt::format("percent agreement: the judges coded {} and {} items", a.size(), b.size()));
  if (a.empty()) return kNaN;
  std::size_t same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == b[i] ? 1 : 0;
  return static_cast<double>(same) / static_cast<double>(a.size());
}

KappaResult cohen_kappa_table(const Matrix& table, KappaWeights weights) {
  require_rectangular(table, "Cohen's kappa");
  const std::size_t k = table.size();
  if (table.front().size() != k) throw Error("Cohen's kappa: the contingency table is not square");
  double nobs = 0;
  for (const auto& row : table) nobs = std::accumulate(row.begin(), row.end(), nobs);
  KappaResult r;
  r.n = static_cast<std::size_t>(std::llround(nobs));
  if (nobs <= 0) return {kNaN, kNaN, kNaN, 0};
  // Agreement weights w = 1 - disagreement weight (the SAS manual's form, as statsmodels uses).
  const double span = k > 1 ? static_cast<double>(k - 1) : 1.0;
  auto w = [&](std::size_t i, std::size_t j) {
    const double d = std::abs(static_cast<double>(i) - static_cast<double>(j));
    switch (weights) {
      case KappaWeights::none: return i == j ? 1.0 : 0.0;
      case KappaWeights::linear: return 1.0 - d / span;
      case KappaWeights::quadratic: return 1.0 - d * d / (span * span);
    }
    return 0.0;
  };
  // The marginals in per-thread buffers (src/core/thread_buffer.hpp): the rubric agreement's pair replicates call
  // this 12,000 times per paper run.
  thread_local std::vector<double> tls_row, tls_col, tls_w_row, tls_w_col;
  std::vector<double>& row = detail::bound(tls_row);
  std::vector<double>& col = detail::bound(tls_col);
  row.assign(k, 0.0);
  col.assign(k, 0.0);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) {
      row[i] += table[i][j] / nobs;
      col[j] += table[i][j] / nobs;
    }
  double po = 0, pe = 0;
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) {
      po += w(i, j) * table[i][j] / nobs;
      pe += w(i, j) * row[i] * col[j];
    }
  if (pe >= 1.0) return {kNaN, kNaN, kNaN, r.n};
  r.kappa = (po - pe) / (1.0 - pe);
  // Mean agreement weight of each row category against the column marginals, and vice versa.
  std::vector<double>& w_row = detail::bound(tls_w_row);
  std::vector<double>& w_col = detail::bound(tls_w_col);
  w_row.assign(k, 0.0);
  w_col.assign(k, 0.0);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) {
      w_row[i] += col[j] * w(i, j);
      w_col[j] += row[i] * w(i, j);
    }
  double term = 0, term0 = 0;
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = 0; j < k; ++j) {
      const double a = w(i, j) - (w_col[j] + w_row[i]) * (1.0 - r.kappa);
      term += table[i][j] / nobs * a * a;
      const double b = w(i, j) - (w_col[j] + w_row[i]);
      term0 += row[i] * col[j] * b * b;
    }
  const double fac = 1.0 / ((1.0 - pe) * (1.0 - pe) * nobs);
  const double c = r.kappa - pe * (1.0 - r.kappa);
  r.se = std::sqrt(std::max(0.0, (term - c * c) * fac));
  r.se0 = std::sqrt(std::max(0.0, (term0 - pe * pe) * fac));
  return r;
}

KappaResult cohen_kappa(std::span<const int> a, std::span<const int> b, int categories, KappaWeights weights) {
  if (a.size() != b.size())
    throw Error(fmt::format("Cohen's kappa: the judges coded {} and {} items", a.size(), b.size()));
  if (categories < 1) throw Error("Cohen's kappa: there must be at least one category");
  if (a.empty()) return {kNaN, kNaN, kNaN, 0};
  const auto kk = static_cast<std::size_t>(categories);
  Matrix table(kk, std::vector<double>(kk, 0.0));
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] < 0 || a[i] >= categories || b[i] < 0 || b[i] >= categories)
      throw Error(fmt::format("Cohen's kappa: item {} has a code outside [0, {})", i, categories));
    table[static_cast<std::size_t>(a[i])][static_cast<std::size_t>(b[i])] += 1.0;
  }
  return cohen_kappa_table(table, weights);
}

double fleiss_kappa(const Matrix& counts) {
  require_rectangular(counts, "Fleiss' kappa");
  const double raters = std::accumulate(counts.front().begin(), counts.front().end(), 0.0);
  if (raters < 2) throw Error("Fleiss' kappa: each subject needs at least two ratings");
  const std::size_t cats = counts.front().size();
  std::vector<double> p_cat(cats, 0.0);
  double p_mean = 0;
  for (std::size_t s = 0; s < counts.size(); ++s) {
    const double n_s = std::accumulate(counts[s].begin(), counts[s].end(), 0.0);
    if (std::abs(n_s - raters) > 1e-9)
      throw Error(fmt::format("Fleiss' kappa: subject {} has {} ratings, subject 0 has {}", s, n_s, raters));
    double sq = 0;
    for (std::size_t c = 0; c < cats; ++c) {
      if (counts[s][c] < 0) throw Error(fmt::format("Fleiss' kappa: subject {} has a negative count", s));
      sq += counts[s][c] * counts[s][c];
      p_cat[c] += counts[s][c];
    }
    p_mean += (sq - raters) / (raters * (raters - 1.0));
  }
  const double subjects = static_cast<double>(counts.size());
  p_mean /= subjects;
  double pe = 0;
  for (double p : p_cat) pe += (p / (subjects * raters)) * (p / (subjects * raters));
  if (pe >= 1.0) return kNaN;
  return (p_mean - pe) / (1.0 - pe);
}

Matrix category_counts(const std::vector<std::vector<int>>& labels, int categories) {
  if (categories < 1) throw Error("category counts: there must be at least one category");
  Matrix counts(labels.size(), std::vector<double>(static_cast<std::size_t>(categories), 0.0));
  for (std::size_t s = 0; s < labels.size(); ++s)
    for (int v : labels[s]) {
      if (v < 0 || v >= categories)
        throw Error(fmt::format("category counts: subject {} has a code outside [0, {})", s, categories));
      counts[s][static_cast<std::size_t>(v)] += 1.0;
    }
  return counts;
}

double krippendorff_alpha(const Matrix& data, AlphaLevel level) {
  require_rectangular(data, "Krippendorff's alpha", /*missing_ok=*/true);
  // The distinct values, in order; each value's index in the coincidence matrix.
  std::map<double, std::size_t> index;
  for (const auto& coder : data)
    for (double v : coder)
      if (!std::isnan(v)) index.emplace(v, 0);
  std::vector<double> values;
  for (auto& [v, i] : index) {
    i = values.size();
    values.push_back(v);
  }
  const std::size_t k = values.size();
  if (k == 0) return kNaN;
  // Coincidence matrix o[c][d]: over pairable units, every ordered pair of values from different coders,
  // weighted 1 / (m_u - 1).
  Matrix o(k, std::vector<double>(k, 0.0));
  const std::size_t units = data.front().size();
  std::vector<std::size_t> present;
  for (std::size_t u = 0; u < units; ++u) {
    present.clear();
    for (const auto& coder : data)
      if (!std::isnan(coder[u])) present.push_back(index.at(coder[u]));
    const std::size_t m = present.size();
    if (m < 2) continue;
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < m; ++j)
        if (i != j) o[present[i]][present[j]] += 1.0 / static_cast<double>(m - 1);
  }
  std::vector<double> nc(k, 0.0);
  double n = 0;
  for (std::size_t c = 0; c < k; ++c) {
    nc[c] = std::accumulate(o[c].begin(), o[c].end(), 0.0);
    n += nc[c];
  }
  if (n <= 1) return kNaN;
  auto delta2 = [&](std::size_t c, std::size_t d) {
    if (c == d) return 0.0;
    switch (level) {
      case AlphaLevel::nominal: return 1.0;
      case AlphaLevel::interval: return (values[c] - values[d]) * (values[c] - values[d]);
      case AlphaLevel::ordinal: {
        const std::size_t lo = std::min(c, d), hi = std::max(c, d);
        double s = 0;
        for (std::size_t g = lo; g <= hi; ++g) s += nc[g];
        s -= (nc[c] + nc[d]) / 2.0;
        return s * s;
      }
    }
    return 0.0;
  };
  double d_o = 0, d_e = 0;
  for (std::size_t c = 0; c < k; ++c)
    for (std::size_t d = 0; d < k; ++d) {
      const double dd = delta2(c, d);
      d_o += o[c][d] * dd;
      d_e += nc[c] * nc[d] * dd;
    }
  if (d_e <= 0) return kNaN;
  return 1.0 - (n - 1.0) * d_o / d_e;
}

namespace {
/// ICC(2,1) and ICC(3,1) from the mean squares (Shrout and Fleiss), shared by icc() and IccSums::icc().
IccResult finish_icc(IccResult r, double nd, double kd) {
  const double den2 = r.ms_rows + (kd - 1) * r.ms_error + kd * (r.ms_cols - r.ms_error) / nd;
  const double den3 = r.ms_rows + (kd - 1) * r.ms_error;
  r.icc2_1 = den2 != 0 ? (r.ms_rows - r.ms_error) / den2 : kNaN;
  r.icc3_1 = den3 != 0 ? (r.ms_rows - r.ms_error) / den3 : kNaN;
  return r;
}
}  // namespace

IccResult icc(const Matrix& x) {
  require_rectangular(x, "ICC");
  const std::size_t n = x.size(), k = x.front().size();
  if (n < 2 || k < 2) throw Error("ICC: at least two subjects and two raters are needed");
  const double nd = static_cast<double>(n), kd = static_cast<double>(k);
  double grand = 0;
  std::vector<double> row(n, 0.0), col(k, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < k; ++j) {
      grand += x[i][j];
      row[i] += x[i][j] / kd;
      col[j] += x[i][j] / nd;
    }
  grand /= nd * kd;
  double ss_rows = 0, ss_cols = 0, ss_total = 0;
  for (double r : row) ss_rows += kd * (r - grand) * (r - grand);
  for (double c : col) ss_cols += nd * (c - grand) * (c - grand);
  for (const auto& r : x)
    for (double v : r) ss_total += (v - grand) * (v - grand);
  const double ss_error = ss_total - ss_rows - ss_cols;
  IccResult r;
  r.ms_rows = ss_rows / (nd - 1);
  r.ms_cols = ss_cols / (kd - 1);
  r.ms_error = ss_error / ((nd - 1) * (kd - 1));
  return finish_icc(r, nd, kd);
}

FleissSums fleiss_sums(const Matrix& counts) {
  FleissSums f;
  if (counts.empty()) return f;
  require_rectangular(counts, "Fleiss' kappa");
  f.raters = std::accumulate(counts.front().begin(), counts.front().end(), 0.0);
  if (f.raters < 2) throw Error("Fleiss' kappa: each subject needs at least two ratings");
  f.category_totals.assign(counts.front().size(), 0.0);
  for (const auto& row : counts) {
    double sq = 0;
    for (std::size_t c = 0; c < row.size(); ++c) {
      sq += row[c] * row[c];
      f.category_totals[c] += row[c];
    }
    f.p_sum += (sq - f.raters) / (f.raters * (f.raters - 1.0));
  }
  f.subjects = static_cast<double>(counts.size());
  return f;
}

void FleissSums::add(const FleissSums& o, double weight) {
  if (o.subjects == 0 || weight == 0) return;
  if (category_totals.empty()) {
    raters = o.raters;
    category_totals.assign(o.category_totals.size(), 0.0);
  }
  if (o.raters != raters || o.category_totals.size() != category_totals.size())
    throw Error("Fleiss' kappa: the sums of subjects with different raters or categories cannot be added");
  subjects += weight * o.subjects;
  p_sum += weight * o.p_sum;
  for (std::size_t c = 0; c < category_totals.size(); ++c) category_totals[c] += weight * o.category_totals[c];
}

double FleissSums::kappa() const {
  if (subjects == 0) return kNaN;
  double pe = 0;
  for (double p : category_totals) pe += (p / (subjects * raters)) * (p / (subjects * raters));
  if (pe >= 1.0) return kNaN;
  return (p_sum / subjects - pe) / (1.0 - pe);
}

AlphaSums alpha_sums(const Matrix& data, AlphaLevel level) {
  if (level == AlphaLevel::ordinal) throw Error("Krippendorff's alpha: ordinal sums are not additive over units");
  AlphaSums a;
  a.level = level;
  if (data.empty()) return a;
  require_rectangular(data, "Krippendorff's alpha", /*missing_ok=*/true);
  std::map<double, double> cats;
  std::vector<double> present;
  for (std::size_t u = 0; u < data.front().size(); ++u) {
    present.clear();
    for (const auto& coder : data)
      if (!std::isnan(coder[u])) present.push_back(coder[u]);
    const double m = static_cast<double>(present.size());
    if (present.size() < 2) continue;
    a.n += m;
    if (level == AlphaLevel::nominal) {
      std::map<double, double> in_unit;
      for (double v : present) in_unit[v] += 1;
      double same = 0;
      for (const auto& [v, c] : in_unit) {
        same += c * c;
        cats[v] += c;
      }
      a.d_o += (m * m - same) / (m - 1);
    } else {
      double s1 = 0, s2 = 0;
      for (double v : present) {
        s1 += v;
        s2 += v * v;
      }
      a.sum += s1;
      a.sum_sq += s2;
      a.d_o += (2 * m * s2 - 2 * s1 * s1) / (m - 1);
    }
  }
  for (const auto& [v, c] : cats) {
    a.categories.push_back(v);
    a.counts.push_back(c);
  }
  return a;
}

void AlphaSums::add(const AlphaSums& o, double weight) {
  if (o.n == 0 || weight == 0) return;
  level = o.level;
  n += weight * o.n;
  d_o += weight * o.d_o;
  sum += weight * o.sum;
  sum_sq += weight * o.sum_sq;
  for (std::size_t i = 0; i < o.categories.size(); ++i) {
    const auto it = std::lower_bound(categories.begin(), categories.end(), o.categories[i]);
    const auto at = static_cast<std::size_t>(it - categories.begin());
    if (it == categories.end() || *it != o.categories[i]) {
      categories.insert(it, o.categories[i]);
      counts.insert(counts.begin() + static_cast<std::ptrdiff_t>(at), 0.0);
    }
    counts[at] += weight * o.counts[i];
  }
}

double AlphaSums::alpha() const {
  if (n <= 1) return kNaN;
  double d_e = 0;
  if (level == AlphaLevel::nominal) {
    double sq = 0;
    for (double c : counts) sq += c * c;
    d_e = n * n - sq;
  } else {
    d_e = 2 * n * sum_sq - 2 * sum * sum;
    if (d_e <= 1e-12 * 2 * n * sum_sq) return kNaN;  // every value the same, up to rounding
  }
  if (d_e <= 0) return kNaN;
  return 1.0 - (n - 1.0) * d_o / d_e;
}

IccSums icc_sums(const Matrix& x) {
  IccSums s;
  if (x.empty()) return s;
  require_rectangular(x, "ICC");
  s.col.assign(x.front().size(), 0.0);
  for (const auto& row : x) {
    double r = 0;
    for (std::size_t j = 0; j < row.size(); ++j) {
      r += row[j];
      s.total_sq += row[j] * row[j];
      s.col[j] += row[j];
    }
    s.total += r;
    s.row_sq += r * r;
  }
  s.subjects = static_cast<double>(x.size());
  return s;
}

void IccSums::add(const IccSums& o, double weight) {
  if (o.subjects == 0 || weight == 0) return;
  if (col.empty()) col.assign(o.col.size(), 0.0);
  if (o.col.size() != col.size()) throw Error("ICC: the sums of subjects with different raters cannot be added");
  subjects += weight * o.subjects;
  total += weight * o.total;
  total_sq += weight * o.total_sq;
  row_sq += weight * o.row_sq;
  for (std::size_t j = 0; j < col.size(); ++j) col[j] += weight * o.col[j];
}

IccResult IccSums::icc() const {
  IccResult r;
  const double nd = subjects, kd = static_cast<double>(col.size());
  if (nd < 2 || kd < 2) {
    r.icc2_1 = r.icc3_1 = kNaN;
    return r;
  }
  const double correction = total * total / (nd * kd);
  double col_sq = 0;
  for (double c : col) col_sq += c * c;
  const double ss_rows = row_sq / kd - correction, ss_cols = col_sq / nd - correction;
  const double ss_error = (total_sq - correction) - ss_rows - ss_cols;
  r.ms_rows = ss_rows / (nd - 1);
  r.ms_cols = ss_cols / (kd - 1);
  r.ms_error = ss_error / ((nd - 1) * (kd - 1));
  return finish_icc(r, nd, kd);
}

namespace {
/// ranks[order[k]] for a stable value order of v: each run of equal values gets the mean of its 1-based positions.
template <typename Index>
void ranks_from_order(std::span<const double> v, const Index* order, double* ranks) {
  const std::size_t n = v.size();
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j + 1 < n && v[order[j + 1]] == v[order[i]]) ++j;
    const double r = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (std::size_t t = i; t <= j; ++t) ranks[order[t]] = r;
    i = j + 1;
  }
}
}  // namespace

std::vector<double> average_ranks(std::span<const double> v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> ranks(v.size());
  ranks_from_order(v, order.data(), ranks.data());
  return ranks;
}

double kendall_w(const Matrix& x) {
  require_rectangular(x, "Kendall's W");
  const std::size_t n = x.size(), m = x.front().size();
  if (n < 2) throw Error("Kendall's W: at least two subjects are needed");
  std::vector<double> rank_sum(n, 0.0), column(n);
  double ties = 0;
  for (std::size_t j = 0; j < m; ++j) {
    for (std::size_t i = 0; i < n; ++i) column[i] = x[i][j];
    const auto r = average_ranks(column);
    for (std::size_t i = 0; i < n; ++i) rank_sum[i] += r[i];
    // Tie groups of this rater: t^3 - t for each group of t equal values.
    std::vector<double> sorted = column;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < n;) {
      std::size_t t = 1;
      while (i + t < n && sorted[i + t] == sorted[i]) ++t;
      ties += static_cast<double>(t * t * t - t);
      i += t;
    }
  }
  const double nd = static_cast<double>(n), md = static_cast<double>(m);
  const double mean_r = md * (nd + 1) / 2.0;
  double s = 0;
  for (double r : rank_sum) s += (r - mean_r) * (r - mean_r);
  const double den = md * md * (nd * nd * nd - nd) - md * ties;
  return den > 0 ? 12.0 * s / den : kNaN;
}

KendallWResampler::KendallWResampler(Matrix rows, std::vector<std::size_t> block_end)
    : rows_(std::move(rows)), block_end_(std::move(block_end)) {
  require_rectangular(rows_, "Kendall's W");
  if (block_end_.empty() || block_end_.back() != rows_.size())
    throw Error("Kendall's W: the blocks do not cover the rows");
  block_of_.resize(rows_.size());
  for (std::size_t b = 0, r = 0; b < block_end_.size(); ++b)
    for (; r < block_end_[b]; ++r) block_of_[r] = b;
  const std::size_t m = rows_.front().size();
  // Each rater's column in value order (stable), then its tie groups numbered in that order.
  group_of_.assign(rows_.size() * m, 0);
  group_at_.assign(m + 1, 0);
  std::vector<std::size_t> o(rows_.size());
  for (std::size_t j = 0; j < m; ++j) {
    std::iota(o.begin(), o.end(), std::size_t{0});
    std::stable_sort(o.begin(), o.end(), [&](std::size_t a, std::size_t b) { return rows_[a][j] < rows_[b][j]; });
    std::uint32_t g = 0;
    for (std::size_t k = 0; k < o.size(); ++k) {
      group_of_[o[k] * m + j] = g;
      if (k + 1 == o.size() || !(rows_[o[k + 1]][j] == rows_[o[k]][j])) ++g;
    }
    group_at_[j + 1] = group_at_[j] + g;
  }
}

double KendallWResampler::w(std::span<const std::uint32_t> counts) const {
  const std::size_t base = rows_.size(), m = rows_.front().size();
  std::size_t n = 0;
  for (std::size_t r = 0; r < base; ++r) n += counts[block_of_[r]];
  if (n < 2) return kNaN;
  // The same arithmetic as kendall_w on the expanded matrix, computed per tie group instead of per expanded row:
  // a group spanning sorted positions i..j of a rater's column (i = the drawn rows below it, j - i + 1 = its drawn
  // rows, counted with multiplicity) gets (i + j) / 2 + 1; a row's rank sum adds its raters' group ranks in
  // rater order; the ties add over raters, then groups in sorted order; the squared deviations add rows in
  // expansion order (block by block, each repeated as often as it was drawn).
  // Per-thread buffers, each bound once (src/core/thread_buffer.hpp).
  thread_local std::vector<std::size_t> tls_equal;
  thread_local std::vector<double> tls_rank_of, tls_block_sums;
  std::vector<std::size_t>& equal = detail::bound(tls_equal);     // drawn rows per group
  std::vector<double>& rank_of = detail::bound(tls_rank_of);      // rank per group
  std::vector<double>& block_sums = detail::bound(tls_block_sums);  // the rank sums of one block's rows
  equal.assign(group_at_[m], 0);
  rank_of.assign(group_at_[m], 0.0);
  for (std::size_t b = 0, first = 0; b < block_end_.size(); first = block_end_[b++]) {
    const std::uint32_t c = counts[b];
    if (c == 0) continue;
    for (std::size_t r = first; r < block_end_[b]; ++r)
      for (std::size_t j = 0; j < m; ++j) equal[group_at_[j] + group_of_[r * m + j]] += c;
  }
  // Without a branch on whether a group was drawn (about a third are not, at random): an undrawn group's rank is
  // written but never read (only drawn rows look theirs up), and its tie term is e^3 - e = 0, so adding it leaves
  // `ties`, a sum of non-negative terms from +0.0, the same bits.
  double ties = 0;
  for (std::size_t j = 0; j < m; ++j) {
    std::size_t less = 0;
    for (std::size_t g = group_at_[j]; g < group_at_[j + 1]; ++g) {
      const std::size_t e = equal[g];
      rank_of[g] = (static_cast<double>(less) + static_cast<double>(less + e - 1)) / 2.0 + 1.0;
      ties += static_cast<double>(e * e * e - e);
      less += e;
    }
  }
  const double nd = static_cast<double>(n), md = static_cast<double>(m);
  const double mean_r = md * (nd + 1) / 2.0;
  double s = 0;
  for (std::size_t b = 0, first = 0; b < block_end_.size(); first = block_end_[b++]) {
    const std::uint32_t c = counts[b];
    if (c == 0) continue;
    block_sums.resize(block_end_[b] - first);
    for (std::size_t r = first; r < block_end_[b]; ++r) {
      double x = 0;
      for (std::size_t j = 0; j < m; ++j) x += rank_of[group_at_[j] + group_of_[r * m + j]];
      block_sums[r - first] = x;
    }
    for (std::uint32_t t = 0; t < c; ++t)
      for (const double x : block_sums) s += (x - mean_r) * (x - mean_r);
  }
  const double den = md * md * (nd * nd * nd - nd) - md * ties;
  return den > 0 ? 12.0 * s / den : kNaN;
}

double pearson(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size() || x.size() < 2) return kNaN;
  const double nd = static_cast<double>(x.size());
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / nd;
  const double my = std::accumulate(y.begin(), y.end(), 0.0) / nd;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx <= 0 || syy <= 0) return kNaN;
  return sxy / std::sqrt(sxx * syy);
}

namespace {
/// average_ranks into `ranks` for n <= 32 values without NaN, on the stack: a stable insertion sort gives the stable
/// sort's order (`<` is a strict weak order without NaN), so the ranks are the same values.
void small_average_ranks(std::span<const double> v, double* ranks) {
  std::array<std::uint8_t, 32> order;
  const std::size_t n = v.size();
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t k = i;
    for (; k > 0 && v[i] < v[order[k - 1]]; --k) order[k] = order[k - 1];
    order[k] = static_cast<std::uint8_t>(i);
  }
  ranks_from_order(v, order.data(), ranks);
}
}  // namespace

double spearman(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size() || x.size() < 2) return kNaN;
  // The rubric agreement's replicates call this thousands of times on a few policies' means: no allocation then.
  auto finite_ish = [](std::span<const double> v) { return std::none_of(v.begin(), v.end(), [](double a) { return a != a; }); };
  if (x.size() <= 32 && finite_ish(x) && finite_ish(y)) {
    std::array<double, 32> rx, ry;
    small_average_ranks(x, rx.data());
    small_average_ranks(y, ry.data());
    return pearson(std::span<const double>(rx.data(), x.size()), std::span<const double>(ry.data(), y.size()));
  }
  const auto rx = average_ranks(x);
  const auto ry = average_ranks(y);
  return pearson(rx, ry);
}

}  // namespace advplan::agreement
