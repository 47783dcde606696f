#include "advplan/run/interrupt.hpp"

#include <atomic>

namespace advplan {

namespace {
std::atomic<bool> g_interrupt{false};
static_assert(std::atomic<bool>::is_always_lock_free, "a signal handler stores it");
}  // namespace

void request_run_interrupt() noexcept { g_interrupt.store(true); }
bool run_interrupt_requested() noexcept { return g_interrupt.load(); }
void clear_run_interrupt() noexcept { g_interrupt.store(false); }

}  // namespace advplan
