#pragma once
// Power and the minimum detectable effect of a paired comparison (docs/METRICS.md "Minimum detectable effect").

#include <cstddef>
#include <span>

namespace advplan {

/// Power of the two-sided one-sample t-test at level `alpha` with n observations against a standardised effect
/// d = mean / sd: P(|T| > t_{1-alpha/2, n-1}) for T noncentral t with n - 1 degrees of freedom and noncentrality
/// d * sqrt(n). The same quantity as statsmodels' TTestPower().power(d, n, alpha). NaN when n < 2.
double paired_t_power(double effect_size, std::size_t n, double alpha);

/// The standardised effect d >= 0 at which paired_t_power(d, n, alpha) equals `power` (in (alpha, 1)): the
/// bracket [hi/2, hi] with hi the first power of two whose power reaches the target, then bisection until the
/// midpoint is an endpoint (at most 200 steps); the upper end is returned. NaN when n < 2 or power is not in
/// (alpha, 1).
double detectable_effect_size(std::size_t n, double alpha, double power);

/// The minimum detectable effect of paired differences `d` in their own units: detectable_effect_size(n, alpha,
/// power) times the differences' sample standard deviation (n - 1 denominator). NaN when fewer than two.
double minimum_detectable_effect(std::span<const double> d, double alpha, double power);

}  // namespace advplan
