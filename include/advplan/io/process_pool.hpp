#pragma once
// A pool of long-lived child processes spoken to in lines over stdin/stdout (the exec: planning policy's
// transport, docs/POLICIES.md). Each request goes to one idle worker, waits for one response line under a
// timeout and a size cap, and a worker that misbehaves (timeout, oversized or rejected response, exit,
// crash) is killed with its whole process group (and any descendant that left the group, found by an
// environment token), reaped and restarted on its next use. Restarts are a budget of failures in a row that
// any success refills. Each worker runs in its own process group, which is also killed when this process
// gets SIGINT or SIGTERM. POSIX (posix_spawn, poll, waitpid) with Linux /proc and pidfd where available.
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "advplan/io/sandbox.hpp"

namespace advplan {

struct ProcessPoolOptions {
  std::string command;                       ///< run as /bin/sh -c COMMAND
  int workers = 1;                           ///< processes (>= 1)
  double timeout_s = 10.0;                   ///< per request, from sending the line to the response's newline
  std::size_t max_response_bytes = 1 << 20;  ///< a response line longer than this is a failure
  int max_restarts = 3;  ///< failed requests in a row (no success between) after which no worker is restarted
  /// Longest wait at start for every worker to block reading its input (or to exit: then it cannot start).
  double startup_check_s = 10.0;
  /// Environment variables the workers do not inherit (the live model's API key: an external program is
  /// untrusted and never sees it). Names, without '='.
  std::vector<std::string> withheld_env;
  /// Set: every worker starts in this sandbox (docs/POLICIES.md "1.10 The sandbox"); unset: the process's sandbox
  /// (process_sandbox()), if any. Resolved by the constructor when it is not yet (resolve_sandbox), which refuses
  /// with a ConfigError when bubblewrap cannot run here.
  std::optional<SandboxSpec> sandbox;
};

/// Bytes of a program's standard error passed through to advplan's per program start; the rest is counted and
/// reported in one line when the program ends (docs/POLICIES.md "Standard error").
inline constexpr std::size_t kStderrPassThrough = 4096;

/// Moves environment variable `name` out of the block /proc/PID/environ shows (the environment this process was
/// started with, readable by any program of the same user): its value is copied into the environment with setenv,
/// so getenv still finds it, and its bytes in the block are overwritten with zeros. Nothing when the variable is
/// unset or was set by the process itself. ProcessPool calls it for each withheld variable before it spawns.
void wipe_from_environment_block(const std::string& name);

/// The response line to one request (without its newline), or why there is none.
struct PoolReply {
  std::optional<std::string> line;
  /// one sentence, e.g. "timeout after 2.0 s", "process exited with status 3"; when the program ended, the last
  /// line it wrote to its standard error during the request follows, e.g. `(stderr: "KeyError: 'x'")`
  std::string error;
  bool ok() const { return line.has_value(); }
};

/// Thread safety: request() may be called concurrently; a request waits for an idle worker.
class ProcessPool {
 public:
  /// Checks a response line at the protocol level: "" accepts it; a reason rejects it, the reply carries the
  /// reason and the worker is restarted (its output stream can no longer be trusted).
  using ResponseCheck = std::function<std::string(const std::string& line)>;

  /// Starts every worker and waits until each is blocked waiting for input (at most startup_check_s). Throws
  /// PolicyError naming the command when a worker cannot be spawned or exits before that, and for options
  /// out of range.
  explicit ProcessPool(ProcessPoolOptions opt);
  /// Closes each worker's stdin, waits up to one second for it to exit, then kills and reaps what is left.
  ~ProcessPool();
  ProcessPool(const ProcessPool&) = delete;
  ProcessPool& operator=(const ProcessPool&) = delete;

  /// Sends `line` (a newline is appended; it must contain none) and returns the next non-blank line the
  /// worker writes. Never throws for anything the child does.
  PoolReply request(const std::string& line, const ResponseCheck& check = {});

  /// Restarts performed so far.
  int restarts() const;
  const ProcessPoolOptions& options() const { return opt_; }

  struct Worker;  // defined in process_pool.cpp

 private:
  /// Takes an idle worker, restarting it if it is down and the budget allows; nullopt (and `error`) when no
  /// worker can serve any more.
  std::optional<std::size_t> acquire(std::string& error);
  void release(std::size_t index, bool failed);

  ProcessPoolOptions opt_;
  std::vector<std::unique_ptr<Worker>> workers_;
  mutable std::mutex mutex_;
  std::condition_variable idle_cv_;
  std::vector<std::size_t> idle_;  ///< workers not serving a request
  std::size_t busy_ = 0;           ///< workers serving a request
  int failures_in_a_row_ = 0;      ///< failed requests since the last success
  int restarts_ = 0;
};

}  // namespace advplan
