#pragma once
// Elementary functions whose results do not depend on the CPU (internal header; SLEEF stays out of the public
// ones). glibc's libm picks, at load time, an FMA build of exp, log, sin, cos, ... on CPUs that have FMA and an SSE2
// build elsewhere, and the two differ in the last bit for some arguments: a run on one machine would then not be
// byte-identical to the same run on another, nor a run whose MPI ranks sit on different machines to one process.
// SLEEF's "cinz" scalar functions are plain C compiled without FMA, so they give the same bits on every x86-64 CPU
// (tests/core/cross_cpu_test.cpp runs the CLI on emulated baseline and AVX2 CPUs). exp_n below uses SLEEF's vector cinz
// exp (SSE2 or AVX, chosen at run time), which gives the scalar function's bits in every width. Maximum error 1 ulp
// (u10), 0.5 ulp (u05) or 3.5 ulp (u35); sqrt needs none of this (IEEE 754 rounds it correctly everywhere).
#include <sleef.h>

#include <cstddef>

namespace advplan::det {

inline double exp(double x) { return Sleef_cinz_expd1_u10purec(x); }
inline double log(double x) { return Sleef_cinz_logd1_u10purec(x); }
inline double log2(double x) { return Sleef_cinz_log2d1_u10purec(x); }
inline double log1p(double x) { return Sleef_cinz_log1pd1_u10purec(x); }
inline double expm1(double x) { return Sleef_cinz_expm1d1_u10purec(x); }
inline double cos(double x) { return Sleef_cinz_cosd1_u10purec(x); }
inline double sin(double x) { return Sleef_cinz_sind1_u10purec(x); }
inline double asin(double x) { return Sleef_cinz_asind1_u10purec(x); }
inline double hypot(double x, double y) { return Sleef_cinz_hypotd1_u05purec(x, y); }

/// Within 3.5 ulp and about twice as fast: for Rng::normal's Box-Muller transform, which every sampled plan calls
/// once per category, where a few ulp of a normal deviate mean nothing.
inline double log_u35(double x) { return Sleef_cinz_logd1_u35purec(x); }
inline double cos_u35(double x) { return Sleef_cinz_cosd1_u35purec(x); }

}  // namespace advplan::det

namespace advplan::det {

/// out[i] = exp(x[i]) for i < n, the same bits as det::exp (SLEEF's cinz functions give the same results in every
/// vector width; a test compares them): four at a time where the CPU has AVX, else two (SSE2, every x86-64 CPU).
void exp_n(const double* x, std::size_t n, double* out);

/// out[i] = sqrt(-2 log_u35(u1[i])) * cos_u35(2 pi u2[i]) for i < n: Rng::normal's Box-Muller transform of its two
/// uniforms, with the same bits (SLEEF's vector cinz log and cos, as exp_n; a test compares them), so a caller can
/// draw the uniforms of several normals in Rng::normal's order and transform them together.
void box_muller_n(const double* u1, const double* u2, std::size_t n, double* out);

/// x[i] = exp(x[i]) in place for i < n, through Eigen's packet exp (its own polynomial on packets of two doubles,
/// compiled once for baseline x86-64, so the same bits on every CPU; not det::exp's bits). The simulator's
/// per-replication rates use it, as they have since the paper run. Eigen's public x.exp() hands an element past the
/// last whole packet to the C library's exp, which is CPU-dependent; so the tail goes through a padded packet, and
/// this is the one function in the tree that calls Eigen's internal packet API (docs/DECISIONS.md "Architecture").
void packet_exp_inplace(double* x, std::size_t n);

#if defined(__x86_64__)
namespace detail {
/// exp_n's and box_muller_n's two x86-64 paths, for the tests that compare each with the scalar functions (the
/// AVX ones need a CPU with AVX).
void exp_n_avx(const double* x, std::size_t n, double* out);
void exp_n_sse2(const double* x, std::size_t n, double* out);
void box_muller_n_avx(const double* u1, const double* u2, std::size_t n, double* out);
void box_muller_n_sse2(const double* u1, const double* u2, std::size_t n, double* out);
}  // namespace detail
#endif

}  // namespace advplan::det
