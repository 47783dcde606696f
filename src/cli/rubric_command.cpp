// `advplan rubric score ITEMS.jsonl VERDICTS.jsonl... [--out DIR] [--mean-over case|brief]` and
// `advplan rubric agreement --items ITEMS.jsonl VERDICTS.jsonl... [--out DIR]`: MA-Bench-format rubric scoring and
// judge agreement (docs/RUBRIC.md).
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "advplan/io/atomic_file.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/core/error.hpp"
#include "advplan/rubric/plans.hpp"
#include "advplan/run/summaries.hpp"
#include "advplan/run/trace_schema.hpp"
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

/// `advplan rubric regrade RUN --judges J1,J2 --out DIR`: RUN's rubric layer graded again by other judges, from the
/// plans the run played (plans.jsonl), or, for a run without that file, from its built-in BLUE policies' streams.
int regrade(const std::string& run_dir, const std::vector<std::string>& judges, const std::string& out,
            const RunDirFlags& flags) {
  io::verify_run_directory(run_dir);  // one complete run, matching its MANIFEST
  namespace fs = std::filesystem;
  const std::string meta_path = (fs::path(run_dir) / io::kMetadataFile).string();
  if (!fs::is_regular_file(meta_path)) throw IoError(fmt::format("{}: missing, so {} is not a run", meta_path, run_dir));
  const auto meta = nlohmann::ordered_json::parse(io::read_text_file(meta_path, io::kMaxDocumentBytes), nullptr, false);
  if (!meta.is_object() || !meta.contains("config_text") || !meta["config_text"].is_string() ||
      !meta.contains("conditions") || !meta["conditions"].is_array())
    throw CsvError(fmt::format("{}: config_text or conditions: missing, so the run's config is unknown", meta_path));
  if (meta.contains("shard") && meta["shard"].is_object())
    throw ConfigError(fmt::format("{}: a shard: regrade the merged run (advplan merge)", run_dir));
  ExperimentConfig cfg = recorded_config(meta["config_text"].get<std::string>(), meta.value("config_source", ""), "");
  cfg.rubric.judges.clear();
  for (const auto& j : judges) {
    if (auto why = judge_spec_error(j)) throw ConfigError(fmt::format("--judges: {}", *why));
    if (std::find(cfg.rubric.judges.begin(), cfg.rubric.judges.end(), j) != cfg.rubric.judges.end())
      throw ConfigError(fmt::format("--judges: judge '{}' is listed twice", j));
    cfg.rubric.judges.push_back(j);
  }
  flags.apply(cfg);  // --llm-cache, --max-connections
  if (std::none_of(cfg.templates.begin(), cfg.templates.end(), [](const auto& t) { return !t.rubric_items.empty(); }))
    throw ConfigError(fmt::format("{}: no template of the run declares rubric items, so there is nothing to grade", run_dir));
  const BootstrapSettings bs = recorded_bootstrap(io::CsvTable::read(
      (fs::path(run_dir) / "bootstrap_summary.csv").string(), schema::bootstrap_summary()));
  io::check_analysis_output_dir(out);
  const std::string plans = (fs::path(run_dir) / "plans.jsonl").string();
  std::vector<std::pair<std::string, std::string>> files;
  std::string from;
  if (fs::is_regular_file(plans)) {
    RunPlan plan;  // no policy is created: every plan comes from the file
    plan.cfg = &cfg;
    plan.ctx = policy_context(cfg);
    files = rubric::regrade_files(plan, bs, plans);
    from = "the plans in " + plans;
  } else {
    std::vector<Condition> conds;
    for (const auto& c : meta["conditions"])
      if (c.is_object())
        conds.push_back({c.value("label", ""), c.value("blue", ""), c.value("red", ""), c.value("group", "")});
    const RunPlan plan = prepare_run(cfg, conds);
    files = rubric::rubric_layer_files(plan, bs);
    from = "its BLUE policies' streams (it has no plans.jsonl: external policies are left out)";
  }
  std::vector<std::pair<std::string, std::string>> written;
  for (auto& [path, text] : files)
    written.emplace_back(path.rfind("rubric/", 0) == 0 ? path.substr(7) : path, std::move(text));
  io::write_files(out, written);
  std::string names;
  for (const auto& j : cfg.rubric.judges) names += ", " + j;
  fmt::print(stderr, "advplan: regraded {} with the rule judges{} from {}; wrote {}\n", run_dir, names, from, out);
  return 0;
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

  auto* re = cmd->add_subcommand("regrade", "Grade a finished run's plans again with other judges (docs/RUBRIC.md)");
  auto r_run = std::make_shared<std::string>();
  auto r_judges = std::make_shared<std::vector<std::string>>();
  auto r_out = std::make_shared<std::string>();
  auto r_flags = std::make_shared<RunDirFlags>();
  re->add_option("RUN_DIR", *r_run, "a complete run directory (advplan run or evaluate)")->required();
  re->add_option("--judges", *r_judges,
                 "LLM judges beside the rule judges, comma-separated: llm_judge:MODEL, llm_judge, llm_judge_offline")
      ->delimiter(',');
  re->add_option("--out", *r_out, "directory for the rubric files (inside RUN_DIR: regrade/ or regrade-NAME/)")
      ->required();
  re->add_option("--llm-cache", r_flags->llm_cache, "the completion cache of the judges' calls (overrides llm.cache_dir)");
  re->add_option("--max-connections", r_flags->max_connections, "live judge requests in flight (overrides llm.max_connections)")
      ->check(CLI::Range(1, 1024));
  re->callback([&run, r_run, r_judges, r_out, r_flags] {
    run = [r_run, r_judges, r_out, r_flags] { return regrade(*r_run, *r_judges, *r_out, *r_flags); };
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
