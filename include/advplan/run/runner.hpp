#pragma once
// The experiment runner: `advplan run` and `advplan evaluate`. Scenarios are evaluated in parallel (TBB) and
// their rows streamed to disk in scenario order through a bounded reorder window, so the traces are
// byte-identical at any thread count and memory does not grow with the corpus (docs/TRACES.md "Run directory").
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "advplan/core/error.hpp"
#include "advplan/run/config.hpp"
#include "advplan/run/observer.hpp"
#include "advplan/llm/suspension.hpp"
#include "advplan/policy/blue_policy.hpp"
#include "advplan/policy/red_policy.hpp"

namespace advplan {

/// What the external policies' calls of a run cost (docs/LLM.md "Costs and limits"), by (role, policy, model).
/// prompt_tokens counts every input token; cached_tokens and cache_write_tokens are the parts of them read from and
/// written to the provider's prompt cache.
struct ModelUsage {
  std::string role, policy, model;
  std::uint64_t calls = 0, prompt_tokens = 0, completion_tokens = 0;
  std::uint64_t cached_tokens = 0, cache_write_tokens = 0;
  bool batch = false;            ///< calls answered through a batch API (priced at llm.batch_discount); a key field
  std::uint64_t deferred = 0;    ///< calls that wait in a batch (advplan run --batch): not made, not priced
};
/// Adds `u` to the entry of its (role, policy, model, batch) in `total`, appending one when there is none.
void add_usage(std::vector<ModelUsage>& total, const ModelUsage& u);
/// Adds one call of `role` `policy` that came back as `reply`; a count the server did not report adds nothing.
void add_call_usage(std::vector<ModelUsage>& total, const char* role, const std::string& policy, const struct Completion& reply);
/// The dollars `u` cost under llm.prices (docs/LLM.md "Costs and limits"): uncached input at input_per_mtok, cached
/// input at input_cached_per_mtok, cache writes at cache_write_per_mtok, output at output_per_mtok, all times
/// llm.batch_discount for batch calls; nullopt when its model has no price.
std::optional<double> cost_usd(const ModelUsage& u, const struct LlmConfig& llm);
/// One line on what the external policies' calls took (docs/LLM.md "Costs and limits"), e.g. "model calls: 40
/// (blue llm:gpt 40); 1200 prompt + 300 completion tokens; $0.0042 under llm.prices"; empty without calls. Calls
/// without a model (exec: programs) cost nothing; a model without a price makes the cost unknown, naming it.
std::string usage_summary(const std::vector<ModelUsage>& usage, const struct LlmConfig& llm);

struct RunOptions {
  std::string out_dir;
  int threads = 0;         ///< 0: all cores
  bool progress = true;    ///< false: no progress at all (as progress_mode none)
  /// auto (a redrawn line on a terminal, periodic plain lines otherwise), tty, plain or none: "auto" etc.
  std::string progress_mode = "auto";
  double progress_interval_s = 10.0;  ///< seconds between plain progress lines
  /// How the summaries are computed: "bootstrap" (in memory, docs/METRICS.md "Statistics"), "streaming" (one
  /// pass over per_scenario.csv, normal-approximation intervals, no studies or tables: docs/RESULTS.md), or
  /// "auto" (streaming above kStreamingSummaryRows ok rows).
  std::string summary = "auto";
  bool studies = true;     ///< whether the run's analyses include the studies (recorded in run_metadata.json)
  /// The analyses that take part in the run (observer.hpp), called in this order; the runner names none of them.
  /// pipeline/standard_run.hpp gives the ones `advplan run` and `advplan evaluate` use.
  RunObservers observers;
  std::string command = "run";  ///< recorded in run_metadata.json
  /// An existing non-empty output directory is refused unless `force` (clear it first) or `resume` (continue
  /// the interrupted run in it from its last complete scenario; the config must be the same).
  bool force = false;
  bool resume = false;
  /// Called with the run directory after the traces, summaries and the observers' files are written and before the
  /// MANIFEST, to add files of the command's own (evaluate's summary.md).
  std::function<void(const std::string& dir)> before_manifest;
  /// Scenarios between journal entries (checkpoints a --resume continues from); 0: every 200 ms or 4 MiB.
  std::size_t checkpoint_every = 0;
  /// A shard (`--shard i/N`, shard_count > 0): this process runs the contiguous block
  /// [total * i / N, total * (i + 1) / N) of the corpus and writes its traces (the observers' included) only;
  /// merge_shards combines the N shard directories into the run a single process writes.
  std::size_t shard_index = 0;
  std::size_t shard_count = 0;
  /// --max-tokens / --max-cost: this invocation stops, resumably, after the scenario whose calls take the external
  /// policies' tokens (prompt + completion) or their cost under llm.prices past the limit. 0: no limit.
  std::uint64_t max_tokens = 0;
  double max_cost_usd = 0;
  /// Early stopping (`evaluate --stop-when-decided`): asked in corpus order from the in-order stage after each
  /// kept scenario (its outcome), and when a run resumes, once before anything else (`outcome` null, `kept_rows`
  /// the text of per_scenario.csv, header and rows, of the `done` scenarios it already has). Once it
  /// returns true no further scenario is started or kept, and the run finishes on the corpus prefix kept so far
  /// as if that were the corpus. The answer must depend on the corpus-ordered rows only (determinism).
  struct StopCheck {
    std::size_t done = 0;
    const struct ScenarioOutcome* outcome = nullptr;
    std::string kept_rows;
  };
  std::function<bool(const StopCheck&)> stop_when;
  /// Fields added to the run key (what a resumed run must share), e.g. the stopping rule.
  std::vector<std::pair<std::string, std::string>> key_extra;
};

/// Thrown by run_experiment when --max-tokens or --max-cost stopped it: every scenario up to the one that crossed
/// the limit is on disk with its journal entry, so `--resume` (with a higher limit, or none) continues the run.
struct RunLimitReached : Error {
  using Error::Error;
};

/// Thrown by run_experiment in batch mode (llm.mode: batch, docs/LLM.md "Batch") when calls wait in the run's batch
/// wave: the scenarios before the first that waits are on disk with their journal entry, and the wave (the context's
/// BatchWave) holds the requests; once they are answered into the completion cache, `--resume` continues.
struct BatchWaiting : Error {
  using Error::Error;
};

struct RunSummary {
  std::size_t scenarios = 0;
  std::size_t rows = 0;
  std::size_t failed_rows = 0;
  std::size_t scenarios_with_blue_plan = 0;  ///< scenarios where at least one non-reference BLUE plan was made
  std::size_t resumed_from = 0;  ///< scenarios already complete when a --resume run started
  std::string first_failure;     ///< the failure_reason of the first failed row ("" when none failed)
  bool already_complete = false;  ///< --resume found a complete run: nothing was done
  bool stopped = false;  ///< RunOptions::stop_when stopped the run before the end of its corpus (scenarios: played)
  bool streamed_summaries = false;  ///< the summaries were streamed; no observer derived files
  double seconds = 0;
  /// Wall seconds per phase, in order (scenarios, summaries, each observer by name, manifest), for run_metadata.json.
  std::vector<std::pair<std::string, double>> phase_seconds;
  /// The external policies' calls made by this invocation (a resumed run's earlier ones are not counted again).
  std::vector<ModelUsage> usage;
};

/// A call to a policy that declares ThreadSafety::none: holds the policy's lock for the call, and pins the call to its
/// thread (NoSuspendScope), since a std::mutex must be released by the thread that took it. Nothing for a policy that
/// may be called concurrently.
class SerialCall {
 public:
  explicit SerialCall(std::mutex* m) {
    if (m == nullptr) return;
    lock_ = std::unique_lock(*m);
    pinned_.emplace();
  }

 private:
  std::unique_lock<std::mutex> lock_;
  std::optional<NoSuspendScope> pinned_;
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
  /// Held around every call to the policy "red:<spec>" or "blue:<spec>" from a scenario task.
  SerialCall serialise(const std::string& spec) const { return SerialCall(lock_for(spec)); }

  /// How one condition is bound to its policies, settings and wargame (parallel to `conditions`). A condition
  /// without settings uses reds[c.red], blues[c.blue], `ctx`, cfg->sim and `lambda`. A sweep point whose settings
  /// reach a side (setting_reach) has that side's policy made from the point's own config, under the key
  /// "<spec> [<settings>]" in point_reds / point_blues; its streams stay keyed by the spec (common random numbers).
  struct Binding {
    std::string red_key, blue_key;
    int point = -1;        ///< index into point_cfgs and point_ctxs, or -1 for the run's own
    std::size_t sim = 0;   ///< index into sims
    double lambda = 0.7;   ///< the constraint-aware λ of the candidate diagnostics under the condition's settings
    /// A later sweep point has this condition's RED and BLUE keys: its RED response is kept for that point.
    bool keep_response = false;
  };
  std::vector<Binding> bindings;
  std::vector<std::unique_ptr<ExperimentConfig>> point_cfgs;
  std::vector<std::unique_ptr<PolicyContext>> point_ctxs;
  std::map<std::string, std::unique_ptr<RedPolicy>> point_reds;
  std::map<std::string, std::unique_ptr<BluePolicy>> point_blues;
  std::vector<SimConfig> sims;  ///< the distinct simulator settings; sims[0] is cfg->sim

  const Binding& binding(const Condition& c) const;
  const RedPolicy& red(const Condition& c) const;
  const BluePolicy& blue(const Condition& c) const;
  const PolicyContext& ctx_of(const Condition& c) const;
};

/// Creates every policy the conditions name. Throws PolicyError / ConfigError naming the config and the
/// condition.
RunPlan prepare_run(const ExperimentConfig& cfg, std::vector<Condition> conditions);

/// Runs and writes the run directory (docs/TRACES.md), calling opts.observers as observer.hpp says. Throws
/// IoError when the directory cannot be written or is not empty (before any work), PolicyError / ConfigError on
/// bad names, ConfigError when --resume meets a different config. Rows stream to .advplan-work/ with a journal of
/// complete scenarios; when every scenario is done, the traces move into place, the summaries are computed from
/// the written CSVs, the observers write their files, and MANIFEST and run_metadata.json are written last.
RunSummary run_experiment(const RunPlan& plan, const RunOptions& opts);

/// The shard directories' recorded run key (run_metadata.json "run_key") and shard index, checked by the caller.
/// merge_shards concatenates their trace files in the given order (shard 0 first) into opts.out_dir and writes
/// the summaries, the observers' files, MANIFEST and run_metadata.json, byte-identical to a single-process run.
/// Throws CsvError naming a shard's file when one is unreadable.
RunSummary merge_shards(const RunPlan& plan, const std::vector<std::string>& shard_dirs, const RunOptions& opts);

/// The run key of a plan (what a resumed run and the shards of a merge must share), without the shard index.
std::vector<std::pair<std::string, std::string>> run_identity(const RunPlan& plan, std::size_t shard_count);

}  // namespace advplan
