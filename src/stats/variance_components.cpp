#include "advplan/stats/variance_components.hpp"

#include <cmath>
#include <limits>
#include <vector>

namespace advplan {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Counts and sums per scenario and per template, and each scenario's template.
struct Cells {
  std::vector<double> n_s, sum_s, n_t, sum_t;
  std::vector<std::size_t> t_of_s;
  double n = 0, sum = 0;
};

Cells cells_of(std::span<const double> y, std::span<const std::size_t> tmpl, std::span<const std::size_t> scenario) {
  Cells c;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const std::size_t s = scenario[i], t = tmpl[i];
    if (s >= c.n_s.size()) {
      c.n_s.resize(s + 1, 0);
      c.sum_s.resize(s + 1, 0);
      c.t_of_s.resize(s + 1, 0);
    }
    if (t >= c.n_t.size()) {
      c.n_t.resize(t + 1, 0);
      c.sum_t.resize(t + 1, 0);
    }
    c.n_s[s] += 1;
    c.sum_s[s] += y[i];
    c.t_of_s[s] = t;
    c.n_t[t] += 1;
    c.sum_t[t] += y[i];
    c.n += 1;
    c.sum += y[i];
  }
  return c;
}

/// Searle's coefficients of the expected mean squares of the unbalanced nested design.
void coefficients(const Cells& c, VarianceComponents& v) {
  std::vector<double> sq_in_t(c.n_t.size(), 0);  // sum over the template's scenarios of n_ts^2
  double sq_all = 0;
  for (std::size_t s = 0; s < c.n_s.size(); ++s) {
    sq_in_t[c.t_of_s[s]] += c.n_s[s] * c.n_s[s];
    sq_all += c.n_s[s] * c.n_s[s];
  }
  double a = 0, nt2 = 0;  // sum_t (sum_s n_ts^2) / n_t, sum_t n_t^2
  for (std::size_t t = 0; t < c.n_t.size(); ++t) {
    a += sq_in_t[t] / c.n_t[t];
    nt2 += c.n_t[t] * c.n_t[t];
  }
  const double T = static_cast<double>(v.templates), S = static_cast<double>(v.scenarios);
  v.k1 = (c.n - a) / (S - T);
  v.k2 = (a - sq_all / c.n) / (T - 1);
  v.k3 = (c.n - nt2 / c.n) / (T - 1);
}

}  // namespace

VarianceComponents nested_variance_components(std::span<const double> y, std::span<const std::size_t> tmpl,
                                              std::span<const std::size_t> scenario) {
  VarianceComponents v;
  const Cells c = cells_of(y, tmpl, scenario);
  v.templates = c.n_t.size();
  v.scenarios = c.n_s.size();
  v.values = y.size();
  v.mean = c.n > 0 ? c.sum / c.n : kNaN;
  double ss_t = 0, ss_s = 0, ss_w = 0;
  for (std::size_t t = 0; t < c.n_t.size(); ++t) ss_t += c.n_t[t] * std::pow(c.sum_t[t] / c.n_t[t] - v.mean, 2);
  for (std::size_t s = 0; s < c.n_s.size(); ++s)
    ss_s += c.n_s[s] * std::pow(c.sum_s[s] / c.n_s[s] - c.sum_t[c.t_of_s[s]] / c.n_t[c.t_of_s[s]], 2);
  for (std::size_t i = 0; i < y.size(); ++i) ss_w += std::pow(y[i] - c.sum_s[scenario[i]] / c.n_s[scenario[i]], 2);
  const double df_t = static_cast<double>(v.templates) - 1, df_s = static_cast<double>(v.scenarios - v.templates),
               df_w = c.n - static_cast<double>(v.scenarios);
  v.ms_template = df_t > 0 ? ss_t / df_t : kNaN;
  v.ms_scenario = df_s > 0 ? ss_s / df_s : kNaN;
  v.ms_within = df_w > 0 ? ss_w / df_w : kNaN;
  coefficients(c, v);
  auto clip = [&](double x) {
    if (x < 0) v.truncated = true;
    return x < 0 ? 0.0 : x;
  };
  // The moment equations solved as they stand, then each negative estimate set to 0.
  const double s2_s = (v.ms_scenario - v.ms_within) / v.k1;
  const double s2_t = (v.ms_template - v.ms_within - v.k2 * s2_s) / v.k3;
  v.within_scenario = v.ms_within;
  v.between_scenarios = clip(s2_s);
  v.between_templates = clip(s2_t);
  return v;
}

}  // namespace advplan
