#include "advplan/run/trace_schema.hpp"


namespace advplan::schema {

const std::vector<std::string>& scenarios() {
  static const std::vector<std::string> c{"scenario_id", "template",    "seed",           "terrain_family",
                                          "framing",     "blue_assets", "red_assets",     "blue_seed_plans",
                                          "terrain_mobility", "terrain_visibility", "terrain_exposure", "blue_objective"};
  return c;
}

const std::vector<std::string>& per_scenario() {
  static const std::vector<std::string> c{
      "scenario_id",     "template",          "terrain_family",     "framing",          "condition",
      "condition_group", "blue_policy",     "red_policy",        "k",                  "status",           "failure_reason",
      "blue_plan_id",    "red_plan_id",       "blue_quality",       "blue_e",           "blue_c",
      "blue_r",          "blue_coherence",    "red_quality",        "red_coherence",    "advantage",
      "nash_gap",        "blue_win_rate",     "blue_final_strength", "red_final_strength", "diversity",
      "quality_spread",  "pareto_count",      "changed_choice",     "quality_regret",   "structural_gain",
      "blue_O",          "blue_PV",           "blue_W",             "red_pressure",     "red_pressure_category",
      "candidates_valid", "candidates_dropped", "contract_parsed",  "contract_repaired", "contract_failed",
      "contract_retries", "prompt_tokens",    "completion_tokens",
      "blue_raw_capability", "red_raw_capability", "blue_effective_power", "red_effective_power"};
  return c;
}

const std::vector<std::string>& candidates() {
  static const std::vector<std::string> c{"scenario_id", "condition",       "k",          "index",
                                          "plan_id",     "quality",         "coherence",  "pressure",
                                          "pressure_category", "on_frontier", "selected_greedy", "selected_constraint",
                                          "selected",    "categories",      "cost",       "raw_capability"};
  return c;
}

const std::vector<std::string>& bootstrap_summary() {
  static const std::vector<std::string> c{"scope", "condition", "metric", "n", "mean", "ci_lo", "ci_hi",
                                          "resamples", "seed"};
  return c;
}

const std::vector<std::string>& budget_curve() {
  static const std::vector<std::string> c{"k",           "n",              "advantage",       "advantage_lo",
                                          "advantage_hi", "red_quality",   "red_quality_lo",  "red_quality_hi",
                                          "blue_win_rate", "blue_win_rate_lo", "blue_win_rate_hi", "pareto_count",
                                          "pareto_count_lo", "pareto_count_hi", "diversity", "diversity_lo",
                                          "diversity_hi"};
  return c;
}

const std::vector<std::string>& terrain_summary() {
  static const std::vector<std::string> c{"terrain_family", "condition",     "n",
                                          "advantage",      "advantage_lo",  "advantage_hi",
                                          "blue_win_rate",  "blue_win_rate_lo", "blue_win_rate_hi",
                                          "red_quality",    "blue_quality"};
  return c;
}

const std::vector<std::string>& geo_moves() {
  static const std::vector<std::string> h{"scenario_id", "condition", "side",  "plan_id",  "action_id", "asset",  "target",
                                          "tool",        "status",    "length_km", "hours", "exposure", "reason"};
  return h;
}

const std::vector<std::string>& summarised_metrics() {
  static const std::vector<std::string> c{"blue_quality",   "red_quality",    "blue_coherence", "red_coherence",
                                          "advantage",      "nash_gap",       "blue_win_rate",  "diversity",
                                          "quality_spread", "pareto_count",   "changed_choice", "quality_regret",
                                          "structural_gain", "red_pressure",  "blue_O",         "blue_PV",
                                          "blue_W"};
  return c;
}

}  // namespace advplan::schema
