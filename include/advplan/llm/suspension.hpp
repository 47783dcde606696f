#pragma once
// When a live model's client may suspend the TBB task that calls it (docs/LLM.md "Concurrency"), and when it must
// not. Defined with the transport (src/llm/transport.cpp).

namespace advplan {

/// While one lives (anywhere in the process), a live client called from a TBB task suspends the task for its reply
/// instead of blocking the thread: the runner holds one around its scenario pipeline, whose tasks may be suspended.
/// Outside it (a test's or a command's own thread, a judge called after the run) every call blocks.
class AsyncRequestsScope {
 public:
  AsyncRequestsScope();
  ~AsyncRequestsScope();
  AsyncRequestsScope(const AsyncRequestsScope&) = delete;
  AsyncRequestsScope& operator=(const AsyncRequestsScope&) = delete;
};

/// While one lives on a thread, a live client there blocks for its reply instead of suspending its TBB task: the
/// runner holds one around a call it serialises with a lock (ThreadSafety::none), which must end on the thread that
/// took it.
class NoSuspendScope {
 public:
  NoSuspendScope();
  ~NoSuspendScope();
  NoSuspendScope(const NoSuspendScope&) = delete;
  NoSuspendScope& operator=(const NoSuspendScope&) = delete;
};

}  // namespace advplan
