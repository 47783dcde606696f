// `advplan tables RUN_DIR [--by COLUMN | --only COLUMN=VALUE | --against RUN_B | --cluster template] [--out DIR]`
#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "advplan/pipeline/standard_run.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/core/error.hpp"
#include "advplan/tables/tables.hpp"
#include "advplan/core/untrusted.hpp"
#include "commands.hpp"

namespace advplan::cli {
namespace fs = std::filesystem;

namespace {
std::string distinct_values_note(const RunCsvs& run, const std::string& column) {
  std::string out;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < run.scenarios.size(); ++i)
    if (seen.insert(run.scenarios.at(i, column)).second) out += (out.empty() ? "" : ", ") + run.scenarios.at(i, column);
  return out;
}
}  // namespace

void add_tables_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("tables", "Rebuild every table of a run from its CSVs alone");
  auto dir = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto by = std::make_shared<std::string>();
  auto only = std::make_shared<std::string>();
  auto against = std::make_shared<std::string>();
  auto blue_map = std::make_shared<std::vector<std::string>>();
  cmd->add_option("RUN_DIR", *dir, "run directory written by `advplan run`")->required();
  cmd->add_option("--out", *out, "output directory (default: RUN_DIR/tables, or a subfolder of it)");
  cmd->add_option("--by", *by, "one set of tables per value of template or terrain_family");
  cmd->add_option("--only", *only, "tables over one slice, e.g. template=urban");
  cmd->add_option("--against", *against,
                  "paired differences of RUN_DIR against this run, by scenario, BLUE policy and RED policy");
  cmd->add_option("--blue-map", *blue_map, "with --against: A=B compares RUN_DIR's BLUE policy A with B (repeatable)");
  auto power = std::make_shared<double>(0.8);
  auto cluster = std::make_shared<std::string>();
  cmd->add_option("--cluster", *cluster,
                  "template: Table 3 with template-clustered intervals (CR2, wild cluster bootstrap) into "
                  "tables/clustered_template/")
      ->check(CLI::IsMember({"template"}));
  CLI::Option* power_flag =
      cmd->add_option("--power", *power, "with --against: the power of each difference's minimum detectable effect")
          ->capture_default_str()
          ->check(CLI::Range(0.5, 0.99));
  cmd->callback([&run, dir, out, by, only, against, blue_map, power, cluster, power_flag] {
    const bool power_given = power_flag->count() > 0;
    run = [dir, out, by, only, against, blue_map, power, cluster, power_given] {
      const int modes = !by->empty() + !only->empty() + !against->empty() + !cluster->empty();
      if (modes > 1) throw ConfigError("tables: use at most one of --by, --only, --against and --cluster");
      if (!blue_map->empty() && against->empty()) throw ConfigError("tables: --blue-map needs --against");
      if (power_given && against->empty()) throw ConfigError("tables: --power needs --against");
      const RunCsvs r = read_run(*dir);
      const BootstrapSettings bs = recorded_bootstrap(r.bootstrap_summary);
      const fs::path tables = fs::path(*dir) / "tables";
      if (!cluster->empty()) {
        const std::string dest = out->empty() ? (tables / "clustered_template").string() : *out;
        io::check_analysis_output_dir(dest);
        io::write_files(dest, build_clustered_tables(r, bs));
        fmt::print(stderr, "advplan: wrote template-clustered intervals to {}\n", dest);
        return 0;
      }
      if (!against->empty()) {
        const RunCsvs b = read_run(*against);
        std::map<std::string, std::string> rename;
        for (const auto& m : *blue_map) {
          const auto eq = m.find('=');
          if (eq == std::string::npos || eq == 0 || eq + 1 == m.size())
            throw ConfigError(fmt::format("tables: --blue-map {}: expected A=B, e.g. mine=seed", m));
          rename[m.substr(0, eq)] = m.substr(eq + 1);
        }
        const auto files = build_comparison(r, b, bs, rename, *power);
        const std::string dest = out->empty() ? (tables / ("against_" + fs::path(*against).filename().string())).string() : *out;
        io::check_analysis_output_dir(dest);
        io::write_files(dest, files);
        fmt::print(stderr, "advplan: wrote paired differences to {}\n", dest);
        return 0;
      }
      if (!by->empty()) {
        if (*by != "template" && *by != "terrain_family")
          throw ConfigError(fmt::format("tables: --by {}: accepted values are template and terrain_family", *by));
        std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> all;
        std::set<std::string> seen;
        for (std::size_t i = 0; i < r.scenarios.size(); ++i) {
          const std::string v = r.scenarios.at(i, *by);
          if (!seen.insert(v).second) continue;
          all.emplace_back(v, build_tables(slice_run(r, *by, v), bs));
        }
        const fs::path dest = out->empty() ? tables / ("by_" + *by) : fs::path(*out);
        // Cell values are data: each becomes one safe directory name under dest (never "..", "/" or an
        // absolute path); values that map to the same name get -2, -3, ...
        io::check_analysis_output_dir(dest.string());
        std::set<std::string> used;
        for (const auto& [v, files] : all) {
          const std::string base = untrusted::safe_path_component(v);
          std::string name = base;
          for (int k = 2; !used.insert(name).second; ++k) name = fmt::format("{}-{}", base, k);
          io::write_files((dest / name).string(), files);
        }
        fmt::print(stderr, "advplan: wrote {} slices to {}\n", all.size(), dest.string());
        return 0;
      }
      if (!only->empty()) {
        const auto eq = only->find('=');
        if (eq == std::string::npos)
          throw ConfigError(fmt::format("tables: --only {}: expected COLUMN=VALUE, e.g. template=urban", *only));
        const std::string col = only->substr(0, eq), val = only->substr(eq + 1);
        const RunCsvs s = slice_run(r, col, val);
        if (s.scenarios.size() == 0)
          throw ConfigError(fmt::format("tables: --only {}: no scenario has {} '{}' (values: {})", *only, col, val,
                                        distinct_values_note(r, col)));
        const std::string dest =
            out->empty() ? (tables / untrusted::safe_path_component("only_" + col + "_" + val)).string() : *out;
        io::check_analysis_output_dir(dest);
        io::write_files(dest, build_tables(s, bs));
        fmt::print(stderr, "advplan: wrote tables over {} to {}\n", *only, dest);
        return 0;
      }
      const std::string dest = out->empty() ? tables.string() : *out;
      io::check_analysis_output_dir(dest);
      io::write_files(dest, run_tables(r, bs));
      fmt::print(stderr, "advplan: wrote tables to {}\n", dest);
      return 0;
    };
  });
}

}  // namespace advplan::cli
