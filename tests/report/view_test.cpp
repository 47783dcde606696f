// `advplan view`'s pages (report::ViewSite) against the static report: every scenario page is the bytes the report
// holds, the row pages together are the report's rows, the overview holds no rows, and any other path is a 404.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "advplan/report/report.hpp"
#include "advplan/report/view_server.hpp"
#include "advplan/run/config.hpp"
#include "support/cli.hpp"
#include "support/raw_http.hpp"

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
  // 2^61 pages of 200 scenarios wrap to scenario 0, 92233720368547759 pages to 184: past the end all the same.
  for (const char* bad : {"/data/s/6.js", "/data/s/-1.js", "/data/s/1x.js", "/data/rows/1.js", "/../MANIFEST",
                          "/data/overview.json", "/run_metadata.json", "/data/s/.js", "/data/rows/2305843009213693952.js",
                          "/data/rows/92233720368547759.js", "/data/rows/18446744073709551615.js",
                          "/data/s/18446744073709551615.js", "/data/rows/18446744073709551616.js"})
    EXPECT_FALSE(site.get(bad)) << bad;
}

/// One small run with plans kept and its static report, made once for the served tests below.
class ViewServer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("view-server");
    const std::string config =
        testing::small_config(*dir_, {{"framing_mode: metadata", "framing_mode: metadata\ntraces: {plans: true}"}});
    ASSERT_EQ(advplan("run " + quote(config) + " --out " + quote(*dir_ / "run") + " --progress none", *dir_).status, 0);
    ASSERT_EQ(advplan("report " + quote(*dir_ / "run") + " --out " + quote(*dir_ / "site"), *dir_).status, 0);
    cfg_ = new ExperimentConfig(load_experiment_config(config));
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete cfg_;
    dir_ = nullptr;
    cfg_ = nullptr;
  }
  static std::string run() { return *dir_ / "run"; }
  static std::string site_file(const std::string& rel) { return *dir_ / ("site/" + rel); }
  static report::ReportRun run_of(const std::string& dir) { return report::ReportRun{dir, cfg_}; }
  static TempDir* dir_;
  static ExperimentConfig* cfg_;
};
TempDir* ViewServer::dir_ = nullptr;
ExperimentConfig* ViewServer::cfg_ = nullptr;

/// `advplan view`'s server over `site` with `token`.
struct Served {
  Served(const report::ViewSite& site, std::string token)
      : token_(std::move(token)),
        server_(report::view_server_options(0),
                [&site, this](const io::LocalRequest& r) { return report::answer_view_request(site, token_, r); }) {}
  int port() const { return server_.port(); }
  std::string get(const std::string& target, const std::string& more = "") const {
    return testing::exchange(port(), testing::get_request(port(), target, more));
  }
  std::string token_;
  testing::ServerThread server_;
};

constexpr const char* kToken = "0123456789abcdef0123456789abcdef";

TEST_F(ViewServer, ServesTheSiteUnderItsTokenOnly) {
  const report::ViewSite site(run_of(run()));
  const Served s(site, kToken);
  const std::string index = s.get(fmt::format("/{}/", kToken));
  EXPECT_EQ(testing::status_of(index), 200);
  EXPECT_EQ(testing::body_of(index), read_file(site_file("index.html")));
  EXPECT_EQ(testing::body_of(s.get(fmt::format("/{}/data/s/0.js", kToken))), read_file(site_file("data/s/0.js")));
  const std::string moved = s.get(fmt::format("/{}", kToken));
  EXPECT_EQ(testing::status_of(moved), 301);
  EXPECT_NE(moved.find(fmt::format("\r\nLocation: /{}/\r\n", kToken)), std::string::npos);
  for (const std::string bad : {"/", "/index.html", "/data/overview.js", "/data/s/0.js", "/0123456789abcdef0123456789abcdee/",
                                "/0123456789abcdef0123456789abcdef0/", "/0123456789abcdef/data/overview.js",
                                "//0123456789abcdef0123456789abcdef/", "/x/0123456789abcdef0123456789abcdef/"}) {
    const std::string r = s.get(bad);
    EXPECT_EQ(testing::status_of(r), 404) << bad;
    EXPECT_NE(testing::body_of(r).find("open the address `advplan view` printed"), std::string::npos) << bad;
    EXPECT_EQ(r.find(kToken), std::string::npos) << "a refusal names no token: " << bad;
  }
  EXPECT_EQ(testing::status_of(s.get(fmt::format("/{}/data/rows/92233720368547759.js", kToken))), 404);
  EXPECT_EQ(testing::status_of(s.get(fmt::format("/{}/data/rows/2305843009213693952.js", kToken))), 404);
}

TEST_F(ViewServer, SendsItsSecurityHeadersOnEveryResponse) {
  const report::ViewSite site(run_of(run()));
  const Served s(site, kToken);
  const std::string wrong_host = testing::exchange(s.port(), "GET / HTTP/1.1\r\nHost: evil.test:" + std::to_string(s.port()) + "\r\n\r\n");
  EXPECT_EQ(testing::status_of(wrong_host), 421) << "DNS rebinding: another host name";
  for (const std::string& r : {s.get(fmt::format("/{}/", kToken)), s.get("/"), wrong_host,
                               s.get(fmt::format("/{}/data/s/0.js", kToken), "Sec-Fetch-Site: cross-site\r\n")})
    for (const char* h : {"Cross-Origin-Resource-Policy: same-origin", "X-Content-Type-Options: nosniff",
                          "Referrer-Policy: no-referrer", "Cache-Control: no-store",
                          "Content-Security-Policy: frame-ancestors 'none'", "X-Frame-Options: DENY"})
      EXPECT_NE(r.find(std::string("\r\n") + h + "\r\n"), std::string::npos) << h << " in " << r.substr(0, 300);
}

TEST_F(ViewServer, RefusesOtherSitesButTheirNavigationToTheIndex) {
  const report::ViewSite site(run_of(run()));
  const Served s(site, kToken);
  const std::string data = fmt::format("/{}/data/overview.js", kToken), index = fmt::format("/{}/", kToken);
  const std::string navigate = "Sec-Fetch-Mode: navigate\r\nSec-Fetch-Dest: document\r\n";
  EXPECT_EQ(testing::status_of(s.get(data, "Sec-Fetch-Site: cross-site\r\nSec-Fetch-Mode: no-cors\r\nSec-Fetch-Dest: script\r\n")), 403);
  EXPECT_EQ(testing::status_of(s.get(data, "Sec-Fetch-Site: same-site\r\nSec-Fetch-Mode: cors\r\n")), 403);
  EXPECT_EQ(testing::status_of(s.get(data, "Sec-Fetch-Site: cross-site\r\n" + navigate)), 403);
  EXPECT_EQ(testing::status_of(s.get(index, "Sec-Fetch-Site: cross-site\r\nSec-Fetch-Mode: navigate\r\nSec-Fetch-Dest: iframe\r\n")), 403);
  EXPECT_EQ(testing::status_of(s.get(index, "Sec-Fetch-Site: cross-site\r\n" + navigate)), 200);
  EXPECT_EQ(testing::status_of(s.get(data, "Sec-Fetch-Site: same-origin\r\nSec-Fetch-Mode: no-cors\r\n")), 200);
  EXPECT_EQ(testing::status_of(s.get(data, "Sec-Fetch-Site: none\r\n")), 200);
  EXPECT_EQ(testing::status_of(s.get(data)), 200) << "no Fetch Metadata: not a browser";
}

TEST_F(ViewServer, RefusesABodyAndServesWholeFilesOnly) {
  const report::ViewSite site(run_of(run()));
  const Served s(site, kToken);
  testing::RawClient c(s.port());
  c.send(fmt::format("GET /{}/ HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 1000000000\r\n\r\n", kToken, s.port()));
  EXPECT_EQ(testing::status_of(c.read_response()), 413) << "answered at the head: the body was never sent";
  std::string ranges = "Range: bytes=0-";
  for (int i = 0; i < 200; ++i) ranges += ",0-";
  const std::string r = s.get(fmt::format("/{}/data/s/0.js", kToken), ranges + "\r\n");
  const std::string file = read_file(site_file("data/s/0.js"));
  EXPECT_EQ(testing::status_of(r), 200);
  EXPECT_NE(r.find(fmt::format("\r\nContent-Length: {}\r\n", file.size())), std::string::npos);
  EXPECT_EQ(testing::body_of(r), file);
}

TEST_F(ViewServer, RefusesAFileEditedAfterTheStart) {
  TempDir copy("view-edit");
  std::filesystem::copy(run(), copy / "run", std::filesystem::copy_options::recursive);
  const report::ViewSite site(run_of(copy / "run"));
  ASSERT_TRUE(site.get("/data/s/0.js"));
  // The same size, in place (the inode stays), at a later time: the bytes the MANIFEST check read are gone.
  const std::string per = copy / "run/per_scenario.csv";
  std::string text = read_file(per);
  const auto when = std::filesystem::last_write_time(per);
  const std::size_t digit = text.find_first_of("0123456789", text.find('\n'));
  text[digit] = text[digit] == '1' ? '2' : '1';
  {
    std::fstream out(per, std::ios::in | std::ios::out | std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  std::filesystem::last_write_time(per, when + std::chrono::seconds(1));
  for (const char* page : {"/data/s/0.js", "/data/rows/0.js"}) {
    try {
      site.get(page);
      ADD_FAILURE() << page << " was served from the edited file";
    } catch (const report::RunChanged& e) {
      EXPECT_NE(std::string(e.what()).find("per_scenario.csv: changed since view started"), std::string::npos) << e.what();
    }
  }
  const Served s(site, kToken);
  const std::string r = s.get(fmt::format("/{}/data/s/0.js", kToken));
  EXPECT_EQ(testing::status_of(r), 409);
  EXPECT_NE(testing::body_of(r).find("changed since view started"), std::string::npos);
  EXPECT_EQ(testing::status_of(s.get(fmt::format("/{}/data/overview.js", kToken))), 200) << "made at the start";
}

TEST(ViewToken, Is128RandomBitsInHex) {
  const std::string a = report::new_view_token(), b = report::new_view_token();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a, b);
}

}  // namespace
}  // namespace advplan
