#pragma once
// Stopping a run at once, resumably (docs/PYTHON.md "Ctrl-C"): a request to stop, set from a signal handler or a
// policy that saw the interrupt, and read by the runner between scenarios. The CLI needs none of it (SIGINT ends the
// process, and a killed run resumes); the Python module sets it, because Python's own SIGINT handler would only run
// once the whole run had returned.
#include <string>

#include "advplan/core/error.hpp"

namespace advplan {

/// Asks the running run to stop (async-signal-safe: one atomic store).
void request_run_interrupt() noexcept;
bool run_interrupt_requested() noexcept;
void clear_run_interrupt() noexcept;

/// Thrown by run_experiment when it stopped on request: the rows of every scenario before the one in flight are on
/// disk with their journal entry, so `--resume` (Python: resume=True) continues the run. Scenarios that were in
/// flight are dropped, whatever they returned (a policy that saw the interrupt fails; that is no result).
struct RunInterrupted : Error {
  using Error::Error;
};

}  // namespace advplan
