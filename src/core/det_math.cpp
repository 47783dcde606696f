#include "core/det_math.hpp"

#include <cmath>
#include <numbers>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace advplan::det {

#if defined(__x86_64__)
namespace detail {

// sleef.h declares its AVX functions only when the whole file is built for AVX; this one is declared here, and it
// and its caller are built for AVX (a function attribute: GCC and Clang both take it).
extern "C" __attribute__((target("avx"))) __m256d Sleef_cinz_expd4_u10avx(__m256d);
extern "C" __attribute__((target("avx"))) __m256d Sleef_cinz_logd4_u35avx(__m256d);
extern "C" __attribute__((target("avx"))) __m256d Sleef_cinz_cosd4_u35avx(__m256d);

__attribute__((target("avx"))) void exp_n_avx(const double* x, std::size_t n, double* out) {
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) _mm256_storeu_pd(out + i, Sleef_cinz_expd4_u10avx(_mm256_loadu_pd(x + i)));
  if (i < n) {
    double in[4] = {0, 0, 0, 0}, res[4];
    for (std::size_t k = i; k < n; ++k) in[k - i] = x[k];
    _mm256_storeu_pd(res, Sleef_cinz_expd4_u10avx(_mm256_loadu_pd(in)));
    for (std::size_t k = i; k < n; ++k) out[k] = res[k - i];
  }
}

void exp_n_sse2(const double* x, std::size_t n, double* out) {
  std::size_t i = 0;
  for (; i + 2 <= n; i += 2) _mm_storeu_pd(out + i, Sleef_cinz_expd2_u10sse2(_mm_loadu_pd(x + i)));
  if (i < n) out[i] = exp(x[i]);
}

// The angle 2 pi u2 and the product are formed in scalar double exactly as Rng::normal forms them; sqrt is
// correctly rounded in every width.
__attribute__((target("avx"))) void box_muller_n_avx(const double* u1, const double* u2, std::size_t n, double* out) {
  for (std::size_t i = 0; i < n; i += 4) {
    double a[4] = {1, 1, 1, 1}, t[4] = {0, 0, 0, 0}, l[4], c[4];
    const std::size_t m = n - i < 4 ? n - i : 4;
    for (std::size_t k = 0; k < m; ++k) {
      a[k] = u1[i + k];
      t[k] = 2.0 * std::numbers::pi * u2[i + k];
    }
    _mm256_storeu_pd(l, Sleef_cinz_logd4_u35avx(_mm256_loadu_pd(a)));
    _mm256_storeu_pd(c, Sleef_cinz_cosd4_u35avx(_mm256_loadu_pd(t)));
    for (std::size_t k = 0; k < m; ++k) out[i + k] = std::sqrt(-2.0 * l[k]) * c[k];
  }
}

void box_muller_n_sse2(const double* u1, const double* u2, std::size_t n, double* out) {
  for (std::size_t i = 0; i < n; i += 2) {
    double a[2] = {1, 1}, t[2] = {0, 0}, l[2], c[2];
    const std::size_t m = n - i < 2 ? n - i : 2;
    for (std::size_t k = 0; k < m; ++k) {
      a[k] = u1[i + k];
      t[k] = 2.0 * std::numbers::pi * u2[i + k];
    }
    _mm_storeu_pd(l, Sleef_cinz_logd2_u35sse2(_mm_loadu_pd(a)));
    _mm_storeu_pd(c, Sleef_cinz_cosd2_u35sse2(_mm_loadu_pd(t)));
    for (std::size_t k = 0; k < m; ++k) out[i + k] = std::sqrt(-2.0 * l[k]) * c[k];
  }
}

}  // namespace detail
#endif

void box_muller_n(const double* u1, const double* u2, std::size_t n, double* out) {
#if defined(__x86_64__)
  static const bool avx = __builtin_cpu_supports("avx");
  if (avx) detail::box_muller_n_avx(u1, u2, n, out);
  else detail::box_muller_n_sse2(u1, u2, n, out);
#else
  for (std::size_t i = 0; i < n; ++i) out[i] = std::sqrt(-2.0 * log_u35(u1[i])) * cos_u35(2.0 * std::numbers::pi * u2[i]);
#endif
}

void exp_n(const double* x, std::size_t n, double* out) {
#if defined(__x86_64__)
  static const bool avx = __builtin_cpu_supports("avx");
  if (avx) detail::exp_n_avx(x, n, out);
  else detail::exp_n_sse2(x, n, out);
#else
  for (std::size_t i = 0; i < n; ++i) out[i] = exp(x[i]);
#endif
}

}  // namespace advplan::det
