#pragma once
// Variance components of a three-level nested design (docs/METRICS.md "Variance components"): values y in
// scenarios nested in templates, several values (samples) per scenario, by exact ANOVA moment estimators with
// Searle's coefficients for unbalanced data. The study design of issue 49 builds on it.

#include <cstddef>
#include <span>

namespace advplan {

struct VarianceComponents {
  std::size_t templates = 0, scenarios = 0, values = 0;
  double mean = 0;
  double ms_template = 0, ms_scenario = 0, ms_within = 0;  ///< mean squares (NaN where the df is 0)
  double k1 = 0, k2 = 0, k3 = 0;  ///< E[MS_S] = s2_w + k1 s2_s; E[MS_T] = s2_w + k2 s2_s + k3 s2_t
  double between_templates = 0, between_scenarios = 0, within_scenario = 0;  ///< truncated at 0
  bool truncated = false;  ///< some moment estimate was negative and set to 0
};

/// `y` with each value's template and scenario index (scenarios numbered across templates; a scenario's values
/// all in one template). NaN components where the design cannot identify them (one template, no scenario with
/// two values, ...).
VarianceComponents nested_variance_components(std::span<const double> y, std::span<const std::size_t> tmpl,
                                              std::span<const std::size_t> scenario);

}  // namespace advplan
