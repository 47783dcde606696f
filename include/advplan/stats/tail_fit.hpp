#pragma once
// Extreme-value tail fits (docs/METRICS.md "Budget extrapolation"): the generalized Pareto distribution (GPD) by
// maximum likelihood on the exceedances over a threshold, and the tail model built from it, the empirical
// distribution of the draws below the threshold joined to the fitted GPD above, with the expected maximum of k
// draws and the quantiles of that maximum. Everything here is deterministic: no random numbers, fixed grids,
// iteration caps and stopping tests on IEEE values, and SLEEF's elementary functions (core/det_math.hpp).
#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace advplan {

/// A GPD fit to exceedances y_i >= 0: H(y) = 1 - (1 + xi y / sigma)^(-1/xi) (1 - exp(-y / sigma) at xi = 0).
struct GpdFit {
  double xi = 0, sigma = 0;
  double loglik = 0;  ///< the log-likelihood at (xi, sigma)
  bool ok = false;    ///< false when the exceedances cannot be fitted (fewer than 2, or all zero, or not finite)
};

/// The shape's search range: the MLE is constrained to kGpdXiMin <= xi <= kGpdXiMax. Below xi = -1 the likelihood
/// is unbounded (the density grows without bound at the endpoint), so -1 is the usual limit of the MLE.
inline constexpr double kGpdXiMin = -1.0;
inline constexpr double kGpdXiMax = 2.0;

/// The GPD log-likelihood of exceedances y at (xi, sigma): -m log sigma - (1 + 1/xi) sum log(1 + xi y_i / sigma)
/// (-m log sigma - sum y_i / sigma at xi = 0); -inf when sigma <= 0 or some 1 + xi y_i / sigma <= 0.
double gpd_loglik(std::span<const double> y, double xi, double sigma);

/// The maximum-likelihood GPD fit of y (all >= 0) with xi in [kGpdXiMin, kGpdXiMax], through Grimshaw's profile
/// likelihood in theta = xi / sigma: a grid of 241 shapes (each theta by a safeguarded Newton iteration), then
/// Brent's search between the grid neighbours of each interior local maximum, the largest winning
/// (docs/METRICS.md "Budget extrapolation").
GpdFit fit_gpd(std::span<const double> y);

/// The penalised maximum-likelihood GPD fit of Coles and Dixon (1999): l(xi, sigma) - lambda (1 / (1 + xi) - 1)
/// for xi < 0 (no penalty for xi >= 0; alpha = 1), which keeps a fit to few exceedances away from xi = -1, where the
/// plain likelihood is governed by the largest exceedance alone. xi on the grid -1 + 0.0125 j (j = 1 .. 240), the
/// scale of each by its score equation (a safeguarded Newton iteration), then Brent's refinement of each interior
/// local maximum.
/// lambda = 0 is the plain maximum likelihood on that profile. GpdFit::loglik is the unpenalised log-likelihood.
GpdFit fit_gpd_penalised(std::span<const double> y, double lambda);

/// The threshold rule: m = min(n - 1, max(min_exceedances, ceil(2 sqrt(n)))) exceedances of the n valid draws
/// (the m largest; the threshold u is the (m+1)-th largest draw). Fewer than min_draws valid draws, or a GPD fit
/// that fails, fall back to the empirical distribution.
struct TailRule {
  std::size_t min_exceedances = 8;
  std::size_t min_draws = 10;
  /// The Coles-Dixon penalty lambda of the tail's GPD fit (fit_gpd_penalised); 0: the plain MLE (fit_gpd).
  double penalty = 1.0;
};

/// The exceedance count m the rule gives for n valid draws (0 when n < min_draws: the empirical fallback).
std::size_t tail_exceedances(std::size_t n, const TailRule& rule = {});

enum class TailMethod { gpd, empirical };

/// The distribution of one draw: with probability p0 = (drawn - n) / drawn an invalid draw (below every valid
/// one), else a valid draw from F_v: the empirical distribution of the n valid draws below the threshold u, and
/// 1 - (m / n) S(x - u) from u up, S the fitted GPD's survival function. The support is clamped to [lo, hi]: mass
/// above hi sits at hi.
struct TailModel {
  std::vector<double> sorted;  ///< the valid draws, ascending
  std::size_t drawn = 0;       ///< every draw, valid or not (>= sorted.size())
  double lo = 0, hi = 1;       ///< the support's bounds (q and pressure lie in [0, 1])
  TailMethod method = TailMethod::empirical;
  std::size_t exceedances = 0;  ///< m (0 for the empirical fallback)
  double threshold = 0;         ///< u (the largest draw for the empirical fallback)
  GpdFit gpd;                   ///< the fit (gpd.ok false for the empirical fallback)

  /// The upper end of the support: min(hi, u - sigma / xi) when xi < 0, hi when xi >= 0; the largest draw for the
  /// empirical fallback.
  double endpoint() const;
  /// P(one draw <= x).
  double cdf(double x) const;
  /// E[max of k draws | at least one is valid], k >= 1 (a greedy@k response exists only when one is):
  /// lo + integral over [lo, hi] of 1 - G_k(x), G_k(x) = (F(x)^k - p0^k) / (1 - p0^k). Exact on the empirical part;
  /// composite Simpson (512 subintervals, in r with x = end - (end - u) r^2) on the GPD part. k may be real, >= 1.
  double expected_max(double k) const;
  /// The p-quantile of the max of k draws given at least one valid: G_k^-1(p), p in (0, 1).
  double max_quantile(double k, double p) const;
};

/// E[M_k] of one tail model at many k, bit for bit TailModel::expected_max(k): the parts of its sum that do not
/// depend on k (the model's log(p0), each empirical step's width and log1p(-t_i), each Simpson node's log1p(-t) and
/// r) are computed once, so that each k costs one expm1 per step and node instead of an exp, two log1p and an expm1.
class ExpectedMaxCurve {
 public:
  explicit ExpectedMaxCurve(const TailModel& model);
  double operator()(double k) const;

 private:
  /// One term's 1 - (1 - t)^k: 0 when t <= 0, 1 when t >= 1, else -expm1(k log1p(-t)) with log1p(-t) stored.
  struct Term {
    double log1m_t = 0;  ///< log1p(-t)
    double scale = 0;    ///< the step's width, or the node's r
    signed char kind = 0;  ///< -1: t <= 0, 1: t >= 1, 0: between
  };
  double one_minus_pow(const Term& term, double k) const;
  double first_ = 0;               ///< x_(1)
  double log_p0_ = 0;              ///< log(p0) when p0 > 0
  bool has_p0_ = false;
  std::vector<Term> steps_;        ///< the empirical steps of positive width, in order
  std::vector<Term> nodes_;        ///< the Simpson nodes r = i / 512, i = 0 .. 512; empty without a GPD part
  double len_ = 0;                 ///< x_F - u
};

/// Fits the tail model of `draws` (the valid draws, any order; NaN is not allowed) out of `drawn` draws.
/// Throws std::invalid_argument when a draw is not finite, lies outside [lo, hi], or when drawn < draws.size() or
/// there is no draw.
TailModel fit_tail(std::span<const double> draws, std::size_t drawn, double lo = 0, double hi = 1,
                   const TailRule& rule = {});

}  // namespace advplan
