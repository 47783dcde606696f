// An output folder written as one unit (io/atomic_dir.hpp): a process killed at any step of the write (simulated
// by ending a forked child there, as kill -9 would) leaves the old complete folder or the new complete one, plus at
// most a temporary sibling that the next write removes; a folder advplan did not write is never replaced; and a
// folder mixed from two writes fails its check.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/io/atomic_dir.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/run_store.hpp"
#include "support/fixtures.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using Files = std::vector<std::pair<std::string, std::string>>;

/// Every regular file under `dir` but the list, by relative path.
std::map<std::string, std::string> contents(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename() != io::kOutputListFile)
      out[e.path().lexically_relative(dir).generic_string()] = testing::read_file(e.path().string());
  return out;
}

std::map<std::string, std::string> as_map(const Files& f) { return {f.begin(), f.end()}; }

/// The entries of `parent` other than `keep`.
std::vector<std::string> others(const fs::path& parent, const std::string& keep) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(parent))
    if (e.path().filename() != keep) out.push_back(e.path().filename().string());
  return out;
}

TEST(RunMetadata, OneReaderBoundedWithOneSentenceErrorsNamingTheFile) {
  testing::TempDir tmp("run-metadata");
  const std::string dir = tmp.path().string(), path = io::run_metadata_path(dir);
  EXPECT_EQ(path, (tmp.path() / "run_metadata.json").string());
  auto message = [&](auto read) -> std::string {
    try {
      read();
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(message([&] { io::read_run_metadata(dir); }), path + ": missing, so " + dir + " is not a run");
  io::write_file_atomic(path, "[1]");
  EXPECT_EQ(message([&] { io::read_run_metadata(dir); }), path + ": not a JSON object");
  io::write_file_atomic(path, "{\"a\":");
  EXPECT_THAT(message([&] { io::read_run_metadata(dir); }), ::testing::StartsWith(path + ": "));
  io::write_file_atomic(path, std::string(io::kMaxDocumentBytes + 1, ' '));
  EXPECT_THAT(message([&] { io::read_run_metadata(dir); }), ::testing::HasSubstr("larger than the limit"));
  io::write_file_atomic(path, "{\"z\": 1, \"a\": {\"k\": \"v\"}}");
  EXPECT_EQ(io::read_run_metadata(dir).dump(), "{\"a\":{\"k\":\"v\"},\"z\":1}");
  EXPECT_EQ(io::read_run_metadata_ordered(dir).dump(), "{\"z\":1,\"a\":{\"k\":\"v\"}}");
}

TEST(OutputDir, AKillAtAnyStepLeavesTheOldOrTheNewFolderWhole) {
  const Files old_files{{"index.html", "old page"}, {"data/overview.js", "old overview"}, {"data/s/0.js", "old 0"}};
  const Files new_files{{"index.html", "new page"}, {"data/overview.js", "new overview"}, {"data/s/0.js", "new 0"},
                        {"data/s/1.js", "new 1"}};
  // Steps: one per file, the list, the switch: a kill before the last leaves the old folder, at it the new one.
  const std::size_t steps = new_files.size() + 2;
  for (std::size_t k = 0; k <= steps; ++k) {
    testing::TempDir tmp("outdir-kill");
    const std::string site = tmp / "site";
    io::write_output_dir(site, old_files, "test");
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      io::detail::output_dir_step = [k](std::size_t s) {
        if (s == k) ::_exit(9);  // as kill -9: no destructor, no clean-up
      };
      try {
        io::write_output_dir(site, new_files, "test");
      } catch (...) {
        ::_exit(2);
      }
      ::_exit(0);
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    const auto now = contents(site);
    const bool killed = WEXITSTATUS(status) == 9;
    EXPECT_EQ(killed, k < steps) << k;
    EXPECT_EQ(now, k < steps - 1 ? as_map(old_files) : as_map(new_files)) << "killed at step " << k;
    EXPECT_NO_THROW(io::verify_output_dir(site)) << k;
    for (const auto& n : others(tmp.path(), "site"))
      EXPECT_TRUE(io::is_temporary_name(n) && n.rfind(".site.tmp-", 0) == 0) << n;
    // The next write removes what the killed one left, and the folder is whole again.
    io::write_output_dir(site, old_files, "test");
    EXPECT_EQ(contents(site), as_map(old_files));
    EXPECT_TRUE(others(tmp.path(), "site").empty()) << k;
  }
}

TEST(OutputDir, NeverReplacesWhatItDidNotWrite) {
  testing::TempDir tmp("outdir-refuse");
  const Files files{{"a.csv", "1"}, {"b/c.csv", "2"}};
  // A folder of the user's.
  fs::create_directories(tmp.path() / "mine");
  testing::write_file(tmp / "mine/notes.txt", "keep me");
  EXPECT_THROW(io::write_output_dir(tmp / "mine", files, "test"), IoError);
  EXPECT_EQ(testing::read_file(tmp / "mine/notes.txt"), "keep me");
  // A symbolic link, and a regular file, where the folder would go.
  fs::create_directory_symlink(tmp.path() / "mine", tmp.path() / "link");
  EXPECT_THROW(io::write_output_dir(tmp / "link", files, "test"), IoError);
  testing::write_file(tmp / "file", "x");
  EXPECT_THROW(io::write_output_dir(tmp / "file", files, "test"), IoError);
  // Another command's output.
  io::write_output_dir(tmp / "out", files, "rubric judge");
  try {
    io::write_output_dir(tmp / "out", files, "rubric score");
    ADD_FAILURE() << "one command's output replaced another's";
  } catch (const IoError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("rubric judge"));
  }
  // An older advplan's output (no list) holding only files the new content has is replaced.
  fs::create_directories(tmp.path() / "older/b");
  testing::write_file(tmp / "older/a.csv", "old");
  io::write_output_dir(tmp / "older", files, "test");
  EXPECT_EQ(contents(tmp.path() / "older"), as_map(files));
  EXPECT_TRUE(others(tmp.path(), "").size() == 5u);  // mine, link, file, out, older: no temporary left
}

TEST(OutputDir, AFolderMixedFromTwoWritesFailsItsCheck) {
  testing::TempDir tmp("outdir-mixed");
  io::write_output_dir(tmp / "a", {{"items.csv", "items"}, {"scores.csv", "A"}}, "test");
  io::write_output_dir(tmp / "b", {{"items.csv", "items"}, {"scores.csv", "B"}}, "test");
  EXPECT_NO_THROW(io::verify_output_dir(tmp / "a"));
  fs::copy_file(tmp.path() / "b/scores.csv", tmp.path() / "a/scores.csv", fs::copy_options::overwrite_existing);
  try {
    io::verify_output_dir(tmp / "a");
    ADD_FAILURE() << "a mixed folder passed";
  } catch (const CsvError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("scores.csv"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("mixed"));
  }
  testing::write_file(tmp / "b/extra.csv", "stray");
  EXPECT_THROW(io::verify_output_dir(tmp / "b"), CsvError);
  EXPECT_TRUE(io::is_temporary_name(".index.html.tmp-AbC123"));
  EXPECT_TRUE(io::is_temporary_name(".report.tmp-x1y2z3"));
  EXPECT_FALSE(io::is_temporary_name("index.html"));
  EXPECT_FALSE(io::is_temporary_name(".tmp-abcdef"));
}

}  // namespace
}  // namespace advplan
