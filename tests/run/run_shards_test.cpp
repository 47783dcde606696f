// Sharded runs (README "Resume, shards and MPI"): `advplan run --shard i/N` shards merged with `advplan merge` are
// byte-identical to a single-process run for N in {1, 2, 3, 7}; the Slurm scripts of experiments/slurm/ in a dry
// run (submission printed, array tasks emulated through SLURM_ARRAY_TASK_ID); mpirun when it is installed; and the
// bad inputs, each one sentence naming the shard and the field.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "advplan/io/csv.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::read_file;
using testing::TempDir;
using testing::write_file;
using testing::compare_runs;

using testing::kSource;
using testing::kBinary;
using testing::quote;

/// tests/data/small.yaml over ten scenarios (seeds 100 to 104), with one more edit (from, to) when `from` is not empty.
std::string shards_config(const TempDir& dir, const std::string& name = "small.yaml", const std::string& from = "",
                         const std::string& to = "") {
  std::vector<testing::Edit> edits{testing::seeds("[100, 104]")};
  if (!from.empty()) edits.emplace_back(from, to);
  return testing::small_config(dir, edits, name);
}

using testing::advplan;
using testing::expect_one_line_error;

/// One reference run and its shards for N = 3, shared by the bad-input tests.
class Shards : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("shards");
    config_ = shards_config(*dir_);
    ASSERT_EQ(advplan("run " + quote(config_) + " --out " + quote(*dir_ / "ref") + " --threads 2", *dir_).status, 0);
    for (int i = 0; i < 3; ++i)
      ASSERT_EQ(advplan(fmt::format("run {} --out {} --shard {}/3 --threads 2", quote(config_),
                                    quote(*dir_ / fmt::format("s3-{}", i)), i),
                        *dir_)
                    .status,
                0);
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string shard(int i) { return *dir_ / fmt::format("s3-{}", i); }
  static TempDir* dir_;
  static std::string config_;
};
TempDir* Shards::dir_ = nullptr;
std::string Shards::config_;

class MergedShards : public Shards, public ::testing::WithParamInterface<int> {};

TEST_P(MergedShards, AreByteIdenticalToASingleProcessRun) {
  const int n = GetParam();
  TempDir dir("shards-" + std::to_string(n));
  std::string dirs;
  for (int i = n - 1; i >= 0; --i) {  // any order on the command line
    const std::string d = dir / fmt::format("s{}", i);
    const auto x = advplan(fmt::format("run {} --out {} --shard {}/{} --threads {}", quote(config_), quote(d), i, n,
                                       1 + i % 2),
                           dir);
    ASSERT_EQ(x.status, 0) << x.err;
    EXPECT_FALSE(fs::exists(d + "/bootstrap_summary.csv")) << "a shard writes traces only";
    dirs += " " + quote(d);
  }
  const auto m = advplan("merge" + dirs + " --out " + quote(dir / "merged"), dir);
  ASSERT_EQ(m.status, 0) << m.err;
  EXPECT_EQ(compare_runs(*dir_ / "ref", dir / "merged"), "");
  EXPECT_EQ(advplan("tables " + quote(dir / "merged") + " --out " + quote(dir / "t"), dir).status, 0);
}

INSTANTIATE_TEST_SUITE_P(N, MergedShards, ::testing::Values(1, 2, 3, 7));

// The merge orders shards by the index in run_metadata.json, which the MANIFEST does not cover: swapping two
// shards' indices must not merge their rows out of corpus order.
TEST_F(Shards, SwappedShardIndicesAreRefused) {
  TempDir dir("shards-swap");
  for (int i = 0; i < 3; ++i) fs::copy(shard(i), dir / fmt::format("s{}", i), fs::copy_options::recursive);
  for (const auto& [i, j] : {std::pair{0, 1}, std::pair{1, 0}}) {
    const std::string path = dir / fmt::format("s{}/run_metadata.json", i);
    auto meta = nlohmann::json::parse(testing::read_file(path));
    meta["shard"]["index"] = j;
    testing::write_file(path, meta.dump(2));
  }
  const auto m = advplan("merge " + quote(dir / "s0") + " " + quote(dir / "s1") + " " + quote(dir / "s2") + " --out " +
                             quote(dir / "merged"),
                         dir);
  EXPECT_EQ(m.status, 1) << m.err;
  EXPECT_THAT(m.err, HasSubstr("the shard's index in its run_metadata.json does not match its rows"));
}

// --shard i/N for N near 2^64 once overflowed total * i / N: the last shard of such a split holds the last scenario.
TEST_F(Shards, AShardCountNearTwoToTheSixtyFourDoesNotOverflow) {
  TempDir dir("shards-huge");
  const auto r = advplan("run " + quote(config_) + " --out " + quote(dir / "s") +
                             " --shard 18446744073709551614/18446744073709551615 --progress none",
                         dir);
  ASSERT_EQ(r.status, 0) << r.err;
  const io::CsvTable sc = io::CsvTable::read(dir / "s/scenarios.csv");
  const io::CsvTable all = io::CsvTable::read(*dir_ / "ref/scenarios.csv");
  ASSERT_EQ(sc.size(), 1u);
  EXPECT_EQ(sc.at(0, "scenario_id"), all.at(all.size() - 1, "scenario_id"));
}

TEST_F(Shards, MergedShardsKeepTheCandidatePlansOfTheFlag) {
  TempDir dir("shards-cp");
  const std::string ref = dir / "ref";
  ASSERT_EQ(advplan("run " + quote(config_) + " --out " + quote(ref) + " --candidate-plans", dir).status, 0);
  std::string dirs;
  for (int i = 0; i < 2; ++i) {
    const std::string d = dir / fmt::format("s{}", i);
    ASSERT_EQ(advplan(fmt::format("run {} --out {} --shard {}/2 --candidate-plans", quote(config_), quote(d), i), dir).status, 0);
    dirs += " " + quote(d);
  }
  const auto m = advplan("merge" + dirs + " --out " + quote(dir / "merged"), dir);
  ASSERT_EQ(m.status, 0) << m.err;
  ASSERT_TRUE(fs::exists(ref + "/candidate_plans.jsonl"));
  EXPECT_EQ(compare_runs(ref, dir / "merged"), "");
}

TEST_F(Shards, AShardSpecOutOfRangeIsOneSentence) {
  TempDir dir("shards-bad-spec");
  for (const std::string spec : {"3/3", "x/3", "1/0", "-1/3"}) {
    SCOPED_TRACE(spec);
    const auto x = advplan("run " + quote(config_) + " --out " + quote(dir / "o") + " --shard " + spec, dir);
    expect_one_line_error(x);
    EXPECT_THAT(x.err, HasSubstr("--shard " + spec));
    EXPECT_FALSE(fs::exists(dir / "o")) << "nothing may be written";
  }
  const auto x = advplan("run " + quote(config_) + " --out " + quote(dir / "o") + " --shards 3", dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr("SLURM_ARRAY_TASK_ID"));
}

TEST_F(Shards, AMissingShardIsNamed) {
  TempDir dir("shards-missing");
  const auto x = advplan("merge " + quote(shard(0)) + " " + quote(shard(2)) + " --out " + quote(dir / "m"), dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr("shard 1/3 is missing"));
  EXPECT_FALSE(fs::exists(dir / "m/MANIFEST"));
}

TEST_F(Shards, ShardsOfADifferentSeedAreRefusedNamingTheShardAndTheField) {
  TempDir dir("shards-seed");
  const std::string other = shards_config(dir, "other.yaml", "seed: 20240601", "seed: 20240602");
  const std::string s1 = dir / "other-1";
  ASSERT_EQ(advplan("run " + quote(other) + " --out " + quote(s1) + " --shard 1/3", dir).status, 0);
  const auto x = advplan("merge " + quote(shard(0)) + " " + quote(s1) + " " + quote(shard(2)) + " --out " +
                             quote(dir / "m"),
                         dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr(s1));
  EXPECT_THAT(x.err, HasSubstr(" seed "));
}

TEST_F(Shards, ShardsOfADifferentConfigOrProgramVersionAreRefused) {
  TempDir dir("shards-config");
  const std::string other = shards_config(dir, "other.yaml", "resamples: 200", "resamples: 300");
  const std::string s1 = dir / "other-1";
  ASSERT_EQ(advplan("run " + quote(other) + " --out " + quote(s1) + " --shard 1/3", dir).status, 0);
  auto x = advplan("merge " + quote(shard(0)) + " " + quote(s1) + " " + quote(shard(2)) + " --out " + quote(dir / "m"), dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr(s1));
  EXPECT_THAT(x.err, HasSubstr("config_sha256"));
  // A shard written by another program version (run_metadata.json is not covered by the MANIFEST).
  const std::string s2 = dir / "old-2";
  fs::copy(shard(2), s2, fs::copy_options::recursive);
  auto meta = nlohmann::json::parse(read_file(s2 + "/run_metadata.json"));
  meta["run_key"]["program_version"] = "0.0.1";
  write_file(s2 + "/run_metadata.json", meta.dump(2));
  x = advplan("merge " + quote(shard(0)) + " " + quote(shard(1)) + " " + quote(s2) + " --out " + quote(dir / "m"), dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr(s2));
  EXPECT_THAT(x.err, HasSubstr("program_version"));
}

TEST_F(Shards, AChangedShardFileIsRefusedByItsManifest) {
  TempDir dir("shards-changed");
  const std::string s1 = dir / "s1";
  fs::copy(shard(1), s1, fs::copy_options::recursive);
  std::string t = read_file(s1 + "/per_scenario.csv");
  t += t.substr(t.find('\n') + 1, t.find('\n', t.find('\n') + 1) - t.find('\n'));  // a duplicated row
  write_file(s1 + "/per_scenario.csv", t);
  const auto x = advplan("merge " + quote(shard(0)) + " " + quote(s1) + " " + quote(shard(2)) + " --out " + quote(dir / "m"), dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr(s1 + "/per_scenario.csv"));
}

TEST_F(Shards, SlurmScriptsInADryRun) {
  TempDir dir("shards-slurm");
  const std::string slurm = kSource + "/experiments/slurm";
  const std::string out = dir / "run";
  const auto sub = testing::run_command(quote(slurm + "/submit.sh") + " --dry-run " + quote(config_) + " " + quote(out) + " 3", dir);
  ASSERT_EQ(sub.status, 0) << sub.err;
  EXPECT_THAT(sub.out, HasSubstr("sbatch --parsable --array=0-2 "));
  EXPECT_THAT(sub.out, HasSubstr("array.sbatch"));
  EXPECT_THAT(sub.out, HasSubstr("--dependency=afterok:DRYRUN "));
  EXPECT_THAT(sub.out, HasSubstr("merge.sbatch"));
  // The array tasks and the merge job as Slurm would run them (array indices 1..3, so SLURM_ARRAY_TASK_MIN counts).
  for (int task = 1; task <= 3; ++task) {
    const auto x = testing::run_command(fmt::format("SLURM_ARRAY_TASK_ID={} SLURM_ARRAY_TASK_MIN=1 SLURM_CPUS_PER_TASK=2 "
                                                    "ADVPLAN={} bash {} {} {} 3",
                                                    task, quote(kBinary), quote(slurm + "/array.sbatch"),
                                                    quote(config_), quote(out)),
                                        dir);
    ASSERT_EQ(x.status, 0) << x.err;
  }
  // A requeued task that had finished is left as it is.
  ASSERT_EQ(testing::run_command(fmt::format("SLURM_ARRAY_TASK_ID=0 ADVPLAN={} bash {} {} {} 3", quote(kBinary),
                                             quote(slurm + "/array.sbatch"), quote(config_), quote(out)),
                                 dir)
                .status,
            0);
  const auto m = testing::run_command(fmt::format("ADVPLAN={} bash {} {} {} 3", quote(kBinary),
                                                  quote(slurm + "/merge.sbatch"), quote(config_), quote(out)),
                                      dir);
  ASSERT_EQ(m.status, 0) << m.err;
  EXPECT_EQ(compare_runs(*dir_ / "ref", out), "");
  const auto bad = testing::run_command(quote(slurm + "/submit.sh") + " --dry-run " + quote(config_) + " " + quote(out) + " 0", dir);
  EXPECT_EQ(bad.status, 2);
  EXPECT_THAT(bad.err, HasSubstr("SHARDS"));
}

/// mpirun on PATH and an advplan built with MPI (its MPI module, libadvplan_mpi.so, beside the libadvplan.so it
/// loads); otherwise "" and the reason.
std::string mpi_skip_reason(const TempDir& dir) {
  if (testing::run_command("command -v mpirun", dir).status != 0) return "mpirun is not installed (Debian openmpi-bin)";
  if (testing::run_command("test -f \"$(dirname \"$(ldd " + quote(kBinary) +
                               " | awk '/libadvplan[.]so/ {print $3}')\")/libadvplan_mpi.so\"",
                           dir)
          .status != 0)
    return "advplan was built without MPI (Debian libopenmpi-dev)";
  return "";
}

TEST_F(Shards, MpirunWithThreeRanksWritesOneRunByteIdenticalToASingleProcess) {
  TempDir dir("shards-mpi");
  if (const auto why = mpi_skip_reason(dir); !why.empty()) GTEST_SKIP() << why;
  const std::string mpirun = "mpirun --oversubscribe --allow-run-as-root -n 3 ";
  const std::string out = dir / "run";
  const auto x = testing::run_command(mpirun + quote(kBinary) + " run " + quote(config_) + " --out " + quote(out) +
                                          " --threads 1",
                                      dir);
  ASSERT_EQ(x.status, 0) << x.err;
  EXPECT_EQ(compare_runs(*dir_ / "ref", out), "");
  EXPECT_FALSE(fs::exists(dir / ".run.mpi-shards")) << "the ranks' shards are removed after the merge";
  // The same refusal as a single process: the directory now holds a run.
  const auto again = testing::run_command(mpirun + quote(kBinary) + " run " + quote(config_) + " --out " + quote(out), dir);
  EXPECT_NE(again.status, 0);
  EXPECT_THAT(again.err, HasSubstr("--force"));
}

}  // namespace
}  // namespace advplan
