// `advplan evaluate --stop-when-decided` from the command line: on a clear effect (council against the seed
// plan) it stops early with the full run's verdicts on what it decided; a run killed at any moment and resumed
// stops at the same scenario with the same bytes; flags it cannot work with are refused in one sentence.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "advplan/io/csv.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using ::testing::HasSubstr;
using testing::advplan;
using testing::quote;
using testing::TempDir;

/// tests/data/small.yaml on 2 templates x 150 seeds (300 scenarios), 20 simulator replications.
std::string corpus300(const TempDir& dir) {
  return testing::small_config(dir, {testing::seeds("[100, 249]"), {"replications: 50", "replications: 20"}});
}

std::string council_vs_seed(const std::string& cfg, const std::string& out) {
  return "evaluate --blue council --reference seed --red greedy@8 --budget '' --rerun 0 --progress none --config " +
         quote(cfg) + " --out " + quote(out);
}

nlohmann::json summary_of(const std::string& run) {
  return nlohmann::json::parse(testing::read_file(run + "/summary.json"));
}

// The clear effect: council's win rate (+0.33) and coherence (+0.16) are decided, its advantage (+0.03) and quality
// (+0.05) lie within the ±0.2 futility margin; the run stops long before the corpus ends, every verdict it decided
// is the full run's, and every one it left undecided has the full run's difference within the margin.
// ctest: slow
TEST(StopWhenDecidedCli, CouncilAgainstTheSeedPlanStopsEarlyWithTheFullRunsVerdicts) {
  TempDir dir("stop-clear");
  const std::string cfg = corpus300(dir);
  const auto full = advplan(council_vs_seed(cfg, dir / "full"), dir);
  ASSERT_EQ(full.status, 0) << full.err;
  // With the reproducibility check, which re-evaluates scenarios of the prefix played only.
  std::string with_rerun = council_vs_seed(cfg, dir / "stop") + " --stop-when-decided --futility 0.2";
  with_rerun.replace(with_rerun.find("--rerun 0"), 9, "--rerun 3");
  const auto stop = advplan(with_rerun, dir);
  ASSERT_EQ(stop.status, 0) << stop.err;
  EXPECT_THAT(stop.err, HasSubstr("stopped when decided after"));
  const auto f = summary_of(dir / "full"), s = summary_of(dir / "stop");
  const auto& st = s.at("stopping");
  EXPECT_EQ(st.at("stopped_early"), true);
  EXPECT_LT(st.at("scenarios").get<int>(), 300);
  EXPECT_EQ(st.at("verdicts"), "anytime");
  ASSERT_EQ(f.at("verdicts").size(), 4u);
  ASSERT_EQ(s.at("verdicts").size(), 4u);
  std::size_t decided = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const auto &a = f.at("verdicts")[i], &b = s.at("verdicts")[i];
    ASSERT_EQ(a.at("metric"), b.at("metric"));
    if (b.at("verdict") != "no detectable difference") {
      ++decided;
      EXPECT_EQ(b.at("verdict"), a.at("verdict")) << b.dump();
    } else {
      EXPECT_LE(std::abs(a.at("difference").at("mean").get<double>()), 0.2) << a.dump();
    }
  }
  EXPECT_GE(decided, 2u);  // win rate and coherence
  const auto meta = nlohmann::json::parse(testing::read_file(dir / "stop/run_metadata.json"));
  EXPECT_EQ(meta.at("stopped_early"), true);
  EXPECT_EQ(meta.at("scenarios"), st.at("scenarios"));
  EXPECT_EQ(meta.at("run_key").at("stop_when_decided"), "block=10 futility=0.20000000000000001 alpha=0.050000000000000003");
  const auto looks = io::CsvTable::read(dir / "stop/evaluation/stopping.csv");
  ASSERT_EQ(looks.size(), 4u * st.at("looks").get<std::size_t>());
  EXPECT_EQ(looks.at(looks.size() - 1, "stop"), "futility");
  const auto repro = io::CsvTable::read(dir / "stop/evaluation/reproducibility.csv");
  ASSERT_EQ(repro.size(), 3u);
  for (std::size_t i = 0; i < repro.size(); ++i) EXPECT_EQ(repro.at(i, "identical"), "1") << repro.at(i, "scenario_id");
}

// Killed after a few journal entries, midway, and while it finished after its stop; resumed at another thread
// count, each writes the uninterrupted run's traces, stopping table and summary.
// ctest: slow
TEST(StopWhenDecidedCli, AKilledRunResumesAndStopsAtTheSameScenario) {
  TempDir dir("stop-resume");
  const std::string cfg = corpus300(dir);
  const std::string flags = " --stop-when-decided --futility 0.2";
  ASSERT_EQ(advplan(council_vs_seed(cfg, dir / "ref") + flags + " --threads 2", dir).status, 0);
  for (int entries : {5, 60, 131}) {
    SCOPED_TRACE(entries);
    const std::string out = dir / fmt::format("k{}", entries);
    testing::run_command(
        fmt::format("{} {} {} --threads 2 --checkpoint-every 1 >/dev/null 2>&1 & p=$!; for i in $(seq 1 4000); do "
                    "[ \"$({{ wc -l < {}; }} 2>/dev/null)\" -ge {} ] 2>/dev/null && break; kill -0 $p 2>/dev/null || "
                    "break; sleep 0.001; done; kill -9 $p 2>/dev/null; wait $p",
                    quote(testing::kBinary), council_vs_seed(cfg, out), flags, quote(out + "/.advplan-work/journal"),
                    entries),
        dir);
    const auto resumed = advplan(council_vs_seed(cfg, out) + flags + " --threads 1 --resume", dir);
    ASSERT_EQ(resumed.status, 0) << resumed.err;
    for (const char* f : {"per_scenario.csv", "evaluation/stopping.csv", "evaluation/verdicts.csv", "summary.json"})
      EXPECT_TRUE(testing::read_file(out + "/" + f) == testing::read_file(dir / (std::string("ref/") + f)))
          << f << " differs from the uninterrupted run's";
  }
  // A different rule is a different run.
  const auto other = advplan(council_vs_seed(cfg, dir / "ref") + " --stop-when-decided --futility 0.1 --resume", dir);
  testing::expect_one_line_error(other);
}

TEST(StopWhenDecidedCli, FlagsItCannotWorkWithAreRefusedInOneSentence) {
  TempDir dir("stop-flags");
  const std::string cfg = testing::small_config(dir);
  const std::string base = council_vs_seed(cfg, dir / "x");
  const std::vector<std::pair<std::string, std::string>> cases{
      {" --stop-when-decided --block 0", "--block 0"},
      {" --stop-when-decided --futility -0.1", "--futility"},
      {" --stop-when-decided --futility 1", "--futility 1"},
      {" --block 5", "--stop-when-decided"},
      {" --futility 0.1", "--stop-when-decided"},
      {" --stop-when-decided --no-reference", "reference"},
  };
  for (const auto& [args, says] : cases) {
    SCOPED_TRACE(args);
    const auto x = advplan(base + args, dir);
    testing::expect_one_line_error(x);
    EXPECT_THAT(x.err, HasSubstr(says));
  }
}

}  // namespace
}  // namespace advplan
