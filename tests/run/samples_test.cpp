// Samples (config `samples: N`, docs/CONFIG.md "samples", docs/METRICS.md "Samples"): N independent responses per
// (scenario, condition), each from its own keyed streams. Three rows per (scenario, condition) with a sample
// column; sample 0 is what a run of one sample plays; summaries average the samples within a scenario before the
// bootstrap over scenarios, checked against a brute-force mean; the bytes are the same at any thread count and
// across shards; and the combinations a sampled run cannot serve are refused in one sentence.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "advplan/io/csv.hpp"
#include "advplan/run/summaries.hpp"
#include "advplan/run/trace_schema.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::advplan;
using testing::compare_runs;
using testing::expect_one_line_error;
using testing::quote;
using testing::TempDir;

/// tests/data/small.yaml without the council (its trace has no sample column), with a stochastic BLUE policy,
/// and `samples: N` when N > 0.
std::string samples_config(const TempDir& dir, int n, const std::string& name = "samples.yaml") {
  std::vector<testing::Edit> edits{
      {"conditions: [single, greedy@8, constraint@8, llm_offline, {label: council, blue: council, red: greedy@8}]",
       "conditions: [single, greedy@8, constraint@8, llm_offline, {label: random, blue: random, red: single}]"}};
  if (n > 0) edits.emplace_back("framing_mode: metadata", fmt::format("framing_mode: metadata\nsamples: {}", n));
  return testing::small_config(dir, edits, name);
}

/// One run of three samples and one of a single sample, shared by the tests that read them.
class Samples : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("samples");
    const auto three = advplan("run " + quote(samples_config(*dir_, 3)) + " --out " + quote(*dir_ / "three") +
                                   " --threads 2 --progress none",
                               *dir_);
    ASSERT_EQ(three.status, 0) << three.err;
    const auto one = advplan("run " + quote(samples_config(*dir_, 0, "one.yaml")) + " --out " +
                                 quote(*dir_ / "one") + " --threads 2 --progress none",
                             *dir_);
    ASSERT_EQ(one.status, 0) << one.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string run(const char* name) { return *dir_ / name; }
  static TempDir* dir_;
};
TempDir* Samples::dir_ = nullptr;

TEST_F(Samples, GiveThreeRowsPerScenarioAndConditionWithASampleColumn) {
  const io::CsvTable per = io::CsvTable::read(run("three") + "/per_scenario.csv", schema::per_scenario_sampled());
  const io::CsvTable one = io::CsvTable::read(run("one") + "/per_scenario.csv", schema::per_scenario());
  ASSERT_EQ(per.size(), 3 * one.size());
  std::map<std::pair<std::string, std::string>, std::set<std::string>> samples;
  for (const auto& r : per.rows()) samples[{r[per.col("scenario_id")], r[per.col("condition")]}].insert(r[per.col("sample")]);
  EXPECT_EQ(samples.size(), one.size());
  for (const auto& [key, s] : samples) EXPECT_EQ(s, (std::set<std::string>{"0", "1", "2"})) << key.first;
  // The samples are independent draws: the stochastic policies answer differently in some scenario.
  for (const char* condition : {"single", "random"}) {
    std::map<std::string, std::set<std::string>> quality;  // scenario -> the samples' red (single) or blue quality
    const auto col = per.col(std::string(condition) == "single" ? "red_quality" : "blue_quality");
    for (const auto& r : per.rows())
      if (r[per.col("condition")] == condition) quality[r[per.col("scenario_id")]].insert(r[col]);
    bool differs = false;
    for (const auto& [sc, q] : quality) differs = differs || q.size() > 1;
    EXPECT_TRUE(differs) << condition << ": every sample of every scenario answered the same";
  }
  // candidates.csv and plans.jsonl carry the sample too.
  const io::CsvTable cand = io::CsvTable::read(run("three") + "/candidates.csv", schema::candidates_sampled());
  EXPECT_GT(cand.size(), 0u);
}

TEST_F(Samples, SampleZeroIsWhatARunOfOneSamplePlays) {
  const io::CsvTable per = io::CsvTable::read(run("three") + "/per_scenario.csv", schema::per_scenario_sampled());
  const io::CsvTable one = io::CsvTable::read(run("one") + "/per_scenario.csv", schema::per_scenario());
  std::vector<std::vector<std::string>> zero;
  const std::size_t cs = per.col("sample");
  for (auto r : per.rows())
    if (r[cs] == "0") {
      r.erase(r.begin() + static_cast<std::ptrdiff_t>(cs));
      zero.push_back(std::move(r));
    }
  EXPECT_EQ(zero, one.rows());
}

// The oracle: a brute-force mean over scenarios of each scenario's mean over its ok samples, from the raw rows.
// Tolerance 1e-6: each scenario's mean is written to the traces' 6 decimals (half a unit: 5e-7) before the
// bootstrap averages them, and the summary's mean is written to 6 decimals again.
TEST_F(Samples, SummariesAverageWithinAScenarioThenOverScenarios) {
  const io::CsvTable per = io::CsvTable::read(run("three") + "/per_scenario.csv", schema::per_scenario_sampled());
  const io::CsvTable boot = io::CsvTable::read(run("three") + "/bootstrap_summary.csv", schema::bootstrap_summary());
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<double, int>> within;
  for (std::size_t i = 0; i < per.size(); ++i) {
    if (per.at(i, "status") != "ok") continue;
    for (const auto& m : schema::summarised_metrics()) {
      auto& [sum, n] = within[{per.at(i, "condition"), m, per.at(i, "scenario_id")}];
      sum += per.real(i, m);
      ++n;
    }
  }
  std::map<std::pair<std::string, std::string>, std::pair<double, int>> over;
  for (const auto& [key, sn] : within) {
    auto& [sum, n] = over[{std::get<0>(key), std::get<1>(key)}];
    sum += sn.first / sn.second;
    ++n;
  }
  std::size_t checked = 0;
  for (std::size_t i = 0; i < boot.size(); ++i) {
    if (boot.at(i, "scope") != "all") continue;
    const auto it = over.find({boot.at(i, "condition"), boot.at(i, "metric")});
    ASSERT_NE(it, over.end()) << boot.at(i, "condition") << " " << boot.at(i, "metric");
    EXPECT_EQ(boot.at(i, "n"), std::to_string(it->second.second)) << "n counts scenarios, not samples";
    EXPECT_NEAR(boot.real(i, "mean"), it->second.first / it->second.second, 1e-6)
        << boot.at(i, "condition") << " " << boot.at(i, "metric");
    ++checked;
  }
  EXPECT_EQ(checked, over.size());
  EXPECT_EQ(boot.at(0, "n"), "6");
}

// The reducers (docs/METRICS.md "Reducers over samples") are written for the sampled run and only for it; their
// mean is the summaries' per-scenario mean, and worst-of-N is at most it.
TEST_F(Samples, WriteReducersAndTheFlakyListOnlyForASampledRun) {
  EXPECT_FALSE(fs::exists(run("one") + "/samples"));
  const io::CsvTable red = io::CsvTable::read(run("three") + "/samples/reducers.csv");
  const io::CsvTable per = io::CsvTable::read(run("three") + "/per_scenario.csv", schema::per_scenario_sampled());
  ASSERT_EQ(red.size() * 3, per.size());
  const io::CsvTable means = sample_means(per);
  for (std::size_t i = 0; i < red.size(); ++i) {
    EXPECT_EQ(red.at(i, "samples"), "3");
    if (red.at(i, "advantage_mean").empty()) continue;
    EXPECT_NEAR(red.real(i, "advantage_mean"), means.real(i, "advantage"), 1e-6) << red.at(i, "scenario_id");
    EXPECT_LE(red.real(i, "advantage_worst"), red.real(i, "advantage_mean") + 1e-12);
  }
  for (const char* f : {"pass_at_k.csv", "flaky.csv", "flakiness.csv"})
    EXPECT_TRUE(fs::exists(run("three") + "/samples/" + f)) << f;
}

TEST(SampleMeans, AverageTheOkSamplesAndRefuseARepeatedSample) {
  std::vector<std::string> header = schema::per_scenario_sampled();
  io::CsvTable t(header);
  t.set_source("per_scenario.csv");
  auto row = [&](const char* sample, const char* status, const char* advantage) {
    std::vector<std::string> r(header.size());
    r[t.col("scenario_id")] = "s";
    r[t.col("condition")] = "c";
    r[t.col("sample")] = sample;
    r[t.col("status")] = status;
    r[t.col("advantage")] = advantage;
    r[t.col("blue_plan_id")] = std::string("p") + sample;
    return r;
  };
  t.add(row("0", "failed", ""));
  t.add(row("1", "ok", "0.200000"));
  t.add(row("2", "ok", "0.500000"));
  const io::CsvTable m = sample_means(t);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m.header(), schema::per_scenario());
  EXPECT_EQ(m.at(0, "status"), "ok");
  EXPECT_EQ(m.at(0, "advantage"), "0.350000");  // the failed sample is left out
  EXPECT_EQ(m.at(0, "blue_plan_id"), "p1");      // the first ok sample's
  t.add(row("1", "ok", "0.300000"));
  EXPECT_THROW(sample_means(t), CsvError);
}

TEST_F(Samples, AreByteIdenticalAtAnyThreadCountAndAcrossShards) {
  TempDir dir("samples-bytes");
  const std::string config = samples_config(dir, 3);
  const auto a = advplan("run " + quote(config) + " --out " + quote(dir / "t1") + " --threads 1 --progress none", dir);
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(compare_runs(run("three"), dir / "t1"), "");
  std::string shards;
  for (int i = 0; i < 2; ++i) {
    const std::string d = dir / fmt::format("s{}", i);
    const auto s = advplan(fmt::format("run {} --out {} --shard {}/2 --progress none", quote(config), quote(d), i), dir);
    ASSERT_EQ(s.status, 0) << s.err;
    shards += " " + quote(d);
  }
  const auto m = advplan("merge" + shards + " --out " + quote(dir / "merged"), dir);
  ASSERT_EQ(m.status, 0) << m.err;
  EXPECT_EQ(compare_runs(run("three"), dir / "merged"), "");
  // The tables rebuilt from a sampled run's traces give its summaries again.
  const auto t = advplan("tables " + quote(run("three")) + " --out " + quote(dir / "tables"), dir);
  ASSERT_EQ(t.status, 0) << t.err;
  std::size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(run("three") + "/tables"))
    if (e.is_regular_file()) {
      const std::string rel = fs::relative(e.path(), run("three") + "/tables").generic_string();
      if (rel.rfind("rubric/", 0) == 0) continue;  // the rubric layer's tables, written by the run's observer
      EXPECT_EQ(testing::read_file(dir / ("tables/" + rel)), testing::read_file(e.path().string())) << rel;
      ++files;
    }
  EXPECT_GT(files, 5u);
}

TEST_F(Samples, TheFrontierAnalysisRefusesASampledRunInOneSentence) {
  TempDir dir("samples-frontier");
  const auto x = advplan("frontier " + quote(run("three")) + " --out " + quote(dir / "f"), dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr("several samples"));
}

TEST(SamplesConfig, RefusesWhatASampledRunCannotServeInOneSentence) {
  TempDir dir("samples-refused");
  struct Case {
    std::string edit_from, edit_to, args, message;
  };
  const std::vector<Case> cases{
      {"framing_mode: metadata", "framing_mode: metadata\nsamples: 0", "", "samples"},
      {"framing_mode: metadata", "framing_mode: metadata\nsamples: 65", "", "samples"},
      {"framing_mode: metadata", "framing_mode: metadata\nsamples: 2", "", "council"},
      {"framing_mode: metadata", "framing_mode: metadata\nterrain: geo\nsamples: 2", "", "terrain: geo"},
  };
  for (const auto& c : cases) {
    const std::string config = testing::small_config(dir, {{c.edit_from, c.edit_to}});
    const auto x = advplan("run " + quote(config) + " --out " + quote(dir / "out") + " --force" + c.args, dir);
    expect_one_line_error(x);
    EXPECT_THAT(x.err, HasSubstr(c.message)) << c.edit_to;
  }
  const auto s = advplan("run " + quote(samples_config(dir, 2)) + " --out " + quote(dir / "out") +
                             " --force --summary streaming",
                         dir);
  expect_one_line_error(s);
  EXPECT_THAT(s.err, HasSubstr("--summary streaming"));
}

}  // namespace
}  // namespace advplan
