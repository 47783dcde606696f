#include "advplan/io/sandbox.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <thread>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"

namespace advplan {

namespace fs = std::filesystem;

namespace {

/// The user the sandbox is entered as when advplan runs as root: nobody.
constexpr unsigned kNobody = 65534;

/// The system directories of the read-only view (each a directory or, on a merged /usr, a symlink into /usr).
constexpr const char* kSystemDirs[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
/// The files of /etc a program may need (the dynamic linker's cache, time zone, users and groups, name lookup,
/// certificates, Debian's alternatives symlinks), each where present; plus every /etc/python* entry.
constexpr const char* kEtcEntries[] = {"alternatives", "ca-certificates", "ca-certificates.conf", "gai.conf",
                                       "group", "host.conf", "hosts", "ld.so.cache", "ld.so.conf", "ld.so.conf.d",
                                       "localtime", "mime.types", "nsswitch.conf", "passwd", "protocols",
                                       "resolv.conf", "services", "ssl"};

bool is_executable_file(const std::string& p) {
  struct stat st {};
  return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

/// `name` on PATH (then /usr/bin and /bin), absolute; "" when not found.
std::string find_program(const std::string& name) {
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  path += ":/usr/bin:/bin";
  for (std::size_t start = 0; start <= path.size();) {
    const auto end = std::min(path.find(':', start), path.size());
    const std::string dir = path.substr(start, end - start);
    if (!dir.empty() && dir.front() == '/' && is_executable_file(dir + "/" + name)) return dir + "/" + name;
    start = end + 1;
  }
  return "";
}

struct Captured {
  int status = -1;     ///< exit status; -1 when it did not exit in time or could not start
  std::string output;  ///< stdout and stderr together, at most 4 KiB
};

/// Runs `argv` with environment `env`, its stdout and stderr captured (bounded), at most `limit_s` seconds.
Captured capture(const std::vector<std::string>& argv, const std::vector<std::string>& env, double limit_s) {
  Captured c;
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return c;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, p[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, p[1], STDERR_FILENO);
  std::vector<char*> av, ev;
  for (const auto& a : argv) av.push_back(const_cast<char*>(a.c_str()));
  for (const auto& e : env) ev.push_back(const_cast<char*>(e.c_str()));
  av.push_back(nullptr);
  ev.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, av[0], &fa, nullptr, av.data(), ev.data());
  posix_spawn_file_actions_destroy(&fa);
  ::close(p[1]);
  if (rc != 0) {
    ::close(p[0]);
    c.output = std::strerror(rc);
    return c;
  }
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd pf{p[0], POLLIN, 0};
    if (::poll(&pf, 1, static_cast<int>(left.count())) <= 0) continue;
    const ssize_t n = ::read(p[0], buf, sizeof buf);
    if (n <= 0) break;
    if (c.output.size() < 4096) c.output.append(buf, static_cast<std::size_t>(n));
  }
  ::close(p[0]);
  int st = 0;
  while (::waitpid(pid, &st, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= end) ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  c.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return c;
}

/// The system view: the system directories as they are on this machine, then the /etc entries present.
std::vector<SandboxMount> system_mounts() {
  std::vector<SandboxMount> out;
  for (const char* d : kSystemDirs) {
    std::error_code ec;
    const auto st = fs::symlink_status(d, ec);
    if (ec) continue;
    if (fs::is_symlink(st))
      out.push_back({d, fs::read_symlink(d, ec).string()});
    else if (fs::is_directory(st))
      out.push_back({d, ""});
  }
  std::vector<std::string> etc(std::begin(kEtcEntries), std::end(kEtcEntries));
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/etc", ec))
    if (e.path().filename().string().starts_with("python")) etc.push_back(e.path().filename().string());
  std::sort(etc.begin(), etc.end());
  for (const auto& name : etc)
    if (fs::exists("/etc/" + name, ec)) out.push_back({"/etc/" + name, ""});
  return out;
}

std::string version_of(const std::string& bwrap) {
  const Captured v = capture({bwrap, "--version"}, {}, 5.0);
  std::string text = v.output;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  const auto space = text.rfind(' ');
  if (v.status != 0 || text.empty())
    throw ConfigError(fmt::format("--sandbox: {} --version failed ({}), so no program is run", bwrap,
                                  untrusted::excerpt(text.empty() ? "no output" : text, 120)));
  return untrusted::excerpt(space == std::string::npos ? text : text.substr(space + 1), 40);
}

}  // namespace

SandboxSpec resolve_sandbox(const SandboxSettings& settings) {
  SandboxSpec spec;
  spec.settings = settings;
  const char* override_path = std::getenv(kBwrapEnv);
  spec.bwrap = override_path && *override_path ? std::string(override_path) : find_program("bwrap");
  if (!is_executable_file(spec.bwrap))
    throw ConfigError(fmt::format(
        "--sandbox needs bubblewrap, and {} is not an executable file (install the Debian package bubblewrap), so "
        "no program is run unsandboxed",
        spec.bwrap.empty() ? std::string("bwrap was not found on PATH and it") : untrusted::excerpt(spec.bwrap, 200)));
  spec.prlimit = find_program("prlimit");
  if (::geteuid() == 0) {
    spec.run_as_uid = kNobody;
    spec.setpriv = find_program("setpriv");
  }
  if (spec.prlimit.empty() || (spec.run_as_uid && spec.setpriv.empty()))
    throw ConfigError(fmt::format("--sandbox needs {} (Debian package util-linux), which was not found, so no program "
                                  "is run unsandboxed",
                                  spec.prlimit.empty() ? "prlimit" : "setpriv"));
  spec.version = version_of(spec.bwrap);
  spec.system = system_mounts();
  spec.path_env = std::getenv("PATH") ? std::getenv("PATH") : "/usr/local/bin:/usr/bin:/bin";
  // A sandbox that cannot start here (no user namespaces, say) is refused now, with bubblewrap's own words.
  const Captured probe = capture(sandbox_argv(spec, "exit 0", "/", "", "probe"), {"PATH=" + spec.path_env}, 10.0);
  if (probe.status != 0)
    throw ConfigError(fmt::format("--sandbox: bubblewrap cannot start a sandbox on this machine ({}), so no program "
                                  "is run",
                                  untrusted::excerpt(probe.output.empty() ? "no message" : probe.output, 200)));
  return spec;
}

std::string program_folder(const std::string& command, const std::string& cwd) {
  std::vector<std::string> words;
  for (std::size_t i = 0; i < command.size() && words.size() < 64;) {
    const auto b = command.find_first_not_of(" \t", i);
    if (b == std::string::npos) break;
    const auto e = std::min(command.find_first_of(" \t", b), command.size());
    std::string w = command.substr(b, e - b);
    if (w.size() >= 2 && (w.front() == '\'' || w.front() == '"') && w.back() == w.front()) w = w.substr(1, w.size() - 2);
    words.push_back(std::move(w));
    i = e;
  }
  bool first = true;
  for (const auto& w : words) {
    if (first && (w == "exec" || w.find('=') != std::string::npos)) continue;  // `exec`, VAR=value
    const bool on_path = first && w.find('/') == std::string::npos;            // python3: looked up on PATH
    first = false;
    if (on_path || w.empty() || w.front() == '-' || w.size() > 4096) continue;
    const fs::path p = fs::path(w).is_absolute() ? fs::path(w) : fs::path(cwd) / w;
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return p.lexically_normal().parent_path().string();
  }
  return "";
}

namespace {

/// Whether `path` is `dir` or lies under it.
bool within(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.starts_with(dir) && path[dir.size()] == '/');
}

/// Whether the working directory needs a mount of its own: an empty read-only tmpfs (the program's folder may lie
/// inside), so that relative paths resolve and nothing else of it shows. Not for /, /tmp (the private /tmp stays
/// writable) or a directory the system view or a read_only entry already shows.
bool cwd_needs_mount(const SandboxSpec& spec, const std::string& cwd) {
  if (cwd == "/" || cwd == "/tmp") return false;
  for (const auto& m : spec.system)
    if (within(cwd, m.path)) return false;
  for (const auto& d : spec.settings.read_only)
    if (within(cwd, d)) return false;
  return true;
}

}  // namespace

std::vector<std::string> sandbox_argv(const SandboxSpec& spec, const std::string& shell_text, const std::string& cwd,
                                      const std::string& program_dir, const std::string& token) {
  const SandboxSettings& s = spec.settings;
  std::vector<std::string> a;
  if (spec.run_as_uid)
    a = {spec.setpriv, fmt::format("--reuid={}", *spec.run_as_uid), fmt::format("--regid={}", *spec.run_as_uid),
         "--clear-groups", "--"};
  a.insert(a.end(), {spec.bwrap, "--unshare-all", "--unshare-user"});
  if (!s.network.empty()) a.push_back("--share-net");
  a.insert(a.end(), {"--die-with-parent", "--new-session", "--cap-drop", "ALL", "--proc", "/proc", "--dev", "/dev",
                     "--tmpfs", "/tmp"});
  const bool cwd_mount = cwd_needs_mount(spec, cwd);
  if (cwd_mount) a.insert(a.end(), {"--tmpfs", cwd});
  for (const auto& m : spec.system) {
    if (m.target.empty())
      a.insert(a.end(), {"--ro-bind", m.path, m.path});
    else
      a.insert(a.end(), {"--symlink", m.target, m.path});
  }
  for (const auto& d : s.read_only) a.insert(a.end(), {"--ro-bind", d, d});
  if (!program_dir.empty()) a.insert(a.end(), {"--ro-bind", program_dir, program_dir});
  if (cwd_mount) a.insert(a.end(), {"--remount-ro", cwd});
  a.insert(a.end(), {"--remount-ro", "/", "--chdir", cwd, "--clearenv"});
  const std::pair<const char*, std::string> env[] = {
      {"PATH", spec.path_env}, {"HOME", "/tmp"}, {"TMPDIR", "/tmp"}, {"LANG", "C.UTF-8"},
      {"PYTHONDONTWRITEBYTECODE", "1"}, {"ADVPLAN_POLICY_TOKEN", token}};
  for (const auto& [name, value] : env) a.insert(a.end(), {"--setenv", name, value});
  const long long bytes = static_cast<long long>(s.memory_mb) * 1024 * 1024;
  a.insert(a.end(), {"--", spec.prlimit, fmt::format("--cpu={}:{}", s.cpu_seconds, s.cpu_seconds + 1),
                     fmt::format("--as={}", bytes), fmt::format("--nofile={}", s.open_files),
                     fmt::format("--nproc={}", s.processes), "--", "/bin/sh", "-c", shell_text});
  return a;
}

nlohmann::ordered_json sandbox_json(const SandboxSpec& spec) {
  const SandboxSettings& s = spec.settings;
  nlohmann::ordered_json j;
  j["tool"] = "bwrap";
  j["version"] = spec.version;
  j["user"] = spec.run_as_uid ? fmt::format("nobody ({})", *spec.run_as_uid) : std::string("the invoking user");
  j["limits"] = {{"cpu_seconds", s.cpu_seconds}, {"memory_mb", s.memory_mb}, {"open_files", s.open_files},
                 {"processes", s.processes}};
  j["network"] = s.network.empty() ? nlohmann::ordered_json(false) : nlohmann::ordered_json(s.network);
  j["read_only"] = s.read_only;
  return j;
}

namespace {
std::mutex g_sandbox_mutex;
std::optional<SandboxSpec> g_sandbox;
}  // namespace

void set_process_sandbox(std::optional<SandboxSpec> spec) {
  const std::lock_guard lock(g_sandbox_mutex);
  g_sandbox = std::move(spec);
}

std::optional<SandboxSpec> process_sandbox() {
  const std::lock_guard lock(g_sandbox_mutex);
  return g_sandbox;
}

int sandbox_signal_of_status(int status) { return status > 128 && status < 128 + 65 ? status - 128 : 0; }

}  // namespace advplan
