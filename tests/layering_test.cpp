// Layers point one way (docs/ARCHITECTURE.md "Layers"): a file may include advplan headers of its own module
// and of lower layers only. Modules of the same rank (scenario, metrics, sim, geo) do not include each other.
// This test reads every header and source under include/advplan/ and src/.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace {
namespace fs = std::filesystem;

const std::map<std::string, int>& ranks() {
  static const std::map<std::string, int> r{{"core", 0},   {"io", 1},      {"scenario", 2},   {"metrics", 2},
                                            {"sim", 2},    {"geo", 2},     {"policy", 3},  {"council", 4},    {"experiment", 5},
                                            {"cli", 6}};
  return r;
}

/// "layer: file includes advplan/X/..." for every include that points up or sideways.
std::vector<std::string> violations_in(const fs::path& file, const std::string& layer) {
  std::vector<std::string> out;
  std::ifstream in(file);
  static const std::regex inc(R"(^\s*#\s*include\s*[<"]advplan/([a-z_]+)/)");
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::smatch m;
    if (!std::regex_search(line, m, inc)) continue;
    const std::string target = m[1];
    const auto it = ranks().find(target);
    if (target == layer) continue;
    if (it == ranks().end() || it->second >= ranks().at(layer))
      out.push_back(file.string() + ":" + std::to_string(n) + ": " + layer + " includes advplan/" + target + "/");
  }
  return out;
}

std::vector<std::string> layering_violations(const fs::path& root) {
  std::vector<std::string> out;
  for (const auto& [layer, rank] : ranks())
    for (const fs::path dir : {root / "include" / "advplan" / layer, root / "src" / layer}) {
      if (!fs::is_directory(dir)) continue;
      for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file())
          for (auto& v : violations_in(e.path(), layer)) out.push_back(std::move(v));
    }
  return out;
}

TEST(Layering, NoFileIncludesAHigherOrSiblingLayer) {
  const auto v = layering_violations(ADVPLAN_SOURCE_DIR);
  std::string all;
  for (const auto& x : v) all += x + "\n";
  EXPECT_TRUE(v.empty()) << all;
}

TEST(Layering, TheCheckCatchesAnUpwardInclude) {
  // A planted file in a scratch tree: the check must fail on it (and name the file and line).
  const fs::path root = fs::temp_directory_path() / ("advplan-layering-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::remove_all(root);
  fs::create_directories(root / "include" / "advplan" / "sim");
  fs::create_directories(root / "src" / "metrics");
  std::ofstream(root / "include" / "advplan" / "sim" / "bad.hpp") << "#pragma once\n#include \"advplan/experiment/config.hpp\"\n";
  std::ofstream(root / "src" / "metrics" / "bad.cpp") << "#include <advplan/sim/wargame.hpp>\n#include \"advplan/core/plan.hpp\"\n";
  const auto v = layering_violations(root);
  fs::remove_all(root);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_NE(v[0].find("bad.cpp:1: metrics includes advplan/sim/"), std::string::npos) << v[0];
  EXPECT_NE(v[1].find("bad.hpp:2: sim includes advplan/experiment/"), std::string::npos) << v[1];
}

}  // namespace
