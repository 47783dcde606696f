// Layers point one way (docs/ARCHITECTURE.md "Layers"): a file may include advplan headers of its own module
// and of lower layers only. Modules of the same rank do not include each other: the analyses (tables, studies,
// rubric, evaluation, frontier, metagame) are siblings, and so are core's two neighbours io and stats. Angle and
// quoted includes count alike, in both spellings a module's header can be reached by: "advplan/<module>/..." (the
// public headers) and "<module>/..." (a module's private headers under src/). This test reads every header and
// source under include/advplan/, src/ and python/.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/cli.hpp"

namespace {
namespace fs = std::filesystem;

const std::map<std::string, int>& ranks() {
  static const std::map<std::string, int> r{
      {"core", 0},     {"io", 1},        {"stats", 1},       {"scenario", 2},   {"metrics", 2},
      {"sim", 2},      {"geo", 2},       {"llm", 2},         {"pagmo_module", 2}, {"http_module", 1}, {"policy", 3},
      {"council", 4},  {"run", 5},       {"tables", 6},      {"studies", 6},    {"rubric", 6},
      {"evaluation", 6}, {"frontier", 6}, {"sweeps", 6}, {"metagame", 6}, {"report", 6},   {"play", 7},   {"pipeline", 7},   {"cli", 8},
      {"mpi_module", 8}, {"python", 8}};
  return r;
}

/// The module an include line names, or nullopt for a system header or a file of the includer's own folder.
/// `#include <advplan/version.hpp>` (the one header outside a module folder) counts as core.
std::optional<std::string> included_module(std::string_view line) {
  std::size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos || line[i] != '#') return std::nullopt;
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string_view::npos || line.substr(i, 7) != "include") return std::nullopt;
  i = line.find_first_not_of(" \t", i + 7);
  if (i == std::string_view::npos || (line[i] != '<' && line[i] != '"')) return std::nullopt;
  const char close = line[i] == '<' ? '>' : '"';
  const std::size_t end = line.find(close, i + 1);
  if (end == std::string_view::npos) return std::nullopt;
  std::string_view path = line.substr(i + 1, end - i - 1);
  if (path.starts_with("advplan/")) {
    path.remove_prefix(8);
    if (path.find('/') == std::string_view::npos) return std::string("core");  // advplan/version.hpp
  }
  const std::size_t slash = path.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  std::string module(path.substr(0, slash));
  if (!ranks().contains(module)) return std::nullopt;  // e.g. <nlohmann/json.hpp>, <tbb/...>
  return module;
}

/// "file:line: layer includes X/" for every include that points up or sideways.
std::vector<std::string> violations_in(const fs::path& file, const std::string& layer) {
  std::vector<std::string> out;
  std::ifstream in(file);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const auto target = included_module(line);
    if (!target || *target == layer) continue;
    if (ranks().at(*target) >= ranks().at(layer))
      out.push_back(file.string() + ":" + std::to_string(n) + ": " + layer + " includes " + *target + "/");
  }
  return out;
}

std::vector<std::string> layering_violations(const fs::path& root) {
  std::vector<std::string> out;
  for (const auto& [layer, rank] : ranks()) {
    std::vector<fs::path> dirs{root / "include" / "advplan" / layer, root / "src" / layer};
    if (layer == "python") dirs = {root / "python"};  // the bindings live outside src/
    for (const fs::path& dir : dirs) {
      if (!fs::is_directory(dir)) continue;
      for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file() && (e.path().extension() == ".hpp" || e.path().extension() == ".cpp" ||
                                    e.path().extension() == ".h"))
          for (auto& v : violations_in(e.path(), layer)) out.push_back(std::move(v));
    }
  }
  return out;
}

/// Every folder of src/ and include/advplan/ is a module the check knows: a new folder must be given its rank.
std::vector<std::string> unranked_folders(const fs::path& root) {
  std::vector<std::string> out;
  for (const fs::path& dir : {root / "include" / "advplan", root / "src"})
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_directory() && !ranks().contains(e.path().filename().string())) out.push_back(e.path().string());
  return out;
}

TEST(Layering, NoFileIncludesAHigherOrSiblingLayer) {
  const auto v = layering_violations(ADVPLAN_SOURCE_DIR);
  std::string all;
  for (const auto& x : v) all += x + "\n";
  EXPECT_TRUE(v.empty()) << all;
}

TEST(Layering, EveryModuleFolderHasARank) {
  const auto v = unranked_folders(ADVPLAN_SOURCE_DIR);
  std::string all;
  for (const auto& x : v) all += x + "\n";
  EXPECT_TRUE(v.empty()) << "folders the layer check does not know (give each a rank in ranks()):\n" << all;
}

TEST(Layering, TheCheckCatchesUpwardAndSidewaysIncludesInEverySpelling) {
  // A planted scratch tree: the check must fail on each bad include (and name the file and line), and pass the
  // good ones.
  const fs::path root = fs::temp_directory_path() /
                        ("advplan-layering-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::remove_all(root);
  for (const char* d : {"include/advplan/sim", "src/metrics", "src/core", "src/tables", "src/run"})
    fs::create_directories(root / d);
  std::ofstream(root / "include/advplan/sim/bad.hpp") << "#pragma once\n#include \"advplan/run/config.hpp\"\n";
  std::ofstream(root / "src/metrics/bad.cpp") << "#include <advplan/sim/wargame.hpp>\n#include \"advplan/core/plan.hpp\"\n";
  std::ofstream(root / "src/core/bad.cpp") << "#include \"io/json_text.hpp\"\n#include \"core/json_text.hpp\"\n"
                                           << "#include <advplan/version.hpp>\n";
  std::ofstream(root / "src/tables/bad.cpp") << "#include \"advplan/run/runner.hpp\"\n  #  include \"advplan/studies/studies.hpp\"\n";
  std::ofstream(root / "src/run/bad.cpp") << "#include \"rubric/jsonl.hpp\"\n#include <nlohmann/json.hpp>\n#include \"local.hpp\"\n";
  const auto v = layering_violations(root);
  fs::remove_all(root);
  auto has = [&](const std::string& s) {
    for (const auto& x : v)
      if (x.find(s) != std::string::npos) return true;
    return false;
  };
  std::string all;
  for (const auto& x : v) all += x + "\n";
  EXPECT_EQ(v.size(), 5u) << all;
  EXPECT_TRUE(has("bad.hpp:2: sim includes run/")) << all;
  EXPECT_TRUE(has("metrics/bad.cpp:1: metrics includes sim/")) << all;
  EXPECT_TRUE(has("core/bad.cpp:1: core includes io/")) << all;        // a quoted private include
  EXPECT_TRUE(has("tables/bad.cpp:2: tables includes studies/")) << all;  // analyses are siblings
  EXPECT_TRUE(has("run/bad.cpp:1: run includes rubric/")) << all;      // the runner names no analysis
}

}  // namespace
