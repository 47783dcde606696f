// `advplan rubric regrade RUN --judges J1,J2 --out DIR` (docs/RUBRIC.md "Regrading a run"): a finished run's plans
// graded again, from its plans.jsonl (an exec: BLUE policy included) or, without that file, from its built-in
// policies' streams. With the run's own judges it gives the run's rubric/ byte for byte; with other judges it
// grades the same plans; inside the run it writes only a derived folder, so the run still checks out; and the bad
// inputs are one sentence each.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "advplan/io/csv.hpp"
#include "support/chat_server.hpp"
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

/// Every file under `dir` by relative path, but the list of a folder written whole (io/atomic_dir.hpp).
std::map<std::string, std::string> files_under(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename() != ".advplan-output")
      out[fs::relative(e.path(), dir).generic_string()] = read_file(e.path().string());
  return out;
}

/// A run's rubric layer as regrade writes it: rubric/ at the top, and the rubric tables under tables/rubric/.
std::map<std::string, std::string> rubric_layer_of(const fs::path& run) {
  auto out = files_under(run / "rubric");
  for (auto& [path, text] : files_under(run / "tables" / "rubric")) out["tables/rubric/" + path] = std::move(text);
  return out;
}

/// tests/data/small.yaml over two scenarios, with an exec: BLUE policy beside the seed plan, and the offline LLM
/// judge in the rubric layer (`judges`).
std::string regrade_config(const TempDir& dir, const std::string& judges, const std::string& name = "regrade.yaml") {
  const std::string exec = "exec:python3 " + testing::kSource + "/examples/policies/greedy_blue.py";
  return testing::small_config(
      dir,
      {testing::seeds("[100, 100]"),
       {"conditions: [single, greedy@8, constraint@8, llm_offline, {label: council, blue: council, red: greedy@8}]",
        "conditions: [single, {label: ext, blue: \"" + exec + "\", red: single}]"},
       {"budget_sweep: [1, 2, 4, 8, 16]", "budget_sweep: []\nrubric: {judges: [" + judges + "]}"},
       {"studies: {rubric: true, framing: true, components: true}", "studies: {rubric: true, framing: false, components: false}"}},
      name);
}

class Regrade : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("regrade");
    const auto x = advplan("run " + quote(regrade_config(*dir_, "llm_judge_offline")) + " --out " +
                               quote(*dir_ / "run") + " --progress none",
                           *dir_);
    ASSERT_EQ(x.status, 0) << x.err;
    ASSERT_TRUE(fs::exists(*dir_ / "run/plans.jsonl")) << "a run with an exec: policy keeps its plans";
  }
  static void TearDownTestSuite() { delete dir_; }
  static fs::path run() { return fs::path(*dir_ / "run"); }
  static TempDir* dir_;
};
TempDir* Regrade::dir_ = nullptr;

TEST_F(Regrade, WithTheRunsJudgesGivesTheRunsRubricByteForByte) {
  const auto x = advplan("rubric regrade " + quote(run()) + " --judges llm_judge_offline --out " +
                             quote(run() / "regrade-same"),
                         *dir_);
  ASSERT_EQ(x.status, 0) << x.err;
  EXPECT_THAT(x.err, HasSubstr("plans.jsonl"));
  const auto regraded = files_under(run() / "regrade-same"), own = rubric_layer_of(run());
  EXPECT_EQ(regraded, own);
  // The exec: policy's plans were graded, from the file.
  const auto briefs = io::CsvTable::read(run() / "regrade-same" / "scores_per_brief.csv");
  std::size_t ext = 0;
  for (const auto& r : briefs.rows()) ext += r[briefs.col("model")].rfind("exec:", 0) == 0;
  EXPECT_GT(ext, 0u);
  // A derived folder: the run still checks out.
  const auto check = advplan("check " + quote(run()), *dir_);
  EXPECT_EQ(check.status, 0) << check.err;
}

// A regrade folder inside the run is written whole (built beside it, switched in at the end): `advplan check` fails,
// naming the file, on one mixed from two gradings and on a temporary file an interrupted write left; a regrade
// killed before its switch leaves a temporary folder, which check names and the next regrade removes.
TEST_F(Regrade, CheckFailsOnAMixedGradingOrAStrayTemporaryAndARegradeCleansUp) {
  TempDir dir("regrade-mixed");
  const fs::path copy = fs::path(dir / "run");
  fs::copy(run(), copy, fs::copy_options::recursive);
  for (const char* d : {"regrade-same", "regrade-a", "regrade-b"}) fs::remove_all(copy / d);
  ASSERT_EQ(advplan("rubric regrade " + quote(copy) + " --judges llm_judge_offline --out " + quote(copy / "regrade-a"), dir).status, 0);
  ASSERT_EQ(advplan("rubric regrade " + quote(copy) + " --out " + quote(copy / "regrade-b"), dir).status, 0);
  ASSERT_EQ(advplan("check " + quote(copy), dir).status, 0);
  ASSERT_NE(read_file(copy / "regrade-a/verdicts.jsonl"), read_file(copy / "regrade-b/verdicts.jsonl"));
  // The new verdicts beside the old grading's scores.
  const std::string own = read_file(copy / "regrade-a/verdicts.jsonl");
  testing::write_file(copy / "regrade-a/verdicts.jsonl", read_file(copy / "regrade-b/verdicts.jsonl"));
  auto x = advplan("check " + quote(copy), dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr("regrade-a/verdicts.jsonl"));
  EXPECT_THAT(x.err, HasSubstr("mixed"));
  testing::write_file(copy / "regrade-a/verdicts.jsonl", own);
  ASSERT_EQ(advplan("check " + quote(copy), dir).status, 0);
  // A temporary file of an interrupted write inside a derived folder.
  testing::write_file(copy / "regrade-b/.items.csv.tmp-Ab12Cd", "half");
  x = advplan("check " + quote(copy), dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr(".items.csv.tmp-Ab12Cd"));
  fs::remove(copy / "regrade-b/.items.csv.tmp-Ab12Cd");
  // A regrade killed before its switch: its temporary folder beside the old grading, which stays whole.
  fs::create_directories(copy / ".regrade-b.tmp-Zz9Yy8");
  testing::write_file(copy / ".regrade-b.tmp-Zz9Yy8/items.csv", "half");
  x = advplan("check " + quote(copy), dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr(".regrade-b.tmp-Zz9Yy8"));
  x = advplan("rubric regrade " + quote(copy) + " --out " + quote(copy / "regrade-b"), dir);
  ASSERT_EQ(x.status, 0) << x.err;
  EXPECT_FALSE(fs::exists(copy / ".regrade-b.tmp-Zz9Yy8")) << "the next regrade removes the leftover";
  x = advplan("check " + quote(copy), dir);
  EXPECT_EQ(x.status, 0) << x.err;
}

TEST_F(Regrade, WithOtherJudgesGradesTheSamePlans) {
  TempDir dir("regrade-other");
  const auto x = advplan("rubric regrade " + quote(run()) + " --out " + quote(dir / "rules"), dir);
  ASSERT_EQ(x.status, 0) << x.err;
  EXPECT_FALSE(fs::exists(fs::path(dir / "rules/judge_calls.csv"))) << "no LLM judge, no calls";
  EXPECT_EQ(read_file(dir / "rules/items.csv"), read_file(run() / "rubric" / "items.csv"));
  EXPECT_THAT(read_file(dir / "rules/verdicts.jsonl"), ::testing::Not(HasSubstr("llm_judge_offline")));
  // The rule judges' verdicts are the run's, line for line (the run's file adds the LLM judge's).
  const std::string own = read_file(run() / "rubric" / "verdicts.jsonl");
  std::size_t pos = 0, lines = 0;
  const std::string rules = read_file(dir / "rules/verdicts.jsonl");
  while (pos < rules.size()) {
    const std::size_t end = rules.find('\n', pos);
    const std::string line = rules.substr(pos, end - pos);
    EXPECT_NE(own.find(line), std::string::npos) << line.substr(0, 200);
    ++lines;
    pos = end == std::string::npos ? rules.size() : end + 1;
  }
  EXPECT_GT(lines, 0u);
}

TEST(RegradeBuiltIn, ARunWithoutPlansJsonlIsGradedFromItsPoliciesStreams) {
  TempDir dir("regrade-builtin");
  const std::string config = testing::small_config(
      dir, {testing::seeds("[100, 100]"),
            {"studies: {rubric: true, framing: true, components: true}", "studies: {rubric: true, framing: false, components: false}"}});
  ASSERT_EQ(advplan("run " + quote(config) + " --out " + quote(dir / "run") + " --progress none", dir).status, 0);
  ASSERT_FALSE(fs::exists(fs::path(dir / "run/plans.jsonl")));
  const auto x = advplan("rubric regrade " + quote(dir / "run") + " --out " + quote(dir / "out"), dir);
  ASSERT_EQ(x.status, 0) << x.err;
  EXPECT_EQ(files_under(fs::path(dir / "out")), rubric_layer_of(fs::path(dir / "run")));
}

TEST_F(Regrade, RefusesBadInputsInOneSentence) {
  TempDir dir("regrade-bad");
  // A judge spec that is not one.
  auto x = advplan("rubric regrade " + quote(run()) + " --judges gpt --out " + quote(dir / "a"), dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr("not a judge spec"));
  // A judge listed twice.
  x = advplan("rubric regrade " + quote(run()) + " --judges llm_judge_offline,llm_judge_offline --out " +
                  quote(dir / "b"),
              dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr("twice"));
  // A folder inside the run that is not a derived one.
  x = advplan("rubric regrade " + quote(run()) + " --out " + quote(run() / "rubric"), dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr("derived folder"));
  // A run whose plans.jsonl was edited: the MANIFEST names it.
  fs::copy(run(), fs::path(dir / "edited"), fs::copy_options::recursive);
  fs::remove_all(fs::path(dir / "edited/regrade-same"));
  {
    std::string text = read_file(dir / "edited/plans.jsonl");
    text.replace(text.find("\"BLUE\""), 6, "\"RED!\"");
    testing::write_file(dir / "edited/plans.jsonl", text);
  }
  x = advplan("rubric regrade " + quote(dir / "edited") + " --out " + quote(dir / "c"), dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr("plans.jsonl"));
  // Not a run at all.
  x = advplan("rubric regrade " + quote(dir.path().string()) + " --out " + quote(dir / "d"), dir);
  expect_one_line_error(x);
}

// run_metadata.json is outside the MANIFEST, so a hostile one is trusted with nothing but the grading: an exec:
// policy added to its conditions is never started, the llm: settings of its config text (an endpoint, a key
// variable, a cache folder) are not used, and templates that no longer hash as the run recorded are refused.
TEST(RegradeHostile, AnEditedRunMetadataStartsNoProgramAndReachesNoEndpoint) {
  TempDir dir("regrade-hostile");
  const std::string config = testing::small_config(
      dir, {testing::seeds("[100, 100]"),
            {"studies: {rubric: true, framing: true, components: true}", "studies: {rubric: true, framing: false, components: false}"}});
  ASSERT_EQ(advplan("run " + quote(config) + " --out " + quote(dir / "run") + " --progress none", dir).status, 0);
  std::atomic<int> requests{0};
  testing::LoopbackServer server([&](const httplib::Request&, httplib::Response& r) {
    ++requests;
    r.set_content(testing::chat_reply("{\"failed_items\": []}").dump(), "application/json");
  });
  const std::string meta_path = dir / "run/run_metadata.json";
  nlohmann::ordered_json meta = nlohmann::ordered_json::parse(read_file(meta_path));
  const std::string marker = dir / "PWNED";
  meta["conditions"].push_back({{"label", "x"}, {"blue", "exec:touch " + marker + "; cat"}, {"red", "single"}, {"group", "main"}});
  meta["config_text"] = meta["config_text"].get<std::string>() + "\n" +
                        "traces: {plans: false}\n";  // any edit: the text is re-read, its llm: below is ignored
  std::string text = meta["config_text"].get<std::string>();
  const auto llm = text.find("llm: {");
  ASSERT_NE(llm, std::string::npos);
  text.replace(llm, 6, "llm: {cache_dir: " + (dir / "outside-cache") + ", ");
  const auto endpoint = text.find("endpoint: \"\"");
  ASSERT_NE(endpoint, std::string::npos);
  text.replace(endpoint, 12, "endpoint: \"" + server.url() + "\"");
  meta["config_text"] = text;
  testing::write_file(meta_path, meta.dump());
  ASSERT_EQ(advplan("check " + quote(dir / "run"), dir).status, 0) << "the MANIFEST does not cover run_metadata.json";
  const auto x = advplan("rubric regrade " + quote(dir / "run") + " --judges llm_judge:m --out " + quote(dir / "out"), dir);
  EXPECT_EQ(x.status, 0) << x.err;
  EXPECT_THAT(x.err, HasSubstr("left out"));
  EXPECT_FALSE(fs::exists(marker)) << "an exec: policy of run_metadata.json was started";
  EXPECT_EQ(requests.load(), 0) << "the recorded config's endpoint was asked";
  EXPECT_FALSE(fs::exists(fs::path(dir / "outside-cache"))) << "the recorded config's cache folder was written";
}

TEST(RegradeHostile, ChangedTemplatesAndARunAsTheOutputAreRefused) {
  TempDir dir("regrade-templates");
  fs::create_directories(fs::path(dir / "tpl"));
  for (const char* t : {"urban", "air-defense"})
    fs::copy_file(testing::kSource + "/configs/templates/" + t + ".yaml", fs::path(dir / (std::string("tpl/") + t + ".yaml")));
  const std::string config = testing::small_config(
      dir, {testing::seeds("[100, 100]"),
            {"template_dir: " + testing::kSource + "/configs/templates", "template_dir: tpl"},
            {"studies: {rubric: true, framing: true, components: true}", "studies: {rubric: true, framing: false, components: false}"}});
  ASSERT_EQ(advplan("run " + quote(config) + " --out " + quote(dir / "run") + " --progress none", dir).status, 0);
  // The run itself, and a link that leads into it, are no output folders.
  auto x = advplan("rubric regrade " + quote(dir / "run") + " --out " + quote(dir / "run"), dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr("is a run directory"));
  fs::create_directory_symlink(fs::path(dir / "run/rubric"), fs::path(dir / "link"));
  x = advplan("rubric regrade " + quote(dir / "run") + " --out " + quote(dir / "link"), dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr("derived folder"));
  // One item fewer in a template: the items would not be the run's.
  const std::string tpl = dir / "tpl/urban.yaml";
  std::string text = read_file(tpl);
  text += "\n# edited\n";
  testing::write_file(tpl, text);
  x = advplan("rubric regrade " + quote(dir / "run") + " --out " + quote(dir / "out"), dir);
  expect_one_line_error(x);
  EXPECT_THAT(x.err, HasSubstr("templates_sha256"));
}

}  // namespace
}  // namespace advplan
