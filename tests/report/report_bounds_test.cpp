// What `advplan report` and `advplan view` hold of a hostile run's model calls (docs/REPORT.md "Model calls on a
// page"), and how the report's folder is written: whole, switched in at the end, so a report killed while it
// refreshes a site leaves the old site, and its leftover is named by `check` and removed by the next report.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "advplan/io/csv.hpp"
#include "advplan/io/sha256.hpp"
#include "advplan/report/report.hpp"
#include "advplan/run/config.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::advplan;
using testing::quote;
using testing::read_file;
using testing::TempDir;

nlohmann::json data_of(const std::string& text, const std::string& key) {
  const std::string head = "ADVPLAN_DATA(\"" + key + "\", ";
  EXPECT_EQ(text.rfind(head, 0), 0u) << key;
  return nlohmann::json::parse(text.substr(head.size(), text.size() - head.size() - 3));
}

// A run whose transcripts.jsonl (MANIFEST re-hashed, as a hostile sender would) holds a call with a 200 KiB message
// and 250 more calls for one scenario: its page shows each text cut at 64 KiB with the bytes cut, the first 200
// calls and the count and bytes of the rest; the page view serves is the same.
TEST(ReportBounds, APageShowsTheFirstCallsEachCutAndCountsTheRest) {
  TempDir dir("report-calls");
  const std::string config = testing::small_config(dir);
  ASSERT_EQ(advplan("run " + quote(config) + " --out " + quote(dir / "run") + " --progress none", dir).status, 0);
  const std::string id = io::CsvTable::read(dir / "run/scenarios.csv").at(0, "scenario_id");
  std::string lines;
  const auto call = [&](const std::string& content, int attempt) {
    return nlohmann::json{{"scenario_id", id}, {"condition", ""}, {"sample", 0}, {"role", "blue"}, {"policy", "exec:x"},
                          {"attempt", attempt}, {"messages", {{{"role", "user"}, {"content", content}}}},
                          {"ok", true}, {"reply", "{}"}, {"accepted", false}}.dump() + "\n";
  };
  lines += call(std::string(200 << 10, 'a'), 0);
  for (int i = 1; i <= 250; ++i) lines += call("short", i);
  testing::write_file(dir / "run/transcripts.jsonl", lines);
  testing::write_file(dir / "run/MANIFEST", read_file(dir / "run/MANIFEST") + io::sha256_hex(lines) + "  transcripts.jsonl\n");
  ASSERT_EQ(advplan("check " + quote(dir / "run"), dir).status, 0);

  const auto x = advplan("report " + quote(dir / "run") + " --out " + quote(dir / "site"), dir);
  ASSERT_EQ(x.status, 0) << x.err;
  const std::string page = read_file(dir / "site/data/s/0.js");
  const auto s = data_of(page, "s/0");
  ASSERT_EQ(s["transcripts"].size(), 200u);
  const auto& first = s["transcripts"][0]["messages"][0];
  EXPECT_EQ(first["content"].get<std::string>().size(), std::size_t{64} << 10);
  EXPECT_EQ(first["cut_bytes"], (200 << 10) - (64 << 10));
  EXPECT_EQ(s["transcripts_left_out"]["calls"], 51);
  EXPECT_GT(s["transcripts_left_out"]["bytes"].get<std::size_t>(), 51u * 100);
  EXPECT_LT(page.size(), std::size_t{1} << 20);

  const ExperimentConfig cfg = load_experiment_config(config);
  const report::ViewSite site(report::ReportRun{dir / "run", &cfg});
  EXPECT_EQ(site.get("/data/s/0.js")->body, page) << "view serves the report's page";
}

// A report refreshed in place replaces the old site whole; a report killed before its switch leaves a temporary
// folder inside the run, which `check` names and the next report removes.
TEST(ReportBounds, ARefreshedSiteIsSwitchedInWholeAndALeftoverIsNamedThenRemoved) {
  TempDir dir("report-refresh");
  ASSERT_EQ(advplan("run " + quote(testing::small_config(dir)) + " --out " + quote(dir / "run") + " --progress none", dir).status, 0);
  ASSERT_EQ(advplan("report " + quote(dir / "run") + " --out " + quote(dir / "run/report"), dir).status, 0);
  const std::string overview = read_file(dir / "run/report/data/overview.js");
  testing::write_file(dir / "run/report/data/overview.js", "stale");
  auto x = advplan("check " + quote(dir / "run"), dir);
  testing::expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr("report/data/overview.js"));
  // The killed refresh: its half-built folder beside the site.
  fs::create_directories(fs::path(dir / "run/.report.tmp-Qw3Er5/data"));
  testing::write_file(dir / "run/.report.tmp-Qw3Er5/data/overview.js", "half");
  x = advplan("check " + quote(dir / "run"), dir);
  testing::expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr(".report.tmp-Qw3Er5"));
  x = advplan("report " + quote(dir / "run") + " --out " + quote(dir / "run/report"), dir);
  ASSERT_EQ(x.status, 0) << x.err;
  EXPECT_FALSE(fs::exists(fs::path(dir / "run/.report.tmp-Qw3Er5")));
  EXPECT_EQ(read_file(dir / "run/report/data/overview.js"), overview);
  x = advplan("check " + quote(dir / "run"), dir);
  EXPECT_EQ(x.status, 0) << x.err;
  // A folder the report did not write is not replaced.
  fs::create_directories(fs::path(dir / "mine"));
  testing::write_file(dir / "mine/notes.txt", "keep");
  x = advplan("report " + quote(dir / "run") + " --out " + quote(dir / "mine"), dir);
  testing::expect_one_line_error(x);
  EXPECT_EQ(read_file(dir / "mine/notes.txt"), "keep");
}

}  // namespace
}  // namespace advplan
