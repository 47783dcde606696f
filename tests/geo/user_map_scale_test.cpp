// A run on a user's map near the documented limits (docs/GEO.md "Bring your own map": 990,000 positions, about
// 20 MB) writes the map once (maps/_shared/<sha256>.geojson, the user's bytes) and per scenario only its layer, so
// `advplan report` and `advplan view` read the run's own maps: a run advplan wrote is always reportable.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "advplan/io/sha256.hpp"
#include "advplan/report/report.hpp"
#include "advplan/run/config.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using testing::advplan;
using testing::quote;
using testing::read_file;

/// A grid of 50 east-west and 50 north-south roads of 9,900 vertices each (990,000 positions), crossing at shared
/// vertices, with two places and a RED threat zone.
std::string large_map() {
  constexpr int kRoads = 50, kVertices = 9'900, kGap = 198;
  const auto lon = [](int i) { return fmt::format("{:.5f}", 10 + i * 1e-5); };
  const auto lat = [](int j) { return fmt::format("{:.5f}", 50 + j * 1e-5); };
  std::string out = "{\"type\":\"FeatureCollection\",\"name\":\"large\",\"features\":[\n";
  for (int dir = 0; dir < 2; ++dir)
    for (int r = 0; r < kRoads; ++r) {
      out += fmt::format("{{\"type\":\"Feature\",\"id\":\"road-{}-{}\",\"properties\":{{\"kind\":\"road\"}},"
                         "\"geometry\":{{\"type\":\"LineString\",\"coordinates\":[", dir, r);
      for (int k = 0; k < kVertices; ++k)
        out += fmt::format("{}[{},{}]", k ? "," : "", dir ? lon(r * kGap) : lon(k), dir ? lat(k) : lat(r * kGap));
      out += "]}},\n";
    }
  out += "{\"type\":\"Feature\",\"id\":\"depot\",\"properties\":{\"kind\":\"place\",\"name\":\"depot\"},"
         "\"geometry\":{\"type\":\"Point\",\"coordinates\":[10.09,50.09]}},\n";
  out += "{\"type\":\"Feature\",\"id\":\"ford\",\"properties\":{\"kind\":\"place\",\"name\":\"ford\"},"
         "\"geometry\":{\"type\":\"Point\",\"coordinates\":[10.05,50.05]}},\n";
  out += "{\"type\":\"Feature\",\"id\":\"threat-x\",\"properties\":{\"kind\":\"threat\",\"side\":\"RED\"},"
         "\"geometry\":{\"type\":\"Polygon\",\"coordinates\":[[[10.06,50.06],[10.07,50.06],[10.07,50.07],[10.06,50.07],"
         "[10.06,50.06]]]}}\n]}\n";
  return out;
}

// ctest: slow
TEST(UserMapScale, ARunOnAMapNearTheLimitsIsReportable) {
  testing::TempDir tmp("user-map-scale");
  const std::string map = large_map();
  ASSERT_GT(map.size(), std::size_t{18} << 20);
  testing::write_file(tmp / "map.geojson", map);
  testing::write_file(tmp / "t.yaml", "name: t\ncorpus: {templates: [urban], seeds: [100, 101]}\nconditions: [single]\n"
                                      "terrain: {geo: {geojson: map.geojson}}\n");
  auto x = advplan("run " + quote(tmp / "t.yaml") + " --out " + quote(tmp / "run") + " --progress none", tmp);
  ASSERT_EQ(x.status, 0) << x.err;
  // The map once, as the user's bytes; each scenario's file is its small layer on it.
  const std::string shared = "maps/_shared/" + io::sha256_hex(map) + ".geojson";
  EXPECT_EQ(read_file(tmp / ("run/" + shared)), map);
  for (const char* id : {"urban-100", "urban-101"}) {
    const std::string layer = read_file(tmp / (std::string("run/maps/") + id + ".geojson"));
    EXPECT_LT(layer.size(), std::size_t{64} << 10) << id;
    const auto j = nlohmann::json::parse(layer);
    EXPECT_EQ(j["base"], shared.substr(5));
  }
  x = advplan("report " + quote(tmp / "run") + " --out " + quote(tmp / "site"), tmp);
  ASSERT_EQ(x.status, 0) << x.err;
  const std::string overview = read_file(tmp / "site/data/overview.js");
  EXPECT_LT(overview.size(), std::size_t{8} << 20) << "the shared map is drawn within its bound";
  EXPECT_NE(overview.find("\"left_out\":"), std::string::npos);
  EXPECT_NE(read_file(tmp / "site/data/s/0.js").find("\"base\":\"_shared/"), std::string::npos);
  const ExperimentConfig cfg = load_experiment_config(tmp / "t.yaml");
  const report::ViewSite site(report::ReportRun{tmp / "run", &cfg});
  EXPECT_EQ(site.get("/data/s/1.js")->body, read_file(tmp / "site/data/s/1.js"));
}

// The run's bytes are the same at any thread count, the shared map and the layers included.
// ctest: slow
TEST(UserMapScale, TheMapFilesAreTheSameAtAnyThreadCount) {
  testing::TempDir tmp("user-map-threads");
  testing::write_file(tmp / "map.geojson", read_file(testing::kSource + "/tests/data/geo/user_map.geojson"));
  testing::write_file(tmp / "t.yaml", "name: t\ncorpus: {templates: [urban, air-defense], seeds: [100, 102]}\n"
                                      "conditions: [single]\nterrain: {geo: {geojson: map.geojson}}\n");
  for (const char* t : {"1", "3"})
    ASSERT_EQ(advplan("run " + quote(tmp / "t.yaml") + " --out " + quote(tmp / (std::string("run") + t)) +
                          " --threads " + t + " --progress none", tmp).status, 0);
  EXPECT_EQ(testing::compare_runs(tmp / "run1", tmp / "run3"), "");
  EXPECT_TRUE(fs::is_directory(fs::path(tmp / "run1/maps/_shared")));
}

}  // namespace
}  // namespace advplan
