#include "advplan/stats/confidence_sequence.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/det_math.hpp"

namespace advplan {

namespace {

constexpr double kLambdaCap = 0.5;  // c in Waudby-Smith and Ramdas's lambda_t = min(..., c)

/// psi_E(lambda) = (-log(1 - lambda) - lambda) / 4.
double psi(double lambda) { return (-det::log1p(-lambda) - lambda) / 4; }

}  // namespace

ConfidenceSequence::ConfidenceSequence(double lo, double hi, double null_value, double tune_alpha)
    : lo_(lo), hi_(hi), null_((null_value - lo) / (hi - lo)), log_tune_(det::log(2 / tune_alpha)) {}

void ConfidenceSequence::add(double x) {
  const double y = std::clamp((x - lo_) / (hi_ - lo_), 0.0, 1.0);
  ++t_;
  const auto t = static_cast<double>(t_);
  // The bet is predictable: it reads only the values before this one (mu_prev_, var_prev_ after t - 1 values).
  const double lambda = std::min(std::sqrt(2 * log_tune_ / (var_prev_ * t * det::log1p(t))), kLambdaCap);
  const double v = 4 * (y - mu_prev_) * (y - mu_prev_);
  sum_lambda_ += lambda;
  sum_lambda_x_ += lambda * y;
  sum_penalty_ += v * psi(lambda);
  looks_.push_back({sum_lambda_, sum_lambda_x_, sum_penalty_});
  // The plug-in mean and variance after t values: (1/2 + sum x) / (t + 1), (1/4 + sum (x_i - mu_i)^2) / (t + 1).
  sum_x_ += y;
  const double mu = (0.5 + sum_x_) / (t + 1);
  sum_dev2_ += (y - mu) * (y - mu);
  mu_prev_ = mu;
  var_prev_ = (0.25 + sum_dev2_) / (t + 1);
  const double z = std::abs(sum_lambda_x_ - null_ * sum_lambda_);
  p_min_ = std::min(p_min_, std::min(1.0, 2 * det::exp(sum_penalty_ - z)));
}

std::pair<double, double> ConfidenceSequence::interval(double alpha) const {
  double lo = 0, hi = 1;
  for (const Look& l : looks_) {
    const double center = l.sum_lambda_x / l.sum_lambda;
    const double radius = (det::log(2 / alpha) + l.sum_penalty) / l.sum_lambda;
    lo = std::max(lo, center - radius);
    hi = std::min(hi, center + radius);
  }
  if (lo > hi) lo = hi = std::numeric_limits<double>::quiet_NaN();  // an empty intersection (probability <= alpha)
  return {lo_ + lo * (hi_ - lo_), lo_ + hi * (hi_ - lo_)};
}

std::vector<bool> holm_rejections(const std::vector<double>& p, double alpha) {
  std::vector<std::size_t> order(p.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  std::vector<bool> out(p.size(), false);
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (!(p[order[i]] <= alpha / static_cast<double>(p.size() - i))) break;
    out[order[i]] = true;
  }
  return out;
}

}  // namespace advplan
