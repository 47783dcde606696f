#include "advplan/experiment/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace advplan {

Progress::Progress(std::string what, std::size_t total, bool enabled)
    : what_(std::move(what)), total_(total), enabled_(enabled && ::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()), last_(start_) {}

Progress::~Progress() { finish(); }

void Progress::tick() {
  const std::size_t d = ++done_;
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mu_);
  if (d < total_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  const double secs = std::chrono::duration<double>(now - start_).count();
  const double rate = secs > 0 ? d / secs : 0;
  const double eta = rate > 0 ? (total_ - d) / rate : 0;
  fmt::print(stderr, "\r{}: {}/{} ({:.0f}%) {:.1f}s elapsed, ~{:.1f}s left   ", what_, d, total_,
             total_ ? 100.0 * d / total_ : 100.0, secs, eta);
  std::fflush(stderr);
}

void Progress::finish() {
  std::lock_guard lock(mu_);
  if (!enabled_ || finished_) return;
  finished_ = true;
  fmt::print(stderr, "\n");
}

}  // namespace advplan
