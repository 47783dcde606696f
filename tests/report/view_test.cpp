// `advplan view`'s pages (report::ViewSite) against the static report: every scenario page is the bytes the report
// holds, the row pages together are the report's rows, the overview holds no rows, and any other path is a 404.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "advplan/report/report.hpp"
#include "advplan/run/config.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

using testing::advplan;
using testing::quote;
using testing::read_file;
using testing::TempDir;

nlohmann::json value_of(const std::string& text, const std::string& key) {
  const std::string head = "ADVPLAN_DATA(\"" + key + "\", ";
  EXPECT_EQ(text.rfind(head, 0), 0u) << key;
  return nlohmann::json::parse(text.substr(head.size(), text.size() - head.size() - 3));
}

TEST(ViewSite, ServesTheReportsPagesOnRequest) {
  TempDir dir("view");
  const std::string config = testing::small_config(dir, {{"framing_mode: metadata", "framing_mode: metadata\ntraces: {plans: true}"}});
  ASSERT_EQ(advplan("run " + quote(config) + " --out " + quote(dir / "run") + " --progress none", dir).status, 0);
  ASSERT_EQ(advplan("report " + quote(dir / "run") + " --out " + quote(dir / "site"), dir).status, 0);
  const ExperimentConfig cfg = load_experiment_config(config);
  const report::ViewSite site(report::ReportRun{dir / "run", &cfg});
  ASSERT_EQ(site.scenarios(), 6u);
  for (std::size_t i = 0; i < site.scenarios(); ++i) {
    const auto page = site.get(fmt::format("/data/s/{}.js", i));
    ASSERT_TRUE(page);
    EXPECT_EQ(page->body, read_file(dir / fmt::format("site/data/s/{}.js", i))) << "scenario " << i;
  }
  const auto report_overview = value_of(read_file(dir / "site/data/overview.js"), "overview");
  const auto served = value_of(site.get("/data/overview.js")->body, "overview");
  EXPECT_FALSE(served.contains("rows")) << "the served overview holds no rows";
  EXPECT_EQ(served["summary"], report_overview["summary"]);
  EXPECT_EQ(served["paged"]["pages"], 1);
  const auto rows = value_of(site.get("/data/rows/0.js")->body, "rows/0");
  EXPECT_EQ(rows["columns"], report_overview["rows"]["columns"]);
  EXPECT_EQ(rows["data"], report_overview["rows"]["data"]);
  EXPECT_EQ(site.get("/index.html")->body, read_file(dir / "site/index.html"));
  for (const char* bad : {"/data/s/6.js", "/data/s/-1.js", "/data/s/1x.js", "/data/rows/1.js", "/../MANIFEST",
                          "/data/overview.json", "/run_metadata.json", "/data/s/.js"})
    EXPECT_FALSE(site.get(bad)) << bad;
}

}  // namespace
}  // namespace advplan
