#pragma once
// Anytime-valid inference for a mean of bounded values (docs/METRICS.md "Anytime-valid stopping"): the predictable
// plug-in empirical-Bernstein confidence sequence of Waudby-Smith and Ramdas (2023, Theorem 2), with its
// bets tuned once to a fixed level so that its p-value has a closed form, and Holm's step-down over a family of
// such p-values.

#include <cstddef>
#include <utility>
#include <vector>

namespace advplan {

/// One stream of values in [lo, hi], tested for "mean = null" (null inside [lo, hi]), values added in order.
class ConfidenceSequence {
 public:
  /// `tune_alpha`: the level the bets lambda_t are tuned for (any level in (0, 1) gives valid inference).
  ConfidenceSequence(double lo, double hi, double null_value, double tune_alpha);
  void add(double x);
  std::size_t size() const { return t_; }
  /// The anytime-valid p-value of "mean = null" after the values so far: min over looks of
  /// min(1, 2 exp(sum v_i psi(lambda_i) - |sum lambda_i (x_i - null)|)), x rescaled to [0, 1].
  double p_value() const { return p_min_; }
  /// The (1 - alpha) confidence sequence at this look, intersected with every earlier look's, in the values'
  /// units ({lo, hi} before the first value).
  std::pair<double, double> interval(double alpha) const;

 private:
  double lo_, hi_, null_, log_tune_;
  std::size_t t_ = 0;
  double sum_x_ = 0, sum_dev2_ = 0, mu_prev_ = 0.5, var_prev_ = 0.25;
  double sum_lambda_ = 0, sum_lambda_x_ = 0, sum_penalty_ = 0;
  double p_min_ = 1;
  struct Look {
    double sum_lambda, sum_lambda_x, sum_penalty;
  };
  std::vector<Look> looks_;  ///< the sums after each value, to intersect the sequence over looks
};

/// Holm's step-down over anytime-valid p-values: which are rejected at family level alpha.
std::vector<bool> holm_rejections(const std::vector<double>& p, double alpha);

}  // namespace advplan
