// Ctrl-C during a run from Python (docs/PYTHON.md "Ctrl-C"). While a run holds no GIL, Python's own SIGINT
// handler cannot run, and a Python policy busy in a callback would not hear of the signal: a 600 s time.sleep
// in plan() went on to its end. So for the run, SIGINT gets a C handler that only stores the run's stop flag
// (one atomic store, async-signal-safe), and a watcher thread turns the flag into Python's interrupt:
//   - PyErr_SetInterruptEx(SIGINT) trips Python's flag, and SIGINT is sent again to the thread that called
//   the run
//     (Python's main thread, normally), so its blocking call (time.sleep, a socket read) returns EINTR,
//     checks the signals and raises KeyboardInterrupt in the policy;
//   - every other thread inside a policy callback gets KeyboardInterrupt as an asynchronous exception, raised
//   at its
//     next Python instruction (PyThreadState_SetAsyncExc, with the GIL).
// A callback that raised KeyboardInterrupt stops the run (bind_policies.cpp), which raises it to the caller.
#include <pthread.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <set>
#include <thread>

#include "advplan/run/interrupt.hpp"
#include "bindings.hpp"

namespace py = pybind11;

namespace advplan::python {
namespace {

/// Threads inside a policy callback, other than Python's main thread (which hears the signal itself). Read
/// and written with the GIL held only, so the GIL is their lock. Never freed (see python_classes()).
std::set<unsigned long>& threads_in_callbacks() {
  static auto* s = new std::set<unsigned long>();
  return *s;
}

unsigned long python_main_thread() {  // with the GIL
  static const auto id =
      py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  return id;
}

extern "C" void on_sigint(int) {
  const int saved = errno;
  request_run_interrupt();
  errno = saved;
}

/// For one run: the C handler installed (with SA_RESTART, so the run's own reads and writes are not cut
/// short), and the watcher. Constructed and destroyed without the GIL (the watcher takes it).
class InterruptScope {
 public:
  InterruptScope() : caller_(::pthread_self()) {
    clear_run_interrupt();
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    installed_ = ::sigaction(SIGINT, &sa, &old_) == 0;
    watcher_ = std::thread([this] { watch(); });
  }
  ~InterruptScope() {
    {
      const std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    watcher_.join();
    if (installed_) ::sigaction(SIGINT, &old_, nullptr);
    clear_run_interrupt();
  }
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  void watch() {
    std::unique_lock lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(20));
      if (stop_ || !run_interrupt_requested()) continue;
      lock.unlock();
      deliver();
      lock.lock();
      return;  // once: a callback that starts later is not called (python_callback)
    }
  }

  /// The interrupt, to Python: its flag, a signal that wakes the caller's blocking call, and an asynchronous
  /// KeyboardInterrupt in every other thread inside a callback.
  void deliver() {
    PyErr_SetInterruptEx(SIGINT);
    if (installed_) ::pthread_kill(caller_, SIGINT);  // our handler: the flag again, and EINTR for the caller
    py::gil_scoped_acquire gil;
    for (const unsigned long id : threads_in_callbacks())
      PyThreadState_SetAsyncExc(id, PyExc_KeyboardInterrupt);
  }

  pthread_t caller_;
  struct sigaction old_ {};
  bool installed_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread watcher_;
};

}  // namespace

CallbackThread::CallbackThread() : id_(PyThread_get_thread_ident()) {
  if (id_ == python_main_thread()) return;
  threads_in_callbacks().insert(id_);
  registered_ = true;
}

CallbackThread::~CallbackThread() {
  if (!registered_) return;
  threads_in_callbacks().erase(id_);
  PyThreadState_SetAsyncExc(id_, nullptr);  // an interrupt that arrived as the callback returned is not kept
}

RunSummary run_interruptible(const std::function<RunSummary()>& run) {
  (void)python_main_thread();  // looked up now, with the GIL
  RunSummary s;
  std::exception_ptr error;
  bool interrupted = false;
  {
    py::gil_scoped_release nogil;
    const InterruptScope scope;
    try {
      s = run();
    } catch (...) {
      error = std::current_exception();
    }
    interrupted = run_interrupt_requested();
  }
  // The watcher tripped Python's SIGINT flag: consumed when the run raises (KeyboardInterrupt with the resume
  // sentence, once). A run that completed all the same leaves it to Python, which raises at its next instruction.
  if (interrupted && error && PyErr_CheckSignals() != 0) PyErr_Clear();
  if (error) std::rethrow_exception(error);
  return s;
}

}  // namespace advplan::python
