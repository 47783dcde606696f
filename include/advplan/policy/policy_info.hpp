#pragma once
// Static description of a policy plug-in (after OpenSpiel's GameType): short name, side, whether it
// samples k candidates, its thread safety, and a parameter spec with defaults and ranges.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "advplan/core/vocabulary.hpp"

namespace advplan {

/// How a policy object may be shared across tasks (after pagmo's thread_safety):
/// constant: one object may be called concurrently; none: the runner gives each task its own object.
enum class ThreadSafety { none, constant };

struct ParamSpec {
  std::string name;
  double default_value = 0;
  double lo = 0, hi = 1;
  std::string description;
};

/// A trace file a policy adds to the run directory beside the standard ones (the council's council_trace.csv):
/// its name relative to the run directory and its columns.
struct TraceFile {
  std::string name;
  std::vector<std::string> header;
};

struct PolicyInfo {
  std::string short_name;
  Side side = Side::Red;
  bool samples_k = false;  ///< accepts "@k"
  int default_k = 1;
  ThreadSafety thread_safety = ThreadSafety::constant;
  std::vector<ParamSpec> params;
  std::string description;
  std::vector<TraceFile> traces;  ///< extra trace files (BLUE policies; see BluePolicy::trace_rows)
  bool reproducible = true;       ///< false for live models: a server decides, so reruns may differ
  /// true when the policy's answers come from outside advplan (a model's endpoint, an external program): its
  /// requests and replies are then recorded in the run's transcripts.jsonl (docs/TRACES.md), given in
  /// RedResponse::transcript or BluePlanResult::transcript.
  bool external = false;
  std::string argument;           ///< what follows "name:" in a spec ("COMMAND", "MODEL", "ROLE"); "" for none
  /// false when the policy's answer never depends on Scenario::framing (the label alone: framing_mode metadata).
  /// The framing study then takes a metadata arm's outcome from its neutral arm instead of replaying it. The
  /// safe default is true: a prompt, a command or a plug-in may read the label. tests/studies/studies_test.cpp checks
  /// every built-in policy that declares false.
  bool reads_framing = true;
};

/// Effective parameters: every spec'd parameter, defaulted where not given.
using Params = std::map<std::string, double>;

/// A policy named in a config or on the command line: "greedy@8" -> {name "greedy", k 8}.
struct PolicySpec {
  std::string text;
  std::string name;
  std::optional<int> k;
};

/// Parses "name" or "name@k". Throws PolicyError ("k must be at least 1 ...") for k < 1 or a non-integer k.
PolicySpec parse_policy_spec(std::string_view text);

/// Checks `given` against info.params: unknown keys and out-of-range values throw PolicyError naming the key
/// and the valid ones; returns the effective parameters with defaults filled in. `where` names the source
/// (e.g. "configs/experiments/paper.yaml: policies.constraint").
Params resolve_params(const PolicyInfo& info, const std::map<std::string, double>& given, std::string_view where);

/// resolve_params over the config's `policies.<info.short_name>` section (empty when absent); `source` is the
/// config file named in errors.
Params params_from_config(const PolicyInfo& info,
                          const std::map<std::string, std::map<std::string, double>>& policy_params,
                          std::string_view source);

}  // namespace advplan
