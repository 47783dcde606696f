#include "core/det_math.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace advplan::det {

#if defined(__x86_64__)
namespace detail {

// sleef.h declares its AVX functions only when the whole file is built for AVX; this one is declared here, and it
// and its caller are built for AVX (a function attribute: GCC and Clang both take it).
extern "C" __attribute__((target("avx"))) __m256d Sleef_cinz_expd4_u10avx(__m256d);

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

}  // namespace detail
#endif

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
