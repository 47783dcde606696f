// The run store (docs/TRACES.md "Run directory and MANIFEST"): a run directory holds one run (fresh directory,
// --force, --resume), its MANIFEST lists every file with its sha256 and readers refuse a directory that does
// not match it, temporary files are created exclusively, a run in which every row failed keeps its rows, and a
// run killed at random moments and resumed writes the same bytes as an uninterrupted one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include <fmt/format.h>

#include <chrono>
#include <functional>

#include "advplan/core/error.hpp"
#include "advplan/run/progress.hpp"
#include "advplan/run/summaries.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/io/sha256.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::read_file;
using testing::TempDir;
using testing::compare_runs;
using testing::run_files;
using testing::write_file;

using testing::kSource;
using testing::kBinary;
using testing::quote;

/// tests/data/small.yaml with an absolute template_dir and `seeds` replaced.
std::string seeded_config(const TempDir& dir, const std::string& seeds = "[100, 102]", const std::string& name = "small.yaml") {
  return testing::small_config(dir, {testing::seeds(seeds)}, name);
}

using testing::advplan;
using testing::expect_one_line_error;

// ---- one run per directory --------------------------------------------------------------------------------------

TEST(RunStore, ANonEmptyDirectoryIsRefusedNamingForceAndResume) {
  TempDir dir("rs-nonempty");
  const std::string cfg = seeded_config(dir), out = dir / "run";
  fs::create_directories(out);
  write_file(out + "/notes.txt", "mine\n");
  const auto x = advplan("run " + quote(cfg) + " --out " + quote(out), dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr(out));
  EXPECT_THAT(x.err, HasSubstr("--force"));
  EXPECT_THAT(x.err, HasSubstr("--resume"));
  EXPECT_EQ(read_file(out + "/notes.txt"), "mine\n") << "a refused run must leave the directory alone";
  EXPECT_FALSE(fs::exists(out + "/per_scenario.csv"));
}

// Two runs into one directory would mix their work files: the second one is refused while the first holds the
// directory's lock, whatever its mode, and the lock ends with the holder.
TEST(RunStore, ASecondRunIntoALockedDirectoryIsRefused) {
  TempDir dir("rs-lock");
  const std::string cfg = seeded_config(dir), out = dir / "out";
  fs::create_directories(out);
  {
    const io::DirectoryLock held(out);  // stands for a run in another process: flock is per open directory
    EXPECT_THROW(io::DirectoryLock{out}, IoError);
    for (const std::string mode : {"", " --force", " --resume"}) {
      const auto r = advplan("run " + quote(cfg) + " --out " + quote(out) + mode + " --progress none", dir);
      expect_one_line_error(r);
      EXPECT_THAT(r.err, HasSubstr("another advplan run or merge is writing into this directory")) << mode;
    }
    EXPECT_TRUE(fs::is_empty(out));
  }
  const auto r = advplan("run " + quote(cfg) + " --out " + quote(out) + " --progress none", dir);
  EXPECT_EQ(r.status, 0) << r.err;
  const io::DirectoryLock again(out);  // the finished run released it
  EXPECT_TRUE(again.held());
}

TEST(RunStore, ARerunWithForceLeavesNothingOfTheEarlierRun) {
  TempDir dir("rs-force");
  const std::string cfg = seeded_config(dir), out = dir / "run", ref = dir / "ref";
  ASSERT_EQ(advplan("run " + quote(cfg) + " --out " + quote(ref) + " --threads 2", dir).status, 0);
  // An earlier, different run in the directory: stale study, figure and slice files.
  fs::create_directories(out + "/studies");
  fs::create_directories(out + "/figures");
  write_file(out + "/studies/framing.csv", "stale\n");
  write_file(out + "/figures/old.png", "stale\n");
  write_file(out + "/slice_old.csv", "stale\n");
  write_file(out + "/MANIFEST", "stale\n");  // what makes it a run that --force may clear
  const auto x = advplan("run " + quote(cfg) + " --out " + quote(out) + " --threads 2 --force", dir);
  ASSERT_EQ(x.status, 0) << x.err;
  EXPECT_EQ(compare_runs(ref, out), "");
  EXPECT_FALSE(fs::exists(out + "/figures/old.png"));
  EXPECT_FALSE(fs::exists(out + "/slice_old.csv"));
}

// --force clears only a directory that holds a run, and never one holding the current directory or an input:
// `run --out .. --force` from a subdirectory once deleted the parent, the working directory and the config; `merge
// SHARDS --out DIR --force` with the shards inside DIR deleted them before reading them.
TEST(RunStore, ForceClearsOnlyARunAndNeverTheWorkingDirectoryOrAnInput) {
  TempDir dir("rs-force-guard");
  const std::string cfg = seeded_config(dir);
  fs::create_directories(dir / "sub");
  write_file(dir / "sub/notes.txt", "mine\n");
  // The parent of the working directory: holds the cwd, the config and no run.
  const auto up = testing::run_command("cd " + quote(dir / "sub") + " && " + quote(kBinary) + " run " + quote(cfg) +
                                           " --out .. --force",
                                       dir);
  EXPECT_EQ(up.status, 1) << up.err;
  EXPECT_THAT(up.err, HasSubstr("--force will not clear"));
  EXPECT_TRUE(fs::exists(cfg));
  EXPECT_EQ(read_file(dir / "sub/notes.txt"), "mine\n");
  // A directory that holds no run.
  fs::create_directories(dir / "papers");
  write_file(dir / "papers/draft.tex", "precious\n");
  const auto other = advplan("run " + quote(cfg) + " --out " + quote(dir / "papers") + " --force", dir);
  EXPECT_EQ(other.status, 1);
  EXPECT_THAT(other.err, HasSubstr(dir / "papers" + ": --force clears only a directory that holds an advplan run"));
  EXPECT_EQ(read_file(dir / "papers/draft.tex"), "precious\n");
  // A run whose directory holds the config.
  const std::string inner = dir / "withcfg";
  ASSERT_EQ(advplan("run " + quote(cfg) + " --out " + quote(inner), dir).status, 0);
  fs::copy_file(cfg, inner + "/my.yaml");
  const auto own = advplan("run " + quote(inner + "/my.yaml") + " --out " + quote(inner) + " --force", dir);
  EXPECT_EQ(own.status, 1);
  EXPECT_THAT(own.err, HasSubstr("holds an input of this command (" + inner + "/my.yaml)"));
  EXPECT_TRUE(fs::exists(inner + "/my.yaml"));
  // Shards inside the merge's output directory, which holds a run too.
  for (int s = 0; s < 2; ++s)
    ASSERT_EQ(advplan("run " + quote(cfg) + " --shard " + std::to_string(s) + "/2 --out " +
                          quote(inner + "/shard-" + std::to_string(s)),
                      dir)
                  .status,
              0);
  const auto m = advplan("merge " + quote(inner + "/shard-0") + " " + quote(inner + "/shard-1") + " --out " +
                             quote(inner) + " --force",
                         dir);
  EXPECT_EQ(m.status, 1) << m.err;
  EXPECT_THAT(m.err, HasSubstr("holds an input of this command"));
  EXPECT_TRUE(fs::exists(inner + "/shard-0/MANIFEST"));
  EXPECT_TRUE(fs::exists(inner + "/shard-1/MANIFEST"));
}

// A hostile run directory whose tables/ or frontier/ is a link to elsewhere is not written through, and an analysis
// --out inside a run must be a derived folder (the README's frontier example once broke the next `tables`).
TEST(RunStore, AnalysesWriteOnlyIntoRealDerivedFoldersOfARun) {
  TempDir dir("rs-derived");
  const std::string cfg = seeded_config(dir, "[100, 100]"), run = dir / "run", outside = dir / "outside";
  ASSERT_EQ(advplan("run " + quote(cfg) + " --out " + quote(run) + " --progress none", dir).status, 0);
  fs::create_directories(outside);
  for (const std::string folder : {"tables", "frontier"}) {
    fs::remove_all(run + "/" + folder);
    fs::create_directory_symlink(outside, run + "/" + folder);
    const auto r = advplan(folder + " " + quote(run), dir);
    expect_one_line_error(r);
    EXPECT_THAT(r.err, HasSubstr("is a symbolic link inside the run")) << folder;
    EXPECT_TRUE(fs::is_empty(outside)) << folder << " wrote through the link";
    fs::remove(run + "/" + folder);
  }
  // the same from inside the run, as `advplan tables .`
  fs::create_directory_symlink(outside, run + "/tables");
  const auto here = testing::run_command("cd " + quote(run) + " && " + quote(kBinary) + " tables .", dir);
  expect_one_line_error(here);
  EXPECT_THAT(here.err, HasSubstr("is a symbolic link inside the run"));
  EXPECT_TRUE(fs::is_empty(outside));
  fs::remove(run + "/tables");
  // a link one level down (tables/by_template) is refused too
  fs::create_directories(run + "/tables");
  fs::create_directory_symlink(outside, run + "/tables/by_template");
  expect_one_line_error(advplan("tables " + quote(run) + " --by template", dir));
  EXPECT_TRUE(fs::is_empty(outside));
  fs::remove(run + "/tables/by_template");

  const auto bad = advplan("frontier " + quote(run) + " --out " + quote(run + "/frontier4"), dir);
  expect_one_line_error(bad);
  EXPECT_THAT(bad.err, HasSubstr("frontier-frontier4"));
  EXPECT_FALSE(fs::exists(run + "/frontier4"));
  const auto good = advplan("frontier " + quote(run) + " --out " + quote(run + "/frontier-4d"), dir);
  EXPECT_EQ(good.status, 0) << good.err;
  const auto tables = advplan("tables " + quote(run), dir);
  EXPECT_EQ(tables.status, 0) << tables.err;
  EXPECT_EQ(advplan("check " + quote(run), dir).status, 0);
}

// A forged run (its MANIFEST rewritten to match) with impossible numbers is refused on read, naming the cell: once
// Table 3 printed "inf [0.447, inf]" and the meta-game took an advantage of -5.
TEST(RunStore, ReadersRefuseNumbersOutsideTheirDocumentedRange) {
  TempDir dir("rs-ranges");
  const std::string cfg = seeded_config(dir, "[100, 100]"), run = dir / "run";
  ASSERT_EQ(advplan("run " + quote(cfg) + " --out " + quote(run) + " --progress none", dir).status, 0);
  const std::string per = run + "/per_scenario.csv", original = testing::read_file(per);
  io::CsvTable t = io::CsvTable::read(per);
  const std::size_t adv = t.col("advantage");
  for (const std::string bad : {"inf", "nan", "1e308", "-5", "1.5"}) {
    io::CsvTable forged(t.header());
    for (std::size_t i = 0; i < t.size(); ++i) {
      auto row = t.rows()[i];
      if (i == 0) row[adv] = bad;
      forged.add(row);
    }
    testing::write_file(per, forged.to_string());
    io::write_manifest(run);
    for (const std::string cmd : {"tables", "metagame", "frontier"}) {
      const auto r = advplan(cmd + " " + quote(run), dir);
      expect_one_line_error(r);
      EXPECT_THAT(r.err, HasSubstr("column 'advantage' is " + bad + ", outside its documented range [0, 1]"))
          << cmd << " " << bad;
    }
  }
  testing::write_file(per, original);
  io::write_manifest(run);
  ASSERT_EQ(advplan("tables " + quote(run), dir).status, 0);

  // a candidate set of more rows than any run writes
  const std::string cand = run + "/candidates.csv";
  io::CsvTable c = io::CsvTable::read(cand);
  ASSERT_GT(c.size(), 0u);
  const auto first = c.rows()[0];
  for (int i = 0; i < 1025; ++i) c.add(first);
  testing::write_file(cand, c.to_string());
  io::write_manifest(run);
  const auto r = advplan("frontier " + quote(run), dir);
  expect_one_line_error(r);
  EXPECT_THAT(r.err, HasSubstr("has more than 1024 rows"));
}

// A MANIFEST of 100 MB (a sparse file: no disk) is refused by its size, not read whole; a table filtered from a file
// names that file in its errors (a duplicate-row error once said "advplan: : scenario ...").
TEST(RunStore, AHugeManifestIsRefusedAndFilteredTablesKeepTheirFileName) {
  TempDir dir("rs-huge-manifest");
  const std::string run = dir / "run";
  fs::create_directories(run);
  { std::ofstream(run + "/MANIFEST"); }
  fs::resize_file(run + "/MANIFEST", 100u << 20);
  const auto r = advplan("check " + quote(run), dir);
  expect_one_line_error(r);
  EXPECT_THAT(r.err, HasSubstr("larger than the limit of"));
  const io::CsvTable t = io::CsvTable::parse("scenario_id,status\na,ok\nb,failed\n", "per_scenario.csv");
  EXPECT_EQ(ok_rows(t).source(), "per_scenario.csv");
}

TEST(RunStore, ManifestListsEveryFileWithItsSha256) {
  TempDir dir("rs-manifest");
  const std::string cfg = seeded_config(dir), out = dir / "run";
  ASSERT_EQ(advplan("run " + quote(cfg) + " --out " + quote(out), dir).status, 0);
  const auto listed = io::read_manifest(out);
  std::set<std::string> names;
  for (const auto& [rel, sum] : listed) {
    names.insert(rel);
    EXPECT_EQ(sum, io::sha256_hex(read_file(out + "/" + rel))) << rel;
  }
  for (const auto& [rel, text] : run_files(out))
    if (rel != "MANIFEST") {
      EXPECT_TRUE(names.contains(rel)) << rel << " is not in MANIFEST";
    }
  for (const char* f : {"per_scenario.csv", "scenarios.csv", "candidates.csv", "bootstrap_summary.csv",
                        "studies/framing.csv", "tables/table3_policy_comparison.md"})
    EXPECT_TRUE(names.contains(f)) << f;
  // run_metadata.json is written after MANIFEST and records its hash.
  EXPECT_THAT(read_file(out + "/run_metadata.json"), HasSubstr(io::sha256_hex(read_file(out + "/MANIFEST"))));
}

struct Tamper {
  std::string name;
  std::function<void(const std::string& run)> apply;
  std::string must_name;  ///< relative to the run directory
};
void PrintTo(const Tamper& t, std::ostream* os) { *os << t.name; }

class TablesRefuse : public ::testing::TestWithParam<Tamper> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("rs-tamper-src");
    const std::string cfg = seeded_config(*dir_);
    ASSERT_EQ(advplan("run " + quote(cfg) + " --out " + quote(*dir_ / "run"), *dir_).status, 0);
  }
  static void TearDownTestSuite() { delete dir_; }
  static TempDir* dir_;
};
TempDir* TablesRefuse::dir_ = nullptr;

TEST_P(TablesRefuse, ADirectoryThatIsNotOneCompleteRunNamingTheFile) {
  const Tamper& t = GetParam();
  TempDir dir("rs-tamper-" + t.name);
  const std::string run = dir / "run";
  fs::copy(*dir_ / "run", run, fs::copy_options::recursive);
  fs::remove_all(run + "/tables");
  t.apply(run);
  const auto x = advplan("tables " + quote(run), dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr(run + "/" + t.must_name));
  EXPECT_FALSE(fs::exists(run + "/tables")) << "nothing may be written from a refused directory";
  // `advplan check` is the same check as a command: the same sentence, and exit 1.
  const auto c = advplan("check " + quote(run), dir);
  expect_one_line_error(c);
  EXPECT_EQ(c.err, x.err);
}

TEST(RunStore, CheckAcceptsOneCompleteRunWithItsDerivedFoldersRebuilt) {
  TempDir dir("rs-check");
  const std::string run = dir / "run";
  fs::copy(kSource + "/tests/golden/small", run, fs::copy_options::recursive);
  fs::remove_all(run + "/tables");  // derived: may be deleted and rebuilt
  const auto x = advplan("check " + quote(run), dir);
  EXPECT_EQ(x.status, 0) << x.err;
  EXPECT_EQ(x.out, run + ": MANIFEST holds\n");
  EXPECT_EQ(advplan("check " + quote(dir / "nowhere"), dir).status, 1);
}

INSTANTIATE_TEST_SUITE_P(
    Runs, TablesRefuse,
    ::testing::Values(
        Tamper{"missing_manifest", [](const std::string& r) { fs::remove(r + "/MANIFEST"); }, "MANIFEST"},
        Tamper{"changed_trace",
               [](const std::string& r) {
                 std::string t = read_file(r + "/per_scenario.csv");
                 t[t.size() / 2] = t[t.size() / 2] == '1' ? '2' : '1';
                 write_file(r + "/per_scenario.csv", t);
               },
               "per_scenario.csv"},
        Tamper{"missing_trace", [](const std::string& r) { fs::remove(r + "/council_trace.csv"); }, "council_trace.csv"},
        Tamper{"stale_study_file",
               [](const std::string& r) { write_file(r + "/studies/old_study.csv", "a\n1\n"); }, "studies/old_study.csv"},
        Tamper{"leftover_temporary",
               [](const std::string& r) { write_file(r + "/.per_scenario.csv.tmp-Ab12Cd", "partial"); },
               ".per_scenario.csv.tmp-Ab12Cd"},
        Tamper{"interrupted_run",
               [](const std::string& r) {
                 fs::create_directories(r + "/.advplan-work");
                 write_file(r + "/.advplan-work/journal", "0\n");
               },
               ".advplan-work"}),
    [](const ::testing::TestParamInfo<Tamper>& p) { return p.param.name; });

// Every table of a run is derived: each Markdown and LaTeX file lives under tables/, and a copy of the run holding only
// its CSVs, JSON and MANIFEST rebuilds every one byte for byte with `advplan tables`.
TEST(RunStore, EveryTableIsRebuiltFromTheCsvsJsonAndManifestAlone) {
  TempDir dir("rs-rebuild");
  const std::string cfg = seeded_config(dir), out = dir / "run", copy = dir / "copy";
  ASSERT_EQ(advplan("run " + quote(cfg) + " --out " + quote(out), dir).status, 0);
  std::size_t tables = 0;
  for (const auto& [rel, sum] : io::read_manifest(out)) {
    const std::string ext = fs::path(rel).extension().string();
    if (ext == ".md" || ext == ".tex") {
      EXPECT_EQ(rel.rfind("tables/", 0), 0u) << rel << " is a table outside tables/";
      ++tables;
      continue;
    }
    ASSERT_TRUE(ext == ".csv" || ext == ".json" || ext == ".jsonl") << rel;
    fs::create_directories(fs::path(copy + "/" + rel).parent_path());
    fs::copy_file(out + "/" + rel, copy + "/" + rel);
  }
  fs::copy_file(out + "/MANIFEST", copy + "/MANIFEST");
  EXPECT_GE(tables, 24u) << "the paper tables, the study tables and the rubric tables";
  const auto x = advplan("tables " + quote(copy), dir);
  ASSERT_EQ(x.status, 0) << x.err;
  for (const auto& [rel, sum] : io::read_manifest(out)) {
    const std::string ext = fs::path(rel).extension().string();
    if (ext != ".md" && ext != ".tex") continue;
    ASSERT_TRUE(fs::exists(copy + "/" + rel)) << rel << " was not rebuilt";
    EXPECT_EQ(io::sha256_hex(read_file(copy + "/" + rel)), sum) << rel;
  }
  EXPECT_EQ(advplan("check " + quote(copy), dir).status, 0);
}

// ---- temporary files ----------------------------------------------------------------------------------------------

TEST(AtomicFile, TemporaryIsCreatedExclusivelyAndAPlantedSymlinkIsNeverFollowed) {
  TempDir dir("rs-atomic");
  const std::string target = dir / "out.csv", victim = dir / "victim.txt";
  write_file(victim, "precious\n");
  // The old predictable names, planted as symlinks to the victim.
  fs::create_symlink(victim, target + ".tmp-" + std::to_string(::getpid()));
  fs::create_symlink(victim, dir / ".out.csv.tmp-XXXXXX");
  {
    io::AtomicWriter a(target), b(target);
    EXPECT_NE(a.temp_path(), b.temp_path());
    EXPECT_EQ(fs::path(a.temp_path()).parent_path(), dir.path());
    EXPECT_FALSE(fs::is_symlink(a.temp_path()));
    a.stream() << "one\n";
    a.commit();
  }
  EXPECT_EQ(read_file(target), "one\n");
  // A symlink at the target itself is neither written through nor renamed over: refused, naming it, and left.
  fs::remove(target);
  fs::create_symlink(victim, target);
  EXPECT_THROW(
      {
        try {
          io::write_file_atomic(target, "two\n");
        } catch (const IoError& e) {
          EXPECT_THAT(e.what(), HasSubstr(target + ": is a symbolic link"));
          throw;
        }
      },
      IoError);
  EXPECT_TRUE(fs::is_symlink(target));
  EXPECT_EQ(read_file(victim), "precious\n") << "the symlink's target was overwritten";
  for (const auto& e : fs::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string().find(".out.csv.tmp-") == 0 && !fs::is_symlink(e.symlink_status()), false)
        << "temporary left behind: " << e.path();
}

// ---- a run in which every row failed --------------------------------------------------------------------------

TEST(RunStore, EveryRowFailedStillWritesTheRowsWithReasonsAndExitsNonZero) {
  TempDir dir("rs-allfail");
  const std::string cfg = seeded_config(dir), out = dir / "run";
  // `cat` echoes each request back: never a plan, so every row fails.
  const auto x = advplan("evaluate --blue exec:cat --no-reference --budget '' --rerun 0 --red single --config " + quote(cfg) + " --out " +
                             quote(out) + " --threads 2",
                         dir);
  EXPECT_NE(x.status, 0) << x.err;
  ASSERT_TRUE(fs::exists(out + "/per_scenario.csv")) << x.err;
  const auto per = io::CsvTable::read(out + "/per_scenario.csv");
  ASSERT_EQ(per.size(), 6u);
  for (std::size_t i = 0; i < per.size(); ++i) {
    EXPECT_NE(per.at(i, "status"), "ok");
    EXPECT_FALSE(per.at(i, "failure_reason").empty());
  }
  EXPECT_TRUE(fs::exists(out + "/MANIFEST"));
  EXPECT_TRUE(fs::exists(out + "/summary.md"));
  EXPECT_NO_THROW(io::verify_run_directory(out)) << "the report files are listed in the MANIFEST";
}

TEST(RunStore, RunWithEveryRowFailedExitsNonZeroNamingTheReason) {
  TempDir dir("rs-allfail-run");
  std::string cfg = seeded_config(dir);
  std::string text = read_file(cfg);
  text.replace(text.find("conditions: [single, greedy@8, constraint@8, llm_offline, {label: council, blue: council, red: greedy@8}]"),
               std::string("conditions: [single, greedy@8, constraint@8, llm_offline, {label: council, blue: council, red: greedy@8}]").size(),
               "conditions: [{label: broken, blue: 'exec:cat', red: single}]\nbudget_sweep: []");
  text.replace(text.find("budget_sweep: [1, 2, 4, 8, 16]"), std::string("budget_sweep: [1, 2, 4, 8, 16]").size(), "");
  text.replace(text.find("studies: {rubric: true, framing: true, components: true}"),
               std::string("studies: {rubric: true, framing: true, components: true}").size(),
               "studies: {rubric: false, framing: false, components: false}");
  write_file(cfg, text);
  const std::string out = dir / "run";
  const auto x = advplan("run " + quote(cfg) + " --out " + quote(out), dir);
  EXPECT_EQ(x.status, 1) << x.err;
  EXPECT_THAT(x.err, HasSubstr("every row failed"));
  const auto per = io::CsvTable::read(out + "/per_scenario.csv");
  EXPECT_EQ(per.size(), 6u);
  EXPECT_FALSE(per.at(0, "failure_reason").empty());
}

// ---- kill and resume -------------------------------------------------------------------------------------------

TEST(RunStore, KilledAtRandomMomentsAndResumedIsByteIdenticalToAnUninterruptedRun) {
  TempDir dir("rs-kill");
  const std::string cfg = seeded_config(dir, "[100, 124]");  // 50 scenarios
  const std::string ref = dir / "ref";
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(advplan("run " + quote(cfg) + " --out " + quote(ref) + " --threads 2", dir).status, 0);
  const double full = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::mt19937 rng(20261130);
  std::uniform_real_distribution<double> when(0.0, full * 1.1);
  std::uniform_int_distribution<int> entries(1, 15);
  int interrupted = 0;
  for (int k = 0; k < 10; ++k) {
    SCOPED_TRACE("kill " + std::to_string(k));
    const std::string out = dir / ("run" + std::to_string(k));
    // Two kills (the second one of a resumed run), then a resume to the end; threads vary between attempts. The
    // first kill of every other attempt waits for a drawn number of journal lines (1 to 15 of the run's 52), so
    // that some runs are surely interrupted however fast the machine is against the reference run; the others
    // come at a drawn time.
    const std::string run_cmd = fmt::format("{} run {} --out {} --threads 2 --checkpoint-every 1", quote(kBinary),
                                            quote(cfg), quote(out));
    const auto first =
        k % 2 == 0
            ? testing::run_command(
                  fmt::format("{} >/dev/null 2>&1 & p=$!; for i in $(seq 1 4000); do [ \"$({{ wc -l < {}; }} 2>/dev/null)\" "
                              "-ge {} ] 2>/dev/null && break; kill -0 $p 2>/dev/null || break; sleep 0.002; done; "
                              "kill -9 $p 2>/dev/null; wait $p",
                              run_cmd, quote(out + "/.advplan-work/journal"), entries(rng)),
                  dir)
            : testing::run_command(fmt::format("timeout -s KILL {:.3f} {}", when(rng), run_cmd), dir);
    interrupted += first.status != 0;
    if (k % 2 == 1 && fs::exists(out + "/.advplan-work/journal")) {
      // The state of a kill between a flush's row writes and its journal entry, or in the middle of either:
      // rows past the last entry and a torn journal line. The resumed run must drop them.
      for (const auto& e : fs::directory_iterator(out + "/.advplan-work"))
        if (e.path().extension() == ".csv") std::ofstream(e.path(), std::ios::app) << "torn,row,1";
      std::ofstream(out + "/.advplan-work/journal", std::ios::app) << "999 1";
    }
    testing::run_command(fmt::format("timeout -s KILL {:.3f} {} run {} --out {} --threads 1 --resume", when(rng) / 2,
                                     quote(kBinary), quote(cfg), quote(out)),
                         dir);
    const auto last = advplan("run " + quote(cfg) + " --out " + quote(out) + " --threads 3 --resume", dir);
    ASSERT_EQ(last.status, 0) << last.err;
    EXPECT_EQ(compare_runs(ref, out), "");
    EXPECT_EQ(advplan("tables " + quote(out) + " --out " + quote(dir / "t"), dir).status, 0);
  }
  EXPECT_GE(interrupted, 3) << "too few runs were actually killed to test anything";
}

// What a power loss leaves (nothing was fsynced before): a work trace shorter than its journal, or zero-filled
// past some point, and a journal forged to say "all done". Each journal entry records every file's length and
// sha256, so the resume goes back to the last entry the files bear out and replays from there: the finished run is
// byte-identical to an uninterrupted one (once it zero-filled 1.3 MB of per_scenario.csv and exited 0).
TEST(RunStore, AResumeTrustsOnlyTheJournalEntriesTheFilesBearOut) {
  TempDir dir("rs-powerloss");
  const std::string cfg = seeded_config(dir, "[100, 119]");  // 40 scenarios
  const std::string ref = dir / "ref";
  ASSERT_EQ(advplan("run " + quote(cfg) + " --out " + quote(ref) + " --threads 2", dir).status, 0);
  for (const std::string damage : {"zero-fill", "cut-short", "forged-done"}) {
    SCOPED_TRACE(damage);
    const std::string out = dir / ("run-" + damage), work = out + "/.advplan-work";
    // Killed after a number of journal entries.
    testing::run_command(
        fmt::format("{} run {} --out {} --threads 2 --checkpoint-every 1 >/dev/null 2>&1 & p=$!; for i in $(seq 1 "
                    "4000); do [ \"$({{ wc -l < {}; }} 2>/dev/null)\" -ge 25 ] 2>/dev/null && break; kill -0 $p "
                    "2>/dev/null || break; sleep 0.002; done; kill -9 $p 2>/dev/null; wait $p",
                    quote(kBinary), quote(cfg), quote(out), quote(work + "/journal")),
        dir);
    ASSERT_TRUE(fs::exists(work + "/journal")) << "the run finished before it could be killed";
    const std::string per = work + "/per_scenario.csv";
    const auto size = fs::file_size(per);
    ASSERT_GT(size, 2000u);
    if (damage == "zero-fill") {
      // the last half of the file's blocks never reached the disk: same length, zeros
      std::fstream f(per, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(static_cast<std::streamoff>(size / 2));
      f << std::string(size - size / 2, '\0');
    } else if (damage == "cut-short") {
      fs::resize_file(per, size / 2);
    } else {
      // "all done": the last entry again, its files' lengths and digests true, but its scenario count 40
      const std::string journal = testing::read_file(work + "/journal");
      const auto last_start = journal.rfind('\n', journal.size() - 2);
      std::string line = journal.substr(last_start == std::string::npos ? 0 : last_start + 1);
      line = "40" + line.substr(line.find(' '));
      std::ofstream(work + "/journal", std::ios::app) << line;
    }
    const auto r = advplan("run " + quote(cfg) + " --out " + quote(out) + " --threads 1 --resume", dir);
    ASSERT_EQ(r.status, 0) << r.err;
    if (damage != "forged-done") EXPECT_THAT(r.err, HasSubstr("do not match the trace files"));
    EXPECT_EQ(compare_runs(ref, out), "");
    const std::string text = testing::read_file(out + "/per_scenario.csv");
    EXPECT_EQ(text.find('\0'), std::string::npos);
  }
}

TEST(RunStore, ResumeWithAChangedConfigIsRefusedNamingTheField) {
  TempDir dir("rs-resume-changed");
  const std::string cfg = seeded_config(dir, "[100, 599]");
  const std::string out = dir / "run";
  // Killed as soon as its journal has an entry (not after a fixed delay, which a fast run can outlast).
  testing::run_command(fmt::format("{} run {} --out {} --threads 1 --checkpoint-every 1 >/dev/null 2>&1 & p=$!; "
                                   "for i in $(seq 1 4000); do [ -s {} ] && break; sleep 0.005; done; "
                                   "kill -9 $p; wait $p",
                                   quote(kBinary), quote(cfg), quote(out), quote(out + "/.advplan-work/journal")),
                       dir);
  ASSERT_TRUE(fs::exists(out + "/.advplan-work/journal")) << "the run finished before it was killed";
  const std::string other = seeded_config(dir, "[100, 600]", "other.yaml");
  const auto x = advplan("run " + quote(other) + " --out " + quote(out) + " --resume", dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr("different scenarios (1000, now 1002)"));
  EXPECT_THAT(x.err, HasSubstr("--resume"));
  // The same corpus under another bootstrap setting: the config's hash names it.
  const std::string third = dir / "third.yaml";
  std::string text = read_file(cfg);
  text.replace(text.find("resamples: 200"), 14, "resamples: 300");
  write_file(third, text);
  const auto y = advplan("run " + quote(third) + " --out " + quote(out) + " --resume", dir);
  expect_one_line_error(y);
  EXPECT_THAT(y.err, HasSubstr("config_sha256"));
  // The same config resumes.
  EXPECT_EQ(advplan("run " + quote(cfg) + " --out " + quote(out) + " --resume", dir).status, 0);
}

// --resume on a complete run compares its key too: another config, the built-in default or a shard is refused,
// naming the field, where it was once answered "already a complete run; nothing to resume" with exit 0.
TEST(RunStore, ResumeOfACompleteRunComparesItsKey) {
  TempDir dir("rs-resume-complete");
  const std::string cfg = seeded_config(dir), out = dir / "run";
  ASSERT_EQ(advplan("run " + quote(cfg) + " --out " + quote(out), dir).status, 0);
  const std::string other = seeded_config(dir, "[100, 103]", "other.yaml");
  const auto x = advplan("run " + quote(other) + " --out " + quote(out) + " --resume", dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr(out + "/run_metadata.json: --resume: the complete run here has a different scenarios"));
  const auto d = advplan("run --out " + quote(out) + " --resume", dir);  // the built-in default
  expect_one_line_error(d);
  const auto sh = advplan("run " + quote(cfg) + " --out " + quote(out) + " --resume --shard 1/4", dir);
  expect_one_line_error(sh);
  EXPECT_THAT(sh.err, HasSubstr("different shards (0, now 4)"));
  const auto same = advplan("run " + quote(cfg) + " --out " + quote(out) + " --resume", dir);
  EXPECT_EQ(same.status, 0) << same.err;
  EXPECT_THAT(same.err, HasSubstr("already a complete run"));
}

}  // namespace
}  // namespace advplan

namespace advplan {
namespace {

TEST(RunStore, PlotRefusesADirectoryThatDoesNotMatchItsManifest) {
  if (std::system("/usr/bin/python3 -c 'import matplotlib, numpy' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "matplotlib/numpy missing for /usr/bin/python3";
  TempDir dir("rs-plot");
  const std::string run = dir / "run";
  fs::copy(kSource + "/tests/golden/small", run, fs::copy_options::recursive);
  write_file(run + "/studies/stale.csv", "a\n1\n");
  const auto x = testing::run_command("/usr/bin/python3 " + quote(kSource + "/experiments/plot.py") + " " + quote(run) +
                                          " --out " + quote(dir / "fig"),
                                      dir);
  EXPECT_EQ(x.status, 1) << x.err;
  EXPECT_THAT(x.err, HasSubstr(run + "/studies/stale.csv"));
  EXPECT_FALSE(fs::exists(dir / "fig"));
}

// ---- progress ----------------------------------------------------------------------------------------------------

TEST(RunProgress, PlainLinesWhenStderrIsNotATerminalAndNoneTurnsThemOff) {
  TempDir dir("rs-progress");
  const std::string cfg = seeded_config(dir);
  auto x = advplan("run " + quote(cfg) + " --out " + quote(dir / "a") + " --progress-interval 0.000001", dir);
  ASSERT_EQ(x.status, 0) << x.err;
  EXPECT_THAT(x.err, HasSubstr("advplan: 6/6 scenarios (100%)"));
  EXPECT_THAT(x.err, HasSubstr("/s, 0 failed rows"));
  EXPECT_THAT(x.err, HasSubstr("ETA"));
  EXPECT_EQ(x.err.find('\r'), std::string::npos) << "no redrawing when stderr is not a terminal";
  EXPECT_GE(std::count(x.err.begin(), x.err.end(), '\n'), 3) << "periodic lines:\n" << x.err;
  x = advplan("run " + quote(cfg) + " --out " + quote(dir / "b") + " --progress none", dir);
  ASSERT_EQ(x.status, 0) << x.err;
  EXPECT_EQ(x.err.find("scenarios ("), std::string::npos) << x.err;
  x = advplan("run " + quote(cfg) + " --out " + quote(dir / "c") + " --progress tty", dir);
  EXPECT_THAT(x.err, HasSubstr("\radvplan: 6/6 scenarios"));
  x = advplan("run " + quote(cfg) + " --out " + quote(dir / "d") + " --progress sometimes", dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr("--progress sometimes"));
  EXPECT_FALSE(fs::exists(dir / "d"));
}

TEST(RunProgress, TheFirstFailureOfEachCauseIsPrintedOnce) {
  TempDir dir("rs-progress-fail");
  const std::string cfg = seeded_config(dir);
  const auto x = advplan("evaluate --blue exec:cat --no-reference --budget '' --rerun 0 --red single,greedy@2 --config " + quote(cfg) +
                             " --out " + quote(dir / "run") + " --progress plain",
                         dir);
  EXPECT_NE(x.status, 0);
  const std::string line = "advplan: failure (urban-100, exec:cat vs single): blue: exec: response has no \"plan\" field";
  EXPECT_THAT(x.err, HasSubstr(line));
  std::size_t n = 0;
  for (auto p = x.err.find("advplan: failure ("); p != std::string::npos; p = x.err.find("advplan: failure (", p + 1)) ++n;
  EXPECT_EQ(n, 1u) << "12 failed rows of one cause:\n" << x.err;
  EXPECT_THAT(x.err, HasSubstr("12 failed rows"));
  EXPECT_EQ(Progress::cause_of("line 3: bad 17"), Progress::cause_of("line 12: bad 4"));
  EXPECT_NE(Progress::cause_of("timeout"), Progress::cause_of("no plan"));
}

// ---- summaries at scale ------------------------------------------------------------------------------------------

TEST(StreamedSummaries, SameKeysCountsAndMeansAsTheBootstrapAndNormalIntervals) {
  TempDir dir("rs-streamed");
  const std::string cfg = seeded_config(dir);
  ASSERT_EQ(advplan("run " + quote(cfg) + " --out " + quote(dir / "b") + " --summary bootstrap", dir).status, 0);
  const auto x = advplan("run " + quote(cfg) + " --out " + quote(dir / "s") + " --summary streaming", dir);
  ASSERT_EQ(x.status, 0) << x.err;
  EXPECT_FALSE(fs::exists(dir / "s/tables")) << "no tables at scale";
  // Every row of the three summaries: the same keys, counts and means; only the intervals differ.
  for (const std::string f : {"bootstrap_summary.csv", "budget_curve.csv", "terrain_summary.csv"}) {
    const auto b = io::CsvTable::read(dir / ("b/" + f)), st = io::CsvTable::read(dir / ("s/" + f));
    ASSERT_EQ(b.size(), st.size()) << f;
    ASSERT_GT(b.size(), 0u) << f;
    for (std::size_t r = 0; r < b.size(); ++r)
      for (std::size_t c = 0; c < b.header().size(); ++c) {
        const std::string& col = b.header()[c];
        if (col.ends_with("_lo") || col.ends_with("_hi") || col == "resamples") continue;
        EXPECT_EQ(b.rows()[r][c], st.rows()[r][c]) << f << " line " << r + 2 << " column " << col;
      }
  }
  // The interval is mean +- 1.959964 s / sqrt(n) over the ok rows.
  const auto per = io::CsvTable::read(dir / "s/per_scenario.csv");
  std::vector<double> v;
  for (std::size_t i = 0; i < per.size(); ++i)
    if (per.at(i, "condition") == "greedy@8" && per.at(i, "status") == "ok") v.push_back(per.real(i, "advantage"));
  double m = 0, ss = 0;
  for (double a : v) m += a;
  m /= static_cast<double>(v.size());
  for (double a : v) ss += (a - m) * (a - m);
  const double half = 1.959963984540054 * std::sqrt(ss / static_cast<double>(v.size() - 1) / static_cast<double>(v.size()));
  const auto boot = io::CsvTable::read(dir / "s/bootstrap_summary.csv");
  bool found = false;
  for (std::size_t i = 0; i < boot.size(); ++i)
    if (boot.at(i, "scope") == "all" && boot.at(i, "condition") == "greedy@8" && boot.at(i, "metric") == "advantage") {
      found = true;
      EXPECT_NEAR(boot.real(i, "ci_lo"), m - half, 2e-6);
      EXPECT_NEAR(boot.real(i, "ci_hi"), m + half, 2e-6);
      EXPECT_EQ(boot.at(i, "resamples"), "0");
    }
  EXPECT_TRUE(found);
  expect_one_line_error(advplan("run " + quote(cfg) + " --out " + quote(dir / "x") + " --summary maybe", dir));
  const auto t = advplan("tables " + quote(dir / "s"), dir);
  expect_one_line_error(t);
  EXPECT_THAT(t.err, HasSubstr("bootstrap_summary.csv: resamples is 0"));
}

}  // namespace
}  // namespace advplan
