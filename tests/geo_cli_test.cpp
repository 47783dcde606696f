// End to end: `advplan map`, `tool`, `questions` and `quiz` (docs/GEO.md), with the offline scripted agent and
// the example Python exec: agent (experiments/geo_agent.py).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "test_fixtures.hpp"

namespace advplan {
namespace {
using nlohmann::json;
using testing::shell_quote;

testing::CommandResult cli(const std::string& args, const testing::TempDir& dir) {
  return testing::run_command(shell_quote(ADVPLAN_BINARY) + " " + args, dir);
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) out.push_back(l);
  return out;
}

TEST(GeoCli, MapWritesGeoJsonAndToolAnswersOrFailsWithASentence) {
  testing::TempDir dir("geo-cli");
  const auto m = cli("map maritime-103 --out " + shell_quote(dir / "m.geojson"), dir);
  ASSERT_EQ(m.status, 0) << m.err;
  const json g = json::parse(testing::read_file(dir / "m.geojson"));
  EXPECT_EQ(g["type"], "FeatureCollection");
  EXPECT_GT(g["features"].size(), 20u);

  const auto ok = cli("tool route --scenario maritime-103 --args " +
                          shell_quote(R"({"from":"b-frg-1","to":"place-1","avoid":["RED"]})"),
                      dir);
  ASSERT_EQ(ok.status, 0) << ok.err;
  const json r = json::parse(ok.out);
  EXPECT_TRUE(r["ok"].get<bool>());
  EXPECT_TRUE(r["result"].contains("feasible"));

  const auto bad = cli("tool route --scenario maritime-103 --args " + shell_quote(R"({"from":"b-frg-1","to":"atlantis"})"), dir);
  EXPECT_EQ(bad.status, 1);
  EXPECT_FALSE(json::parse(bad.out)["ok"].get<bool>());
  EXPECT_NE(bad.err.find("atlantis"), std::string::npos) << bad.err;
  EXPECT_EQ(lines(bad.err).size(), 1u) << bad.err;

  const auto unknown = cli("map nowhere-7", dir);
  EXPECT_NE(unknown.status, 0);
  EXPECT_NE(unknown.err.find("nowhere-7"), std::string::npos) << unknown.err;
}

TEST(GeoCli, QuestionsAndQuizEndToEndWithTheScriptedAndPythonAgents) {
  testing::TempDir dir("geo-quiz");
  const std::string cfg = dir / "small.yaml";
  {
    std::ofstream(cfg) << "name: small\nterrain: geo\ncorpus: {templates: [urban, maritime, mixed, air-defense, "
                          "humanitarian], seeds: [100, 102], template_dir: "
                       << ADVPLAN_SOURCE_DIR << "/configs/templates}\nconditions: [single]\n";
  }
  const std::string q = dir / "q.jsonl";
  const auto gen = cli("questions " + shell_quote(cfg) + " --out " + shell_quote(q), dir);
  ASSERT_EQ(gen.status, 0) << gen.err;
  const auto qs = lines(testing::read_file(q));
  EXPECT_GT(qs.size(), 100u);
  for (const auto& l : qs) {
    const json j = json::parse(l);
    EXPECT_TRUE(j.contains("tier") && j.contains("categories") && j.contains("answer")) << l;
  }
  auto quiz = [&](const std::string& agent) {
    const auto r = cli("quiz " + shell_quote(cfg) + " --questions " + shell_quote(q) + " --agent " + shell_quote(agent) +
                           " --out " + shell_quote(dir / "r.jsonl"),
                       dir);
    EXPECT_EQ(r.status, 0) << agent << ": " << r.err;
    std::map<std::string, std::vector<std::string>> rows;
    for (const auto& l : lines(r.out)) {
      std::vector<std::string> cells;
      std::stringstream ss(l);
      for (std::string c; std::getline(ss, c, ',');) cells.push_back(c);
      rows[cells[0]] = cells;
    }
    return rows;
  };
  const auto oracle = quiz("scripted");
  ASSERT_TRUE(oracle.contains("overall"));
  EXPECT_EQ(oracle.at("overall")[3], "1.0000");
  EXPECT_NE(oracle.at("overall")[6], "0.000");  // the scripted agent really calls the tools
  for (const char* g : {"tier 1", "tier 2", "tier 3", "category 7"}) EXPECT_TRUE(oracle.contains(g)) << g;
  const auto verbose = quiz("scripted:verbose");
  EXPECT_EQ(verbose.at("overall")[3], "0.0000");
  EXPECT_EQ(verbose.at("overall")[7], verbose.at("overall")[1]);  // every question ran out of budget
  for (const auto& l : lines(testing::read_file(dir / "r.jsonl")))
    EXPECT_EQ(json::parse(l)["reason"], "budget of 10 steps exhausted");

  const auto py = quiz("exec:python3 " + std::string(ADVPLAN_SOURCE_DIR) + "/experiments/geo_agent.py");
  ASSERT_TRUE(py.contains("overall"));
  EXPECT_GT(std::stod(py.at("overall")[3]), 0.9);
  const auto bad = cli("quiz " + shell_quote(cfg) + " --questions " + shell_quote(q) + " --agent carrier-pigeon", dir);
  EXPECT_NE(bad.status, 0);
  EXPECT_NE(bad.err.find("carrier-pigeon"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace advplan
