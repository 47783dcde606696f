#include "advplan/run/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>

#include "advplan/core/error.hpp"

namespace advplan {

ProgressMode parse_progress_mode(const std::string& s) {
  if (s == "auto") return ProgressMode::automatic;
  if (s == "tty") return ProgressMode::tty;
  if (s == "plain") return ProgressMode::plain;
  if (s == "none") return ProgressMode::none;
  throw ConfigError(fmt::format("--progress {}: accepted values are auto, tty, plain and none", s));
}

Progress::Progress(std::string what, std::size_t total, ProgressMode mode, std::size_t done, double interval_s,
                   std::string unit, std::string failed_unit)
    : what_(std::move(what)), unit_(std::move(unit)), failed_unit_(std::move(failed_unit)), total_(total), start_done_(done), done_(done), mode_(mode), interval_(interval_s),
      start_(std::chrono::steady_clock::now()), last_(start_) {
  if (mode_ == ProgressMode::automatic) mode_ = ::isatty(STDERR_FILENO) == 1 ? ProgressMode::tty : ProgressMode::plain;
}

Progress::~Progress() { finish(); }

std::string Progress::cause_of(const std::string& reason) {
  std::string c;
  for (char ch : reason) {
    if (std::isdigit(static_cast<unsigned char>(ch))) {
      if (c.empty() || c.back() != '#') c += '#';
    } else {
      c += ch;
    }
  }
  return c;
}

void Progress::draw(bool final_line) {
  const auto now = std::chrono::steady_clock::now();
  const double secs = std::chrono::duration<double>(now - start_).count();
  const std::size_t here = done_ - start_done_;
  const double rate = secs > 0 ? static_cast<double>(here) / secs : 0;
  const double eta = rate > 0 ? static_cast<double>(total_ - done_) / rate : 0;
  const std::string text =
      fmt::format("{}: {}/{} {} ({:.0f}%), {:.1f}/s, {} {}, {:.1f}s elapsed, ETA {:.0f}s", what_, done_, total_, unit_,
                  total_ ? 100.0 * static_cast<double>(done_) / static_cast<double>(total_) : 100.0, rate, failed_,
                  failed_unit_, secs, eta);
  if (mode_ == ProgressMode::tty) {
    fmt::print(stderr, "\r{}\033[K", text);
    line_open_ = !final_line;
    if (final_line) fmt::print(stderr, "\n");
  } else {
    fmt::print(stderr, "{}\n", text);
  }
  std::fflush(stderr);
  last_ = now;
}

void Progress::scenario_done(std::size_t failed_rows) {
  std::lock_guard lock(mu_);
  ++done_;
  failed_ += failed_rows;
  if (mode_ == ProgressMode::none || finished_) return;
  const auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_).count();
  if (mode_ == ProgressMode::tty ? since >= 0.1 : since >= interval_) draw(false);
}

void Progress::failure(const std::string& scenario, const std::string& condition, const std::string& reason) {
  std::lock_guard lock(mu_);
  if (mode_ == ProgressMode::none || !causes_.insert(cause_of(reason)).second) return;
  if (line_open_) fmt::print(stderr, "\n");
  line_open_ = false;
  fmt::print(stderr, "advplan: failure ({}, {}): {} (further failures of this cause are counted, not shown)\n",
             scenario, condition, reason);
  std::fflush(stderr);
}

void Progress::finish() {
  std::lock_guard lock(mu_);
  if (finished_) return;
  finished_ = true;
  if (mode_ == ProgressMode::none || done_ == start_done_) return;
  draw(true);
}

}  // namespace advplan
