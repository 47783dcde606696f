// The content-addressed completion cache (docs/LLM.md "Completion cache"): keys, corrupt, edited, linked and
// non-regular entries as misses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>
#include <string>
#include <thread>
#include <vector>

#include "advplan/pipeline/standard_run.hpp"
#include "advplan/core/error.hpp"
#include "advplan/run/config.hpp"
#include "advplan/rubric/judge.hpp"
#include "advplan/rubric/plans.hpp"
#include "advplan/rubric/score.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/run/scenario_lookup.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/stats/agreement.hpp"
#include "advplan/stats/statistics.hpp"
#include "advplan/core/random.hpp"
#include "advplan/io/sha256.hpp"
#include "advplan/policy/completion_cache.hpp"
#include "advplan/llm/providers.hpp"
#include "support/fixtures.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using namespace rubric;

// ---------------------------------------------------------------------------------------------------------
// The completion cache.

CompletionRequest request(const std::string& text, std::uint64_t seed = 1, double temperature = 0) {
  CompletionRequest r;
  r.messages = {{"system", "s"}, {"user", text}};
  r.seed = seed;
  r.temperature = temperature;
  return r;
}

TEST(CompletionCache, KeyCoversEndpointModelParametersAndMessages) {
  const auto base = CompletionCache::key_of("http://a/v1/chat/completions", "m", request("x"));
  EXPECT_EQ(base.size(), 64u);
  EXPECT_EQ(base, CompletionCache::key_of("http://a/v1/chat/completions", "m", request("x")));
  EXPECT_NE(base, CompletionCache::key_of("http://b/v1/chat/completions", "m", request("x")));
  EXPECT_NE(base, CompletionCache::key_of("http://a/v1/chat/completions", "n", request("x")));
  EXPECT_NE(base, CompletionCache::key_of("http://a/v1/chat/completions", "m", request("y")));
  EXPECT_NE(base, CompletionCache::key_of("http://a/v1/chat/completions", "m", request("x", 2)));
  EXPECT_NE(base, CompletionCache::key_of("http://a/v1/chat/completions", "m", request("x", 1, 0.5)));
  auto roles = request("x");
  roles.messages[0].role = "user";
  EXPECT_NE(base, CompletionCache::key_of("http://a/v1/chat/completions", "m", roles));
}

TEST(CompletionCache, StoresLooksUpAndTreatsBadEntriesAsMisses) {
  testing::TempDir dir("llm-cache");
  CompletionCache cache(dir / "c");
  const std::string key = CompletionCache::key_of("e", "m", request("x"));
  EXPECT_FALSE(cache.lookup(key));
  Completion failed;
  failed.error = "HTTP 500";
  cache.store(key, "m", failed);  // failures are never stored
  EXPECT_FALSE(fs::exists(cache.entry_path(key)));
  Completion ok;
  ok.ok = true;
  ok.text = "hello";
  ok.prompt_tokens = 3;
  ok.completion_tokens = 4;
  cache.store(key, "m", ok);
  const auto hit = cache.lookup(key);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->text, "hello");
  EXPECT_EQ(hit->prompt_tokens, 3);
  EXPECT_EQ(hit->completion_tokens, 4);
  // No temporary file is left beside the entry.
  std::size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir / "c")) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);

  const std::string path = cache.entry_path(key);
  testing::write_file(path, "{\"format\": \"advplan-llm-cache/1\", \"key\": \"");  // truncated
  EXPECT_FALSE(cache.lookup(key));
  testing::write_file(path, json{{"format", "advplan-llm-cache/1"}, {"key", "other"}, {"text", "x"}}.dump());
  EXPECT_FALSE(cache.lookup(key));
  testing::write_file(path, std::string(CompletionCache::kMaxEntryBytes + 10, ' '));
  EXPECT_FALSE(cache.lookup(key));
  testing::write_file(path, std::string(100000, '['));
  EXPECT_FALSE(cache.lookup(key));
  const auto st = cache.stats();
  EXPECT_EQ(st.hits, 1u);
  EXPECT_EQ(st.misses, 5u);
  EXPECT_EQ(st.corrupt, 4u);
  EXPECT_EQ(st.writes, 1u);
}

// An entry edited with its key kept (blue_quality 0.550951 -> 0.435149 once went unnoticed), and an entry or folder
// that is a symbolic link to elsewhere, are misses with a warning: the digest covers every field, and no link is
// followed.
TEST(CompletionCache, AnEditedOrLinkedEntryIsAMissAndAWarning) {
  testing::TempDir dir("llm-cache-digest");
  CompletionCache cache(dir / "c");
  const std::string key = CompletionCache::key_of("e", "m", request("edit"));
  Completion ok;
  ok.ok = true;
  ok.text = "the plan";
  ok.prompt_tokens = 10;
  ok.completion_tokens = 20;
  cache.store(key, "m", ok);
  const std::string path = cache.entry_path(key);
  const json stored = json::parse(testing::read_file(path));
  ASSERT_TRUE(cache.lookup(key));
  for (const auto& [field, value] : std::vector<std::pair<std::string, json>>{
           {"text", "another plan"}, {"prompt_tokens", 11}, {"completion_tokens", 2}, {"model", "n"}}) {
    json edited = stored;
    edited[field] = value;
    testing::write_file(path, edited.dump());
    EXPECT_FALSE(cache.lookup(key)) << field;
  }
  json undigested = stored;
  undigested.erase("digest");
  testing::write_file(path, undigested.dump());
  EXPECT_FALSE(cache.lookup(key));
  // a link at the entry, and at its folder, to a genuine entry elsewhere
  testing::write_file(dir / "elsewhere.json", stored.dump());
  fs::remove(path);
  fs::create_symlink(dir / "elsewhere.json", path);
  EXPECT_FALSE(cache.lookup(key));
  const fs::path folder = fs::path(path).parent_path();
  fs::remove_all(folder);
  fs::create_directories(dir / "other" / folder.filename());
  testing::write_file((dir / "other" / folder.filename() / fs::path(path).filename()).string(), stored.dump());
  fs::create_directory_symlink(dir / "other" / folder.filename(), folder);
  EXPECT_FALSE(cache.lookup(key));
  cache.store(key, "m", ok);  // refused too: never written through the link
  EXPECT_EQ(cache.stats().write_errors, 1u);
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(cache.stats().corrupt, 7u);
}

TEST(CompletionCache, AFifoOrDirectoryAtAnEntryPathIsAMissNotAHang) {
  testing::TempDir dir("llm-cache-fifo");
  CompletionCache cache(dir / "c");
  const std::string key = CompletionCache::key_of("e", "m", request("fifo"));
  Completion ok;
  ok.ok = true;
  ok.text = "x";
  cache.store(key, "m", ok);  // creates the directories
  const std::string path = cache.entry_path(key);
  fs::remove(path);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_FALSE(cache.lookup(key));  // a blocking open would hang here
  fs::remove(path);
  fs::create_directory(path);
  EXPECT_FALSE(cache.lookup(key));
}

}  // namespace
}  // namespace advplan
