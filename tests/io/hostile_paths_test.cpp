// A run directory the filesystem cannot resolve (issue 47 item 15): a symbolic link loop given as RUN_DIR is one
// sentence naming the path and exit status 1 for every command that reads a run, never "internal error" (status 3);
// a loop inside a run is named too.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "advplan/core/error.hpp"
#include "advplan/io/run_store.hpp"
#include "support/cli.hpp"

namespace advplan {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using testing::quote;
using testing::TempDir;

/// `dir`/loop, a symbolic link to itself; its path.
std::string link_loop(const TempDir& dir) {
  const std::string loop = dir / "loop";
  fs::create_symlink("loop", loop);
  return loop;
}

TEST(HostilePaths, ARunDirectoryThatIsALinkLoopIsOneSentenceForEveryReader) {
  TempDir dir("h-loop");
  const std::string loop = link_loop(dir);
  for (const std::string& args :
       {"report " + quote(loop) + " --out " + quote(dir / "site"), "view " + quote(loop) + " --port 0",
        "tables " + quote(loop), "metagame " + quote(loop) + " --out " + quote(dir / "mg")}) {
    // `timeout`: a view that did start would serve until stopped.
    const auto r = testing::run_command("timeout 120 " + quote(testing::kBinary) + " " + args, dir);
    EXPECT_NE(r.status, 3) << args << ": " << r.err;
    testing::expect_one_line_error(r);
    EXPECT_THAT(r.err, HasSubstr(loop)) << args;
    EXPECT_THAT(r.err, HasSubstr("symbolic links")) << args;  // the reason: "Too many levels of symbolic links"
    EXPECT_THAT(r.err, ::testing::Not(HasSubstr("internal error"))) << args;
  }
}

TEST(HostilePaths, ALinkLoopInsideARunIsNamedByTheCheck) {
  TempDir dir("h-loop-in");
  const std::string run = dir / "run";
  fs::create_directories(run);
  testing::write_file(run + "/a.csv", "x\n");
  io::write_manifest(run);
  fs::create_symlink("loop", run + "/loop");
  try {
    io::verify_run_directory(run);
    ADD_FAILURE() << "a run holding a link loop was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(run + "/loop"));
  }
  EXPECT_THROW((void)io::path_type(run + "/loop"), IoError);
  EXPECT_EQ(io::path_type(run + "/missing"), fs::file_type::not_found);
}

}  // namespace
}  // namespace advplan
