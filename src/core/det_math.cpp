#include "core/det_math.hpp"

#include <Eigen/Core>
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

namespace {

// One vector of logs of `a` and cosines of `t`, W lanes wide (SLEEF's vector cinz log and cos, as exp_n).
__attribute__((target("avx"))) void log_cos_4(const double* a, const double* t, double* l, double* c) {
  _mm256_storeu_pd(l, Sleef_cinz_logd4_u35avx(_mm256_loadu_pd(a)));
  _mm256_storeu_pd(c, Sleef_cinz_cosd4_u35avx(_mm256_loadu_pd(t)));
}
void log_cos_2(const double* a, const double* t, double* l, double* c) {
  _mm_storeu_pd(l, Sleef_cinz_logd2_u35sse2(_mm_loadu_pd(a)));
  _mm_storeu_pd(c, Sleef_cinz_cosd2_u35sse2(_mm_loadu_pd(t)));
}

// box_muller_n in blocks of W lanes, the logs and cosines of a block by LogCos; a short last block's unused lanes
// hold log(1) and cos(0). The angle 2 pi u2 and the product are formed in scalar double exactly as Rng::normal
// forms them; sqrt is correctly rounded in every width.
template <std::size_t W, void (*LogCos)(const double*, const double*, double*, double*)>
void box_muller_blocks(const double* u1, const double* u2, std::size_t n, double* out) {
  for (std::size_t i = 0; i < n; i += W) {
    double a[W], t[W], l[W], c[W];
    const std::size_t m = n - i < W ? n - i : W;
    for (std::size_t k = 0; k < W; ++k) {
      a[k] = k < m ? u1[i + k] : 1.0;
      t[k] = k < m ? 2.0 * std::numbers::pi * u2[i + k] : 0.0;
    }
    LogCos(a, t, l, c);
    for (std::size_t k = 0; k < m; ++k) out[i + k] = std::sqrt(-2.0 * l[k]) * c[k];
  }
}

}  // namespace

void box_muller_n_avx(const double* u1, const double* u2, std::size_t n, double* out) {
  box_muller_blocks<4, log_cos_4>(u1, u2, n, out);
}

void box_muller_n_sse2(const double* u1, const double* u2, std::size_t n, double* out) {
  box_muller_blocks<2, log_cos_2>(u1, u2, n, out);
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

void packet_exp_inplace(double* x, std::size_t n) {
  using Packet = Eigen::internal::packet_traits<double>::type;
  constexpr std::size_t kPacket = Eigen::internal::packet_traits<double>::size;
  std::size_t i = 0;
  for (; i + kPacket <= n; i += kPacket)
    Eigen::internal::pstoreu(x + i, Eigen::internal::pexp(Eigen::internal::ploadu<Packet>(x + i)));
  if (i < n) {  // the tail in a zero-padded packet: the same polynomial, never the C library's exp
    double tail[kPacket] = {};
    for (std::size_t k = i; k < n; ++k) tail[k - i] = x[k];
    Eigen::internal::pstoreu(tail, Eigen::internal::pexp(Eigen::internal::ploadu<Packet>(tail)));
    for (std::size_t k = i; k < n; ++k) x[k] = tail[k - i];
  }
}

}  // namespace advplan::det
