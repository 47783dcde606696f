#include "advplan/stats/study_design.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "advplan/stats/power.hpp"

namespace advplan {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// sqrt(num / den) with num, den ≥ 0: +inf when only den is 0, and 0 whenever num is 0 (0/0 included).
double root_ratio(double num, double den) {
  if (!(num > 0)) return 0;
  if (!(den > 0)) return kInf;
  return std::sqrt(num / den);
}

double clamp_to(double x, std::size_t hi) { return std::clamp(x, 1.0, static_cast<double>(hi)); }

/// K* at a fixed R: the two-level optimum of σ²_S + (σ²_K + σ²_R/R)/K at cost c_S + K (c_K + R c_R).
double samples_given(const DesignComponents& c, const DesignCosts& k, double R) {
  return root_ratio((c.between_samples + c.between_replications / R) * k.scenario,
                    c.between_scenarios * (k.sample + R * k.replication));
}

/// R* at a fixed K: the two-level optimum of (σ²_S + σ²_K/K) + σ²_R/(K R) at cost (c_S + K c_K) + K R c_R.
double replications_given(const DesignComponents& c, const DesignCosts& k, double K) {
  return root_ratio(c.between_replications / K * (k.scenario + K * k.sample),
                    (c.between_scenarios + c.between_samples / K) * K * k.replication);
}

/// d*(n, α, power), remembered per thread: a pure function, and the searches of many (K, R) ask for the same n.
double effect_size(std::size_t n, double alpha, double power) {
  thread_local std::map<std::tuple<std::size_t, double, double>, double> memo;
  const auto key = std::make_tuple(n, alpha, power);
  if (const auto it = memo.find(key); it != memo.end()) return it->second;
  if (memo.size() > 100000) memo.clear();
  return memo[key] = detectable_effect_size(n, alpha, power);
}

/// m(n) = d*(n, α, power) · sqrt(n), the factor of sqrt(Var(d̄)) in the MDE.
double multiplier(std::size_t n, double alpha, double power) {
  return effect_size(n, alpha, power) * std::sqrt(static_cast<double>(n));
}

/// Whether `a` is cheaper than `b` (b.n == 0: no design yet), the tie rule of optimal_design.
bool better(const Design& a, const Design& b) {
  if (a.n == 0) return false;
  if (b.n == 0) return true;
  if (a.cost != b.cost) return a.cost < b.cost;
  const double wa = static_cast<double>(a.n) * static_cast<double>(a.samples) * static_cast<double>(a.replications);
  const double wb = static_cast<double>(b.n) * static_cast<double>(b.samples) * static_cast<double>(b.replications);
  return std::tie(wa, a.samples, a.replications) < std::tie(wb, b.samples, b.replications);
}

}  // namespace

DesignComponents design_components(std::span<const double> y, std::span<const std::size_t> tmpl,
                                   std::span<const std::size_t> scenario, std::span<const double> replication_variance,
                                   double pilot_replications) {
  DesignComponents c;
  c.anova = nested_variance_components(y, tmpl, scenario);
  c.pilot_replications = pilot_replications;
  double sum = 0;
  for (double v : replication_variance) sum += v;
  c.between_replications = replication_variance.empty() ? kNaN : sum / static_cast<double>(replication_variance.size());
  const double s2_k = c.anova.ms_within - c.between_replications / pilot_replications;
  c.truncated = c.anova.truncated || s2_k < 0;
  c.between_samples = s2_k < 0 ? 0.0 : s2_k;
  c.between_scenarios = c.anova.between_scenarios;
  c.between_templates = c.anova.between_templates;
  return c;
}

double design_variance(const DesignComponents& c, std::size_t n, std::size_t K, std::size_t R) {
  const double dn = static_cast<double>(n), dk = static_cast<double>(K), dr = static_cast<double>(R);
  const double per_scenario = c.between_scenarios + c.between_samples / dk + c.between_replications / (dk * dr);
  return c.between_templates / static_cast<double>(c.anova.templates) + per_scenario / dn;
}

double design_mde(const DesignComponents& c, std::size_t n, std::size_t K, std::size_t R, double alpha, double power) {
  if (n < 2 || K < 1 || R < 1) return kNaN;
  return effect_size(n, alpha, power) * std::sqrt(design_variance(c, n, K, R) * static_cast<double>(n));
}

double design_mde_floor(const DesignComponents& c, double alpha, double power) {
  // m(n) falls to z_{1−α/2} + z_power; at n = 10^8 it is within 10^-7 of it (relative).
  return multiplier(100000000, alpha, power) * std::sqrt(c.between_templates / static_cast<double>(c.anova.templates));
}

double design_cost(const DesignCosts& k, std::size_t n, std::size_t K, std::size_t R) {
  const double dk = static_cast<double>(K);
  return static_cast<double>(n) * (k.scenario + dk * (k.sample + static_cast<double>(R) * k.replication));
}

Allocation closed_form_allocation(const DesignComponents& c, const DesignCosts& costs) {
  Allocation a;
  a.samples = root_ratio(c.between_samples * costs.scenario, c.between_scenarios * costs.sample);
  a.replications = root_ratio(c.between_replications * costs.sample, c.between_samples * costs.replication);
  return a;
}

std::size_t scenarios_for(const DesignComponents& c, std::size_t K, std::size_t R, double target, double alpha,
                          double power, std::size_t max_scenarios) {
  if (!(target > 0) || max_scenarios < 2) return 0;
  const double floor_var = c.between_templates / static_cast<double>(c.anova.templates);
  const double per_scenario = design_variance(c, 1, K, R) - floor_var;
  const double m_inf = multiplier(100000000, alpha, power);
  const double room = (target / m_inf) * (target / m_inf) - floor_var;
  if (!(room > 0) || !std::isfinite(per_scenario)) return 0;
  // m(n) ≥ m_inf, so no n below per_scenario / room reaches the target: start there, walk down while the smaller
  // n still reaches it (m(n) can touch m_inf within rounding), else gallop up and bisect.
  const double start = std::ceil(per_scenario / room);
  if (!(start <= static_cast<double>(max_scenarios))) return 0;
  auto meets = [&](std::size_t n) { return design_mde(c, n, K, R, alpha, power) <= target; };
  std::size_t lo = std::max<std::size_t>(2, static_cast<std::size_t>(start));
  if (meets(lo)) {
    while (lo > 2 && meets(lo - 1)) --lo;
    return lo;
  }
  std::size_t step = 1, hi = lo;
  while (!meets(hi)) {  // invariant: lo fails
    lo = hi;
    if (hi >= max_scenarios) return 0;
    hi = std::min(max_scenarios, hi + step);
    step *= 2;
  }
  while (hi - lo > 1) {  // lo fails, hi meets
    const std::size_t mid = lo + (hi - lo) / 2;
    (meets(mid) ? hi : lo) = mid;
  }
  return hi;
}

Design design_at(const DesignComponents& c, const DesignCosts& costs, std::size_t K, std::size_t R, double target,
                 double alpha, double power, const DesignLimits& limits) {
  Design d;
  d.samples = K;
  d.replications = R;
  d.n = scenarios_for(c, K, R, target, alpha, power, limits.max_scenarios);
  if (d.n == 0) return d;
  d.variance = design_variance(c, d.n, K, R);
  d.mde = design_mde(c, d.n, K, R, alpha, power);
  d.cost = design_cost(costs, d.n, K, R);
  return d;
}

Design optimal_design(const DesignComponents& c, const DesignCosts& costs, double target, double alpha, double power,
                      const DesignLimits& limits) {
  const Allocation a = closed_form_allocation(c, costs);
  const double kmax = static_cast<double>(limits.max_samples), rmax = static_cast<double>(limits.max_replications);
  double K = a.samples, R = a.replications;
  // On the box's boundary the constrained coordinate is clamped and the other re-optimised at it: K first, then R
  // (and K again at the clamped R).
  if (!(K >= 1 && K <= kmax)) {
    K = clamp_to(K, limits.max_samples);
    R = replications_given(c, costs, K);
  }
  if (!(R >= 1 && R <= rmax)) {
    R = clamp_to(R, limits.max_replications);
    K = samples_given(c, costs, R);
  }
  K = clamp_to(K, limits.max_samples);
  R = clamp_to(R, limits.max_replications);
  Design best;
  for (double k : {std::floor(K), std::ceil(K)})
    for (double r : {std::floor(R), std::ceil(R)}) {
      const Design d = design_at(c, costs, static_cast<std::size_t>(k), static_cast<std::size_t>(r), target, alpha,
                                 power, limits);
      if (better(d, best)) best = d;
    }
  return best;
}

Design grid_design(const DesignComponents& c, const DesignCosts& costs, double target, double alpha, double power,
                   const DesignLimits& limits) {
  Design best;
  for (std::size_t K = 1; K <= limits.max_samples; ++K)
    for (std::size_t R = 1; R <= limits.max_replications; ++R) {
      const Design d = design_at(c, costs, K, R, target, alpha, power, limits);
      if (better(d, best)) best = d;
    }
  return best;
}

}  // namespace advplan
