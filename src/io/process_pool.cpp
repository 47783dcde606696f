#include "advplan/io/process_pool.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <mutex>
#include <thread>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"

extern char** environ;

namespace advplan {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct ProcessPool::Worker {
  pid_t pid = -1;       ///< -1: down (never started, or stopped and reaped)
  int to_child = -1;    ///< our end of the child's stdin (non-blocking)
  int from_child = -1;  ///< our end of the child's stdout (non-blocking)
  int pidfd = -1;       ///< readable when the child exits (-1 where pidfd_open is unavailable)
  bool answered = false;  ///< has answered a request since it was (re)started
  std::string token;    ///< ADVPLAN_POLICY_TOKEN value in its environment, inherited by its descendants
  std::string pending;  ///< bytes read beyond the last response line
  int from_err = -1;    ///< our end of the child's stderr (non-blocking), drained while we wait on the child
  bool sandboxed = false;  ///< started through bwrap: its exit status 128 + N stands for signal N
  std::string label;       ///< the command, for the line that says how much of its stderr was cut
  std::size_t err_shown = 0;  ///< stderr bytes passed through since the start (at most kStderrPassThrough)
  std::size_t err_cut = 0;    ///< stderr bytes not shown since the start
  std::string err_request;    ///< the end of what it wrote to stderr during the current request (bounded)
};

namespace {

// ---- Process groups of live workers, ended by a SIGINT/SIGTERM of ours (async-signal-safe: kill only). ----
constexpr std::size_t kMaxGroups = 1024;
std::array<std::atomic<pid_t>, kMaxGroups> g_groups{};
struct sigaction g_old_int {}, g_old_term {};

void register_group(pid_t pg) {
  for (auto& g : g_groups) {
    pid_t expected = 0;
    if (g.compare_exchange_strong(expected, pg)) return;
  }
}
void unregister_group(pid_t pg) {
  for (auto& g : g_groups) {
    pid_t expected = pg;
    if (g.compare_exchange_strong(expected, 0)) return;
  }
}

extern "C" void end_groups_and_reraise(int sig) {
  for (auto& g : g_groups)
    if (const pid_t pg = g.load(); pg > 0) ::kill(-pg, SIGKILL);
  ::sigaction(sig, sig == SIGINT ? &g_old_int : &g_old_term, nullptr);
  ::raise(sig);
}

/// On SIGINT or SIGTERM of this process, every live worker's process group is killed before we die. A
/// handler installed by someone else is left alone.
void install_signal_handlers_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGINT, SIGTERM}) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;
      (sig == SIGINT ? g_old_int : g_old_term) = old;
      struct sigaction sa {};
      sa.sa_handler = end_groups_and_reraise;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

/// Kills every process whose environment carries `token`: descendants that left the worker's process group
/// (setsid, a double fork) still inherit its environment. Processes we may not inspect are skipped.
void kill_by_token(const std::string& token) {
  if (token.empty()) return;
  const std::string needle = "ADVPLAN_POLICY_TOKEN=" + token;
  DIR* d = ::opendir("/proc");
  if (!d) return;
  const pid_t self = ::getpid();
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const pid_t pid = static_cast<pid_t>(std::atol(e->d_name));
    if (pid == self) continue;
    std::ifstream in(std::string("/proc/") + e->d_name + "/environ", std::ios::binary);
    if (!in) continue;
    for (std::string entry; std::getline(in, entry, '\0');) {
      if (entry == needle) {
        ::kill(pid, SIGKILL);
        break;
      }
    }
  }
  ::closedir(d);
}

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  const long fd = ::syscall(SYS_pidfd_open, pid, 0);
  if (fd >= 0) {
    ::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC);
    return static_cast<int>(fd);
  }
#endif
  (void)pid;
  return -1;
}

// ---- The guard: a process that outlives us only to end our policy processes. ----
//
// A policy that ignores its stdin would survive a kill -9 of advplan (nothing is left to close its pipes or kill
// its group). So before the first worker starts, advplan forks a guard that holds the read end of a pipe whose
// write end only advplan holds. However advplan ends (exit, crash, SIGKILL), the kernel closes the write end; the
// guard reads end-of-file, kills every process whose environment carries one of our worker tokens
// ("ADVPLAN_POLICY_TOKEN=<our pid>-"), the workers and their descendants, and exits. PR_SET_PDEATHSIG would not
// do: it follows the thread that forked the child (a TBB worker may exit first), and descendants do not inherit
// it. The guard is forked from a threaded process, so it runs async-signal-safe system calls only: no allocation.

/// Reads /proc/PID/environ into `buf`; returns the bytes read (0 on any error).
std::size_t read_environ(const char* pid, char* buf, std::size_t cap) {
  char path[64] = "/proc/";
  std::size_t n = 6;
  for (const char* c = pid; *c && n < 40; ++c) path[n++] = *c;
  const char tail[] = "/environ";
  for (const char* c = tail; *c; ++c) path[n++] = *c;
  path[n] = '\0';
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  std::size_t got = 0;
  while (got < cap) {
    const ssize_t r = ::read(fd, buf + got, cap - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  ::close(fd);
  return got;
}

/// Kills (SIGKILL) every process but ourselves whose environment has an entry starting with `needle`.
/// Returns how many it killed.
int guard_sweep(const char* needle, std::size_t needle_len, pid_t self) {
  static char env[1 << 20];
  alignas(8) static char dents[1 << 15];
  const int dir = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return 0;
  int killed = 0;
  for (;;) {
    const long n = ::syscall(SYS_getdents64, dir, dents, sizeof dents);
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      const auto* d = reinterpret_cast<const struct dirent64*>(dents + off);
      off += d->d_reclen;
      const char* name = d->d_name;
      if (name[0] < '0' || name[0] > '9') continue;
      pid_t pid = 0;
      for (const char* c = name; *c >= '0' && *c <= '9'; ++c) pid = pid * 10 + (*c - '0');
      if (pid == self) continue;
      const std::size_t len = read_environ(name, env, sizeof env);
      for (std::size_t i = 0; i < len;) {  // entries are NUL-terminated
        std::size_t j = i;
        while (j < len && env[j] != '\0') ++j;
        if (j - i >= needle_len && std::memcmp(env + i, needle, needle_len) == 0) {
          ::kill(pid, SIGKILL);
          ++killed;
          break;
        }
        i = j + 1;
      }
    }
  }
  ::close(dir);
  return killed;
}

[[noreturn]] void guard_main(int read_end, const char* needle, std::size_t needle_len) {
  ::prctl(PR_SET_NAME, "advplan-guard", 0, 0, 0);  // what ps and /proc/PID/stat show
  // Its stdin, stdout and stderr go to /dev/null: a pipe advplan's output goes to must end with advplan.
  if (const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC); null >= 0) {
    for (int fd = 0; fd <= 2; ++fd) ::dup2(null, fd);
    if (null > 2 && null != read_end) ::close(null);
  }
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::signal(sig, SIG_IGN);
  // Nothing of ours stays open here (a worker's pipe held by the guard would never reach end of file).
  if (read_end > 3) ::syscall(SYS_close_range, 3u, static_cast<unsigned>(read_end - 1), 0u);
  if (::syscall(SYS_close_range, static_cast<unsigned>(read_end + 1), ~0u, 0u) != 0)
    for (int fd = 3; fd < 65536; ++fd)
      if (fd != read_end) ::close(fd);
  char b;
  for (;;) {
    const ssize_t r = ::read(read_end, &b, 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;  // end of file: advplan has ended
  }
  const pid_t self = ::getpid();
  // Again while a sweep still finds someone: a process may fork while it is being killed.
  for (int round = 0; round < 8 && guard_sweep(needle, needle_len, self) > 0; ++round) {
  }
  ::_exit(0);
}

/// Starts the guard once per process (again after a fork: the guard watches the process that started it).
void start_guard_once() {
  static pid_t guarded = 0;
  static std::mutex mu;
  const std::lock_guard lock(mu);
  const pid_t me = ::getpid();
  if (guarded == me) return;
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return;  // no guard: workers are still ended on every exit we live through
  static char needle[64];
  const std::string text = fmt::format("ADVPLAN_POLICY_TOKEN={}-", me);
  std::memcpy(needle, text.c_str(), text.size() + 1);
  const std::size_t needle_len = text.size();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[1]);
    ::setpgid(0, 0);  // out of our process group: a Ctrl-C to the terminal's group reaches advplan, not the guard
    guard_main(p[0], needle, needle_len);
  }
  ::close(p[0]);
  if (pid < 0) {
    ::close(p[1]);
    return;
  }
  // p[1] stays open, unused, until this process ends; O_CLOEXEC keeps it out of every program we start. The guard
  // is reaped by whoever inherits it; it never holds a worker's pipe.
  guarded = me;
}

/// A write to a child that has died must return EPIPE, not kill us. An existing handler is left alone.
void ignore_sigpipe_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction old {};
    if (sigaction(SIGPIPE, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) {
      struct sigaction ign {};
      ign.sa_handler = SIG_IGN;
      sigemptyset(&ign.sa_mask);
      sigaction(SIGPIPE, &ign, nullptr);
    }
  });
}

std::string signal_text(int sig) {
  static const std::pair<int, const char*> kNames[] = {
      {SIGHUP, "SIGHUP"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"}, {SIGILL, "SIGILL"},
      {SIGTRAP, "SIGTRAP"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
      {SIGKILL, "SIGKILL"}, {SIGUSR1, "SIGUSR1"}, {SIGSEGV, "SIGSEGV"}, {SIGUSR2, "SIGUSR2"},
      {SIGPIPE, "SIGPIPE"}, {SIGALRM, "SIGALRM"}, {SIGTERM, "SIGTERM"}, {SIGXCPU, "SIGXCPU"},
      {SIGXFSZ, "SIGXFSZ"}, {SIGSYS, "SIGSYS"}};
  for (const auto& [n, name] : kNames)
    if (n == sig) return fmt::format("{} ({})", sig, name);
  return std::to_string(sig);
}

/// "2.0" for whole tenths, else the shortest form ("0.25").
std::string seconds_text(double s) {
  const double tenths = s * 10.0;
  return std::abs(tenths - std::round(tenths)) < 1e-9 ? fmt::format("{:.1f}", s) : fmt::format("{:g}", s);
}

/// How a child ended, observed without reaping it, so its process group cannot be reused before we kill it.
struct ExitInfo {
  bool signaled = false;
  int code = 0;  ///< exit status, or the signal number
  std::string str() const {
    return signaled ? "process killed by signal " + signal_text(code)
                    : fmt::format("process exited with status {}", code);
  }
};

std::optional<ExitInfo> peek_exit(pid_t pid) {
  siginfo_t info{};
  if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0)
    return std::nullopt;
  return ExitInfo{info.si_code != CLD_EXITED, info.si_status};
}

/// How the worker's program ended: bwrap reports a program killed by signal N as its own exit status 128 + N.
std::optional<ExitInfo> program_exit(const ProcessPool::Worker& w) {
  auto e = peek_exit(w.pid);
  if (e && w.sandboxed && !e->signaled)
    if (const int sig = sandbox_signal_of_status(e->code); sig > 0) *e = ExitInfo{true, sig};
  return e;
}

std::optional<ExitInfo> wait_exit(const ProcessPool::Worker& w, Clock::duration limit) {
  const auto end = Clock::now() + limit;
  for (;;) {
    if (auto e = program_exit(w)) return e;
    if (Clock::now() >= end) return std::nullopt;
    std::this_thread::sleep_for(5ms);
  }
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

/// The end of a request's stderr kept for its failure reason.
constexpr std::size_t kStderrKept = 2048;
/// The most one drain reads, so a program that writes without end cannot hold us in the loop.
constexpr std::size_t kStderrDrainMax = 1 << 20;

/// Reads what the worker wrote to stderr so far (without blocking): the first kStderrPassThrough bytes since its
/// start go on to our stderr, the rest is counted; the end is kept for the request's failure reason.
void drain_stderr(ProcessPool::Worker& w) {
  char buf[16384];
  for (std::size_t total = 0; w.from_err >= 0 && total < kStderrDrainMax;) {
    const ssize_t n = ::read(w.from_err, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) close_fd(w.from_err);  // every writer has closed it
    if (n <= 0) break;
    const auto len = static_cast<std::size_t>(n);
    total += len;
    const std::size_t show = std::min(len, kStderrPassThrough - w.err_shown);
    if (show > 0 && ::write(STDERR_FILENO, buf, show) < 0) {
    }  // a closed stderr loses the pass-through, nothing else
    w.err_shown += show;
    w.err_cut += len - show;
    w.err_request.append(buf, len);
    if (w.err_request.size() > kStderrKept) w.err_request.erase(0, w.err_request.size() - kStderrKept);
  }
}

/// `reason`, with the last non-blank line the program wrote to stderr during the request (an excerpt) when there
/// is one: the cause of an exit is usually there ("PermissionError: ...").
std::string with_stderr_tail(std::string reason, const ProcessPool::Worker& w) {
  const std::string& e = w.err_request;
  auto end = e.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return reason;
  const auto nl = e.rfind('\n', end);
  const std::size_t begin = nl == std::string::npos ? 0 : nl + 1;
  return reason + " (stderr: \"" + untrusted::excerpt(std::string_view(e).substr(begin, end + 1 - begin)) + "\")";
}

/// Kills the worker's process group (a shell's children too) and reaps the worker; closes our pipe ends. What is
/// left of its stderr is drained, and a line says how much of it was not shown.
void stop(ProcessPool::Worker& w) {
  close_fd(w.to_child);
  close_fd(w.from_child);
  close_fd(w.pidfd);
  if (w.pid > 0) {
    ::kill(-w.pid, SIGKILL);
    ::kill(w.pid, SIGKILL);
    int st = 0;
    while (::waitpid(w.pid, &st, 0) < 0 && errno == EINTR) {
    }
    unregister_group(w.pid);
    kill_by_token(w.token);
  }
  drain_stderr(w);
  close_fd(w.from_err);
  if (w.err_cut > 0)
    std::fprintf(stderr, "advplan: exec program '%s': %zu more bytes of its standard error not shown (at most %zu "
                 "are shown per program start)\n", untrusted::excerpt(w.label, 80).c_str(), w.err_cut,
                 kStderrPassThrough);
  w.err_shown = w.err_cut = 0;
  w.err_request.clear();
  w.pid = -1;
  w.answered = false;
  w.pending.clear();
}

/// `exec CMD` for a simple command, so the worker is the program itself and its crash is reported as a
/// signal, not as the shell's status 128+N. Anything with shell syntax runs under the shell as written.
std::string shell_text(const std::string& cmd) {
  if (cmd.find_first_of(";&|<>()$`\\\n{}!#") != std::string::npos) return cmd;
  const auto start = cmd.find_first_not_of(" \t");
  if (start == std::string::npos) return cmd;
  const auto end = cmd.find_first_of(" \t", start);
  const std::string first = cmd.substr(start, end == std::string::npos ? std::string::npos : end - start);
  if (first.find('=') != std::string::npos || first == "exec") return cmd;
  return "exec " + cmd;
}

/// [env_start, env_end) of this process from /proc/self/stat (fields 50 and 51): the block /proc/PID/environ
/// shows, the environment as the process was started with. {0, 0} when it cannot be read.
std::pair<std::uintptr_t, std::uintptr_t> environment_block() {
  std::ifstream in("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (paren == std::string::npos) return {0, 0};
  std::istringstream fields(stat.substr(paren + 1));
  std::string f;
  std::uintptr_t start = 0, end = 0;
  for (int field = 3; fields >> f; ++field) {  // fields are numbered from 1; the one after ')' is 3
    if (field == 50) start = static_cast<std::uintptr_t>(std::strtoull(f.c_str(), nullptr, 10));
    if (field == 51) {
      end = static_cast<std::uintptr_t>(std::strtoull(f.c_str(), nullptr, 10));
      break;
    }
  }
  return start < end ? std::pair{start, end} : std::pair<std::uintptr_t, std::uintptr_t>{0, 0};
}

/// What a worker is started as: the program path, its argv and its environment.
struct Launch {
  std::string path;
  std::vector<std::string> argv, env;
};

/// `/bin/sh -c COMMAND` with our environment less the variables of `withheld_env`, or, sandboxed, bwrap (through
/// setpriv as root) running it with an environment of its own; bwrap itself gets PATH and the token only, since a
/// program in the sandbox can read the environment of bwrap's process there (its /proc/1/environ).
Launch launch_of(const ProcessPoolOptions& opt, const std::string& token) {
  const std::string token_entry = "ADVPLAN_POLICY_TOKEN=" + token;
  Launch l;
  // The token comes first: the guard reads at most 1 MiB of /proc/PID/environ.
  l.env.push_back(token_entry);
  if (opt.sandbox) {
    std::error_code ec;
    std::string cwd = std::filesystem::current_path(ec).string();
    if (ec || cwd.empty()) cwd = "/";
    l.argv = sandbox_argv(*opt.sandbox, shell_text(opt.command), cwd, program_folder(opt.command, cwd), token);
    l.path = l.argv.front();
    l.env.push_back("PATH=" + opt.sandbox->path_env);
    return l;
  }
  l.path = "/bin/sh";
  l.argv = {"sh", "-c", shell_text(opt.command)};
  const auto withheld = [&](const char* entry) {
    if (std::strncmp(entry, "ADVPLAN_POLICY_TOKEN=", 21) == 0) return true;
    for (const auto& name : opt.withheld_env)
      if (!name.empty() && std::strncmp(entry, name.c_str(), name.size()) == 0 && entry[name.size()] == '=') return true;
    return false;
  };
  for (char** e = environ; e && *e; ++e)
    if (!withheld(*e)) l.env.emplace_back(*e);
  return l;
}

/// The three pipes of a worker: its stdin, stdout and stderr (O_CLOEXEC). Returns "" or why not; on failure
/// nothing stays open.
std::string open_pipes(std::array<std::array<int, 2>, 3>& p) {
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (::pipe2(p[i].data(), O_CLOEXEC) != 0) {
      const int e = errno;
      for (std::size_t j = 0; j < i; ++j) {
        ::close(p[j][0]);
        ::close(p[j][1]);
      }
      return fmt::format("cannot create a pipe: {}", std::strerror(e));
    }
  }
  return "";
}

/// Starts the worker's program (launch_of) with stdin, stdout and stderr on pipes (stderr is drained by
/// drain_stderr, bounded). The child gets its own process group, the default SIGPIPE action, an empty signal
/// mask and a token in its environment, so that descendants which leave its process group can still be found and
/// ended (kill_by_token). Returns "" or why it could not be spawned.
std::string spawn(const ProcessPoolOptions& opt, ProcessPool::Worker& w) {
  std::array<std::array<int, 2>, 3> p{};  // stdin, stdout, stderr
  if (std::string why = open_pipes(p); !why.empty()) return why;
  start_guard_once();
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, p[0][0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&fa, p[1][1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, p[2][1], STDERR_FILENO);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);  // no file of ours (traces being written) leaks in
#endif
  posix_spawnattr_t at;
  posix_spawnattr_init(&at);
  sigset_t dflt, none;
  sigemptyset(&dflt);
  sigaddset(&dflt, SIGPIPE);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&at, &dflt);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setpgroup(&at, 0);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  static std::atomic<unsigned long> serial{0};
  w.token = fmt::format("{}-{}", ::getpid(), serial.fetch_add(1));
  Launch l = launch_of(opt, w.token);
  std::vector<char*> argv, env;
  for (auto& a : l.argv) argv.push_back(a.data());
  for (auto& e : l.env) env.push_back(e.data());
  argv.push_back(nullptr);
  env.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, l.path.c_str(), &fa, &at, argv.data(), env.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  for (const int fd : {p[0][0], p[1][1], p[2][1]}) ::close(fd);  // the child's ends
  if (rc != 0) {
    ::close(p[0][1]);
    ::close(p[1][0]);
    ::close(p[2][0]);
    return fmt::format("cannot spawn {}: {}", l.path, std::strerror(rc));
  }
  for (const int fd : {p[0][1], p[1][0], p[2][0]}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  w.pid = pid;
  register_group(pid);
  w.pidfd = open_pidfd(pid);
  w.to_child = p[0][1];
  w.from_child = p[1][0];
  w.from_err = p[2][0];
  w.sandboxed = opt.sandbox.has_value();
  w.label = opt.command;
  w.answered = false;
  w.pending.clear();
  return "";
}

/// Waits until `fd` is ready for `events` (or hung up) or the deadline passes; false on timeout.
bool wait_ready(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, INT_MAX)));
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR) return true;  // let the read or write report the error
  }
}

/// The child closed its end of a pipe: report how it ended, waiting briefly for it to do so.
std::string closed_reason(ProcessPool::Worker& w, const char* what) {
  const auto e = wait_exit(w, 1s);
  drain_stderr(w);
  return with_stderr_tail(e ? e->str() : fmt::format("process closed its {}", what), w);
}

enum class Ready { data, timeout, exited };

/// Waits for the child's stdout to be readable, the child to exit (its pidfd, or a 50 ms poll of its status
/// where pidfd_open is missing) or the deadline, draining its stderr meanwhile. An exit is seen even when a
/// descendant still holds the pipe.
Ready wait_output(ProcessPool::Worker& w, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Ready::timeout;
    // A negative fd (no pidfd, stderr at its end) is ignored by poll.
    pollfd p[3] = {{w.from_child, POLLIN, 0}, {w.pidfd, POLLIN, 0}, {w.from_err, POLLIN, 0}};
    const int slice = w.pidfd >= 0 ? static_cast<int>(std::min<long long>(left, INT_MAX))
                                   : static_cast<int>(std::min<long long>(left, 50));
    const int rc = ::poll(p, 3, slice);
    if (rc < 0 && errno != EINTR) return Ready::data;  // let the read report the error
    if (rc > 0 && p[2].revents) drain_stderr(w);
    if (rc > 0 && p[0].revents) return Ready::data;
    if ((rc > 0 && w.pidfd >= 0 && p[1].revents) || (w.pidfd < 0 && peek_exit(w.pid))) return Ready::exited;
  }
}

/// Writes `msg` and reads the next non-blank line into `line`. Returns "" or the failure sentence; after a
/// failure the worker's streams are out of step and it must be stopped.
std::string exchange(ProcessPool::Worker& w, const std::string& msg, const ProcessPoolOptions& opt,
                     std::string& line) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(opt.timeout_s));
  const std::string timeout = fmt::format("timeout after {} s", seconds_text(opt.timeout_s));
  drain_stderr(w);  // written while idle: not this request's
  w.err_request.clear();
  for (std::size_t off = 0; off < msg.size();) {
    const ssize_t n = ::write(w.to_child, msg.data() + off, msg.size() - off);
    if (n > 0) {
      off += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EAGAIN) {
      if (!wait_ready(w.to_child, POLLOUT, deadline)) return timeout;
    } else if (!(n < 0 && errno == EINTR)) {
      return closed_reason(w, "standard input");
    }
  }
  const std::string too_big = fmt::format("response exceeds {} bytes", opt.max_response_bytes);
  std::size_t scanned = 0;
  bool exited = false;  // the child has exited: read what is left, then report the exit
  char buf[65536];
  for (;;) {
    const auto nl = w.pending.find('\n', scanned);
    if (nl != std::string::npos) {
      std::string l = w.pending.substr(0, nl);
      w.pending.erase(0, nl + 1);
      scanned = 0;
      if (!l.empty() && l.back() == '\r') l.pop_back();
      if (l.size() > opt.max_response_bytes) return too_big;
      if (l.find_first_not_of(" \t") == std::string::npos) continue;  // blank lines are not responses
      // Output beyond the response line, already here: it would be read as the answer to the next request, on
      // whichever request reaches this worker next. The exchange fails instead (and the worker restarts).
      if (w.pending.find_first_not_of(" \t\r\n") != std::string::npos)
        return "the program wrote more than one line for one request";
      line = std::move(l);
      w.answered = true;
      return "";
    }
    scanned = w.pending.size();
    if (w.pending.size() > opt.max_response_bytes) return too_big;
    if (!exited) {
      const Ready r = wait_output(w, deadline);
      if (r == Ready::timeout) return timeout;
      exited = r == Ready::exited;
    }
    const ssize_t n = ::read(w.from_child, buf, sizeof buf);
    if (n > 0)
      w.pending.append(buf, static_cast<std::size_t>(n));
    else if (n == 0 || exited || (errno != EAGAIN && errno != EINTR))
      return closed_reason(w, "standard output");
  }
}

enum class WaitState { busy, waiting_for_input, unknown };

struct ProcEntry {
  std::string dir;  ///< /proc/PID
  long pid = 0, ppid = 0, pgrp = 0;
};

/// Every process /proc shows, with its parent and process group.
std::vector<ProcEntry> process_table() {
  std::vector<ProcEntry> out;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  while (const dirent* e = ::readdir(d)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    ProcEntry p{std::string("/proc/") + e->d_name, std::atol(e->d_name), 0, 0};
    std::ifstream st(p.dir + "/stat");
    std::string stat;
    std::getline(st, stat);
    const auto close = stat.rfind(')');
    char state = 0;
    if (close != std::string::npos &&
        std::sscanf(stat.c_str() + close + 1, " %c %ld %ld", &state, &p.ppid, &p.pgrp) == 3)
      out.push_back(std::move(p));
  }
  ::closedir(d);
  return out;
}

/// The processes that run worker `pg`'s program: those of its process group, or, sandboxed, its descendants
/// outside that group (bwrap and the sandbox's init stay in the group and always wait; the program runs in a
/// session of its own).
std::vector<std::string> program_processes(pid_t pg, bool sandboxed) {
  const std::vector<ProcEntry> table = process_table();
  std::map<long, long> parent;
  for (const auto& p : table) parent[p.pid] = p.ppid;
  const auto descends = [&](long pid) {
    for (int depth = 0; depth < 64 && pid > 1; ++depth) {
      const auto it = parent.find(pid);
      if (it == parent.end()) return false;
      pid = it->second;
      if (pid == pg) return true;
    }
    return false;
  };
  std::vector<std::string> out;
  for (const auto& p : table)
    if (sandboxed ? p.pgrp != pg && descends(p.pid) : p.pgrp == pg) out.push_back(p.dir);
  return out;
}

/// Whether a task of process `dir` waits for input (a pipe read, poll, select or epoll), is busy, or shows no
/// wait channel.
WaitState process_wait_state(const std::string& dir) {
  bool seen_any = false, waiting = false;
  if (DIR* t = ::opendir((dir + "/task").c_str())) {
    while (const dirent* te = ::readdir(t)) {
      if (te->d_name[0] < '0' || te->d_name[0] > '9') continue;
      const std::string task = dir + "/task/" + te->d_name;
      std::ifstream ts(task + "/stat");
      std::string tstat;
      std::getline(ts, tstat);
      const auto tclose = tstat.rfind(')');
      if (tclose != std::string::npos && tclose + 2 < tstat.size() && tstat[tclose + 2] == 'R') {
        seen_any = true;  // running: busy, whatever the wait channel says
        continue;
      }
      std::ifstream wc(task + "/wchan");
      std::string chan;
      std::getline(wc, chan);
      if (chan.empty() || chan == "0") continue;  // a sleeping task without a visible wait channel
      seen_any = true;
      if (chan.find("pipe_read") != std::string::npos || chan.find("poll") != std::string::npos ||
          chan.find("select") != std::string::npos || chan.find("pipe_wait") != std::string::npos) {
        waiting = true;
        break;
      }
    }
    ::closedir(t);
  }
  return waiting ? WaitState::waiting_for_input : seen_any ? WaitState::busy : WaitState::unknown;
}

/// Whether some process of the worker's program (program_processes) is blocked waiting for input. `unknown`
/// when no wait channel can be read (a restricted /proc).
WaitState program_wait_state(pid_t pg, bool sandboxed) {
  bool seen_any = false;
  for (const auto& dir : program_processes(pg, sandboxed)) {
    const WaitState st = process_wait_state(dir);
    if (st == WaitState::waiting_for_input) return st;
    seen_any = seen_any || st == WaitState::busy;
  }
  return seen_any ? WaitState::busy : WaitState::unknown;
}

/// Start-up check: waits until every worker is waiting for input (some process of its program blocked reading a
/// pipe or polling) or has exited, rather than for a fixed time. A program that exits first cannot start: returns
/// how it ended, with the end of its stderr. Where the kernel does not show what a process waits on, a short grace
/// period stands in.
std::string wait_until_started(std::vector<std::unique_ptr<ProcessPool::Worker>>& workers,
                               const ProcessPoolOptions& opt) {
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(opt.startup_check_s));
  const auto grace_end = Clock::now() + 300ms;
  std::vector<bool> ready(workers.size(), false);
  bool ever_visible = false;  // some wait channel was readable: /proc shows what processes wait on
  for (;;) {
    bool all_ready = true;
    for (std::size_t i = 0; i < workers.size(); ++i) {
      auto& w = *workers[i];
      drain_stderr(w);
      if (auto e = program_exit(w)) {
        std::string how = e->signaled ? "was killed by signal " + signal_text(e->code)
                                      : fmt::format("exited with status {}", e->code);
        if (!e->signaled && e->code == 127) how += " (command not found)";
        if (!e->signaled && e->code == 126) how += " (not executable)";
        drain_stderr(w);
        return with_stderr_tail(fmt::format("it {} before the first request", how), w);
      }
      if (!ready[i]) {
        const WaitState st = program_wait_state(w.pid, w.sandboxed);
        ready[i] = st == WaitState::waiting_for_input;
        ever_visible = ever_visible || st != WaitState::unknown;
        all_ready = all_ready && ready[i];
      }
    }
    if (all_ready || Clock::now() >= end || (!ever_visible && Clock::now() >= grace_end)) return "";
    std::this_thread::sleep_for(10ms);  // each check scans /proc: keep it cheap
  }
}

}  // namespace

void wipe_from_environment_block(const std::string& name) {
  static std::mutex m;
  const std::lock_guard lock(m);
  if (name.empty() || name.find('=') != std::string::npos) return;
  char* value = std::getenv(name.c_str());
  if (value == nullptr) return;
  const auto [start, end] = environment_block();
  const auto at = reinterpret_cast<std::uintptr_t>(value);
  if (!(at >= start && at < end)) return;  // set by the process itself: not in the block /proc shows
  const std::size_t n = std::strlen(value);
  const std::string copy(value, n);
  if (::setenv(name.c_str(), copy.c_str(), 1) != 0) return;  // getenv now finds a copy outside the block
  volatile char* p = value;
  for (std::size_t i = 0; i < n && at + i < end; ++i) p[i] = '\0';
}

ProcessPool::ProcessPool(ProcessPoolOptions opt) : opt_(std::move(opt)) {
  const auto bad = [&](const std::string& what) {
    return PolicyError(fmt::format("exec command '{}': {}", opt_.command, what));
  };
  if (opt_.command.find_first_not_of(" \t") == std::string::npos)
    throw PolicyError("exec policy needs a command after 'exec:', e.g. exec:'python3 my_policy.py'");
  if (opt_.workers < 1)
    throw bad(fmt::format("workers must be at least 1, while {} was given", opt_.workers));
  if (!(opt_.timeout_s > 0))
    throw bad(fmt::format("timeout must be positive, while {} s was given", opt_.timeout_s));
  if (opt_.max_response_bytes == 0) throw bad("the response size cap must be positive");
  if (opt_.max_restarts < 0)
    throw bad(fmt::format("max restarts must be >= 0, while {} was given", opt_.max_restarts));
  ignore_sigpipe_once();
  install_signal_handlers_once();
  for (const auto& name : opt_.withheld_env) wipe_from_environment_block(name);  // before any program can look
  if (!opt_.sandbox) opt_.sandbox = process_sandbox();
  if (opt_.sandbox && !opt_.sandbox->resolved()) opt_.sandbox = resolve_sandbox(opt_.sandbox->settings);

  for (int i = 0; i < opt_.workers; ++i) workers_.push_back(std::make_unique<Worker>());
  auto stop_all = [&] {
    for (auto& w : workers_) stop(*w);
  };
  for (auto& w : workers_) {
    if (const std::string why = spawn(opt_, *w); !why.empty()) {
      stop_all();
      throw bad(fmt::format("cannot start: {}", why));
    }
  }
  if (const std::string why = wait_until_started(workers_, opt_); !why.empty()) {
    stop_all();
    throw bad("cannot start: " + why);
  }
  for (std::size_t i = 0; i < workers_.size(); ++i) idle_.push_back(i);
}

ProcessPool::~ProcessPool() {
  for (auto& w : workers_) close_fd(w->to_child);  // a well-behaved program exits on end of input
  const auto end = Clock::now() + 1s;
  for (auto& w : workers_) {
    while (w->pid > 0 && !peek_exit(w->pid) && Clock::now() < end) std::this_thread::sleep_for(5ms);
    stop(*w);
  }
}

int ProcessPool::restarts() const {
  std::lock_guard lock(mutex_);
  return restarts_;
}

std::optional<std::size_t> ProcessPool::acquire(std::string& error) {
  std::unique_lock lock(mutex_);
  for (;;) {
    // Restarts are a budget of failures in a row: any successful response refills it, so a program that
    // fails on some scenarios keeps serving the others; one that fails max_restarts + 1 times in a row with
    // no success in between is not started again.
    const auto may_restart = [&] { return failures_in_a_row_ <= opt_.max_restarts; };
    const auto running = [&] {
      return std::find_if(idle_.begin(), idle_.end(), [&](std::size_t i) { return workers_[i]->pid > 0; });
    };
    idle_cv_.wait(lock, [&] {
      return running() != idle_.end() || (may_restart() && !idle_.empty()) || busy_ == 0;
    });
    auto it = running();
    if (it == idle_.end()) {
      if (idle_.empty() || !may_restart()) {
        if (busy_ > 0) continue;  // a busy worker may yet succeed and refill the budget
        error = fmt::format("restart limit reached: the program failed {} requests in a row (max_restarts {})",
                            failures_in_a_row_, opt_.max_restarts);
        return std::nullopt;
      }
      it = idle_.begin();
    }
    const std::size_t i = *it;
    idle_.erase(it);
    Worker& w = *workers_[i];
    if (w.pid > 0 && !peek_exit(w.pid)) {
      ++busy_;
      return i;
    }
    stop(w);  // down, or exited while idle
    if (may_restart()) {
      ++restarts_;
      const std::string why = spawn(opt_, w);
      if (why.empty()) {
        ++busy_;
        return i;
      }
      idle_.push_back(i);
      idle_cv_.notify_one();
      error = "cannot restart: " + why;
      return std::nullopt;
    }
    idle_.push_back(i);  // down, and no restart allowed now
  }
}

void ProcessPool::release(std::size_t index, bool failed) {
  {
    std::lock_guard lock(mutex_);
    idle_.push_back(index);
    --busy_;
    failures_in_a_row_ = failed ? failures_in_a_row_ + 1 : 0;
  }
  idle_cv_.notify_all();
}

PoolReply ProcessPool::request(const std::string& line, const ResponseCheck& check) {
  PoolReply r;
  if (line.find('\n') != std::string::npos) {
    r.error = "request contains a newline";
    return r;
  }
  const auto index = acquire(r.error);
  if (!index) return r;
  Worker& w = *workers_[*index];
  // Whatever happens below, the worker goes back to the pool (stopped when its stream is out of step).
  struct Release {
    ProcessPool& pool;
    Worker& w;
    std::size_t index;
    bool failed = true;
    ~Release() {
      if (failed) stop(w);
      pool.release(index, failed);
    }
  } guard{*this, w, *index};
  std::string response;
  std::string err = exchange(w, line + "\n", opt_, response);
  if (err.empty() && check) err = check(response);
  if (!err.empty()) {
    r.error = std::move(err);
    return r;
  }
  guard.failed = false;
  r.line = std::move(response);
  return r;
}

}  // namespace advplan
