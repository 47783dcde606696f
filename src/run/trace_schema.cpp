#include "advplan/run/trace_schema.hpp"

#include <algorithm>

#include <fmt/format.h>

#include <cmath>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/io/csv.hpp"

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

namespace {
std::vector<std::string> with_sample(const std::vector<std::string>& header) {
  std::vector<std::string> h = header;
  h.insert(std::find(h.begin(), h.end(), "condition") + 1, "sample");
  return h;
}
std::size_t sample_index(const std::vector<std::string>& header) {
  return static_cast<std::size_t>(std::find(header.begin(), header.end(), "sample") - header.begin());
}
}  // namespace

const std::vector<std::string>& per_scenario_sampled() {
  static const std::vector<std::string> c = with_sample(per_scenario());
  return c;
}
const std::vector<std::string>& candidates_sampled() {
  static const std::vector<std::string> c = with_sample(candidates());
  return c;
}
std::size_t sample_column_per_scenario() { return sample_index(per_scenario_sampled()); }
std::size_t sample_column_candidates() { return sample_index(candidates_sampled()); }

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

const std::vector<std::string>& engagements() {
  static const std::vector<std::string> h{"scenario_id", "condition",  "replication", "start_step", "end_step",
                                          "blue_assets", "red_assets", "where",       "blue_share", "red_share",
                                          "blue_before", "blue_after", "red_before",  "red_after"};
  return h;
}

const std::vector<std::string>& replications() {
  static const std::vector<std::string> h{"scenario_id",     "condition",      "replications", "blue_wins",
                                          "blue_won",        "mean_blue_loss", "mean_red_loss", "mean_steps",
                                          "branch_choices"};
  return h;
}

const std::vector<std::string>& replans() {
  static const std::vector<std::string> h{"scenario_id", "condition", "side",   "policy", "replication",
                                          "step",        "at",        "status", "reason", "chain",
                                          "plan"};
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

const std::vector<ColumnRange>& per_scenario_ranges() {
  static const std::vector<ColumnRange> r{
      {"k", 1, 1024, true},              {"sample", 0, 63, true},
      {"blue_quality", 0, 1, false},     {"blue_e", 0, 1, false},          {"blue_c", 0, 1, false},
      {"blue_r", 0, 1, false},           {"blue_coherence", 0, 1, false},  {"red_quality", 0, 1, false},
      {"red_coherence", 0, 1, false},    {"advantage", 0, 1, false},       {"nash_gap", 0, 1, false},
      {"blue_win_rate", 0, 1, false},    {"blue_final_strength", 0, 1, false},
      {"red_final_strength", 0, 1, false}, {"diversity", 0, 1, false},    {"quality_spread", 0, 1, false},
      {"pareto_count", 0, 1024, true},   {"changed_choice", 0, 1, true},   {"quality_regret", 0, 1, false},
      {"structural_gain", 0, 1, false},  {"blue_O", 0, 1, false},          {"blue_PV", 0, 1, false},
      {"blue_W", 0, 1, false},           {"red_pressure", 0, 1, false},    {"candidates_valid", 0, 1024, true},
      {"candidates_dropped", 0, 1024, true}, {"contract_parsed", 0, 1e9, true}, {"contract_repaired", 0, 1e9, true},
      {"contract_failed", 0, 1e9, true}, {"contract_retries", 0, 1e9, true}, {"prompt_tokens", 0, 2147483647, true},
      {"completion_tokens", 0, 2147483647, true}, {"blue_raw_capability", 0, 1e12, false},
      {"red_raw_capability", 0, 1e12, false}, {"blue_effective_power", 0, 1e12, false},
      {"red_effective_power", 0, 1e12, false}};
  return r;
}

const std::vector<ColumnRange>& candidates_ranges() {
  static const std::vector<ColumnRange> r{
      {"k", 1, 1024, true},           {"sample", 0, 63, true},         {"index", 0, 1023, true},        {"quality", 0, 1, false},
      {"coherence", 0, 1, false},     {"pressure", 0, 1, false},       {"on_frontier", 0, 1, true},
      {"selected_greedy", 0, 1, true}, {"selected_constraint", 0, 1, true}, {"selected", 0, 1, true},
      {"cost", 0, 1, false},          {"raw_capability", 0, 1e12, false}};
  return r;
}

void check_ranges(const io::CsvTable& t, const std::vector<ColumnRange>& ranges) {
  constexpr double kSlack = 1e-9;
  for (const auto& r : ranges) {
    if (!t.has_col(r.column)) continue;
    const std::size_t c = t.col(r.column);
    for (std::size_t i = 0; i < t.size(); ++i) {
      const std::string& cell = t.rows()[i][c];
      if (cell.empty()) continue;
      const double v = t.real(i, c);  // throws on text that is not a number, and on 1e400
      if (std::isfinite(v) && v >= r.lo - kSlack && v <= r.hi + kSlack && (!r.integer || v == std::floor(v))) continue;
      throw CsvError(fmt::format("{}: line {}: column '{}' is {}, outside its documented range [{}, {}]{}", t.source(),
                                 i + 2, r.column, untrusted::excerpt(cell, 40), r.lo, r.hi,
                                 r.integer ? " of whole numbers" : ""));
    }
  }
}

io::CsvTable read_per_scenario(const std::string& path) {
  io::CsvTable t = io::CsvTable::read(path);
  if (t.header() != per_scenario() && t.header() != per_scenario_sampled()) {
    std::string got;
    for (const auto& h : t.header()) got += (got.empty() ? "" : ",") + h;
    throw CsvError(fmt::format("{}: unexpected columns: found '{}', which is neither the header of a run of one sample "
                               "nor that of a run of several (docs/TRACES.md)",
                               path, got));
  }
  check_ranges(t, per_scenario_ranges());
  return t;
}

}  // namespace advplan::schema
