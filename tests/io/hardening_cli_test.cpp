// Hostile input through the `advplan` executable (the hardening issue): every bad input is one sentence and
// exit status 1, never "internal error" (status 3); data never becomes a path outside the output directory;
// policy processes end with the run, on Ctrl-C too; evaluate's failure summary and --fail-on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "advplan/io/csv.hpp"
#include "advplan/io/run_store.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::shell_quote;
using testing::TempDir;
using Clock = std::chrono::steady_clock;

using testing::kSource;
using testing::kBinary;

testing::CommandResult cli(const std::string& args, const TempDir& dir) {
  return testing::run_command(shell_quote(kBinary) + " " + args, dir);
}

/// A config of `seeds` scenarios of one template, one RED baseline and no studies: a run of a second or so.
std::string tiny_config(const TempDir& dir, int seeds = 2, const std::string& extra = "") {
  const std::string path = dir / "tiny.yaml";
  testing::write_file(path, "name: tiny\nseed: 5\ncorpus:\n  templates: [urban]\n  seeds: [100, " +
                                std::to_string(99 + seeds) + "]\n  template_dir: " + kSource +
                                "/configs/templates\nconditions: [single]\nsimulator: {replications: 10}\n"
                                "bootstrap: {resamples: 20, seed: 7}\nstudies: {rubric: false, framing: false, "
                                "components: false}\n" + extra);
  return path;
}

std::string python_policy(const std::string& args) {
  return "exec:python3 " + kSource + "/tests/data/hostile_policy.py " + args;
}

bool alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  std::getline(in, stat);
  const auto close = stat.rfind(')');
  return close == std::string::npos || stat[close + 2] != 'Z';
}

// ---- 10. bad input is a sentence, not "internal error" ---------------------------------------------------

TEST(HardeningCli, TheCliAndItsLibrariesNeverLoadFromTheWorkingDirectory) {
  // An empty RUNPATH entry (CMake pads a build-tree RPATH with them) or a relative one makes the loader search the
  // current directory: a library planted where advplan runs would be loaded. Every entry of the CLI, libadvplan.so,
  // its modules and the Python module must be absolute or $ORIGIN-relative (cmake/AdvplanOriginRpath.cmake).
  TempDir dir("cli-runpath");
  if (testing::run_command("command -v readelf", dir).status != 0) GTEST_SKIP() << "readelf (binutils) is not installed";
  const std::filesystem::path build = std::filesystem::path(kBinary).parent_path();
  std::vector<std::string> files{kBinary};
  for (const auto& e : std::filesystem::recursive_directory_iterator(build)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && (name.starts_with("libadvplan") || name.starts_with("_advplan")) &&
        name.find(".so") != std::string::npos)
      files.push_back(e.path().string());
  }
  ASSERT_GE(files.size(), 3u) << "found neither libadvplan.so nor its modules beside " << kBinary;
  for (const auto& f : files) {
    const auto r = testing::run_command("(readelf -d " + shell_quote(f) + " | grep -E 'RUNPATH|RPATH')", dir);
    if (r.status != 0) continue;  // no RUNPATH: the loader's default path only
    const auto open = r.out.find('['), close = r.out.rfind(']');
    ASSERT_NE(open, std::string::npos) << f << ": " << r.out;
    const std::string path = r.out.substr(open + 1, close - open - 1);
    std::size_t start = 0;
    for (;;) {
      const auto end = path.find(':', start);
      const std::string entry = path.substr(start, end == std::string::npos ? std::string::npos : end - start);
      EXPECT_TRUE(!entry.empty() && (entry[0] == '/' || entry.starts_with("$ORIGIN")))
          << f << ": the entry '" << entry << "' of " << path << " is empty or relative";
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
}

TEST(HardeningCli, AnOverflowingNumberInAPlanIsASentence) {
  TempDir dir("h-num");
  testing::write_file(dir / "plan.json", R"({"plan_id": "p", "side": "BLUE", "objective": 1e400, "actions": [], "chain": []})");
  const auto r = cli("validate " + shell_quote(dir / "plan.json") + " --scenario urban-100", dir);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("invalid JSON: number overflow parsing '1e400'"));
  EXPECT_THAT(r.err, Not(HasSubstr("internal error")));
}

TEST(HardeningCli, ADeeplyNestedPlanFileIsASentence) {
  TempDir dir("h-deep");
  testing::write_file(dir / "plan.json", std::string(40000, '[') + std::string(40000, ']'));
  const auto r = cli("validate " + shell_quote(dir / "plan.json") + " --scenario urban-100", dir);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("JSON nests deeper than 64 levels"));
}

TEST(HardeningCli, ANonScalarYamlKeyIsASentence) {
  TempDir dir("h-key");
  const std::string cfg = tiny_config(dir, 2, "policies:\n  ? [a, b]\n  : {lambda: 0.5}\n");
  const auto r = cli("scenarios " + shell_quote(cfg), dir);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("a key must be plain text, not a list or a mapping"));
  EXPECT_THAT(r.err, HasSubstr(cfg));
}

TEST(HardeningCli, ARunMetadataDirectoryIsASentence) {
  TempDir dir("h-meta");
  const std::string cfg = tiny_config(dir);
  fs::create_directories(fs::path(dir / "out") / "run_metadata.json" / "inside");
  const auto r = cli("run " + shell_quote(cfg) + " --out " + shell_quote(dir / "out"), dir);
  EXPECT_EQ(r.status, 1) << r.err;
  // A run writes into a fresh directory (run/run_store_test.cpp): this one is refused before anything is read.
  EXPECT_THAT(r.err, HasSubstr("output directory is not empty"));
}

// ---- 5. non-UTF-8 text -----------------------------------------------------------------------------------

TEST(HardeningCli, ALatin1ConfigIsRefusedWithItsLine) {
  TempDir dir("h-latin1");
  const std::string cfg = tiny_config(dir, 2, "# caf\xe9 cr\xe8me\n");
  const auto t0 = Clock::now();
  const auto r = cli("run " + shell_quote(cfg) + " --out " + shell_quote(dir / "out"), dir);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("tiny.yaml: line 11, column 6: the file is not UTF-8 text (byte 0xE9)"));
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 20.0) << "refused before any work";
}

TEST(HardeningCli, ALatin1TemplateIsRefused) {
  TempDir dir("h-latin1-t");
  fs::create_directories(dir.path() / "templates");
  std::string t = testing::read_file(kSource + "/configs/templates/urban.yaml");
  t.insert(0, "# Stra\xdf" "e\n");
  testing::write_file(dir / "templates/urban.yaml", t);
  testing::write_file(dir / "c.yaml", "name: x\ncorpus:\n  templates: [urban]\n  seeds: [100, 101]\n  template_dir: " +
                                          (dir / "templates") + "\n");
  const auto r = cli("scenarios " + shell_quote(dir / "c.yaml"), dir);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("urban.yaml: line 1, column 7: the file is not UTF-8 text"));
}

// ---- 6. joint work bounds ----------------------------------------------------------------------------------

TEST(HardeningCli, UnboundedWorkIsRefusedWithASentence) {
  TempDir dir("h-work");
  testing::write_file(dir / "seeds.yaml", "name: x\ncorpus:\n  templates: [urban]\n  seeds: [0, 1000000000000]\n"
                                          "  template_dir: " + kSource + "/configs/templates\n");
  auto r = cli("scenarios " + shell_quote(dir / "seeds.yaml"), dir);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("[0, 1000000000000] gives 1000000000001 seeds x 1 templates; at most 10000000 "
                               "scenarios fit in one run"));
  const std::string cfg = tiny_config(dir, 2, "");
  std::string text = testing::read_file(cfg);
  text.replace(text.find("simulator: {replications: 10}"), 29, "simulator: {replications: 100000, time_limit: 1000000}");
  testing::write_file(dir / "sim.yaml", text);
  r = cli("scenarios " + shell_quote(dir / "sim.yaml"), dir);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("replications x time_limit is 100000 x 1000000 = 100000000000; at most 10000000"));
}

// ---- 7. tables --by never writes outside its directory -----------------------------------------------------

TEST(HardeningCli, TablesByTurnsCellValuesIntoSafeDirectoryNames) {
  TempDir dir("h-by");
  const std::string run = dir / "run";
  fs::copy(kSource + "/tests/golden/small", run, fs::copy_options::recursive);
  fs::remove_all(fs::path(run) / "tables");
  // Rewrite the template column of scenarios.csv: one hostile relative path, one absolute.
  io::CsvTable sc = io::CsvTable::read(run + "/scenarios.csv");
  const std::string esc_abs = (dir / "abs-target");
  std::string text = testing::read_file(run + "/scenarios.csv");
  for (const auto& [from, to] : {std::pair<std::string, std::string>{",urban,", ",../../escaped,"},
                                 {",air-defense,", "," + esc_abs + ","}}) {
    for (auto p = text.find(from); p != std::string::npos; p = text.find(from, p + to.size()))
      text.replace(p, from.size(), to);
  }
  testing::write_file(run + "/scenarios.csv", text);
  io::write_manifest(run);  // re-sealed, as if the run had written these cells (run/run_store_test.cpp covers a changed file)
  const std::string out = dir / "sub/by";
  const auto r = cli("tables " + shell_quote(run) + " --by template --out " + shell_quote(out), dir);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir / "escaped"));
  EXPECT_FALSE(fs::exists(dir.path().parent_path() / "escaped"));
  EXPECT_FALSE(fs::exists(esc_abs));
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(out)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0], ".._.._escaped");
  EXPECT_EQ(names[1][0], '_');  // "/tmp/..." -> "_tmp_..."
}

// ---- 11. policy processes end with the run ------------------------------------------------------------------

TEST(HardeningCli, APipedRunDoesNotWaitForADetachedGrandchild) {
  TempDir dir("h-pipe");
  const std::string cfg = tiny_config(dir);
  const std::string pidfile = dir / "grandchild.pid";
  const auto t0 = Clock::now();
  const auto r = testing::run_command(
      "( " + shell_quote(kBinary) + " evaluate --config " + shell_quote(cfg) + " --red single --no-reference --blue " +
          shell_quote(python_policy("escape " + pidfile)) + " --out " + shell_quote(dir / "out") + " 2>&1 | cat )",
      dir);
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_LT(took, 30.0) << "the pipe was held open by the policy's grandchild";
  std::ifstream in(pidfile);
  long pid = 0;
  ASSERT_TRUE(in >> pid);
  EXPECT_FALSE(alive(static_cast<pid_t>(pid)));
}

TEST(HardeningCli, CtrlCEndsABusyPolicy) {
  TempDir dir("h-sigint");
  const std::string cfg = tiny_config(dir);
  const std::string pidfile = dir / "policy.pid";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::string blue = python_policy("busy " + pidfile);
    const std::string out = dir / "out";
    std::freopen("/dev/null", "w", stdout);
    ::execl(kBinary.c_str(), kBinary.c_str(), "evaluate", "--config", cfg.c_str(), "--red", "single", "--no-reference",
            "--blue", blue.c_str(), "--out", out.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  long policy = 0;
  for (int i = 0; i < 1000 && policy == 0; ++i) {
    std::ifstream in(pidfile);
    if (!(in >> policy)) policy = 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(policy, 0) << "the policy never started";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // a request is in flight
  ::kill(child, SIGINT);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << status;
  const auto t0 = Clock::now();
  while (alive(static_cast<pid_t>(policy)) && std::chrono::duration<double>(Clock::now() - t0).count() < 3.0)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(alive(static_cast<pid_t>(policy))) << "the busy policy outlived advplan";
  if (alive(static_cast<pid_t>(policy))) ::kill(static_cast<pid_t>(policy), SIGKILL);
}

// A policy that never reads its stdin, and the grandchild it detached, do not outlive a kill -9 of advplan: the
// guard process sees advplan's end and kills every process that carries one of its worker tokens.
TEST(HardeningCli, NoPolicyProcessOutlivesAKillDashNineOfAdvplan) {
  TempDir dir("h-kill9");
  const std::string cfg = tiny_config(dir, 2, "exec: {timeout_s: 120}\n");
  const std::string pidfile = dir / "policy.pid";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::string blue = python_policy("deaf " + pidfile);
    const std::string out = dir / "out";
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    ::execl(kBinary.c_str(), kBinary.c_str(), "evaluate", "--config", cfg.c_str(), "--red", "single", "--no-reference",
            "--workers", "1", "--blue", blue.c_str(), "--out", out.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  auto read_pid = [](const std::string& path) {
    long pid = 0;
    for (int i = 0; i < 1500 && pid == 0; ++i) {
      std::ifstream in(path);
      if (!(in >> pid)) pid = 0;
      if (pid == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return static_cast<pid_t>(pid);
  };
  const pid_t policy = read_pid(pidfile), grandchild = read_pid(pidfile + ".grand");
  ASSERT_GT(policy, 0) << "the policy never started";
  ASSERT_GT(grandchild, 0) << "the policy's grandchild never started";
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  const auto t0 = Clock::now();
  while ((alive(policy) || alive(grandchild)) && std::chrono::duration<double>(Clock::now() - t0).count() < 5.0)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_FALSE(alive(policy)) << "the policy outlived a kill -9 of advplan";
  EXPECT_FALSE(alive(grandchild)) << "the policy's detached grandchild outlived a kill -9 of advplan";
  for (const pid_t p : {policy, grandchild})
    if (alive(p)) ::kill(p, SIGKILL);
}

// ---- 12. evaluate: one row per cause, --fail-on ---------------------------------------------------------------

TEST(HardeningCli, EvaluateSummarisesFailuresByCauseAndFailOnSetsTheStatus) {
  TempDir dir("h-eval");
  const std::string cfg = tiny_config(dir, 10);
  const std::string base = "evaluate --config " + shell_quote(cfg) + " --red single --no-reference --budget '' --blue " +
                           shell_quote(python_policy("one-in-five"));
  auto r = cli(base + " --out " + shell_quote(dir / "a"), dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string md = testing::read_file(dir / "a/summary.md");
  EXPECT_THAT(md, HasSubstr("2 row(s)"));  // seeds 100 and 105
  EXPECT_THAT(md, HasSubstr("| blue: exec: invalid JSON in response | 2 | urban-100 | single |"));
  EXPECT_THAT(md, HasSubstr("the line began \"garbage, not JSON\""));  // what the policy wrote, quoted
  EXPECT_THAT(md, Not(HasSubstr("restart limit")));
  r = cli(base + " --fail-on 0.1 --out " + shell_quote(dir / "b"), dir);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("failed on 2 of 10 rows, more than --fail-on 0.1 allows"));
  r = cli(base + " --fail-on 0.2 --out " + shell_quote(dir / "c"), dir);
  EXPECT_EQ(r.status, 0) << r.err;
}

// An output path that is a character device, a FIFO or a symbolic link is never replaced by a regular file (as root,
// `advplan map urban-100 --out /dev/null` once replaced the system's /dev/null). A character device (a private
// node made with mknod, as /dev/null is made) and a FIFO with a reader are written through; a FIFO nobody reads is a
// sentence, not a hang; a symbolic link to a file and a directory are refused, naming the path, and left as they were.
// Every output option goes through the one writer (map, questions, scenarios, quiz); map stands for them here.
TEST(HardeningCli, AnOutputThatIsNotARegularFileIsWrittenThroughOrRefusedNeverReplaced) {
  TempDir dir("out-kinds");
  const std::string dev = dir / "null";
  if (::mknod(dev.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
    const auto x = cli("map urban-100 --out " + shell_quote(dev), dir);
    EXPECT_EQ(x.status, 0) << x.err;
    EXPECT_TRUE(fs::is_character_file(dev)) << "the device was replaced";
  } else {
    ADD_FAILURE() << "mknod: " << std::strerror(errno) << " (the tests run as root, as CI does)";
  }
  const std::string fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const auto nobody = cli("map urban-100 --out " + shell_quote(fifo), dir);
  EXPECT_EQ(nobody.status, 1);
  EXPECT_THAT(nobody.err, HasSubstr(fifo + ": a FIFO that nobody reads"));
  std::string got;
  std::thread reader([&] {
    std::ifstream in(fifo, std::ios::binary);
    got.assign(std::istreambuf_iterator<char>(in), {});
  });
  const auto through = cli("map urban-100 --out " + shell_quote(fifo), dir);
  reader.join();
  EXPECT_EQ(through.status, 0) << through.err;
  EXPECT_THAT(got, ::testing::StartsWith("{\"type\":\"FeatureCollection\""));
  EXPECT_TRUE(fs::is_fifo(fifo));
  const std::string target = dir / "target.json", link = dir / "link.json";
  testing::write_file(target, "keep\n");
  fs::create_symlink(target, link);
  const auto l = cli("map urban-100 --out " + shell_quote(link), dir);
  EXPECT_EQ(l.status, 1);
  EXPECT_THAT(l.err, HasSubstr(link + ": is a symbolic link; advplan does not replace one"));
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(testing::read_file(target), "keep\n");
  fs::create_directory(dir / "adir");
  const auto d = cli("scenarios --out " + shell_quote(dir / "adir"), dir);
  EXPECT_EQ(d.status, 1);
  EXPECT_THAT(d.err, HasSubstr(dir / "adir" + ": is not a regular file"));
  EXPECT_TRUE(fs::is_directory(dir / "adir"));
}

// A file handed in without end is refused at its kind's limit, not read until memory runs out: `validate
// /dev/zero` once read without bound and died by SIGABRT. Configs, plans, templates and metadata are documents
// (64 MiB); a MANIFEST, a journal and a questions file are lists (512 MiB).
TEST(HardeningCli, AFileWithoutEndIsRefusedAtItsLimit) {
  TempDir dir("no-end");
  const auto v = cli("validate /dev/zero --scenario urban-100", dir);
  EXPECT_EQ(v.status, 1) << v.err;
  EXPECT_THAT(v.err, HasSubstr("/dev/zero: larger than the limit of 67108864 bytes"));
  const auto c = cli("run /dev/zero --out " + shell_quote(dir / "r"), dir);
  EXPECT_EQ(c.status, 1) << c.err;
  EXPECT_THAT(c.err, HasSubstr("/dev/zero: is not a regular file, so it is not read as a config"));
  EXPECT_FALSE(std::filesystem::exists(dir / "r"));
}

}  // namespace
}  // namespace advplan
