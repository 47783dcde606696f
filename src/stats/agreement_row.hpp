#pragma once
// Internal (not installed): the additive agreement sums of stats/agreement.hpp (FleissSums, AlphaSums, IccSums) as
// blocks of columns of one row of doubles. A bootstrap replicate then adds the drawn subjects' rows weighted by
// their counts (detail::add_weighted_rows, stats/weighted_rows.hpp), with the sums in vector registers, instead of
// calling add() per subject, and reads the structs back. Each column's weighted sum is the same sequence of w * x
// additions as add() makes, so the values are the same bits; a subject whose sums are empty for a block holds +0.0
// there, which leaves the sum's bits as add() leaves them by skipping it. Flags say which parts any added subject
// had (add() starts a struct, and a nominal category, only from a subject that has it).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "advplan/core/error.hpp"
#include "advplan/stats/agreement.hpp"

namespace advplan::detail {

class AgreementRow {
 public:
  /// Fleiss' kappa: subjects, p_sum, then the category totals; every subject added has `raters` raters.
  struct Fleiss {
    std::size_t at = 0, flag = 0, categories = 0;
    double raters = 0;
  };
  /// Krippendorff's alpha: n, d_o, sum, sum_sq, then (nominal) one count per category (sorted), category k at
  /// column at + 4 + k with flag flag + 1 + k.
  struct Alpha {
    std::size_t at = 0, flag = 0;
    agreement::AlphaLevel level = agreement::AlphaLevel::nominal;
    std::vector<double> categories;
  };
  /// ICC: subjects, total, total_sq, row_sq, then one column sum per rater.
  struct Icc {
    std::size_t at = 0, flag = 0, raters = 0;
  };

  Fleiss add_fleiss(double raters, std::size_t categories) {
    const Fleiss b{width_, flags_, categories, raters};
    width_ += 2 + categories;
    flags_ += 1;
    return b;
  }
  Alpha add_alpha(agreement::AlphaLevel level, std::vector<double> categories) {
    Alpha b{width_, flags_, level, std::move(categories)};
    width_ += 4 + b.categories.size();
    flags_ += 1 + b.categories.size();
    return b;
  }
  Icc add_icc(std::size_t raters) {
    const Icc b{width_, flags_, raters};
    width_ += 4 + raters;
    flags_ += 1;
    return b;
  }
  std::size_t width() const { return width_; }
  /// The row's length: the width rounded up to a multiple of 4, as add_weighted_rows wants.
  std::size_t stride() const { return (width_ + 3) / 4 * 4; }
  std::size_t flags() const { return flags_; }

  /// Writes a subject's sums into its `row` (stride() columns of +0.0 where nothing is written yet) and appends
  /// the flags they set to `on`; empty sums write nothing.
  static void put(const Fleiss& b, const agreement::FleissSums& s, double* row, std::vector<std::uint32_t>& on) {
    if (s.subjects == 0) return;
    if (s.raters != b.raters || s.category_totals.size() != b.categories)
      throw Error("Fleiss' kappa: the sums of subjects with different raters or categories cannot be added");
    on.push_back(static_cast<std::uint32_t>(b.flag));
    set(row, b.at, s.subjects);
    set(row, b.at + 1, s.p_sum);
    for (std::size_t k = 0; k < s.category_totals.size(); ++k) set(row, b.at + 2 + k, s.category_totals[k]);
  }
  static void put(const Alpha& b, const agreement::AlphaSums& s, double* row, std::vector<std::uint32_t>& on) {
    if (s.n == 0) return;
    on.push_back(static_cast<std::uint32_t>(b.flag));
    set(row, b.at, s.n);
    set(row, b.at + 1, s.d_o);
    set(row, b.at + 2, s.sum);
    set(row, b.at + 3, s.sum_sq);
    for (std::size_t i = 0; i < s.categories.size(); ++i) {
      const auto it = std::find(b.categories.begin(), b.categories.end(), s.categories[i]);
      if (it == b.categories.end()) throw Error("Krippendorff's alpha: a category the row has no column for");
      const auto k = static_cast<std::size_t>(it - b.categories.begin());
      on.push_back(static_cast<std::uint32_t>(b.flag + 1 + k));
      set(row, b.at + 4 + k, s.counts[i]);
    }
  }
  static void put(const Icc& b, const agreement::IccSums& s, double* row, std::vector<std::uint32_t>& on) {
    if (s.subjects == 0) return;
    if (s.col.size() != b.raters) throw Error("ICC: the sums of subjects with different raters cannot be added");
    on.push_back(static_cast<std::uint32_t>(b.flag));
    set(row, b.at, s.subjects);
    set(row, b.at + 1, s.total);
    set(row, b.at + 2, s.total_sq);
    set(row, b.at + 3, s.row_sq);
    for (std::size_t j = 0; j < b.raters; ++j) set(row, b.at + 4 + j, s.col[j]);
  }

  /// The sums from a replicate's column sums and flags (`on[f]` nonzero once a row that set flag f was added):
  /// what add() of the same subjects gives.
  static agreement::FleissSums fleiss(const Fleiss& b, const double* sums, const char* on) {
    agreement::FleissSums f;
    if (!on[b.flag]) return f;
    const double* x = sums + b.at;
    f.raters = b.raters;
    f.subjects = x[0];
    f.p_sum = x[1];
    f.category_totals.assign(x + 2, x + 2 + b.categories);
    return f;
  }
  static agreement::AlphaSums alpha(const Alpha& b, const double* sums, const char* on) {
    agreement::AlphaSums a;
    if (!on[b.flag]) return a;
    const double* x = sums + b.at;
    a.level = b.level;
    a.n = x[0];
    a.d_o = x[1];
    a.sum = x[2];
    a.sum_sq = x[3];
    for (std::size_t k = 0; k < b.categories.size(); ++k)
      if (on[b.flag + 1 + k]) {
        a.categories.push_back(b.categories[k]);
        a.counts.push_back(x[4 + k]);
      }
    return a;
  }
  static agreement::IccSums icc(const Icc& b, const double* sums, const char* on) {
    agreement::IccSums s;
    if (!on[b.flag]) return s;
    const double* x = sums + b.at;
    s.subjects = x[0];
    s.total = x[1];
    s.total_sq = x[2];
    s.row_sq = x[3];
    s.col.assign(x + 4, x + 4 + b.raters);
    return s;
  }

 private:
  /// A row holds one addition per sum.
  static void set(double* row, std::size_t k, double x) {
    if (row[k] != 0.0 || std::signbit(row[k])) throw Error("agreement row: a subject adds twice to one sum");
    row[k] = x;
  }

  std::size_t width_ = 0, flags_ = 0;
};

}  // namespace advplan::detail
