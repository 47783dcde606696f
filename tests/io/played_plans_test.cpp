// plans.jsonl read back (io/played_plans.hpp): the lines a run writes round-trip, and a malformed line is one
// IoError naming the file, the line and the field, never a crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "advplan/core/error.hpp"
#include "advplan/core/plan_json.hpp"
#include "advplan/io/csv_stream.hpp"
#include "advplan/io/played_plans.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/text_lines.hpp"
#include "support/fixtures.hpp"

namespace advplan {
namespace {

using ::testing::HasSubstr;

std::string line(const nlohmann::json& plan, const std::string& side = "BLUE", const std::string& extra = "") {
  return R"({"scenario_id":"tiny-1","condition":"","sample":0,"side":")" + side +
         R"(","policy":"llm:m","plan":)" + plan.dump() + R"(,"failure":"")" + extra + "}\n";
}

TEST(TextLines, EachLineWithoutItsNewlineNumberedFromTheFirstLine) {
  auto lines = [](std::string_view text, std::size_t first = 0) {
    std::vector<std::string> out;
    io::for_each_text_line(
        text, [&](std::string_view l, std::size_t n) { out.push_back(std::to_string(n) + ":" + std::string(l)); },
        first);
    return out;
  };
  EXPECT_TRUE(lines("").empty());
  EXPECT_EQ(lines("a\n"), (std::vector<std::string>{"1:a"}));
  EXPECT_EQ(lines("a\n\nb"), (std::vector<std::string>{"1:a", "2:", "3:b"}));
  EXPECT_EQ(lines("a\r\n\n", 4), (std::vector<std::string>{"5:a\r", "6:"}));
}

TEST(CsvStream, RecordsEndAtNewlinesOutsideQuotesWithTheirByteOffsets) {
  testing::TempDir tmp("csv-stream");
  const std::string path = tmp / "t.csv";
  const std::string text = "id,x\n\"a\nb\",1\n\"c\"\"d\",2\ne,3";
  io::write_file_atomic(path, text);
  std::vector<std::pair<std::uint64_t, std::string>> csv, lines;
  io::for_each_record(path, io::RecordFormat::csv, 1 << 20, [&](std::uint64_t at, const std::string& r) { csv.emplace_back(at, r); });
  io::for_each_record(path, io::RecordFormat::json_lines, 1 << 20,
                      [&](std::uint64_t at, const std::string& r) { lines.emplace_back(at, r); });
  using R = std::vector<std::pair<std::uint64_t, std::string>>;
  EXPECT_EQ(csv, (R{{0, "id,x\n"}, {5, "\"a\nb\",1\n"}, {13, "\"c\"\"d\",2\n"}, {22, "e,3"}}));
  EXPECT_EQ(lines, (R{{0, "id,x\n"}, {5, "\"a\n"}, {8, "b\",1\n"}, {13, "\"c\"\"d\",2\n"}, {22, "e,3"}}));
  EXPECT_EQ(io::csv_first_field(csv[1].second), "a\nb");
  EXPECT_EQ(io::csv_first_field(csv[2].second), "c\"d");
  EXPECT_EQ(io::csv_first_field("e,3"), "e");
  EXPECT_EQ(io::csv_first_field("plain\r\n"), "plain");
  try {
    io::for_each_record(path, io::RecordFormat::csv, 4, [](std::uint64_t, const std::string&) {});
    ADD_FAILURE() << "a record past the limit was read";
  } catch (const CsvError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": a record at byte 5 is longer than 0 MiB");
  }
}

TEST(PlayedPlans, ReadsWhatARunWritesInFileOrder) {
  testing::TempDir dir("played");
  const Plan p = testing::make_plan("Hold the bridge", {testing::act("a1", "b1", "transit", Category::movement, "bridge", 1)},
                                    {"a1"});
  testing::write_file(dir / "plans.jsonl",
                      line(to_json(p)) +
                          R"({"scenario_id":"tiny-1","condition":"c1","sample":2,"side":"RED","policy":"single","plan":null,"failure":"timeout"})"
                          "\n");
  const auto got = read_played_plans(dir / "plans.jsonl");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].scenario_id, "tiny-1");
  EXPECT_EQ(got[0].side, Side::Blue);
  ASSERT_TRUE(got[0].plan.has_value());
  EXPECT_EQ(plan_to_string(*got[0].plan), plan_to_string(p));
  EXPECT_EQ(got[1].condition, "c1");
  EXPECT_EQ(got[1].sample, 2);
  EXPECT_EQ(got[1].side, Side::Red);
  EXPECT_FALSE(got[1].plan.has_value());
  EXPECT_EQ(got[1].failure, "timeout");
}

TEST(PlayedPlans, AMalformedLineIsOneErrorNamingTheFileLineAndField) {
  testing::TempDir dir("played-bad");
  const Plan p = testing::make_plan("Hold", {testing::act("a1", "b1", "transit", Category::movement, "bridge", 1)}, {"a1"});
  const std::string good = line(to_json(p));
  const struct {
    std::string text, expect;
  } cases[] = {
      {good + "not json\n", "line 2: invalid JSON"},
      {good + "[1]\n", "line 2: not a JSON object"},
      {line(to_json(p), "GREEN"), "'side' is 'GREEN'"},
      {line(nlohmann::json{{"objective", 3}}), "line 1: plan:"},
      {line(to_json(p)).substr(0, 20) + "\n", "line 1:"},
      {std::string(100000, '[') + "\n", "deeper than"},
      {R"({"scenario_id":"s","condition":"","sample":-1,"side":"BLUE","policy":"p","plan":null,"failure":""})", "'sample'"},
      {R"({"condition":"","sample":0,"side":"BLUE","policy":"p","plan":null,"failure":""})", "'scenario_id' is missing"},
  };
  for (const auto& c : cases) {
    testing::write_file(dir / "plans.jsonl", c.text);
    try {
      (void)read_played_plans(dir / "plans.jsonl");
      ADD_FAILURE() << "accepted: " << c.text.substr(0, 80);
    } catch (const IoError& e) {
      EXPECT_THAT(std::string(e.what()), HasSubstr(dir / "plans.jsonl")) << c.expect;
      EXPECT_THAT(std::string(e.what()), HasSubstr(c.expect));
    }
  }
}

}  // namespace
}  // namespace advplan
