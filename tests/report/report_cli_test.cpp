// `advplan report` (docs/REPORT.md) without a browser: the site's files, the numbers in its data files against the
// run's CSVs, a report inside the run that leaves it checking out, the kinds of run it must read (sampled, streamed,
// failed rows, merged shards), and the bad inputs, each one sentence. tests/browser/ opens the site in Chromium.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include <sys/stat.h>

#include "advplan/io/csv.hpp"
#include "advplan/io/sha256.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::advplan;
using testing::expect_one_line_error;
using testing::quote;
using testing::read_file;
using testing::TempDir;

/// The value a data file passes to ADVPLAN_DATA(key, value).
nlohmann::json data_of(const std::string& path, const std::string& key) {
  const std::string text = read_file(path);
  const std::string head = "ADVPLAN_DATA(\"" + key + "\", ";
  EXPECT_EQ(text.rfind(head, 0), 0u) << path;
  EXPECT_EQ(text.substr(text.size() - 3), ");\n") << path;
  return nlohmann::json::parse(text.substr(head.size(), text.size() - head.size() - 3));
}

std::string small(const TempDir& dir, std::vector<testing::Edit> more = {}, const std::string& name = "small.yaml") {
  more.insert(more.begin(), {"framing_mode: metadata", "framing_mode: metadata\ntraces: {plans: true}"});
  return testing::small_config(dir, more, name);
}

TEST(ReportCli, WritesASiteWhoseNumbersAreTheRunsAndLeavesTheRunCheckingOut) {
  TempDir dir("report");
  ASSERT_EQ(advplan("run " + quote(small(dir)) + " --out " + quote(dir / "run") + " --progress none", dir).status, 0);
  const auto x = advplan("report " + quote(dir / "run") + " --out " + quote(dir / "run/report"), dir);
  ASSERT_EQ(x.status, 0) << x.err;
  for (const char* f : {"index.html", "app.js", "style.css", "vendor/d3.min.js", "vendor/leaflet.js", "vendor/leaflet.css",
                        "vendor/dagre.min.js"})
    EXPECT_TRUE(fs::is_regular_file(fs::path(dir / (std::string("run/report/") + f)))) << f;
  // Nothing is fetched: every script and style the page names is a file of the site.
  const std::string html = read_file(dir / "run/report/index.html");
  EXPECT_THAT(html, ::testing::Not(HasSubstr("http://")));
  EXPECT_THAT(html, ::testing::Not(HasSubstr("https://")));
  EXPECT_THAT(read_file(dir / "run/report/app.js"), ::testing::Not(HasSubstr("fetch(")));
  const auto o = data_of(dir / "run/report/data/overview.js", "overview");
  {
    const std::string manifest = read_file(dir / "run/MANIFEST");
    const auto files = std::count(manifest.begin(), manifest.end(), '\n');
    EXPECT_EQ(o["run"]["manifest"], fmt::format("checked: {} files match the MANIFEST", files));
  }
  const auto boot = io::CsvTable::read(dir / "run/bootstrap_summary.csv");
  std::size_t checked = 0;
  for (std::size_t i = 0; i < boot.size(); ++i) {
    if (boot.at(i, "scope") != "all") continue;
    const auto& v = o["summary"][boot.at(i, "condition")][boot.at(i, "metric")];
    EXPECT_NEAR(v[1].get<double>(), boot.real(i, "mean"), 1e-12);
    EXPECT_NEAR(v[3].get<double>(), boot.real(i, "ci_hi"), 1e-12);
    ++checked;
  }
  EXPECT_GT(checked, 100u);
  const auto per = io::CsvTable::read(dir / "run/per_scenario.csv");
  EXPECT_EQ(o["rows"]["data"].size(), per.size());
  const auto scenarios = io::CsvTable::read(dir / "run/scenarios.csv");
  for (std::size_t i = 0; i < scenarios.size(); ++i) {
    const auto s = data_of(dir / fmt::format("run/report/data/s/{}.js", i), fmt::format("s/{}", i));
    EXPECT_EQ(s["row"]["scenario_id"], scenarios.at(i, "scenario_id"));
    EXPECT_FALSE(s["plans"].empty()) << "traces: {plans: true} keeps the plans the page draws";
    EXPECT_FALSE(s["candidates"].empty());
    EXPECT_FALSE(s["scenario"]["assets"].empty());
  }
  EXPECT_EQ(advplan("check " + quote(dir / "run"), dir).status, 0) << "report/ is a derived folder";
}

TEST(ReportCli, ReadsSampledStreamedFailedAndMergedRuns) {
  TempDir dir("report-kinds");
  const std::string sampled = small(dir, {{"conditions: [single, greedy@8, constraint@8, llm_offline, {label: council, blue: council, red: greedy@8}]",
                                           "conditions: [single, greedy@8, {label: bad, blue: \"exec:cat\", red: single}]\nsamples: 2"}},
                                    "sampled.yaml");
  ASSERT_EQ(advplan("run " + quote(sampled) + " --out " + quote(dir / "sampled") + " --progress none", dir).status, 0);
  const std::string plain = small(dir, {}, "plain.yaml");
  ASSERT_EQ(advplan("run " + quote(plain) + " --out " + quote(dir / "streamed") + " --summary streaming --progress none", dir).status, 0);
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(advplan(fmt::format("run {} --out {} --shard {}/2 --progress none", quote(plain), quote(dir / fmt::format("s{}", i)), i), dir).status, 0);
  ASSERT_EQ(advplan("merge " + quote(dir / "s0") + " " + quote(dir / "s1") + " --out " + quote(dir / "merged"), dir).status, 0);
  for (const char* run : {"sampled", "streamed", "merged"}) {
    const auto x = advplan(fmt::format("report {} --out {}", quote(dir / run), quote(dir / (std::string(run) + "-site"))), dir);
    EXPECT_EQ(x.status, 0) << run << ": " << x.err;
  }
  const auto o = data_of(dir / "sampled-site/data/overview.js", "overview");
  EXPECT_EQ(o["run"]["samples"], 2);
  std::size_t failed = 0;
  const auto& cols = o["rows"]["columns"];
  const auto status = std::find(cols.begin(), cols.end(), "status") - cols.begin();
  for (const auto& r : o["rows"]["data"]) failed += r[status] != "ok";
  EXPECT_GT(failed, 0u) << "the failed rows are in the site, with their reasons";
}

TEST(ReportCli, RefusesBadInputsInOneSentence) {
  TempDir dir("report-bad");
  ASSERT_EQ(advplan("run " + quote(small(dir)) + " --out " + quote(dir / "run") + " --progress none", dir).status, 0);
  // An analysis folder inside the run that is not a derived one, and the run itself.
  auto x = advplan("report " + quote(dir / "run") + " --out " + quote(dir / "run/site"), dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr("derived folder"));
  x = advplan("report " + quote(dir / "run") + " --out " + quote(dir / "run"), dir);
  expect_one_line_error(x);
  // An edited trace: the MANIFEST names it, and nothing is written.
  fs::copy(fs::path(dir / "run"), fs::path(dir / "edited"), fs::copy_options::recursive);
  testing::write_file(dir / "edited/candidates.csv", read_file(dir / "edited/candidates.csv") + "x\n");
  x = advplan("report " + quote(dir / "edited") + " --out " + quote(dir / "out"), dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr("candidates.csv"));
  EXPECT_FALSE(fs::exists(fs::path(dir / "out/index.html")));
  // Not a run.
  x = advplan("report " + quote(dir / "nowhere") + " --out " + quote(dir / "out2"), dir);
  expect_one_line_error(x);
}

// An evaluate run's report shows its verdicts, scorecard and robustness curves, as evaluation/ holds them.
TEST(ReportCli, AnEvaluateRunShowsItsVerdictsScorecardAndRobustness) {
  TempDir dir("report-evaluate");
  const auto e = advplan("evaluate --blue random --config " + quote(small(dir)) + " --out " + quote(dir / "ev") +
                             " --progress none",
                         dir);
  ASSERT_EQ(e.status, 0) << e.err;
  ASSERT_EQ(advplan("report " + quote(dir / "ev") + " --out " + quote(dir / "site"), dir).status, 0);
  const auto o = data_of(dir / "site/data/overview.js", "overview");
  for (const char* name : {"verdicts", "scorecard", "robustness"}) {
    const auto t = io::CsvTable::read(dir / (std::string("ev/evaluation/") + name + ".csv"));
    ASSERT_TRUE(o["evaluation"].contains(name)) << name;
    EXPECT_EQ(o["evaluation"][name].size(), t.size()) << name;
  }
  EXPECT_EQ(o["evaluation"]["verdicts"][0]["verdict"], io::CsvTable::read(dir / "ev/evaluation/verdicts.csv").at(0, "verdict"));
}

/// Rewrites `rel`'s line of RUN's MANIFEST to the file's current sha256, as a hostile sender would.
void remanifest(const std::string& run, const std::string& rel) {
  std::string out;
  std::istringstream in(read_file(run + "/MANIFEST"));
  for (std::string line; std::getline(in, line);) {
    if (line.size() > 66 && line.substr(66) == rel) line = io::sha256_hex(read_file(run + "/" + rel)) + "  " + rel;
    out += line + "\n";
  }
  testing::write_file(run + "/MANIFEST", out);
}

// A hostile run (one mailed to you) is bounded: a FIFO planted where the site writes a file is refused, an edited
// run_metadata.json (outside the MANIFEST) asking for ten million scenarios is not generated, and a bootstrap B
// above the config's bound is refused, each in one sentence or without any hang.
TEST(ReportCli, AHostileRunIsBounded) {
  TempDir dir("report-hostile");
  ASSERT_EQ(advplan("run " + quote(small(dir)) + " --out " + quote(dir / "run") + " --progress none", dir).status, 0);
  fs::create_directories(fs::path(dir / "run/report/vendor"));
  ASSERT_EQ(::mkfifo((dir / "run/report/vendor/d3.min.js").c_str(), 0644), 0);
  auto x = advplan("report " + quote(dir / "run") + " --out " + quote(dir / "run/report"), dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr("not a regular file"));
  fs::remove_all(fs::path(dir / "run/report"));

  nlohmann::ordered_json meta = nlohmann::ordered_json::parse(read_file(dir / "run/run_metadata.json"));
  std::string text = meta["config_text"].get<std::string>();
  text.replace(text.find("seeds: [100, 102]"), 17, "seeds: [100, 4999000]");
  meta["config_text"] = text;
  testing::write_file(dir / "run/run_metadata.json", meta.dump());
  x = advplan("report " + quote(dir / "run") + " --out " + quote(dir / "site"), dir);
  ASSERT_EQ(x.status, 0) << x.err;
  EXPECT_TRUE(data_of(dir / "site/data/s/0.js", "s/0")["scenario"].is_null()) << "ten million scenarios were generated";

  ASSERT_EQ(advplan("run " + quote(small(dir, {}, "b.yaml")) + " --out " + quote(dir / "b") + " --progress none", dir).status, 0);
  std::string boot = read_file(dir / "b/bootstrap_summary.csv");
  for (std::size_t at = boot.find(",200,7\n"); at != std::string::npos; at = boot.find(",200,7\n", at))
    boot.replace(at, 7, ",2000000000,7\n");
  testing::write_file(dir / "b/bootstrap_summary.csv", boot);
  remanifest(dir / "b", "bootstrap_summary.csv");
  ASSERT_EQ(advplan("check " + quote(dir / "b"), dir).status, 0);
  x = advplan("report " + quote(dir / "b") + " --against " + quote(dir / "run") + " --out " + quote(dir / "cmp"), dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr("resamples"));
}

}  // namespace
}  // namespace advplan
