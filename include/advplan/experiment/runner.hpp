#pragma once
// The experiment runner: `advplan run` and `advplan evaluate`. Scenarios are evaluated in parallel (TBB) and
// their rows collected by scenario index, so the traces are byte-identical at any thread count.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "advplan/experiment/config.hpp"
#include "advplan/policy/blue_policy.hpp"
#include "advplan/policy/red_policy.hpp"

namespace advplan {

struct RunOptions {
  std::string out_dir;
  int threads = 0;         ///< 0: all cores
  bool progress = true;    ///< progress line on stderr when it is a terminal
  bool studies = true;     ///< run the configured studies (advplan run); evaluate turns them off
  std::string command = "run";  ///< recorded in run_metadata.json
};

struct RunSummary {
  std::size_t scenarios = 0;
  std::size_t rows = 0;
  std::size_t failed_rows = 0;
  std::size_t scenarios_with_blue_plan = 0;  ///< scenarios where at least one non-reference BLUE plan was made
  double seconds = 0;
};

/// Everything a run uses, created before any work so bad policy names and parameters fail first.
struct RunPlan {
  const ExperimentConfig* cfg = nullptr;
  PolicyContext ctx;  ///< what the policies were created from (policy_context(*cfg))
  std::vector<Condition> conditions;
  std::map<std::string, std::unique_ptr<RedPolicy>> reds;
  std::map<std::string, std::unique_ptr<BluePolicy>> blues;
  double lambda = 0.7;  ///< the constraint-aware selector's lambda, used for the candidate diagnostics
  /// One lock per policy that declares ThreadSafety::none: its calls are serialised across scenario tasks.
  std::map<std::string, std::unique_ptr<std::mutex>> serial;
  /// The lock for "red:<spec>" or "blue:<spec>", or nullptr when the policy may be called concurrently.
  std::mutex* lock_for(const std::string& spec) const {
    auto it = serial.find(spec);
    return it == serial.end() ? nullptr : it->second.get();
  }
};

/// Creates every policy the conditions name. Throws PolicyError / ConfigError naming the config and the
/// condition.
RunPlan prepare_run(const ExperimentConfig& cfg, std::vector<Condition> conditions);

/// Runs and writes the run directory (docs/TRACES.md). Throws IoError when the directory cannot be written
/// (before any work), PolicyError / ConfigError on bad names. Files are written when complete, each to a
/// temporary name and renamed; run_metadata.json is written last.
RunSummary run_experiment(const RunPlan& plan, const RunOptions& opts);

}  // namespace advplan
