// `advplan rubric score ITEMS.jsonl VERDICTS.jsonl... [--out DIR] [--mean-over case|brief]` and
// `advplan rubric agreement --items ITEMS.jsonl VERDICTS.jsonl... [--out DIR]`: MA-Bench-format rubric scoring and
// judge agreement (docs/RUBRIC.md).
#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "advplan/io/atomic_file.hpp"
#include "advplan/core/error.hpp"
#include "advplan/tables/tables.hpp"
#include "advplan/rubric/mabench.hpp"
#include "commands.hpp"

namespace advplan::cli {
namespace {

/// Checks MANIFEST.json in the directory of each input file (when there is one) against the files read from it.
std::size_t check_manifests(const std::vector<std::string>& files) {
  std::map<std::string, std::vector<std::string>> by_dir;
  for (const auto& f : files) {
    const auto parent = std::filesystem::path(f).parent_path();
    const std::string dir = parent.empty() ? "." : parent.string();
    by_dir[dir].push_back(parent.empty() ? (std::filesystem::path(".") / f).string() : f);
  }
  std::size_t checked = 0;
  for (const auto& [dir, fs] : by_dir) checked += rubric::check_manifest(dir, fs);
  return checked;
}

std::vector<rubric::Verdict> read_all(const std::vector<std::string>& files) {
  std::vector<rubric::Verdict> all;
  for (const auto& f : files) {
    auto v = rubric::read_verdicts(f);
    all.insert(all.end(), std::make_move_iterator(v.begin()), std::make_move_iterator(v.end()));
  }
  return all;
}

}  // namespace

void add_rubric_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("rubric", "Score rubric verdicts in MA-Bench's layout and measure judge agreement");
  cmd->require_subcommand(1);

  auto* score = cmd->add_subcommand("score", "Severity-weighted scores of MA-Bench-format verdicts");
  auto items = std::make_shared<std::string>();
  auto verdicts = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  auto mean_over = std::make_shared<std::string>("case");
  auto resamples = std::make_shared<int>(1000);
  score->add_option("ITEMS", *items, "rubric_items.jsonl")->required();
  score->add_option("VERDICTS", *verdicts, "verdicts.jsonl (one or more)")->required();
  score->add_option("--out", *out, "directory for scores_per_{brief,policy}.csv, decomposition.csv, item_verdicts.csv");
  score->add_option("--mean-over", *mean_over, "a policy's score is the mean over cases (case) or briefs (brief)")
      ->capture_default_str();
  score->add_option("--resamples", *resamples, "bootstrap resamples for the intervals")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  score->callback([&run, items, verdicts, out, mean_over, resamples] {
    run = [items, verdicts, out, mean_over, resamples] {
      const auto mo = rubric::parse_mean_over(*mean_over);
      if (!mo) throw ConfigError(fmt::format("--mean-over: '{}' is not case or brief", *mean_over));
      std::vector<std::string> inputs{*items};
      inputs.insert(inputs.end(), verdicts->begin(), verdicts->end());
      const std::size_t checked = check_manifests(inputs);
      const auto set = rubric::read_rubric_items(*items);
      const auto all = read_all(*verdicts);
      const auto rep = rubric::score_verdicts(set, all, *mo, *resamples);
      if (!out->empty()) io::write_files(*out, rep.files);
      fmt::print("{}", rep.summary_markdown);
      fmt::print(stderr, "advplan: scored {} verdicts ({} unknown item ids, {} judge errors){}{}\n", rep.briefs,
                 rep.unknown_ids, rep.errors, checked ? fmt::format("; {} manifest hashes checked", checked) : "",
                 out->empty() ? "" : "; wrote " + *out);
      return 0;
    };
  });

  auto* agree = cmd->add_subcommand("agreement", "Judge agreement on MA-Bench-format verdicts");
  auto a_items = std::make_shared<std::string>();
  auto a_verdicts = std::make_shared<std::vector<std::string>>();
  auto a_out = std::make_shared<std::string>();
  auto a_resamples = std::make_shared<int>(1000);
  agree->add_option("--items", *a_items, "rubric_items.jsonl (every item not listed as failed passes)")->required();
  agree->add_option("VERDICTS", *a_verdicts, "verdicts.jsonl files; judges are told apart by their 'judge' field")
      ->required();
  agree->add_option("--out", *a_out, "directory for agreement_{pairs,panel}.{csv,md,tex}");
  agree->add_option("--resamples", *a_resamples, "bootstrap resamples for the intervals")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  agree->callback([&run, a_items, a_verdicts, a_out, a_resamples] {
    run = [a_items, a_verdicts, a_out, a_resamples] {
      std::vector<std::string> inputs{*a_items};
      inputs.insert(inputs.end(), a_verdicts->begin(), a_verdicts->end());
      check_manifests(inputs);
      const auto set = rubric::read_rubric_items(*a_items);
      const auto rep = rubric::judge_agreement(set, read_all(*a_verdicts), *a_resamples);
      if (!a_out->empty()) io::write_files(*a_out, rep.files);
      fmt::print("{}", rep.markdown);
      return 0;
    };
  });
}

}  // namespace advplan::cli
