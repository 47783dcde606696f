// `advplan rubric score ITEMS.jsonl VERDICTS.jsonl... [--out DIR] [--mean-over case|brief]` and
// `advplan rubric agreement --items ITEMS.jsonl VERDICTS.jsonl... [--out DIR]`: MA-Bench-format rubric scoring and
// judge agreement (docs/RUBRIC.md).
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "advplan/io/atomic_dir.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/io/sha256.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/policy/blue_policy.hpp"
#include "advplan/policy/registry.hpp"
#include "advplan/core/error.hpp"
#include "advplan/rubric/plans.hpp"
#include "advplan/run/summaries.hpp"
#include "advplan/run/trace_schema.hpp"
#include "advplan/tables/tables.hpp"
#include "advplan/rubric/mabench.hpp"
#include "advplan/rubric/validate.hpp"
#include "advplan/rubric/model_table.hpp"
#include "advplan/rubric/brief_judge.hpp"
#include "advplan/rubric/judge.hpp"
#include "commands.hpp"
#include "output_paths.hpp"

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

/// What the live judges of a regrade used, as a clause of its closing line ("" without one): the llm settings and
/// where they came from, the endpoint and the key variable (never the key).
std::string live_judge_settings(const ExperimentConfig& cfg, const std::string& settings_file) {
  if (std::none_of(cfg.rubric.judges.begin(), cfg.rubric.judges.end(),
                   [](const std::string& j) { return j != "llm_judge_offline"; }))
    return "";
  const GenerationSettings& g = cfg.llm.generation_for("llm_judge");
  const char* env_endpoint = std::getenv("ADVPLAN_LLM_ENDPOINT");
  const bool from_env = env_endpoint != nullptr && *env_endpoint != '\0';
  const std::string endpoint = from_env ? fmt::format("{} (ADVPLAN_LLM_ENDPOINT)", env_endpoint)
                               : cfg.llm.endpoint.empty() ? std::string("none")
                                                          : cfg.llm.endpoint;
  return fmt::format("; the live judges used the llm settings of {} (timeout_s {}, max_retries {}, temperature {}, "
                     "max_tokens {}), endpoint {}, key variable {}",
                     settings_file, cfg.llm.timeout_s, cfg.llm.max_retries, g.temperature,
                     g.max_tokens ? std::to_string(*g.max_tokens) : std::string("unset"), endpoint,
                     cfg.llm.api_key_env.empty() ? std::string("none") : cfg.llm.api_key_env);
}

/// `advplan rubric regrade RUN --judges J1,J2 --out DIR`: RUN's rubric layer graded again by other judges, from the
/// plans the run played (plans.jsonl), or, for a run without that file, from its built-in BLUE policies' streams.
/// run_metadata.json is not covered by the MANIFEST (it holds timings), so what it says is not trusted with more
/// than the grading: no external policy is created from it, its `llm:` settings (an endpoint, a key variable, a
/// cache folder) are not used unless --config names the config, and its templates must hash as the run recorded.
/// The rest of its llm: settings (model, timeout, retries, generation, prices) are the run's, so a live judge asks as
/// the run's judge did.
int regrade(const std::string& run_dir, const std::vector<std::string>& judges, const std::string& out,
            const std::string& config_path, const RunDirFlags& flags) {
  io::check_analysis_output_dir(out);
  // An interrupted regrade's temporary folder (inside the run, it would fail the MANIFEST check below).
  io::remove_stale_output_temporaries(out);
  io::verify_run_directory(run_dir);  // one complete run, matching its MANIFEST
  namespace fs = std::filesystem;
  const std::string meta_path = io::run_metadata_path(run_dir);
  const nlohmann::json meta = io::read_run_metadata(run_dir);
  if (!meta.contains("config_text") || !meta["config_text"].is_string() ||
      !meta.contains("conditions") || !meta["conditions"].is_array())
    throw CsvError(fmt::format("{}: config_text or conditions: missing, so the run's config is unknown", meta_path));
  if (meta.contains("shard") && meta["shard"].is_object())
    throw ConfigError(fmt::format("{}: a shard: regrade the merged run (advplan merge)", run_dir));
  ExperimentConfig cfg =
      recorded_config(meta["config_text"].get<std::string>(), untrusted::string_member(meta, "config_source"), config_path);
  if (config_path.empty()) {  // the environment's endpoint and key variable and --llm-cache, not the file's
    const LlmConfig defaults;
    cfg.llm.endpoint = defaults.endpoint;
    cfg.llm.api_key_env = defaults.api_key_env;
    cfg.llm.cache_dir = defaults.cache_dir;
  }
  rubric::LayerOptions layer;
  layer.progress = ProgressMode::automatic;
  if (config_path.empty())
    layer.no_endpoint = "set ADVPLAN_LLM_ENDPOINT, or pass --config with the run's config (regrade does not use the "
                        "endpoint recorded in run_metadata.json)";
  // The templates the items come from must be the run's.
  {
    std::string tpls;
    for (const auto& [src, text] : cfg.template_texts) tpls += io::sha256_hex(text) + "\n";
    const auto& key = meta.contains("run_key") && meta["run_key"].is_object() ? meta["run_key"] : nlohmann::json();
    const std::string recorded = key.is_object() ? untrusted::string_member(key, "templates_sha256") : "";
    if (recorded != io::sha256_hex(tpls))
      throw ConfigError(fmt::format("{}: run_key.templates_sha256: the templates read now are not the ones the run "
                                    "used, so the rubric items would differ (pass --config with the run's config)",
                                    meta_path));
  }
  cfg.rubric.judges.clear();
  for (const auto& j : judges) {
    if (auto why = judge_spec_error(j)) throw ConfigError(fmt::format("--judges: {}", *why));
    if (std::find(cfg.rubric.judges.begin(), cfg.rubric.judges.end(), j) != cfg.rubric.judges.end())
      throw ConfigError(fmt::format("--judges: judge '{}' is listed twice", j));
    cfg.rubric.judges.push_back(j);
  }
  flags.apply(cfg);  // --llm-cache, --max-connections, --transcripts
  if (std::none_of(cfg.templates.begin(), cfg.templates.end(), [](const auto& t) { return !t.rubric_items.empty(); }))
    throw ConfigError(fmt::format("{}: no template of the run declares rubric items, so there is nothing to grade", run_dir));
  const BootstrapSettings bs = recorded_bootstrap(io::CsvTable::read(
      (fs::path(run_dir) / "bootstrap_summary.csv").string(), schema::bootstrap_summary()));
  const std::string plans = (fs::path(run_dir) / "plans.jsonl").string();
  RunPlan plan;  // the config and the policy context; policies only as below
  plan.cfg = &cfg;
  plan.ctx = policy_context(cfg);
  std::vector<std::pair<std::string, std::string>> files;
  std::string from;
  if (fs::is_regular_file(plans)) {
    files = rubric::regrade_files(plan, bs, plans, layer);  // no policy is created: every plan comes from the file
    from = "the plans in " + plans;
  } else {
    // Only the built-in policies that are functions of the scenario and the seed: an external one (exec:, llm:)
    // is never created, so no program starts and no model is asked.
    std::size_t left_out = 0;
    for (const auto& c : meta["conditions"]) {
      if (!c.is_object() || !c.contains("blue") || !c["blue"].is_string()) continue;
      const std::string spec = c["blue"].get<std::string>();
      if (plan.blues.contains(spec)) continue;
      const std::string name = spec.substr(0, spec.find_first_of("@:"));
      const auto& reg = BlueRegistry::instance();
      if (!reg.contains(name) || reg.info(name, "BLUE").external || !reg.info(name, "BLUE").argument.empty()) {
        ++left_out;
        continue;
      }
      auto policy = make_blue_policy(spec, plan.ctx);
      if (policy->info().thread_safety == ThreadSafety::none)
        plan.serial.emplace("blue:" + spec, std::make_unique<std::mutex>());
      plan.blues.emplace(spec, std::move(policy));
    }
    files = rubric::rubric_layer_files(plan, bs, nullptr, nullptr, layer);
    from = left_out ? fmt::format("its built-in BLUE policies' streams ({} external or unknown polic{} left out: the "
                                  "run has no plans.jsonl)",
                                  left_out, left_out == 1 ? "y" : "ies")
                    : "its BLUE policies' streams";
  }
  std::vector<std::pair<std::string, std::string>> written;
  for (auto& [path, text] : files)
    written.emplace_back(path.rfind("rubric/", 0) == 0 ? path.substr(7) : path, std::move(text));
  io::write_output_dir(out, written, "rubric regrade");  // switched in whole: never mixed with an older grading
  std::string names;
  for (const auto& j : cfg.rubric.judges) names += ", " + j;
  fmt::print(stderr, "advplan: regraded {} with the rule judges{} from {}; wrote {}{}\n", run_dir, names, from, out,
             live_judge_settings(cfg, config_path.empty() ? meta_path : config_path));
  return 0;
}

/// `rubric score ITEMS VERDICTS...`: severity-weighted scores of MA-Bench-format verdicts.
void add_rubric_score(CLI::App* cmd, Action& run) {
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
  auto briefs = std::make_shared<std::string>();
  score->add_option("--briefs", *briefs,
                    "MA-Bench's briefs.jsonl: each brief's model and condition; adds scores_per_model.csv, "
                    "condition_differences.csv and judge_rank_correlation.csv");
  score->callback([&run, items, verdicts, out, mean_over, resamples, briefs] {
    run = [items, verdicts, out, mean_over, resamples, briefs] {
      const auto mo = rubric::parse_mean_over(*mean_over);
      if (!mo) throw ConfigError(fmt::format("--mean-over: '{}' is not case or brief", *mean_over));
      std::vector<std::string> inputs{*items};
      inputs.insert(inputs.end(), verdicts->begin(), verdicts->end());
      if (!briefs->empty()) inputs.push_back(*briefs);
      const std::size_t checked = check_manifests(inputs);
      const auto set = rubric::read_rubric_items(*items);
      auto all = read_all(*verdicts);
      if (!briefs->empty()) rubric::attach_briefs(all, rubric::read_briefs(*briefs));
      auto rep = rubric::score_verdicts(set, all, *mo, *resamples);
      if (!briefs->empty()) {
        auto models = rubric::model_tables(set, all, *resamples);
        rep.files.insert(rep.files.end(), models.files.begin(), models.files.end());
        rep.summary_markdown += "\n" + models.markdown;
      }
      if (!out->empty()) io::write_output_dir(*out, rep.files, "rubric score");
      fmt::print("{}", rep.summary_markdown);
      fmt::print(stderr, "advplan: scored {} verdicts ({} unknown item ids, {} judge errors){}{}\n", rep.briefs,
                 rep.unknown_ids, rep.errors, checked ? fmt::format("; {} manifest hashes checked", checked) : "",
                 out->empty() ? "" : "; wrote " + *out);
      return 0;
    };
  });
}

/// `rubric regrade RUN_DIR --out DIR`: a finished run's plans graded again with other judges.
void add_rubric_regrade(CLI::App* cmd, Action& run) {
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
  auto r_config = std::make_shared<std::string>();
  re->add_option("--config", *r_config,
                 "the run's config file, read instead of the text run_metadata.json records (its llm: settings are "
                 "then used for live judges; without it they come from the environment)");
  re->add_option("--llm-cache", r_flags->llm_cache, "the completion cache of the judges' calls");
  re->add_option("--transcripts", r_flags->transcripts, "the live judges' calls in transcripts.jsonl: none, errors or all")
      ->check(CLI::IsMember({"none", "errors", "all"}));
  re->add_option("--max-connections", r_flags->max_connections, "live judge requests in flight (overrides llm.max_connections)")
      ->check(CLI::Range(1, 1024));
  re->callback([&run, r_run, r_judges, r_out, r_flags, r_config] {
    run = [r_run, r_judges, r_out, r_flags, r_config] {
      return regrade(*r_run, *r_judges, *r_out, *r_config, *r_flags);
    };
  });
}

/// `rubric validate STUDY [VERDICTS...]`: judges checked against an expert study.
void add_rubric_validate(CLI::App* cmd, Action& run) {
  auto* val = cmd->add_subcommand("validate", "Check judges against an expert study (docs/RUBRIC.md)");
  auto v_study = std::make_shared<std::string>();
  auto v_verdicts = std::make_shared<std::vector<std::string>>();
  auto v_out = std::make_shared<std::string>();
  auto v_opts = std::make_shared<rubric::ValidationOptions>();
  auto v_families = std::make_shared<std::vector<std::string>>();
  val->add_option("STUDY", *v_study, "the expert study: one JSON line per item verdict (MA-Bench's layout)")->required();
  val->add_option("VERDICTS", *v_verdicts, "verdicts.jsonl files of further judges on the study's briefs");
  val->add_option("--out", *v_out, "directory for validation_{judges,panel,self_preference}.csv and validation.md");
  val->add_option("--judge-name", v_opts->production_judge, "the name of the study's judge_verdict judge")
      ->capture_default_str();
  val->add_option("--resamples", v_opts->resamples, "bootstrap resamples over scenarios")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  val->add_option("--seed", v_opts->seed, "bootstrap seed")->capture_default_str();
  val->add_option("--margin", v_opts->margin,
                  "admission: the lower bound of the panel kappa's change when the judge joins must be >= -MARGIN")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 2.0));
  val->add_option("--family", *v_families, "NAME=FAMILY: the model family of a judge or model (repeatable)");
  val->callback([&run, v_study, v_verdicts, v_out, v_opts, v_families] {
    run = [v_study, v_verdicts, v_out, v_opts, v_families] {
      rubric::ValidationOptions opts = *v_opts;
      for (const auto& f : *v_families) {
        const auto eq = f.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == f.size())
          throw ConfigError(fmt::format("--family {}: expected NAME=FAMILY", untrusted::excerpt(f, 80)));
        opts.families[f.substr(0, eq)] = f.substr(eq + 1);
      }
      std::vector<std::string> inputs{*v_study};
      inputs.insert(inputs.end(), v_verdicts->begin(), v_verdicts->end());
      const std::size_t checked = check_manifests(inputs);
      const auto study = rubric::read_expert_study(*v_study);
      const auto rep = rubric::validate_judges(study, read_all(*v_verdicts), opts);
      if (!v_out->empty()) io::write_output_dir(*v_out, rep.files, "rubric validate");
      fmt::print("{}", rep.markdown);
      fmt::print(stderr, "advplan: validated against {} item verdicts of {} experts ({} verdicts on briefs outside the "
                 "study ignored, {} unknown item ids){}{}\n", study.lines.size(), study.experts, rep.ignored_verdicts,
                 rep.unknown_ids, checked ? fmt::format("; {} manifest hashes checked", checked) : "",
                 v_out->empty() ? "" : "; wrote " + *v_out);
      return 0;
    };
  });
}

/// `rubric judge --items --briefs --judge --out`: free-text briefs graded by an LLM judge.
void add_rubric_judge(CLI::App* cmd, Action& run) {
  auto* bj = cmd->add_subcommand("judge", "Grade free-text briefs with an LLM judge, as MA-Bench does (docs/RUBRIC.md)");
  auto b_items = std::make_shared<std::string>();
  auto b_briefs = std::make_shared<std::string>();
  auto b_tasks = std::make_shared<std::string>();
  auto b_judge = std::make_shared<std::string>();
  auto b_out = std::make_shared<std::string>();
  auto b_config = std::make_shared<std::string>();
  auto b_cap = std::make_shared<std::size_t>(3000);
  auto b_retries = std::make_shared<int>(2);
  auto b_flags = std::make_shared<RunDirFlags>();
  bj->add_option("--items", *b_items, "rubric_items.jsonl")->required();
  bj->add_option("--briefs", *b_briefs, "briefs.jsonl, with each brief's text in `text` or `brief`")->required();
  bj->add_option("--judge", *b_judge, "llm_judge:MODEL, llm_judge (the configured model) or llm_judge_offline")->required();
  bj->add_option("--out", *b_out, "directory for verdicts.jsonl, judge_calls.csv and transcripts.jsonl")->required();
  bj->add_option("--tasks", *b_tasks, "one JSON line per case: case_id and task (default: a generic task)");
  bj->add_option("--word-cap", *b_cap, "words of a brief graded; the rest is cut before grading")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}));
  bj->add_option("--retries", *b_retries, "re-asks of a malformed reply")->capture_default_str()->check(CLI::Range(0, 10));
  bj->add_option("--config", *b_config, "experiment config whose llm: settings the live judge uses (default: the environment)");
  bj->add_option("--llm-cache", b_flags->llm_cache, "the completion cache of the judge's calls");
  bj->add_option("--transcripts", b_flags->transcripts, "the judge's calls in transcripts.jsonl: none, errors or all")
      ->check(CLI::IsMember({"none", "errors", "all"}));
  bj->add_option("--max-connections", b_flags->max_connections, "judge requests in flight (overrides llm.max_connections)")
      ->check(CLI::Range(1, 1024));
  bj->callback([&run, b_items, b_briefs, b_tasks, b_judge, b_out, b_config, b_cap, b_retries, b_flags] {
    run = [b_items, b_briefs, b_tasks, b_judge, b_out, b_config, b_cap, b_retries, b_flags] {
      if (!rubric::is_llm_judge(*b_judge))
        throw ConfigError(fmt::format("--judge {}: expected llm_judge:MODEL, llm_judge or llm_judge_offline",
                                      untrusted::excerpt(*b_judge, 80)));
      ExperimentConfig cfg = b_config->empty() ? default_experiment_config() : load_experiment_config(*b_config);
      b_flags->apply(cfg);
      io::check_analysis_output_dir(*b_out);
      check_output_folder(*b_out, "--out");
      std::vector<std::string> inputs{*b_items, *b_briefs};
      if (!b_tasks->empty()) inputs.push_back(*b_tasks);
      check_manifests(inputs);
      const auto set = rubric::read_rubric_items(*b_items);
      const auto briefs = rubric::read_briefs(*b_briefs);
      const auto tasks = b_tasks->empty() ? std::map<std::string, std::string>{} : rubric::read_tasks(*b_tasks);
      std::unique_ptr<CompletionClient> client;
      if (*b_judge == "llm_judge_offline") client = std::make_unique<rubric::OfflineBriefJudgeClient>();
      else client = rubric::make_judge_client(*b_judge, cfg.llm, policy_context(cfg));
      rubric::BriefGradingOptions opts;
      opts.judge = *b_judge;
      opts.word_cap = *b_cap;
      opts.retries = *b_retries;
      opts.transcripts = cfg.transcripts;
      const GenerationSettings generation = cfg.llm.generation_for("llm_judge");
      opts.generation = &generation;
      const auto g = rubric::grade_briefs(set, briefs, tasks, *client, opts);
      io::write_output_dir(*b_out, g.files, "rubric judge");
      fmt::print(stderr, "advplan: graded {} briefs with {} ({} judge failures, {} briefs cut at {} words); wrote {}\n",
                 g.briefs, *b_judge, g.failed, g.truncated, *b_cap, *b_out);
      return g.failed == g.briefs && g.briefs > 0 ? 1 : 0;
    };
  });
}

/// `rubric agreement --items VERDICTS...`: judge agreement.
void add_rubric_agreement(CLI::App* cmd, Action& run) {
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
      if (!a_out->empty()) io::write_output_dir(*a_out, rep.files, "rubric agreement");
      fmt::print("{}", rep.markdown);
      return 0;
    };
  });
}

}  // namespace

void add_rubric_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("rubric", "Score rubric verdicts in MA-Bench's layout and measure judge agreement");
  cmd->require_subcommand(1);

  add_rubric_score(cmd, run);
  add_rubric_regrade(cmd, run);
  add_rubric_validate(cmd, run);
  add_rubric_judge(cmd, run);
  add_rubric_agreement(cmd, run);
}

}  // namespace advplan::cli
