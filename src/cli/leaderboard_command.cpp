// `advplan leaderboard RUN_DIR... --out DIR [--metric advantage|blue_win_rate]`: rank every BLUE policy of several
// runs of the same corpus.
#include <fmt/format.h>

#include "advplan/io/atomic_file.hpp"
#include "advplan/tables/tables.hpp"
#include "advplan/evaluation/leaderboard.hpp"
#include "commands.hpp"

namespace advplan::cli {

void add_leaderboard_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("leaderboard", "Rank the BLUE policies of several runs of the same corpus");
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  auto metric = std::make_shared<std::string>("advantage");
  cmd->add_option("RUN_DIR", *dirs, "run directories (advplan evaluate or run) of the same corpus")->required();
  cmd->add_option("--out", *out, "directory for leaderboard.{csv,md,tex,json}")->required();
  cmd->add_option("--metric", *metric, "advantage or blue_win_rate")->capture_default_str();
  cmd->callback([&run, dirs, out, metric] {
    run = [dirs, out, metric] {
      std::vector<RunTraces> runs;
      for (const auto& d : *dirs) runs.push_back(read_run_traces(d));
      const Leaderboard lb = build_leaderboard(runs, *metric, recorded_bootstrap(runs.front().bootstrap_summary));
      const auto files = leaderboard_files(lb);
      io::write_files(*out, files);
      fmt::print("{}", files[1].second);
      fmt::print(stderr, "advplan: ranked {} BLUE policies over {} RED baselines; wrote {}\n", lb.entries.size(),
                 lb.reds.size(), *out);
      return 0;
    };
  });
}

}  // namespace advplan::cli
