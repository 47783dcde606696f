// `advplan frontier RUN_DIR [--objectives q,D,pressure,-cost] [--condition C]... [--k K] [--compare A,B]...
//                           [--against RUN_B] [--reference Z1,Z2,...] [--out DIR]`
#include <fmt/format.h>

#include <filesystem>

#include "advplan/core/error.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/tables/tables.hpp"
#include "advplan/frontier/frontier_analysis.hpp"
#include "commands.hpp"

namespace advplan::cli {
namespace fs = std::filesystem;

void add_frontier_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand(
      "frontier", "Pareto frontier analysis of a run's RED candidate sets: ranks, hypervolume, attainment");
  auto dir = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto objectives = std::make_shared<std::string>("q,D");
  auto conditions = std::make_shared<std::vector<std::string>>();
  auto k = std::make_shared<int>(0);
  auto compare = std::make_shared<std::vector<std::string>>();
  auto against = std::make_shared<std::string>();
  auto reference = std::make_shared<std::string>();
  auto exact_eaf = std::make_shared<bool>(false);
  cmd->add_option("RUN_DIR", *dir, "run directory written by `advplan run` or `advplan evaluate`")->required();
  cmd->add_option("--objectives", *objectives,
                  "2 to 4 columns of candidates.csv, comma-separated, maximised unless prefixed by '-' "
                  "(q = quality, D = coherence; e.g. q,D,pressure,-cost)")
      ->capture_default_str();
  // One value per occurrence, so `--condition C RUN_DIR` leaves RUN_DIR to the positional.
  cmd->add_option("--condition", *conditions, "analyse this condition only; repeatable (default: every condition)")
      ->allow_extra_args(false);
  cmd->add_option("--k", *k, "analyse the conditions with this k only")->check(CLI::Range(1, 1 << 20));
  cmd->add_option("--compare", *compare,
                  "EAF difference A,B between two conditions (A minus B); repeatable (default: each greedy@2k "
                  "against greedy@k)")
      ->allow_extra_args(false);
  cmd->add_option("--against", *against, "EAF difference of each condition against the same condition of this run");
  cmd->add_option("--reference", *reference,
                  "hypervolume reference point, one normalised value per objective in [-1, 1), 0 = the worst value "
                  "and 1 the best (default: 0 for each objective, e.g. 0,0; -0.1,-0.1 lets boundary points count)");
  cmd->add_flag("--exact-eaf", *exact_eaf,
                "also write eaf_diff_exact.csv, the exact EAF differences as rectangles (large on a full run)");
  cmd->add_option("--out", *out, "output directory (default: RUN_DIR/frontier)");
  cmd->callback([&run, dir, out, objectives, conditions, k, compare, against, reference, exact_eaf] {
    run = [dir, out, objectives, conditions, k, compare, against, reference, exact_eaf] {
      FrontierOptions opts;
      opts.exact_eaf = *exact_eaf;
      opts.objectives = parse_frontier_objectives(*objectives);
      if (!reference->empty()) opts.reference = parse_frontier_reference(*reference, opts.objectives.size());
      opts.conditions = *conditions;
      opts.k = *k;
      for (const auto& c : *compare) {
        const auto comma = c.find(',');
        if (comma == std::string::npos || comma == 0 || comma + 1 == c.size())
          throw ConfigError(fmt::format("frontier: --compare {}: expected two conditions A,B, e.g. greedy@16,greedy@8", c));
        opts.compare.emplace_back(c.substr(0, comma), c.substr(comma + 1));
      }
      if (!against->empty() && !compare->empty())
        throw ConfigError("frontier: use at most one of --compare and --against");
      const FrontierInputs r = read_frontier_inputs(*dir);
      FrontierInputs b;
      if (!against->empty()) b = read_frontier_inputs(*against);
      const auto files = build_frontier(r, opts, against->empty() ? nullptr : &b);
      const std::string dest = out->empty() ? (fs::path(*dir) / "frontier").string() : *out;
      io::check_analysis_output_dir(dest);
      io::write_files(dest, files);
      fmt::print(stderr, "advplan: wrote {} frontier files to {}\n", files.size(), dest);
      return 0;
    };
  });
}

}  // namespace advplan::cli
