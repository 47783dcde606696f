#include "advplan/stats/statistics.hpp"

#include <tbb/blocked_range.h>
#include <immintrin.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <array>
#include <functional>
#include <optional>
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <tuple>
#include <vector>

#include "advplan/core/random.hpp"
#include "stats/weighted_rows.hpp"

namespace advplan {

double mean(std::span<const double> v) {
  if (v.empty()) return 0.0;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

namespace {

/// One value into the tails without a branch on the data: written to both buffers, the counts advance only for the
/// buffers that keep it; NaN is counted.
inline void tail_step(double x, double t_lo, double t_hi, double* below, double* above, std::size_t& nb,
                      std::size_t& na, std::size_t& nans) {
  below[nb] = x;
  nb += x <= t_lo ? 1 : 0;
  above[na] = x;
  na += x >= t_hi ? 1 : 0;
  nans += x != x ? 1 : 0;
}

/// collect_tails without AVX-512, one value at a time.
bool collect_tails_scalar(const double* p, std::size_t size, double t_lo, double t_hi, std::size_t chunk,
                          std::size_t room, double* below, double* above, std::size_t& nb, std::size_t& na,
                          std::size_t& nans) {
  for (std::size_t i = 0; i < size; i += chunk) {
    const std::size_t stop = std::min(size, i + chunk);
    for (std::size_t k = i; k < stop; ++k) tail_step(p[k], t_lo, t_hi, below, above, nb, na, nans);
    if (nb > room || na > room) return false;
  }
  return true;
}

/// The same with AVX-512: eight values per step, the kept ones compress-stored in order (a selection, no
/// arithmetic, so the result is the scalar loop's). Chunks are whole multiples of eight but the last.
__attribute__((target("avx512f"))) bool collect_tails_avx512(const double* p, std::size_t size, double t_lo,
                                                             double t_hi, std::size_t chunk, std::size_t room,
                                                             double* below, double* above, std::size_t& nb,
                                                             std::size_t& na, std::size_t& nans) {
  const __m512d lo = _mm512_set1_pd(t_lo), hi = _mm512_set1_pd(t_hi);
  for (std::size_t i = 0; i < size; i += chunk) {
    const std::size_t stop = std::min(size, i + chunk);
    std::size_t k = i;
    for (; k + 8 <= stop; k += 8) {
      const __m512d x = _mm512_loadu_pd(p + k);
      const __mmask8 b = _mm512_cmp_pd_mask(x, lo, _CMP_LE_OQ), a = _mm512_cmp_pd_mask(x, hi, _CMP_GE_OQ);
      const __mmask8 u = _mm512_cmp_pd_mask(x, x, _CMP_UNORD_Q);
      _mm512_mask_compressstoreu_pd(below + nb, b, x);
      _mm512_mask_compressstoreu_pd(above + na, a, x);
      nb += static_cast<std::size_t>(__builtin_popcount(b));
      na += static_cast<std::size_t>(__builtin_popcount(a));
      nans += static_cast<std::size_t>(__builtin_popcount(u));
    }
    for (; k < stop; ++k) tail_step(p[k], t_lo, t_hi, below, above, nb, na, nans);
    if (nb > room || na > room) return false;
  }
  return true;
}

/// Appends the values of p[0..size) that are <= t_lo to `below` and those >= t_hi to `above`, in order, counts
/// the NaN, and gives up (false) when either holds more than `room` after a chunk; each buffer has room + chunk.
bool collect_tails(const double* p, std::size_t size, double t_lo, double t_hi, std::size_t chunk, std::size_t room,
                   double* below, double* above, std::size_t& nb, std::size_t& na, std::size_t& nans) {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  return avx512 ? collect_tails_avx512(p, size, t_lo, t_hi, chunk, room, below, above, nb, na, nans)
                : collect_tails_scalar(p, size, t_lo, t_hi, chunk, room, below, above, nb, na, nans);
}

/// The k_lo-th smallest and the k_hi-th largest of p[0..size), found by bracketing, or nullopt when the bracket
/// fails (an unlucky sample, ties) or a value is NaN; the caller then selects the usual way. A sample of every
/// stride-th value (at most 256) gives, by a small insertion selection, t_lo a little above the k_lo-th smallest
/// and t_hi a little below the k_hi-th largest; one branch-free pass collects the values <= t_lo and >= t_hi (a
/// few dozen each); when there are at least k_lo and k_hi of them, the order statistics are selected among those
/// alone, and they are exactly those of a selection over all (they are values).
std::optional<std::pair<double, double>> bracket_bounds(const double* p, std::size_t size, std::size_t k_lo,
                                                        std::size_t k_hi) {
  constexpr std::size_t kSample = 256, kMargin = 3, kBuf = 512, kChunk = 64, kPick = 16;
  const std::size_t stride = std::max<std::size_t>(16, size / kSample);
  const std::size_t m = std::min(size / stride, kSample);
  // Sample j sits near rank (j + 1) * stride of the whole; kMargin more samples make a shortfall rare.
  const std::size_t n_lo = std::min(m - 1, k_lo / stride + kMargin) + 1;  // t_lo: the n_lo-th smallest sample
  const std::size_t n_hi = std::min(m - 1, k_hi / stride + kMargin) + 1;  // t_hi: the n_hi-th largest sample
  if (n_lo > kPick || n_hi > kPick || n_lo + n_hi > m) return std::nullopt;
  std::array<double, kPick> lo{}, hi{};  // the n_lo smallest (ascending) and the n_hi largest (descending)
  std::size_t c_lo = 0, c_hi = 0;
  for (std::size_t j = 0; j < m; ++j) {
    const double x = p[j * stride];
    if (x != x) return std::nullopt;
    if (c_lo < n_lo || x < lo[c_lo - 1]) {
      std::size_t k = c_lo < n_lo ? c_lo++ : n_lo - 1;
      for (; k > 0 && lo[k - 1] > x; --k) lo[k] = lo[k - 1];
      lo[k] = x;
    }
    if (c_hi < n_hi || x > hi[c_hi - 1]) {
      std::size_t k = c_hi < n_hi ? c_hi++ : n_hi - 1;
      for (; k > 0 && hi[k - 1] < x; --k) hi[k] = hi[k - 1];
      hi[k] = x;
    }
  }
  const double t_lo = lo[n_lo - 1], t_hi = hi[n_hi - 1];
  if (!(t_lo < t_hi)) return std::nullopt;
  // The values <= t_lo and >= t_hi, in order, counting NaN on the way; the room left is checked after each chunk.
  std::array<double, kBuf + kChunk> below, above;
  std::size_t nb = 0, na = 0, nans = 0;
  if (!collect_tails(p, size, t_lo, t_hi, kChunk, kBuf, below.data(), above.data(), nb, na, nans)) return std::nullopt;
  if (nans > 0 || nb < k_lo || na < k_hi) return std::nullopt;
  std::nth_element(below.begin(), below.begin() + static_cast<std::ptrdiff_t>(k_lo - 1),
                   below.begin() + static_cast<std::ptrdiff_t>(nb));
  std::nth_element(above.begin(), above.begin() + static_cast<std::ptrdiff_t>(na - k_hi),
                   above.begin() + static_cast<std::ptrdiff_t>(na));
  return std::pair{below[k_lo - 1], above[na - k_hi]};
}

/// floor(.025 B) and ceil(.975 B) - 1, clamped to the values, as 1-based counts from each end.
std::pair<std::size_t, std::size_t> tail_counts(std::size_t size) {
  const double b = static_cast<double>(size);
  const auto lo_i = std::min(static_cast<std::size_t>(std::floor(0.025 * b)), size - 1);
  auto hi_i = static_cast<std::size_t>(std::ceil(0.975 * b));
  hi_i = hi_i == 0 ? 0 : std::min(hi_i - 1, size - 1);
  return {lo_i + 1, size - hi_i};
}

}  // namespace

std::pair<double, double> percentile_bounds(std::span<double> reps) {
  constexpr std::size_t kHeap = 128;
  // Most replicate sets (B >= 512, no NaN) are done by bracketing, which reads them without reordering.
  if (reps.size() >= 512) {
    const auto [k_lo, k_hi] = tail_counts(reps.size());
    if (k_lo <= kHeap && k_hi <= kHeap && k_lo + k_hi <= reps.size())
      if (const auto r = bracket_bounds(reps.data(), reps.size(), k_lo, k_hi)) return *r;
  }
  // NaN replicates (a statistic undefined on some resample) are left out; selection needs a strict weak order.
  const auto end = std::remove_if(reps.begin(), reps.end(), [](double v) { return std::isnan(v); });
  const auto size = static_cast<std::size_t>(end - reps.begin());
  if (size == 0) return {std::nan(""), std::nan("")};
  // Order statistics by selection (the full sort is not needed): the lo_i-th smallest is the largest of the k_lo
  // smallest, the hi_i-th the smallest of the k_hi largest.
  const auto [k_lo, k_hi] = tail_counts(size);
  const std::size_t lo_i = k_lo - 1, hi_i = size - k_hi;
  if (k_lo <= kHeap && k_hi <= kHeap && hi_i > lo_i) {
    // Both tails are short (2.5% of B): one pass keeping the k_lo smallest in a max-heap and the k_hi largest in a
    // min-heap, instead of two selections over all B. The order statistics are values, so they are exactly those
    // of the selections.
    std::array<double, kHeap> small{}, large{};
    std::size_t ns = 0, nl = 0;
    const auto greater = std::greater<double>();
    for (auto it = reps.begin(); it != end; ++it) {
      const double x = *it;
      if (ns < k_lo) {
        small[ns++] = x;
        std::push_heap(small.begin(), small.begin() + static_cast<std::ptrdiff_t>(ns));
      } else if (x < small[0]) {
        std::pop_heap(small.begin(), small.begin() + static_cast<std::ptrdiff_t>(ns));
        small[ns - 1] = x;
        std::push_heap(small.begin(), small.begin() + static_cast<std::ptrdiff_t>(ns));
      }
      if (nl < k_hi) {
        large[nl++] = x;
        std::push_heap(large.begin(), large.begin() + static_cast<std::ptrdiff_t>(nl), greater);
      } else if (x > large[0]) {
        std::pop_heap(large.begin(), large.begin() + static_cast<std::ptrdiff_t>(nl), greater);
        large[nl - 1] = x;
        std::push_heap(large.begin(), large.begin() + static_cast<std::ptrdiff_t>(nl), greater);
      }
    }
    return {small[0], large[0]};
  }
  const auto first = reps.begin();
  std::nth_element(first, first + static_cast<std::ptrdiff_t>(hi_i), end);
  const double hi = reps[hi_i];
  std::nth_element(first, first + static_cast<std::ptrdiff_t>(lo_i), first + static_cast<std::ptrdiff_t>(hi_i));
  return {reps[lo_i], hi};
}

std::pair<double, double> percentile_bounds(std::vector<double>& means) {
  means.erase(std::remove_if(means.begin(), means.end(), [](double v) { return std::isnan(v); }), means.end());
  return percentile_bounds(std::span<double>(means));
}

void detail::resample_counts_x4(Rng (&lanes)[4], std::uint32_t* const (&counts)[4], std::size_t n) {
  for (std::uint32_t* c : counts) std::fill(c, c + n, 0U);
  const auto hi = static_cast<std::int64_t>(n) - 1;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t a = lanes[0].uniform_int(0, hi), b = lanes[1].uniform_int(0, hi),
                       c = lanes[2].uniform_int(0, hi), d = lanes[3].uniform_int(0, hi);
    ++counts[0][static_cast<std::size_t>(a)];
    ++counts[1][static_cast<std::size_t>(b)];
    ++counts[2][static_cast<std::size_t>(c)];
    ++counts[3][static_cast<std::size_t>(d)];
  }
}

void resample_counts(Rng& rng, std::vector<std::uint32_t>& counts) {
  const auto n = static_cast<std::int64_t>(counts.size());
  std::fill(counts.begin(), counts.end(), 0U);
  for (std::int64_t i = 0; i < n; ++i) ++counts[static_cast<std::size_t>(rng.uniform_int(0, n - 1))];
}

Interval bootstrap_mean(std::span<const double> v, int resamples, std::uint64_t seed, std::string_view key) {
  Interval out;
  out.n = v.size();
  out.mean = mean(v);
  if (v.size() <= 1 || resamples < 1) {
    out.lo = out.hi = out.mean;
    return out;
  }
  const auto n = static_cast<std::int64_t>(v.size());
  // Every value the same bits (the framing study's metadata deltas are all exactly 0): every resample then adds the
  // same value n times in the same order, so every replicate is that one sum over n, whatever was drawn, and the
  // key's own stream need not be drawn at all.
  if (std::all_of(v.begin() + 1, v.end(), [&](double x) { return std::memcmp(&x, &v[0], sizeof x) == 0; })) {
    double s = 0;
    for (std::int64_t i = 0; i < n; ++i) s += v[0];
    const double m = s / static_cast<double>(n);
    if (std::isnan(m)) out.lo = out.hi = std::nan("");  // as percentile_bounds leaves a set of NaN replicates
    else out.lo = out.hi = m;
    return out;
  }
  Rng rng = Rng::keyed(seed, "bootstrap", key);
  std::vector<double> means(static_cast<std::size_t>(resamples));
  for (auto& m : means) {
    double s = 0;
    for (std::int64_t i = 0; i < n; ++i) s += rng.pick(v);
    m = s / static_cast<double>(n);
  }
  std::tie(out.lo, out.hi) = percentile_bounds(means);
  return out;
}

namespace {

using V4 = double __attribute__((vector_size(32)));

/// Columns u0 .. u0 + 4 NV of add_weighted_rows, the sums held in NV vector registers over all rows.
template <std::size_t NV>
__attribute__((always_inline)) inline void add_weighted_block(const std::uint32_t* __restrict rows,
                                                              const double* __restrict weights,
                                                              const double* __restrict x, std::size_t n,
                                                              std::size_t stride, std::size_t u0,
                                                              double* __restrict sums) {
  V4 acc[NV];
  for (std::size_t c = 0; c < NV; ++c) std::memcpy(&acc[c], sums + u0 + 4 * c, sizeof(V4));
  for (std::size_t k = 0; k < n; ++k) {
    const double w = weights[k];
    const V4 wv = {w, w, w, w};
    const double* __restrict row = x + rows[k] * stride + u0;
    for (std::size_t c = 0; c < NV; ++c) {
      V4 v;
      std::memcpy(&v, row + 4 * c, sizeof v);
      acc[c] += wv * v;
    }
  }
  for (std::size_t c = 0; c < NV; ++c) std::memcpy(sums + u0 + 4 * c, &acc[c], sizeof(V4));
}

}  // namespace

namespace detail {

/// sums[u] += counts[s] * x[s * stride + u] over the rows s with a count, in row order, for u < stride (a
/// multiple of 4; the padding columns are zero). Vectorised across columns only, in blocks of up to 32 columns
/// whose sums stay in registers over all rows, so each column's sum is taken in the same order on every machine:
/// the x86-64-v4 and AVX2 clones (chosen at load time where the CPU has them) and the baseline one give the same
/// bits, as the library does not contract a * b + c into an FMA (-ffp-contract=off).
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) void add_weighted_rows(
    const std::uint32_t* __restrict counts, const double* __restrict x, std::size_t n, std::size_t stride,
    double* __restrict sums) {
  // The drawn rows and their counts first, without branches (about a third of the rows are not drawn), so that
  // each block of columns walks the drawn rows alone.
  thread_local std::vector<std::uint32_t> rows_v;
  thread_local std::vector<double> weights_v;
  rows_v.resize(n);
  weights_v.resize(n);
  std::uint32_t* __restrict rows = rows_v.data();
  double* __restrict weights = weights_v.data();
  std::size_t drawn = 0;
  for (std::size_t s = 0; s < n; ++s) {
    rows[drawn] = static_cast<std::uint32_t>(s);
    weights[drawn] = static_cast<double>(counts[s]);
    drawn += counts[s] != 0 ? 1 : 0;
  }
  n = drawn;
  std::size_t u0 = 0;
  for (; u0 + 32 <= stride; u0 += 32) add_weighted_block<8>(rows, weights, x, n, stride, u0, sums);
  switch ((stride - u0) / 4) {
    case 7: add_weighted_block<7>(rows, weights, x, n, stride, u0, sums); break;
    case 6: add_weighted_block<6>(rows, weights, x, n, stride, u0, sums); break;
    case 5: add_weighted_block<5>(rows, weights, x, n, stride, u0, sums); break;
    case 4: add_weighted_block<4>(rows, weights, x, n, stride, u0, sums); break;
    case 3: add_weighted_block<3>(rows, weights, x, n, stride, u0, sums); break;
    case 2: add_weighted_block<2>(rows, weights, x, n, stride, u0, sums); break;
    case 1: add_weighted_block<1>(rows, weights, x, n, stride, u0, sums); break;
    default: break;
  }
}

}  // namespace detail

namespace {

/// The replicates of the columns `uniq` of a joint bootstrap (joint_bootstrap_means), column-major: uniq[u]'s B
/// replicates at [u * B, (u + 1) * B).
std::vector<double> replicates_of(std::span<const double> values, std::size_t columns,
                                  const std::vector<std::size_t>& uniq, int resamples, std::uint64_t seed,
                                  std::string_view key) {
  // Values with absent cells as 0, and the presence indicator, for the distinct columns: replicate sums and
  // counts are then two count-weighted row sums.
  // Rows padded to a multiple of 4 columns (zeros), for the vectorised accumulation.
  const std::size_t units = columns == 0 ? 0 : values.size() / columns;
  auto cell = [&](std::size_t s, std::size_t j) { return values[s * columns + j]; };
  const std::size_t m = uniq.size(), stride = (m + 3) / 4 * 4;
  std::vector<double> x(units * stride, 0.0), present(units * stride, 0.0);
  bool complete = true;
  for (std::size_t s = 0; s < units; ++s)
    for (std::size_t u = 0; u < m; ++u) {
      const double v = cell(s, uniq[u]);
      const bool ok = !std::isnan(v);
      x[s * stride + u] = ok ? v : 0.0;
      present[s * stride + u] = ok ? 1.0 : 0.0;
      complete = complete && ok;
    }
  // Replicates, column-major (a column's B replicates are contiguous, for the order statistics). Each resample's
  // multiset is drawn once and applied to every column; the sums run over units in a fixed order
  // (coefficient-wise, no blocked product), so the bits do not depend on the machine or the thread count. When
  // no cell is absent, every column's denominator is the number of draws, n, and is not accumulated.
  const auto b_count = static_cast<std::size_t>(resamples);
  std::vector<double> replicate(b_count * uniq.size());
  const std::uint64_t prefix = Rng::key_prefix(seed, "bootstrap-joint", key);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, b_count, 16), [&](const tbb::blocked_range<std::size_t>& r) {
    std::vector<std::uint32_t> counts(units), four(4 * units);
    std::vector<double> sums(stride), drawn(stride);
    for (std::size_t b = r.begin(); b != r.end(); ++b) {
      // Resample b's multiset: four resamples' streams drawn together where four are left in the range.
      const std::size_t lane = (b - r.begin()) % 4;
      if (lane == 0 && r.end() - b >= 4) {
        Rng lanes[4] = {Rng::keyed_at(prefix, b), Rng::keyed_at(prefix, b + 1), Rng::keyed_at(prefix, b + 2),
                        Rng::keyed_at(prefix, b + 3)};
        std::uint32_t* const out[4] = {four.data(), four.data() + units, four.data() + 2 * units,
                                       four.data() + 3 * units};
        detail::resample_counts_x4(lanes, out, units);
      }
      const std::uint32_t* drawn_counts = four.data() + lane * units;
      if (r.end() - (b - lane) < 4) {  // the range's last few, one at a time
        Rng rng = Rng::keyed_at(prefix, static_cast<std::uint64_t>(b));
        resample_counts(rng, counts);
        drawn_counts = counts.data();
      }
      std::fill(sums.begin(), sums.end(), 0.0);
      std::fill(drawn.begin(), drawn.end(), static_cast<double>(units));
      detail::add_weighted_rows(drawn_counts, x.data(), units, stride, sums.data());
      if (!complete) {
        std::fill(drawn.begin(), drawn.end(), 0.0);
        detail::add_weighted_rows(drawn_counts, present.data(), units, stride, drawn.data());
      }
      for (std::size_t u = 0; u < m; ++u)
        replicate[u * b_count + b] = drawn[u] > 0 ? sums[u] / drawn[u] : std::nan("");
    }
  });
  return replicate;
}

}  // namespace

std::vector<Interval> joint_bootstrap_means(std::span<const double> values, std::size_t columns, int resamples,
                                            std::uint64_t seed, std::string_view key) {
  const std::size_t units = columns == 0 ? 0 : values.size() / columns;
  std::vector<Interval> out(columns);
  if (columns == 0) return out;
  auto cell = [&](std::size_t s, std::size_t j) { return values[s * columns + j]; };
  for (std::size_t j = 0; j < columns; ++j) {
    Interval& i = out[j];
    double sum = 0;
    for (std::size_t s = 0; s < units; ++s) {
      const double v = cell(s, j);
      if (std::isnan(v)) continue;
      sum += v;
      ++i.n;
    }
    i.mean = i.n == 0 ? 0.0 : sum / static_cast<double>(i.n);
    i.lo = i.hi = i.mean;
  }
  if (resamples < 1 || units == 0) return out;
  // Columns that need an interval, each once: two columns with the same cells (bit for bit, absent cells alike)
  // have the same replicates under shared resamples, so the second copies the first's bounds. On the paper run
  // the BLUE-side metrics repeat across every condition of the same BLUE policy.
  auto column_hash = [&](std::size_t j) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (std::size_t s = 0; s < units; ++s) {
      const double v = cell(s, j);
      std::uint64_t bits = 0x7ff8dead00000000ULL;  // every NaN alike
      if (!std::isnan(v)) std::memcpy(&bits, &v, sizeof bits);
      h = (h ^ bits) * 0x100000001b3ULL;
    }
    return h;
  };
  auto same_cells = [&](std::size_t a, std::size_t b) {
    for (std::size_t s = 0; s < units; ++s) {
      const double x = cell(s, a), y = cell(s, b);
      if (std::isnan(x) != std::isnan(y) || (!std::isnan(x) && std::memcmp(&x, &y, sizeof x) != 0)) return false;
    }
    return true;
  };
  std::vector<std::size_t> uniq, copy_of(columns, columns);
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> by_hash;
  for (std::size_t j = 0; j < columns; ++j) {
    if (out[j].n <= 1) continue;
    auto& bucket = by_hash[column_hash(j)];
    for (std::size_t u : bucket)
      if (same_cells(uniq[u], j)) copy_of[j] = u;
    if (copy_of[j] == columns) {
      copy_of[j] = uniq.size();
      bucket.push_back(uniq.size());
      uniq.push_back(j);
    }
  }
  if (uniq.empty()) return out;
  std::vector<double> replicate = replicates_of(values, columns, uniq, resamples, seed, key);
  const auto b_count = static_cast<std::size_t>(resamples);
  std::vector<std::pair<double, double>> bounds(uniq.size());
  tbb::parallel_for(std::size_t{0}, uniq.size(), [&](std::size_t u) {
    bounds[u] = percentile_bounds(std::span<double>(replicate.data() + u * b_count, b_count));
  });
  for (std::size_t j = 0; j < columns; ++j)
    if (copy_of[j] < columns) std::tie(out[j].lo, out[j].hi) = bounds[copy_of[j]];
  return out;
}

Interval bootstrap_paired_difference(std::span<const double> a, std::span<const double> b, int resamples,
                                     std::uint64_t seed, std::string_view key) {
  std::vector<double> d(std::min(a.size(), b.size()));
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = a[i] - b[i];
  return bootstrap_mean(d, resamples, seed, key);
}

double sign_flip_p_value(std::span<const double> d, int resamples, std::uint64_t seed, std::string_view key) {
  const std::size_t n = d.size();
  double total = 0;
  for (double x : d) total += x;
  const double observed = std::abs(total);
  if (n == 0 || observed == 0.0) return 1.0;
  double scale = 0;
  for (double x : d) scale += std::abs(x);
  const double threshold = observed - 1e-12 * scale;  // sums equal up to rounding count as ties
  if (n <= kSignFlipExactMax) {
    // Exact: every sign vector, enumerated as the bits of a counter.
    const std::uint64_t count = std::uint64_t{1} << n;
    std::uint64_t extreme = 0;
    for (std::uint64_t mask = 0; mask < count; ++mask) {
      double s = 0;
      for (std::size_t i = 0; i < n; ++i) s += (mask >> i) & 1U ? -d[i] : d[i];
      extreme += std::abs(s) >= threshold ? 1 : 0;
    }
    return static_cast<double>(extreme) / static_cast<double>(count);
  }
  Rng rng = Rng::keyed(seed, "signflip", key);
  std::uint64_t extreme = 0;
  for (int b = 0; b < resamples; ++b) {
    double s = 0;
    std::uint64_t bits = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (i % 64 == 0) bits = rng.next_u64();
      s += (bits >> (i % 64)) & 1U ? -d[i] : d[i];
    }
    extreme += std::abs(s) >= threshold ? 1 : 0;
  }
  return (1.0 + static_cast<double>(extreme)) / (1.0 + static_cast<double>(std::max(resamples, 0)));
}

std::vector<double> holm_adjust(std::span<const double> p) {
  const std::size_t m = p.size();
  std::vector<std::size_t> order(m);
  for (std::size_t i = 0; i < m; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  std::vector<double> out(m);
  double running = 0;
  for (std::size_t r = 0; r < m; ++r) {
    const double adj = std::min(1.0, static_cast<double>(m - r) * p[order[r]]);
    running = std::max(running, adj);  // step-down: adjusted p-values never decrease with rank
    out[order[r]] = running;
  }
  return out;
}

}  // namespace advplan

namespace advplan {

std::vector<double> joint_bootstrap_replicates(std::span<const double> values, std::size_t columns, int resamples,
                                               std::uint64_t seed, std::string_view key) {
  if (columns == 0 || resamples < 1 || values.size() < columns) return {};
  std::vector<std::size_t> all(columns);
  for (std::size_t j = 0; j < columns; ++j) all[j] = j;
  return replicates_of(values, columns, all, resamples, seed, key);
}

}  // namespace advplan
