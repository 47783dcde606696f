// advplan: adversarial evaluation of plan-generation policies. Subcommands in docs/ARCHITECTURE.md "Command line".
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/io/plugins.hpp"
#include "advplan/policy/registry_access.hpp"
#include "advplan/version.hpp"
#include "commands.hpp"

namespace {

/// `--plugin FILE` (repeatable), accepted before or after the subcommand; files are appended to `plugins`.
void add_plugin_option(CLI::App& app, std::vector<std::string>& plugins) {
  app.add_option_function<std::vector<std::string>>(
         "--plugin",
         [&plugins](const std::vector<std::string>& files) { plugins.insert(plugins.end(), files.begin(), files.end()); },
         "load a policy plug-in (a .so built with advplan_add_policy) before running; repeatable; "
         "ADVPLAN_PLUGINS adds a colon-separated list")
      ->type_name("FILE")
      ->allow_extra_args(false);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"advplan: adversarial evaluation of plan-generation policies"};
  app.require_subcommand(1);
  app.set_version_flag("--version",
                       fmt::format("advplan {} (commit {})", advplan::version_string(), advplan::git_commit()));
  advplan::cli::Action run;
  advplan::cli::add_scenarios_command(app, run);
  advplan::cli::add_validate_command(app, run);
  advplan::cli::add_run_command(app, run);
  advplan::cli::add_tables_command(app, run);
  advplan::cli::add_evaluate_command(app, run);
  advplan::cli::add_list_command(app, run);
  advplan::cli::add_merge_command(app, run);
  advplan::cli::add_leaderboard_command(app, run);
  advplan::cli::add_design_command(app, run);
  advplan::cli::add_rubric_command(app, run);
  advplan::cli::add_frontier_command(app, run);
  advplan::cli::add_metagame_command(app, run);
  advplan::cli::add_psro_command(app, run);
  advplan::cli::add_report_command(app, run);
  advplan::cli::add_view_command(app, run);
  advplan::cli::add_play_command(app, run);
  advplan::cli::add_geo_commands(app, run);
  advplan::cli::add_check_command(app, run);
  advplan::cli::add_schema_command(app, run);
  advplan::cli::set_command_line(argc, argv);
  std::vector<std::string> plugins = advplan::io::plugins_from_env();
  add_plugin_option(app, plugins);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) add_plugin_option(*sub, plugins);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    // Before the subcommand runs, so a plug-in's policies are selectable by name (--blue, config conditions).
    for (const auto& file : plugins) advplan::load_policy_plugin(file);
    return run ? run() : 2;
  } catch (const advplan::Error& e) {
    fmt::print(stderr, "advplan: {}\n", e.what());
    return 1;
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the filesystem refuses (a link loop, a folder that may not be entered) that no check named first: the
    // user's input, not advplan's fault, so one sentence naming the path and status 1 (docs/DECISIONS.md).
    fmt::print(stderr, "advplan: {}: the filesystem refused this path ({})\n",
               e.path1().empty() ? std::string("a path") : advplan::untrusted::excerpt(e.path1().string(), 300),
               e.code().message());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "advplan: internal error: {}\n", e.what());
    return 3;
  }
}
