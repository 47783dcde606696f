// `advplan metagame RUN_DIR... [--payoff advantage|win_rate] [--out DIR] [--resamples B]`: the BLUE x RED
// meta-game of one or more runs, solved exactly, with exploitability, bootstrap intervals, alpha-Rank, the
// response graph (docs/METRICS.md "Meta-game") and the policies' ratings (Bradley-Terry, Elo, Nash averaging;
// docs/METRICS.md "Ratings").
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <optional>

#include "advplan/io/run_store.hpp"
#include "advplan/core/error.hpp"
#include "advplan/metagame/metagame.hpp"
#include "commands.hpp"

namespace advplan::cli {

void add_metagame_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("metagame", "Solve the BLUE x RED meta-game of matrix runs from their trace CSVs");
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto payoff = std::make_shared<std::string>("advantage");
  auto out = std::make_shared<std::string>();
  auto resamples = std::make_shared<int>(1000);
  auto seed = std::make_shared<std::optional<std::uint64_t>>();
  auto m = std::make_shared<int>(50);
  auto alphas = std::make_shared<std::vector<std::string>>();
  cmd->add_option("RUN_DIR", *dirs, "run directories written by `advplan run` (their cells are pooled)")->required();
  cmd->add_option("--payoff", *payoff, "advantage (default) or win_rate");
  cmd->add_option("--out", *out, "output directory (default: the first RUN_DIR/metagame)");
  cmd->add_option("--resamples", *resamples, "bootstrap resamples over scenarios (default 1000; 0: none)")
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--seed", *seed, "bootstrap seed (default: the first run's bootstrap seed)");
  cmd->add_option("--m", *m, "alpha-Rank population size (default 50)");
  cmd->add_option("--alpha", *alphas, "alpha-Rank selection intensities, 'inf' for the limit (default 0.01 0.1 1 10 100 inf), or 'suggest': the smallest alpha from which the ranking stops changing (alpha_sweep.csv)");
  cmd->callback([&run, dirs, payoff, out, resamples, seed, m, alphas] {
    run = [dirs, payoff, out, resamples, seed, m, alphas] {
      metagame::Payoff p;
      if (*payoff == "advantage")
        p = metagame::Payoff::advantage;
      else if (*payoff == "win_rate")
        p = metagame::Payoff::win_rate;
      else
        throw ConfigError(fmt::format("metagame: --payoff {}: accepted values are advantage and win_rate", *payoff));
      if (*resamples < 0) throw ConfigError("metagame: --resamples must be 0 or more");
      if (*m < 2) throw ConfigError("metagame: --m must be at least 2");
      metagame::MetaGameOptions opt;
      opt.resamples = *resamples;
      opt.m = *m;
      if (alphas->size() == 1 && alphas->front() == "suggest") {
        opt.suggest_alpha = true;
      } else if (!alphas->empty()) {
        opt.alphas.clear();
        for (const auto& a : *alphas) {
          double v = 0;
          try {
            std::size_t used = 0;
            v = a == "inf" ? metagame::kInfiniteAlpha : std::stod(a, &used);
            if (a != "inf" && used != a.size()) v = -1;
          } catch (const std::exception&) {
            v = -1;
          }
          if (!(v > 0)) throw ConfigError(fmt::format("metagame: --alpha {}: expected a positive number or inf", a));
          opt.alphas.push_back(v);
        }
      }
      // Each input is one complete run, as its MANIFEST lists it (the derived metagame/ folder may differ).
      for (const auto& d : *dirs) io::verify_run_directory(d);
      const metagame::MetaGameData data = metagame::read_metagame_data(*dirs, p);
      opt.seed = seed->value_or(data.bootstrap_seed);
      const std::string dest = out->empty() ? (std::filesystem::path(dirs->front()) / "metagame").string() : *out;
      io::check_analysis_output_dir(dest);
      const std::string md = metagame::write_metagame(data, opt, dest);
      fmt::print("{}", md);
      fmt::print(stderr, "advplan: {} BLUE x {} RED policies over {} scenarios; wrote {}\n", data.blue.size(),
                 data.red.size(), data.scenarios.size(), dest);
      return 0;
    };
  });
}

}  // namespace advplan::cli
