// `advplan check RUN_DIR`: the MANIFEST check every reader of a run makes first (io::verify_run_directory), as a
// command, so that scripts (experiments/plots/) use the one implementation instead of writing it again; and the
// derived folders the MANIFEST leaves aside (io::verify_derived_folders).
#include <fmt/format.h>

#include "advplan/io/run_store.hpp"
#include "commands.hpp"

namespace advplan::cli {

void add_check_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("check", "Check a run directory against its MANIFEST (exit 0 when it holds)");
  auto dir = std::make_shared<std::string>();
  cmd->add_option("RUN_DIR", *dir, "run directory written by `advplan run`")->required();
  cmd->callback([&run, dir] {
    run = [dir] {
      io::verify_run_directory(*dir);  // throws IoError / CsvError with one sentence naming the file
      io::verify_derived_folders(*dir);  // no half-written or mixed report/regrade folder, no stray temporary
      fmt::print("{}: MANIFEST holds\n", *dir);
      return 0;
    };
  });
}

}  // namespace advplan::cli
