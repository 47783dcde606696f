#pragma once
// A small TTY-aware progress line on stderr (Debian has no C++ progress-bar package). Silent when stderr is
// not a terminal, so logs and CI output stay clean. Safe to tick from several threads.
#include <atomic>
#include <chrono>
#include <mutex>
#include <string>

namespace advplan {

class Progress {
 public:
  Progress(std::string what, std::size_t total, bool enabled);
  ~Progress();
  void tick();
  void finish();

 private:
  std::string what_;
  std::size_t total_;
  bool enabled_;
  std::atomic<std::size_t> done_{0};
  std::mutex mu_;
  std::chrono::steady_clock::time_point start_, last_;
  bool finished_ = false;
};

}  // namespace advplan
