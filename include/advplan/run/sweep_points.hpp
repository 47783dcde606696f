#pragma once
// Sweep points (docs/CONFIG.md "sweep"): the settings a `sweep:` block may vary, the points' conditions, and the
// config a point runs under. A point changes only what its settings name; it plays on its base condition's keyed
// streams (the BLUE stream is keyed by the BLUE spec, the RED candidates by the BLUE plan, the wargame's noise by
// the scenario), so neighbouring points differ by the setting alone (common random numbers).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "advplan/run/config.hpp"

namespace advplan {

/// The most points a sweep may have, and the most swept settings.
inline constexpr std::size_t kMaxSweepPoints = 1024;
inline constexpr std::size_t kMaxSweepParams = 4;

/// The short name of a setting, as a point's label and sweep.csv name it: the path's last component ("lambda" for
/// policies.constraint.lambda, "noise" for simulator.noise, "k").
std::string setting_name(std::string_view path);
/// A setting's value as labels and sweep.csv write it: the shortest text that reads back to the same double.
std::string setting_value_text(double v);
/// "lambda=0.3, noise=0.1".
std::string settings_text(const std::vector<Setting>& settings);

/// What a setting reaches in a condition: its RED policy, its BLUE policy, or the wargame.
struct SettingReach {
  bool red = false, blue = false, sim = false;
  bool any() const { return red || blue || sim; }
};
/// Throws ConfigError naming `source` when `path` is not a sweepable setting (docs/CONFIG.md "sweep").
SettingReach setting_reach(std::string_view path, const Condition& c, const std::string& source);

/// The value a setting has in the config itself (for `k`, the condition's RED spec), when it has one: a point's
/// setting at this value changes nothing.
std::optional<double> config_value(const ExperimentConfig& cfg, const Condition& c, const std::string& path);

/// The config a sweep point runs under: `cfg` with each setting written in (k excepted: it is in the point's RED
/// spec). The values were checked when the config was read; policies.<name>.<param> is checked against the policy's
/// parameter spec when the point's policy is made.
ExperimentConfig with_settings(const ExperimentConfig& cfg, const std::vector<Setting>& settings);

/// The sweep's conditions (group grid), one per point in grid order: the base condition with the point's RED spec
/// (name@k when k is swept), label "<base> [name=value, ...]" and the point's settings.
std::vector<Condition> sweep_point_conditions(const ExperimentConfig& cfg);

/// The short name of an attribution part in labels: search, selector, proposal, revision, noise.
std::string attribution_part_name(std::string_view part);
/// The attribution study's conditions (group attribution; docs/METRICS.md "Attribution"), none when the study is
/// off: one per on/off combination of cfg.studies.attribution_parts in mask order (bit i set: part i on), BLUE
/// `council` with council.propose and council.revise, RED greedy@K or greedy@1 (response_search), constraint@... in
/// place of greedy (selector), the simulator's noise and step noise or 0 (simulator_noise); a part not listed stays
/// on. Labelled "attribution [search=1, selector=0, ...]" over the listed parts.
std::vector<Condition> attribution_conditions(const ExperimentConfig& cfg);

}  // namespace advplan
