#pragma once
// The helpers of the tests that run the `advplan` executable (or another program) through /bin/sh: the source tree
// and the binary, shell quoting, a command with its exit status and output, the one-line error check, the small
// config adapted for a temporary directory, and run directories compared file by file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <utility>
#include <vector>

#include "support/fixtures.hpp"

namespace advplan::testing {

/// The source tree and the CLI under test (set by tests/CMakeLists.txt).
inline const std::string kSource = ADVPLAN_SOURCE_DIR;
inline const std::string kBinary = ADVPLAN_BINARY;

/// The interpreter behind `python3` on PATH. A version-manager shim (pyenv) can take seconds to start on a
/// loaded machine, and the first request to a restarted program includes its start-up, so the tests that
/// restart often or use a short timeout run the interpreter itself.
inline const std::string& python() {
  static const std::string path = [] {
    std::string out;
    if (FILE* f = ::popen("python3 -c 'import sys; print(sys.executable)' 2>/dev/null", "r")) {
      char buf[4096];
      while (std::fgets(buf, sizeof buf, f)) out += buf;
      ::pclose(f);
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    return out.empty() ? std::string("python3") : out;
  }();
  return path;
}

/// Single-quotes `s` for /bin/sh.
inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

struct CommandResult {
  int status = -1;  ///< exit status, or -1 when the process did not exit normally
  std::string out, err;
};

/// Runs a shell command line (arguments already quoted) with stdin from /dev/null, capturing stdout and stderr
/// through files in `scratch`.
inline CommandResult run_command(const std::string& command, const TempDir& scratch) {
  const std::string o = scratch / "stdout.txt", e = scratch / "stderr.txt";
  const std::string cmd = command + " >" + shell_quote(o) + " 2>" + shell_quote(e) + " </dev/null";
  const int raw = std::system(cmd.c_str());
  CommandResult r;
  r.status = raw != -1 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = read_file(o);
  r.err = read_file(e);
  return r;
}

/// The text of the file at `path` with each edit (from, to) applied to the first occurrence of `from`, in order: a
/// shipped config adapted for a test (an absolute template_dir, fewer seeds, ...). std::logic_error naming the file
/// and the text when an edit finds nothing, so a config that moved on fails the test loudly.
inline std::string edited_text(const std::string& path, const std::vector<std::pair<std::string, std::string>>& edits) {
  std::string text = read_file(path);
  for (const auto& [from, to] : edits) {
    const auto pos = text.find(from);
    if (pos == std::string::npos) throw std::logic_error(path + " has no '" + from + "'");
    text.replace(pos, from.size(), to);
  }
  return text;
}

/// Every file of a run directory by its relative path, with its bytes; run_metadata.json aside (wall times and the
/// host).
inline std::map<std::string, std::string> run_files(const std::string& dir) {
  namespace fs = std::filesystem;
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) {
      const std::string rel = fs::relative(e.path(), dir).generic_string();
      if (rel != "run_metadata.json") out[rel] = read_file(e.path().string());
    }
  return out;
}

/// "" when two run directories hold the same files (run_files) with the same bytes; else the first difference,
/// e.g. "per_scenario.csv differs", or "no files" when the first is empty.
inline std::string compare_runs(const std::string& expected, const std::string& actual) {
  const auto a = run_files(expected), b = run_files(actual);
  for (const auto& [f, text] : a) {
    auto it = b.find(f);
    if (it == b.end()) return f + " is missing";
    if (it->second != text) return f + " differs";
  }
  for (const auto& [f, text] : b)
    if (!a.contains(f)) return f + " is extra";
  return a.empty() ? "no files" : "";
}

/// shell_quote, under the short name the CLI tests use.
inline std::string quote(const std::string& s) { return shell_quote(s); }

/// `advplan ARGS` (ARGS already quoted), run as run_command does.
inline CommandResult advplan(const std::string& args, const TempDir& scratch) {
  return run_command(quote(kBinary) + " " + args, scratch);
}

/// A failure of the CLI is exit status 1 and exactly one line on stderr.
inline void expect_one_line_error(const CommandResult& x) {
  EXPECT_EQ(x.status, 1) << x.err;
  ASSERT_FALSE(x.err.empty());
  EXPECT_EQ(std::count(x.err.begin(), x.err.end(), '\n'), 1) << x.err;
}

using Edit = std::pair<std::string, std::string>;

/// The edit of tests/data/small.yaml's `seeds` (six scenarios, [100, 102]) to `range`, e.g. "[100, 104]".
inline Edit seeds(const std::string& range) { return {"seeds: [100, 102]", "seeds: " + range}; }

/// The text of tests/data/small.yaml with its template_dir made absolute, so that a copy works from any directory,
/// and `edits` applied after (edited_text).
inline std::string small_config_text(std::vector<Edit> edits = {}) {
  edits.insert(edits.begin(), {"template_dir: ../../configs/templates", "template_dir: " + kSource + "/configs/templates"});
  return edited_text(kSource + "/tests/data/small.yaml", edits);
}

/// small_config_text(edits) written to `dir`/`name`; its path.
inline std::string small_config(const TempDir& dir, std::vector<Edit> edits = {}, const std::string& name = "small.yaml") {
  const std::string path = dir / name;
  write_file(path, small_config_text(std::move(edits)));
  return path;
}

}  // namespace advplan::testing
