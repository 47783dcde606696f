// The sandbox of external programs (`--sandbox`, `sandbox:`, docs/POLICIES.md "The sandbox") and the bound on their
// standard error: the bwrap command line of a spec; a machine without bubblewrap refuses with one sentence; the
// example policies give the same rows in the sandbox as outside it; a hostile program (a socket, a write outside its
// folder, the key's variable, its parent's environment, a fork bomb, /proc/1/environ, an endless loop) fails in the
// sandbox with its cause in the row while the run completes; a program's stderr is passed through only up to
// kStderrPassThrough bytes, and its last line names the cause of a failure.
#include "advplan/io/sandbox.hpp"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/io/process_pool.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::kSource;
using testing::quote;
using testing::TempDir;

/// A spec as resolve_sandbox would make it on a merged-/usr machine, advplan running as root.
SandboxSpec fixed_spec() {
  SandboxSpec s;
  s.bwrap = "/usr/bin/bwrap";
  s.version = "0.8.0";
  s.prlimit = "/usr/bin/prlimit";
  s.setpriv = "/usr/bin/setpriv";
  s.run_as_uid = 65534;
  s.system = {{"/usr", ""}, {"/bin", "usr/bin"}, {"/etc/passwd", ""}};
  s.path_env = "/usr/bin:/bin";
  s.settings.cpu_seconds = 5;
  s.settings.memory_mb = 256;
  s.settings.open_files = 32;
  s.settings.processes = 8;
  s.settings.read_only = {"/opt/venv"};
  return s;
}

TEST(SandboxArgv, IsTheCommandLineOfTheSpec) {
  const std::vector<std::string> expected = {
      "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
      "/usr/bin/bwrap", "--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
      "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/home/lab",
      "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin", "--ro-bind", "/etc/passwd", "/etc/passwd",
      "--ro-bind", "/opt/venv", "/opt/venv", "--ro-bind", "/home/lab/policies", "/home/lab/policies",
      "--remount-ro", "/home/lab", "--remount-ro", "/", "--chdir", "/home/lab", "--clearenv",
      "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp",
      "--setenv", "LANG", "C.UTF-8", "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
      "--setenv", "ADVPLAN_POLICY_TOKEN", "7-1",
      "--", "/usr/bin/prlimit", "--cpu=5:6", "--as=268435456", "--nofile=32", "--nproc=8", "--",
      "/bin/sh", "-c", "exec python3 policies/p.py"};
  EXPECT_EQ(sandbox_argv(fixed_spec(), "exec python3 policies/p.py", "/home/lab", "/home/lab/policies", "7-1"),
            expected);
}

TEST(SandboxArgv, ADeclaredEndpointSharesTheNetworkAndAUserRunsItDirectly) {
  SandboxSpec s = fixed_spec();
  s.run_as_uid.reset();
  s.settings.network = {"http://127.0.0.1:8080"};
  const auto a = sandbox_argv(s, "cat", "/usr/share", "", "t");
  EXPECT_EQ(a.front(), "/usr/bin/bwrap");
  EXPECT_EQ(a[3], "--share-net");
  // The working directory lies in the system view: no mount of its own.
  EXPECT_EQ(std::count(a.begin(), a.end(), "/usr/share"), 1) << "only --chdir names it";
  s.settings.network.clear();
  const auto b = sandbox_argv(s, "cat", "/", "", "t");
  EXPECT_EQ(std::count(b.begin(), b.end(), "--share-net"), 0);
}

TEST(SandboxArgv, TheProgramsFolderIsWhereItsFileIs) {
  EXPECT_EQ(program_folder("python3 examples/policies/trivial_blue.py", kSource), kSource + "/examples/policies");
  EXPECT_EQ(program_folder("exec python3 -u " + kSource + "/tests/data/sandbox_hostile.py socket 1", "/"),
            kSource + "/tests/data");
  EXPECT_EQ(program_folder(kSource + "/tests/data/sandbox_hostile.py", "/"), kSource + "/tests/data");
  EXPECT_EQ(program_folder("cat", kSource), "");
  EXPECT_EQ(program_folder("python3 no/such/file.py", kSource), "");
}

/// The bwrap status of a program killed by signal N is 128 + N.
TEST(SandboxArgv, StatusesAboveOneTwentyEightAreSignals) {
  EXPECT_EQ(sandbox_signal_of_status(152), 24);
  EXPECT_EQ(sandbox_signal_of_status(137), 9);
  EXPECT_EQ(sandbox_signal_of_status(1), 0);
  EXPECT_EQ(sandbox_signal_of_status(128), 0);
  EXPECT_EQ(sandbox_signal_of_status(255), 0);
}

/// A config of two scenarios, `conditions` (YAML list items) and `extra` (more keys), written to dir/`name`.
std::string tiny_config(const TempDir& dir, const std::string& conditions, const std::string& extra = "",
                        const std::string& name = "tiny.yaml") {
  const std::string path = dir / name;
  testing::write_file(path, "name: tiny\nseed: 5\ncorpus:\n  templates: [urban]\n  seeds: [100, 101]\n  template_dir: " +
                                kSource + "/configs/templates\nconditions:\n" + conditions +
                                "bootstrap: {resamples: 20, seed: 7}\n"
                                "studies: {rubric: false, framing: false, components: false}\n" + extra);
  return path;
}

TEST(SandboxCli, WithoutBubblewrapNothingStarts) {
  TempDir dir("sandbox-missing");
  const std::string cfg = tiny_config(dir, "  - single\n");
  for (const std::string& how : {std::string(" --sandbox"), std::string("")}) {
    const std::string config = how.empty() ? tiny_config(dir, "  - single\n", "sandbox: true\n", "on.yaml") : cfg;
    const auto r = testing::run_command("ADVPLAN_BWRAP=/nonexistent/bwrap " + quote(testing::kBinary) + " run " +
                                            quote(config) + how + " --progress none --out " + quote(dir / "run"),
                                        dir);
    testing::expect_one_line_error(r);
    EXPECT_THAT(r.err, HasSubstr("--sandbox needs bubblewrap, and /nonexistent/bwrap is not an executable file"));
    EXPECT_FALSE(fs::exists(dir / "run")) << "nothing may start";
  }
  const auto bad = testing::advplan("run " + quote(tiny_config(dir, "  - single\n", "sandbox: {processes: 1}\n")) +
                                        " --progress none --out " + quote(dir / "run"),
                                    dir);
  testing::expect_one_line_error(bad);
  EXPECT_THAT(bad.err, HasSubstr("sandbox.processes"));
}

/// Skips a test when bubblewrap cannot start a sandbox here.
bool sandbox_works() {
  try {
    resolve_sandbox({});
    return true;
  } catch (const ConfigError&) {
    return false;
  }
}

std::string example(const std::string& name) { return "\"exec:python3 examples/policies/" + name + "\""; }

TEST(SandboxCli, TheExamplePoliciesGiveTheSameRowsInTheSandbox) {
  if (!sandbox_works()) GTEST_SKIP() << "bubblewrap cannot start a sandbox here";
  TempDir dir("sandbox-examples");
  const std::string plain = tiny_config(dir, "  - {label: trivial, blue: " + example("trivial_blue.py") +
                                                 ", red: single}\n  - {label: greedy, blue: " +
                                                 example("greedy_blue.py") + ", red: " + example("greedy_red.py") + "}\n",
                                        "simulator: {replications: 10}\n", "plain.yaml");
  // A replanning program (docs/POLICIES.md "6. Replanning"): a second pool per policy, in the sandbox too.
  const std::string replan =
      tiny_config(dir, "  - {label: replan, blue: " + example("replanning_blue.py") + ", red: greedy@4}\n",
                  "policies:\n  exec: {replans: true}\nsimulator: {replications: 10, model: engagement}\n", "replan.yaml");
  for (const auto& [name, config] : {std::pair{"plain", plain}, std::pair{"replan", replan}}) {
    for (const std::string& flag : {std::string(""), std::string(" --sandbox")}) {
      const std::string out = dir / (std::string(name) + (flag.empty() ? "-plain" : "-sandboxed"));
      // From the source directory, as the README's commands run (relative paths to the examples).
      const auto r = testing::run_command("cd " + quote(kSource) + " && " + quote(testing::kBinary) + " run " +
                                              quote(config) + flag + " --progress none --out " + quote(out),
                                          dir);
      ASSERT_EQ(r.status, 0) << name << flag << ": " << r.err;
      const auto meta = nlohmann::json::parse(testing::read_file(out + "/run_metadata.json"));
      if (flag.empty()) {
        EXPECT_EQ(meta["sandbox"], false);
      } else {
        EXPECT_EQ(meta["sandbox"]["tool"], "bwrap");
        EXPECT_EQ(meta["sandbox"]["limits"]["processes"], 64);
        EXPECT_EQ(meta["sandbox"]["network"], false);
      }
    }
    const std::string a = dir / (std::string(name) + "-plain/per_scenario.csv");
    const std::string b = dir / (std::string(name) + "-sandboxed/per_scenario.csv");
    const io::CsvTable rows = io::CsvTable::read(a);
    for (std::size_t i = 0; i < rows.size(); ++i) EXPECT_EQ(rows.at(i, "status"), "ok") << rows.at(i, "failure_reason");
    EXPECT_EQ(testing::read_file(a), testing::read_file(b)) << name;
  }
}

/// A TCP listener on 127.0.0.1 of this (host) network namespace; its port.
struct Listener {
  int fd = -1;
  int port = 0;
  Listener() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(fd, 16) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      port = ntohs(a.sin_port);
  }
  ~Listener() { ::close(fd); }
};

TEST(SandboxCli, HostileProgramsFailWithTheirCauseAndTheRunCompletes) {
  if (!sandbox_works()) GTEST_SKIP() << "bubblewrap cannot start a sandbox here";
  TempDir dir("sandbox-hostile");
  const Listener listener;
  ASSERT_GT(listener.port, 0);
  const std::string written = dir / "written.txt";  // its directory is not in the sandbox's view
  const std::string own_file = kSource + "/tests/data/sandbox_written.txt";  // in its folder, read-only
  struct Remove {
    std::string path;
    ~Remove() { std::remove(path.c_str()); }
  } remove_own{own_file};
  const std::string hostile = "exec:python3 " + kSource + "/tests/data/sandbox_hostile.py ";
  struct Case {
    std::string label, args, cause;
  };
  const std::vector<Case> cases = {
      {"socket", "socket " + std::to_string(listener.port), "ConnectionRefusedError: [Errno 111] Connection refused"},
      {"write", "write " + written, "FileNotFoundError: [Errno 2] No such file or directory"},
      {"write_own", "write " + own_file, "OSError: [Errno 30] Read-only file system"},
      {"key", "key ADVPLAN_TEST_SECRET", "KeyError: 'ADVPLAN_TEST_SECRET is not in the environment'"},
      {"parent", "parent ADVPLAN_TEST_SECRET", "LookupError: ADVPLAN_TEST_SECRET is not in the parent's environment"},
      {"forks", "forks 200", "BlockingIOError: [Errno 11] Resource temporarily unavailable"},
      {"proc1", "proc1", "LookupError: /proc/1/environ holds no ADVPLAN_TEST_SECRET"},
  };
  std::string conditions = "  - {label: fine, blue: " + example("trivial_blue.py") + ", red: single}\n";
  for (const auto& c : cases) conditions += "  - {label: " + c.label + ", blue: \"" + hostile + c.args + "\", red: single}\n";
  const std::string config = tiny_config(dir, conditions, "simulator: {replications: 10}\nsandbox: {processes: 16}\n");
  const auto r = testing::run_command("cd " + quote(kSource) + " && ADVPLAN_TEST_SECRET=sk-sandbox-secret " +
                                          quote(testing::kBinary) + " run " + quote(config) +
                                          " --progress none --out " + quote(dir / "run"),
                                      dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir / "run/MANIFEST")) << "the run completes";
  EXPECT_FALSE(fs::exists(written)) << "the program wrote outside its folder";
  EXPECT_FALSE(fs::exists(own_file)) << "the program wrote into its folder";
  const io::CsvTable rows = io::CsvTable::read(dir / "run/per_scenario.csv");
  ASSERT_EQ(rows.size(), 2 * (cases.size() + 1));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string label = rows.at(i, "condition");
    if (label == "fine") {
      EXPECT_EQ(rows.at(i, "status"), "ok") << rows.at(i, "failure_reason");
      continue;
    }
    const auto c = std::find_if(cases.begin(), cases.end(), [&](const Case& x) { return x.label == label; });
    ASSERT_NE(c, cases.end()) << label;
    EXPECT_EQ(rows.at(i, "status"), "failed") << label << ": the hostile attempt succeeded";
    EXPECT_THAT(rows.at(i, "failure_reason"), HasSubstr("exec: process exited with status 1 (stderr: \""))
        << label;
    EXPECT_THAT(rows.at(i, "failure_reason"), HasSubstr(c->cause)) << label;
    EXPECT_THAT(rows.at(i, "failure_reason"), ::testing::Not(HasSubstr("sk-sandbox-secret"))) << label;
  }
}

/// A sandboxed pool of one worker running `command` with `settings`.
ProcessPoolOptions sandboxed(const std::string& command, SandboxSettings settings = {}) {
  ProcessPoolOptions opt;
  opt.command = command;
  opt.timeout_s = 10;
  opt.sandbox = SandboxSpec{};
  opt.sandbox->settings = std::move(settings);
  return opt;
}

TEST(SandboxPool, AProgramOverItsCpuLimitIsKilledBySigxcpu) {
  if (!sandbox_works()) GTEST_SKIP() << "bubblewrap cannot start a sandbox here";
  SandboxSettings s;
  s.cpu_seconds = 1;
  ProcessPool pool(sandboxed("read line; while :; do :; done", s));
  EXPECT_EQ(pool.request("spin").error, "process killed by signal 24 (SIGXCPU)");
}

TEST(SandboxPool, AProgramThatCannotStartInTheSandboxIsRefusedWithItsMessage) {
  if (!sandbox_works()) GTEST_SKIP() << "bubblewrap cannot start a sandbox here";
  try {
    ProcessPool pool(sandboxed("echo 'no such thing here' >&2; exit 2"));
    FAIL() << "expected PolicyError";
  } catch (const PolicyError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot start: it exited with status 2 before the first request (stderr: \"no "
                                    "such thing here\")"));
  }
}

/// Runs `body` with this process's stderr going to a file; the file's text.
template <class F>
std::string captured_stderr(const TempDir& dir, F body) {
  const std::string path = dir / "stderr.txt";
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  FILE* f = std::fopen(path.c_str(), "w");
  ::dup2(::fileno(f), STDERR_FILENO);
  body();
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::fclose(f);
  return testing::read_file(path);
}

TEST(ProcessPoolStderr, AtMostAFewKibPassThroughAndALineSaysHowMuchWasCut) {
  TempDir dir("pool-stderr");
  const std::string text = captured_stderr(dir, [] {
    ProcessPoolOptions opt;
    opt.command = "head -c 20000 /dev/zero | tr '\\0' x >&2; exec cat";
    ProcessPool pool(opt);
    const PoolReply r = pool.request("hello");
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_EQ(*r.line, "hello");
  });
  EXPECT_EQ(text.substr(0, kStderrPassThrough), std::string(kStderrPassThrough, 'x'));
  EXPECT_EQ(text.substr(kStderrPassThrough),
            "advplan: exec program 'head -c 20000 /dev/zero | tr '\\0' x >&2; exec cat': 15904 more bytes of its "
            "standard error not shown (at most 4096 are shown per program start)\n");
}

TEST(ProcessPoolStderr, TheLastLineOfARequestsStderrNamesTheCause) {
  TempDir dir("pool-stderr-tail");
  captured_stderr(dir, [] {
    ProcessPoolOptions opt;
    opt.command = "echo starting >&2; read line; printf 'Traceback\\n  line 3\\nKeyError: x\\n\\n' >&2; exit 3";
    ProcessPool pool(opt);
    EXPECT_EQ(pool.request("go").error, "process exited with status 3 (stderr: \"KeyError: x\")");
  });
}

}  // namespace
}  // namespace advplan
