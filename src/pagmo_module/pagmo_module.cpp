// libadvplan_pagmo.so: the two pagmo2 routines the frontier analysis uses (non-dominated sorting for 3 or more
// objectives, exact hypervolume), behind a C interface. libadvplan loads it with dlopen on first use
// (src/metrics/frontier.cpp), because loading libpagmo runs its static initialisers, about 10 ms of CPU, in every
// process that links it, and most runs never call either routine (docs/DECISIONS.md "Speed").
#include <pagmo/utils/hypervolume.hpp>
#include <pagmo/utils/multi_objective.hpp>

#include <cstddef>
#include <cstring>
#include <exception>
#include <vector>

namespace {

std::vector<pagmo::vector_double> points_of(const double* v, std::size_t n, std::size_t dim) {
  std::vector<pagmo::vector_double> pts;
  pts.reserve(n);
  for (std::size_t i = 0; i < n; ++i) pts.emplace_back(v + i * dim, v + (i + 1) * dim);
  return pts;
}

int fail(const std::exception& e, char* err, std::size_t err_len) {
  if (err_len > 0) {
    std::strncpy(err, e.what(), err_len - 1);
    err[err_len - 1] = '\0';
  }
  return 1;
}

}  // namespace

extern "C" {

/// Fast non-dominated sorting of n points of `dim` objectives (row-major, n >= 2): the 0-based front of each
/// point into rank_out[n]. 0 on success; 1 with a message in err (at most err_len bytes) when pagmo throws.
__attribute__((visibility("default"))) int advplan_pagmo_fronts(const double* v, std::size_t n, std::size_t dim,
                                                                 unsigned long long* rank_out, char* err,
                                                                 std::size_t err_len) {
  try {
    const auto fnds = pagmo::fast_non_dominated_sorting(points_of(v, n, dim));
    const auto& r = std::get<3>(fnds);
    for (std::size_t k = 0; k < n; ++k) rank_out[k] = r[k];
    return 0;
  } catch (const std::exception& e) {
    return fail(e, err, err_len);
  }
}

/// The exact hypervolume of n points (n >= 1) against `reference` (dim values), into *out. 0 on success, 1 with
/// a message when pagmo throws.
__attribute__((visibility("default"))) int advplan_pagmo_hypervolume(const double* v, std::size_t n, std::size_t dim,
                                                                      const double* reference, double* out, char* err,
                                                                      std::size_t err_len) {
  try {
    const pagmo::hypervolume hv(points_of(v, n, dim), true);
    *out = hv.compute(pagmo::vector_double(reference, reference + dim));
    return 0;
  } catch (const std::exception& e) {
    return fail(e, err, err_len);
  }
}

}  // extern "C"
