#pragma once
// Progress of a run on stderr: scenarios done out of total, the rate, the ETA and the failed rows so far. On a
// terminal one line is redrawn; otherwise a plain line is printed every `interval` seconds and at the end. The
// first failure of each distinct cause is printed as it happens (a cause is the failure reason with its numbers
// masked). Called from the runner's serial output stage; thread-safe anyway.
#include <chrono>
#include <cstddef>
#include <mutex>
#include <set>
#include <string>

namespace advplan {

enum class ProgressMode {
  automatic,  ///< tty when stderr is a terminal, plain otherwise
  tty,        ///< one redrawn line
  plain,      ///< periodic lines
  none,       ///< nothing, not even failures
};

/// "auto", "tty", "plain" or "none"; throws ConfigError naming --progress otherwise.
ProgressMode parse_progress_mode(const std::string& s);

class Progress {
 public:
  /// `done` scenarios were complete before this process started (a resumed run).
  /// `unit` names what is counted ("scenarios"), `failed_unit` what failed ("failed rows").
  Progress(std::string what, std::size_t total, ProgressMode mode, std::size_t done = 0, double interval_s = 10.0,
           std::string unit = "scenarios", std::string failed_unit = "failed rows");
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  /// One more scenario written, with its failed rows.
  void scenario_done(std::size_t failed_rows);
  /// A failed row: printed when its cause is new.
  void failure(const std::string& scenario, const std::string& condition, const std::string& reason);
  void finish();
  /// The cause of a failure reason: digits masked, so "line 3" and "line 7" are one cause.
  static std::string cause_of(const std::string& reason);

 private:
  void draw(bool final_line);
  std::string what_, unit_, failed_unit_;
  std::size_t total_, start_done_, done_, failed_ = 0;
  ProgressMode mode_;
  double interval_;
  std::mutex mu_;
  std::chrono::steady_clock::time_point start_, last_;
  std::set<std::string> causes_;
  bool finished_ = false, line_open_ = false;
};

}  // namespace advplan
