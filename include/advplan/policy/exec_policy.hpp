#pragma once
// The external-process planning policy `exec:CMD` (docs/POLICIES.md): the command is started once per run and
// spoken to in JSON lines, one request per scenario ({"request_id", "side", "rng_seed", "scenario"}) and one
// response ({"request_id", "plan"}). Every plan goes through the same parser and validator as any other plan;
// whatever the program does (garbage, a wrong id, silence, exit, crash) becomes a contract failure with its
// reason, and the program is restarted within the ExecConfig budget.
#include <atomic>
#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "advplan/policy/policy_settings.hpp"
#include "advplan/io/process_pool.hpp"
#include "advplan/policy/blue_policy.hpp"

namespace advplan {

class ExecPolicy final : public BluePolicy {
 public:
  static PolicyInfo static_info();
  /// `spec_text` is the full "exec:CMD" text (a pair of quotes around CMD is dropped). Starts cfg.workers
  /// processes; throws PolicyError naming the command when it is empty or cannot start.
  ExecPolicy(std::string spec_text, Params params, const ExecConfig& cfg);
  std::string label() const override { return spec_; }
  /// The command run under /bin/sh -c.
  const std::string& command() const { return pool_->options().command; }
  /// Restarts performed so far (for run metadata).
  int restarts() const { return pool_->restarts(); }
  std::map<std::string, double> run_counters() const override { return {{"restarts", restarts()}}; }

 protected:
  /// Thread safety: constant; the pool hands each concurrent call its own process.
  BluePlanResult do_plan(const Scenario& sc, Rng& rng) const override;
  /// The replan request with a request_id (docs/POLICIES.md "6. Replanning"); the reply is {"request_id", "plan"}.
  ReplanResult do_replan(const Scenario& sc, const nlohmann::json& request) const override;

 private:
  std::string spec_;
  std::unique_ptr<ProcessPool> pool_;
  mutable std::atomic<std::uint64_t> next_request_id_{1};
  /// Replanning's own processes (replans: true only; docs/POLICIES.md "6. Replanning"), so that its failures never
  /// count against planning's restart limit.
  std::unique_ptr<ProcessPool> replan_pool_;
};

/// An exec: program spoken to outside the BLUE and RED policy interfaces, with the same process pool, envelope
/// check and plan validation (PSRO's exec: oracles, docs/METRICS.md "PSRO"). Thread safety: constant.
class ExecSession {
 public:
  /// Starts cfg.workers processes of "exec:CMD"; throws PolicyError naming the command as ExecPolicy does.
  ExecSession(const std::string& spec_text, const ExecConfig& cfg);
  ~ExecSession();
  /// Sends `request` with its request_id set to the next id and returns the plan of the reply, validated as a plan
  /// of `side` in `sc`; nullopt and `failure` ("exec: ...") otherwise. The exchange is appended to `transcript`.
  std::optional<Plan> exchange(nlohmann::json request, const Scenario& sc, Side side, std::string& failure,
                               Transcript& transcript) const;

 private:
  std::unique_ptr<ProcessPool> pool_;
  mutable std::atomic<std::uint64_t> next_request_id_{1};
};

/// Protocol check of one response line to request `id`: "" and `out` set when it is a JSON object (nested at
/// most untrusted::kMaxJsonDepth levels) carrying that request_id; else the failure sentence, after which the
/// program's output can no longer be matched to requests and it is restarted. Never throws.
std::string check_exec_envelope(const std::string& line, std::uint64_t id, nlohmann::json& out);
/// The plan of a response that passed check_exec_envelope, parsed and validated against `sc`, or the
/// scenario's failure ("exec: plan invalid: ...", "exec: policy reported an error: ..."). Never throws.
BluePlanResult exec_plan_from_response(const nlohmann::json& response, const Scenario& sc);

/// The command of an "exec:CMD" spec: the text after the colon, without one pair of surrounding quotes.
std::string exec_command_of(const std::string& spec_text);

}  // namespace advplan
