#pragma once
// The sandbox external programs run in under `--sandbox` / `sandbox:` (docs/POLICIES.md "The sandbox"): bubblewrap
// (Debian `bubblewrap`) with every namespace unshared, a read-only view of the system's directories and of the
// program's own folder, a private /tmp and /proc, an empty environment but for a few fixed variables, and resource
// limits set inside the sandbox by prlimit (util-linux). ProcessPool starts each worker through sandbox_argv().
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace advplan {

/// What a config (`sandbox:`) or the --sandbox flag asks for. Limits apply to each program started.
struct SandboxSettings {
  int cpu_seconds = 3600;  ///< RLIMIT_CPU of each process (SIGXCPU at the limit, SIGKILL one second later)
  int memory_mb = 4096;    ///< RLIMIT_AS (address space) of each process, MiB
  int open_files = 256;    ///< RLIMIT_NOFILE
  int processes = 64;      ///< RLIMIT_NPROC, counted inside the sandbox's own user namespace
  /// Declared endpoints the programs need (a model's URL). Non-empty: the network namespace is shared with the
  /// host (bubblewrap cannot filter by address), and the run records it.
  std::vector<std::string> network;
  /// Host directories (absolute) the programs may read besides the system's and their own folder.
  std::vector<std::string> read_only;
  bool operator==(const SandboxSettings&) const = default;
};

/// A mount of the system view: a read-only bind of `path`, or a symlink `path` -> `target` (a merged /usr's /bin).
struct SandboxMount {
  std::string path;
  std::string target;  ///< empty: bind `path` read-only; else the symlink's target
  bool operator==(const SandboxMount&) const = default;
};

/// The settings and what resolve_sandbox() found on this machine: everything sandbox_argv() needs.
struct SandboxSpec {
  SandboxSettings settings;
  std::string bwrap;    ///< absolute path of bwrap
  std::string version;  ///< `bwrap --version`'s version, e.g. "0.8.0"
  std::string prlimit;  ///< absolute path of prlimit (util-linux), run inside the sandbox
  std::string setpriv;  ///< absolute path of setpriv (util-linux); used only when run_as_uid is set
  /// When advplan runs as root the kernel applies no process limit (RLIMIT_NPROC) to root's processes, even in a
  /// user namespace, so the sandbox is entered as this unprivileged user (nobody, 65534).
  std::optional<unsigned> run_as_uid;
  std::vector<SandboxMount> system;  ///< /usr, /bin, /lib*, /sbin and the files of /etc a program needs
  std::string path_env;              ///< PATH inside the sandbox (advplan's own PATH)
  bool resolved() const { return !bwrap.empty(); }
};

/// The environment variable that names the bwrap binary to use instead of the one on PATH (tests point it at a
/// missing file to see the refusal).
inline constexpr const char* kBwrapEnv = "ADVPLAN_BWRAP";

/// Finds bwrap (ADVPLAN_BWRAP, else PATH), prlimit and setpriv, reads bwrap's version and checks, by starting
/// /bin/true in a sandbox, that it works here. Throws ConfigError with one sentence when it does not: --sandbox
/// never runs a program unsandboxed.
SandboxSpec resolve_sandbox(const SandboxSettings& settings);

/// The program's own folder: the directory of the first word of `command` (after the program name when that is
/// looked up on PATH) that names an existing regular file, relative to `cwd`; "" when none does.
std::string program_folder(const std::string& command, const std::string& cwd);

/// The argv that runs `/bin/sh -c shell_text` in the sandbox, in `cwd`, with ADVPLAN_POLICY_TOKEN=`token` in its
/// environment. A function of its arguments only (tested for a given spec).
std::vector<std::string> sandbox_argv(const SandboxSpec& spec, const std::string& shell_text, const std::string& cwd,
                                      const std::string& program_dir, const std::string& token);

/// What run_metadata.json records under "sandbox" (docs/TRACES.md): the tool, version, user, limits and network.
nlohmann::ordered_json sandbox_json(const SandboxSpec& spec);

/// The sandbox of this process's external programs: set once by a command with --sandbox or `sandbox:` (after
/// resolve_sandbox), read by every ProcessPool whose options name none, so no program of the process starts
/// outside it, and by the run's metadata. nullopt: no sandbox (the default).
void set_process_sandbox(std::optional<SandboxSpec> spec);
std::optional<SandboxSpec> process_sandbox();

/// Why a bwrap exit status stands for a signal: bwrap exits with 128 + N when the program was killed by signal N.
/// The signal number, or 0 when `status` is an ordinary exit status.
int sandbox_signal_of_status(int status);

}  // namespace advplan
