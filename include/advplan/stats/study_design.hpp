#pragma once
// The study design of a paired comparison (docs/METRICS.md "Study design"): four nested variance components from a
// pilot (templates, scenarios, samples, replications), the minimum detectable effect of a design (n scenarios, K
// samples, R replications) and the cost-minimal design that reaches a target MDE, in closed form (checked against
// a brute-force grid by grid_design).

#include <cstddef>
#include <span>

#include "advplan/stats/variance_components.hpp"

namespace advplan {

/// The components of a paired difference measured per (scenario, sample) as the mean of R0 replications.
struct DesignComponents {
  VarianceComponents anova;  ///< the three-level ANOVA of the (scenario, sample) values
  double pilot_replications = 0;  ///< R0
  double between_templates = 0, between_scenarios = 0, between_samples = 0, between_replications = 0;
  bool truncated = false;  ///< some moment estimate was negative and set to 0
};

/// `y` one value per (scenario, sample): the mean over R0 replications; `replication_variance` each value's
/// within-sample variance of one replication's difference (0 for a metric the simulator does not draw). The
/// between-replications component is their mean; the between-samples component is MS_W − σ²_R / R0 (truncated
/// at 0); the two upper ones are nested_variance_components' (Searle's rule when unbalanced).
DesignComponents design_components(std::span<const double> y, std::span<const std::size_t> tmpl,
                                   std::span<const std::size_t> scenario, std::span<const double> replication_variance,
                                   double pilot_replications);

/// The costs of one scenario, one sample of a scenario (every condition's calls) and one replication of a sample.
struct DesignCosts {
  double scenario = 0, sample = 0, replication = 0;
};

struct DesignLimits {
  std::size_t max_scenarios = 1000000, max_samples = 64, max_replications = 10000;
};

struct Design {
  std::size_t n = 0, samples = 0, replications = 0;  ///< n = 0: no design within the limits reaches the target
  double variance = 0, mde = 0, cost = 0;
};

/// Var(d̄) = σ²_T/T + (σ²_S + σ²_K/K + σ²_R/(K R))/n with T the pilot's templates.
double design_variance(const DesignComponents& c, std::size_t n, std::size_t K, std::size_t R);
/// d*(n, α, power) · sqrt(n · Var(d̄)): the paired t-test's MDE (power.hpp) with the design's variance.
double design_mde(const DesignComponents& c, std::size_t n, std::size_t K, std::size_t R, double alpha, double power);
/// The MDE no n reaches: (z_{1−α/2} + z_power) · sqrt(σ²_T / T).
double design_mde_floor(const DesignComponents& c, double alpha, double power);
/// n · (c_S + K (c_K + R c_R)).
double design_cost(const DesignCosts& costs, std::size_t n, std::size_t K, std::size_t R);
/// The fewest scenarios (at least 2) whose MDE at (K, R) is at most `target`; 0 when max_scenarios do not.
std::size_t scenarios_for(const DesignComponents& c, std::size_t K, std::size_t R, double target, double alpha,
                          double power, std::size_t max_scenarios);

/// The continuous optimum K* = sqrt(σ²_K c_S / (σ²_S c_K)), R* = sqrt(σ²_R c_K / (σ²_K c_R)), with the conventions
/// of docs/METRICS.md "Study design" for zero costs and zero components, before clamping to the limits.
struct Allocation {
  double samples = 1, replications = 1;
};
Allocation closed_form_allocation(const DesignComponents& c, const DesignCosts& costs);

/// The cheapest of the integer neighbours of the closed-form allocation (clamped to the limits), each with its
/// fewest scenarios; ties to fewer n·K·R, then fewer K, then fewer R.
Design optimal_design(const DesignComponents& c, const DesignCosts& costs, double target, double alpha, double power,
                      const DesignLimits& limits);
/// The same (n, K, R) fixed at K and R.
Design design_at(const DesignComponents& c, const DesignCosts& costs, std::size_t K, std::size_t R, double target,
                 double alpha, double power, const DesignLimits& limits);
/// Brute force over every K ≤ max_samples and R ≤ max_replications, same tie rule: the check of optimal_design.
Design grid_design(const DesignComponents& c, const DesignCosts& costs, double target, double alpha, double power,
                   const DesignLimits& limits);

}  // namespace advplan
