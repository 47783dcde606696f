#pragma once
// Policy-space response oracles with exact solves (`advplan psro`, docs/METRICS.md "PSRO"): start from a config's
// BLUE and RED populations, and each iteration solve the empirical meta-game exactly (GLPK rationals), ask a BLUE
// oracle for a plan set against RED's equilibrium mixture and a RED oracle for one against BLUE's, play their rows
// and columns with common random numbers, and record the exploitability of the equilibrium with a bootstrap
// interval. Each added policy is a replayable plan set ("plans:FILE", src/policy/plan_set_policy.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include "advplan/core/plan.hpp"
#include "advplan/core/scenario.hpp"
#include "advplan/metagame/metagame.hpp"
#include "advplan/policy/blue_policy.hpp"
#include "advplan/policy/red_policy.hpp"
#include "advplan/sim/wargame.hpp"

namespace advplan {
struct ExperimentConfig;
}

namespace advplan::metagame {

/// What the oracles read of a run: its settings, and the policies' context.
struct OracleSettings {
  Payoff payoff = Payoff::advantage;
  std::uint64_t run_seed = 0;
  QualityWeights quality;
  SimConfig sim;
  const PolicyContext* ctx = nullptr;
  int iteration = 0;        ///< names the oracles' keyed streams
  int blue_budget = 48;     ///< plans the BLUE local search evaluates per scenario (the seed plan included)
  int red_k = 64;           ///< candidates the RED oracle draws per scenario, split over BLUE's support
};

/// A BLUE plan and what a cell reads of it: quality, coherence, raw capability (as a run's per_scenario row).
struct ScoredBlue {
  Plan plan;
  double q = 0, D = 0, raw = 0;
};
ScoredBlue score_blue(Plan plan, const Scenario& sc, const QualityWeights& w);

/// BLUE's payoff in the cell (BLUE plan b, RED's chosen candidate r): the advantage (1 + q_B - q_R)/2, or the
/// simulator's BLUE win rate on the scenario's noise (common random numbers), as the run computes them.
double cell_payoff(const ScoredBlue& b, const RedCandidate& r, const Scenario& sc, const OracleSettings& s,
                   const SimNoise* noise);

/// f(P) = Σ_j y_j u(P, R_j(P)) over the support of y, R_j(P) RED policy j's answer to P on the "baseline" stream
/// (the support's samplers share one candidate cache); -inf when a support policy gives no answer.
double blue_value(const ScoredBlue& p, const Scenario& sc, const std::vector<const RedPolicy*>& reds,
                  const std::vector<double>& y, const OracleSettings& s, const SimNoise* noise);
/// Σ_b x_b u(B_b, C) over the BLUE plans of x's support, C scored against each (RED minimises it).
double red_value(const Plan& c, const Scenario& sc, const std::vector<const Plan*>& blues, const std::vector<double>& x,
                 const OracleSettings& s, const SimNoise* noise);

struct BlueResponse {
  Plan plan;
  double value = 0;       ///< its expected payoff against the mixture
  double seed_value = 0;  ///< the seed plan's
  int evaluations = 0;    ///< plans evaluated
  int moves = 0;          ///< improving moves taken
  std::string failure;    ///< "" when a plan was found
};
/// The BLUE oracle on one scenario: first-improvement-free steepest ascent from the scenario's first seed plan,
/// whose neighbours are the council's operators (one action of each proposer role, add_role_action; the
/// mitigations of each pressure, apply_mitigation), each from its own keyed stream; a move is taken only when it
/// raises Σ_j y_j u(P, R_j(P)) strictly, and the search stops after `blue_budget` evaluations or at a local optimum.
/// R_j(P) is RED policy j's answer to P on the run's "baseline" stream, as the run would play it.
BlueResponse blue_best_response(const Scenario& sc, const std::vector<const RedPolicy*>& reds,
                                const std::vector<double>& y, const OracleSettings& s, const SimNoise* noise);

struct RedResponseChoice {
  Plan plan;
  double value = 0;     ///< BLUE's expected payoff against it (RED minimises)
  int candidates = 0;   ///< valid candidates compared
  std::string failure;
};
/// The RED oracle on one scenario: greedy@red_k against BLUE's mixture. ceil(red_k / |support|) candidates are drawn
/// against each support plan (stream "psro/<iteration>/<i>"), pooled, and the one that minimises BLUE's expected
/// payoff Σ_i x_i u(B_i, C) (C scored against each B_i) is chosen, ties to the first drawn.
RedResponseChoice red_best_response(const Scenario& sc, const std::vector<const Plan*>& blues,
                                    const std::vector<double>& x, const OracleSettings& s, const SimNoise* noise);

/// max_i (A y)_i - min_j (x'A)_j of the mixtures (x, y) zero-padded to A's size: BLUE's gain from its best reply
/// plus RED's, 0 exactly when (x, y) is an equilibrium of A.
double nash_conv(const IntMatrix& a, const std::vector<double>& x, const std::vector<double>& y);

struct PsroOptions {
  std::string out_dir;
  int iterations = 10;
  double epsilon = -1;  ///< stop once an iteration's exploitability is at most epsilon (negative: never)
  Payoff payoff = Payoff::advantage;
  int resamples = 1000;
  int threads = 0;
  bool force = false, resume = false;
  int blue_budget = 48;
  int red_k = 64;
  /// "local" (the built-in local search) or "exec:CMD"; "greedy" (the built-in greedy@red_k) or "exec:CMD".
  std::string blue_oracle = "local", red_oracle = "greedy";
  std::string progress_mode = "auto";
};

/// One iteration: the population it started from, its equilibrium, and the best responses' gains.
struct PsroRow {
  int iteration = 0;
  std::size_t blue_size = 0, red_size = 0;
  Fraction value;
  /// nash_conv in the grown matrix, and its bootstrap interval: NaN (undefined) when the grown game has one scenario
  /// or --resamples is 0
  double exploitability = 0, lo = 0, hi = 0;
  double blue_gain = 0, red_gain = 0;         ///< each side's part of it
  std::string blue_added, red_added;
  double blue_predicted = 0, red_predicted = 0;  ///< the oracles' own estimate of the responses' mean value
  std::size_t scenarios = 0;
};

/// The interval [lo, hi] as PSRO prints it (4 decimals), or "[n/a]" when it is undefined (docs/METRICS.md "PSRO").
std::string interval_text(double lo, double hi);

/// Runs (or resumes) PSRO into opt.out_dir; returns every iteration's row. Throws ConfigError / IoError naming the
/// file and field on bad input, and when a resumed directory was made with other settings.
std::vector<PsroRow> run_psro(const ExperimentConfig& cfg, const PsroOptions& opt);

}  // namespace advplan::metagame
