#pragma once
// One function per `advplan` subcommand; each returns the process exit status and reports errors on stderr as
// one sentence.
#include <CLI/CLI.hpp>
#include <functional>
#include <set>
#include <string>

namespace advplan::cli {

/// Registers a subcommand on `app`; `run` is set to the action to execute when it is chosen.
using Action = std::function<int()>;
void add_scenarios_command(CLI::App& app, Action& run);
void add_validate_command(CLI::App& app, Action& run);
void add_run_command(CLI::App& app, Action& run);
void add_tables_command(CLI::App& app, Action& run);
void add_evaluate_command(CLI::App& app, Action& run);
void add_list_command(CLI::App& app, Action& run);
void add_merge_command(CLI::App& app, Action& run);
void add_leaderboard_command(CLI::App& app, Action& run);
void add_rubric_command(CLI::App& app, Action& run);
void add_frontier_command(CLI::App& app, Action& run);
void add_metagame_command(CLI::App& app, Action& run);

}  // namespace advplan::cli
