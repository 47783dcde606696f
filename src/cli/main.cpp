// advplan: adversarial evaluation of plan-generation policies. Subcommands in DESIGN.md §6.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <exception>

#include "advplan/core/error.hpp"
#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"advplan: adversarial evaluation of plan-generation policies"};
  app.require_subcommand(1);
  advplan::cli::Action run;
  advplan::cli::add_scenarios_command(app, run);
  advplan::cli::add_validate_command(app, run);
  advplan::cli::add_run_command(app, run);
  advplan::cli::add_tables_command(app, run);
  advplan::cli::add_evaluate_command(app, run);
  advplan::cli::add_list_command(app, run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    return run ? run() : 2;
  } catch (const advplan::Error& e) {
    fmt::print(stderr, "advplan: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "advplan: internal error: {}\n", e.what());
    return 3;
  }
}
