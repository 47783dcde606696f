#include "advplan/experiment/runner.hpp"

#include <fmt/format.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "advplan/core/error.hpp"
#include "advplan/council/council.hpp"
#include "advplan/experiment/analysis.hpp"
#include "advplan/experiment/progress.hpp"
#include "advplan/experiment/scenario_eval.hpp"
#include "advplan/experiment/studies.hpp"
#include "advplan/experiment/trace_schema.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/sha256.hpp"
#include "advplan/version.hpp"

namespace advplan {
namespace fs = std::filesystem;
using io::CsvTable;

namespace {
/// The registry name of a spec: "greedy@8" -> greedy, "exec:cmd" -> exec.
std::string parse_policy_spec_name(const std::string& spec) { return spec.substr(0, spec.find_first_of("@:")); }
}  // namespace

RunPlan prepare_run(const ExperimentConfig& cfg, std::vector<Condition> conditions) {
  RunPlan p;
  p.cfg = &cfg;
  p.ctx = policy_context(cfg);
  p.conditions = std::move(conditions);
  if (p.conditions.empty()) throw ConfigError(fmt::format("{}: conditions: no condition to run", cfg.source));
  for (const auto& c : p.conditions) {
    try {
      if (!p.reds.contains(c.red)) p.reds.emplace(c.red, make_red_policy(c.red, p.ctx));
      if (!p.blues.contains(c.blue)) p.blues.emplace(c.blue, make_blue_policy(c.blue, p.ctx));
    } catch (const PolicyError& e) {
      // Parameter errors already name the config and key; unknown names and bad k are named here.
      const std::string what = e.what();
      if (what.rfind(cfg.source, 0) == 0) throw;
      std::string hint;
      const std::string red_name = parse_policy_spec_name(c.red);
      if (!RedRegistry::instance().contains(red_name) && BlueRegistry::instance().contains(red_name))
        hint = fmt::format("; '{}' is a BLUE policy, so name it as one: {{label: {}, blue: {}, red: RED}}", red_name,
                           c.red, c.red);
      throw PolicyError(fmt::format("{}: conditions: {}: {}{}", cfg.source, c.label, what, hint));
    }
  }
  for (const auto& [spec, red] : p.reds)
    if (red->info().thread_safety == ThreadSafety::none) p.serial.emplace("red:" + spec, std::make_unique<std::mutex>());
  for (const auto& [spec, blue] : p.blues)
    if (blue->info().thread_safety == ThreadSafety::none) p.serial.emplace("blue:" + spec, std::make_unique<std::mutex>());
  auto it = cfg.policy_params.find("constraint");
  if (it != cfg.policy_params.end() && it->second.contains("lambda")) {
    p.lambda = it->second.at("lambda");
    if (!(p.lambda >= 0 && p.lambda <= 1))
      throw PolicyError(fmt::format("{}: policies.constraint.lambda: lambda must be in [0, 1], while a value of {} was given",
                                    cfg.source, p.lambda));
  }
  return p;
}

namespace {

void check_writable(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw IoError(fmt::format("{}: output directory cannot be created ({})", dir, ec ? ec.message() : "not a directory"));
  const std::string probe = (fs::path(dir) / fmt::format(".advplan-write-test-{}", ::getpid())).string();
  {
    std::ofstream f(probe);
    if (!f) throw IoError(fmt::format("{}: output directory is not writable", dir));
  }
  fs::remove(probe, ec);
}

std::string metadata_json(const RunPlan& plan, const RunOptions& opts, const RunSummary& s, int threads) {
  const ExperimentConfig& cfg = *plan.cfg;
  nlohmann::ordered_json j;
  j["program"] = "advplan";
  j["version"] = std::string(version_string());
  j["git_commit"] = std::string(git_commit());
  j["command"] = opts.command;
  j["config_source"] = cfg.source;
  j["config_sha256"] = io::sha256_hex(cfg.text);
  j["config_text"] = cfg.text;
  nlohmann::ordered_json tpls = nlohmann::ordered_json::array();
  for (const auto& [src, text] : cfg.template_texts) tpls.push_back({{"file", src}, {"sha256", io::sha256_hex(text)}});
  j["templates"] = tpls;
  j["seed"] = cfg.seed;
  j["bootstrap"] = {{"resamples", cfg.bootstrap.resamples}, {"seed", cfg.bootstrap.seed}};
  j["simulator"] = {{"replications", cfg.sim.replications}, {"break_point", cfg.sim.break_point},
                    {"time_limit", cfg.sim.time_limit},     {"dt", cfg.sim.dt},
                    {"noise", cfg.sim.noise},               {"step_noise", cfg.sim.step_noise}};
  j["framing_mode"] = std::string(to_string(cfg.framing_mode));
  nlohmann::ordered_json conds = nlohmann::ordered_json::array();
  for (const auto& c : plan.conditions) conds.push_back({{"label", c.label}, {"blue", c.blue}, {"red", c.red}, {"group", c.group}});
  j["conditions"] = conds;
  nlohmann::ordered_json pols = nlohmann::ordered_json::object();
  for (const auto& [spec, p] : plan.reds) pols[spec] = {{"side", "RED"}, {"k", p->k()}, {"params", p->params()}};
  for (const auto& [spec, p] : plan.blues)
    pols[spec] = {{"side", "BLUE"}, {"params", p->params()}, {"run_counters", p->run_counters()}};
  j["effective_policies"] = pols;
  j["threads"] = threads;
  j["hardware_concurrency"] = std::thread::hardware_concurrency();
  j["scenarios"] = s.scenarios;
  j["rows"] = s.rows;
  j["failed_rows"] = s.failed_rows;
  j["wall_seconds"] = s.seconds;
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace

RunSummary run_experiment(const RunPlan& plan, const RunOptions& opts) {
  const auto t0 = std::chrono::steady_clock::now();
  const ExperimentConfig& cfg = *plan.cfg;
  check_writable(opts.out_dir);
  // A stale run_metadata.json from an earlier run in this directory would make a failed rerun look complete.
  const fs::path stale = fs::path(opts.out_dir) / "run_metadata.json";
  if (std::error_code ec; fs::exists(fs::symlink_status(stale, ec)) && !fs::is_regular_file(fs::symlink_status(stale, ec)))
    throw IoError(fmt::format("{}: exists and is not a regular file; the run writes its metadata there, so move it "
                              "away first", stale.string()));
  fs::remove(stale);
  const int threads = opts.threads > 0 ? opts.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));

  const std::vector<Scenario> corpus = generate_corpus(cfg);
  std::vector<ScenarioOutcome> outcomes(corpus.size());
  {
    Progress progress("advplan: scenarios", corpus.size(), opts.progress);
    tbb::parallel_for(std::size_t{0}, corpus.size(), [&](std::size_t i) {
      outcomes[i] = evaluate_scenario(corpus[i], plan);
      progress.tick();
    });
  }

  RunSummary summary;
  summary.scenarios = corpus.size();
  CsvTable scen(schema::scenarios()), per(schema::per_scenario()), cand(schema::candidates());
  CsvTable rubric(schema::rubric_records());
  std::string candidate_plans;  // candidate_plans.jsonl, when the config asks for it
  // Extra trace files of the BLUE policies (PolicyInfo::traces), in the order the conditions first name them.
  std::vector<std::pair<std::string, CsvTable>> extra;
  for (const auto& c : plan.conditions)
    for (const auto& f : plan.blues.at(c.blue)->info().traces)
      if (std::none_of(extra.begin(), extra.end(), [&](const auto& e) { return e.first == f.name; }))
        extra.emplace_back(f.name, CsvTable(f.header));
  for (auto& o : outcomes) {
    scen.add(std::move(o.scenario_row));
    for (auto& r : o.per_scenario) per.add(std::move(r));
    for (auto& r : o.candidates) cand.add(std::move(r));
    for (const auto& line : o.candidate_plans) candidate_plans += line + "\n";
    for (auto& [name, table] : extra)
      if (auto it = o.extra.find(name); it != o.extra.end())
        for (auto& r : it->second) table.add(std::move(r));
    for (auto& r : o.rubric_records) rubric.add(std::move(r));
    summary.failed_rows += o.failed_rows;
    summary.scenarios_with_blue_plan += o.produced_plan ? 1 : 0;
  }
  outcomes.clear();
  summary.rows = per.size();

  // Everything derived goes through the same functions `advplan tables` uses, on the same cell strings.
  const BootstrapSettings bs{cfg.bootstrap.resamples, cfg.bootstrap.seed};
  std::vector<std::pair<std::string, std::string>> files;
  files.emplace_back("scenarios.csv", scen.to_string());
  files.emplace_back("per_scenario.csv", per.to_string());
  files.emplace_back("candidates.csv", cand.to_string());
  if (cfg.candidate_plans)
    files.emplace_back("candidate_plans.jsonl", std::move(candidate_plans));
  else
    fs::remove(fs::path(opts.out_dir) / "candidate_plans.jsonl");  // not a stale one from an earlier run
  const CsvTable boot = bootstrap_summary_table(per, bs);
  files.emplace_back("bootstrap_summary.csv", boot.to_string());
  files.emplace_back("budget_curve.csv", budget_curve_table(per, bs).to_string());
  files.emplace_back("terrain_summary.csv", terrain_summary_table(per, bs).to_string());
  const CsvTable* council_trace = nullptr;
  for (const auto& [name, table] : extra) {
    if (table.size() == 0) continue;
    files.emplace_back(name, table.to_string());
    if (name == council_trace_file().name) council_trace = &table;
  }
  std::vector<std::pair<std::string, std::string>> study_files;
  if (opts.studies) study_files = run_studies(plan, per, rubric, council_trace, bs);

  // Re-read the CSV texts exactly as `advplan tables` will read the files.
  RunCsvs run;
  run.dir = opts.out_dir;
  auto text_of = [&](const std::string& name) -> const std::string& {
    for (const auto& [n, t] : files)
      if (n == name) return t;
    for (const auto& [n, t] : study_files)
      if (n == name) return t;
    throw std::logic_error("missing " + name);
  };
  auto has = [&](const std::string& name) {
    for (const auto* list : {&files, &study_files})
      for (const auto& [n, t] : *list)
        if (n == name) return true;
    return false;
  };
  run.scenarios = CsvTable::parse(text_of("scenarios.csv"), "scenarios.csv", schema::scenarios());
  run.per_scenario = CsvTable::parse(text_of("per_scenario.csv"), "per_scenario.csv", schema::per_scenario());
  run.bootstrap_summary = CsvTable::parse(text_of("bootstrap_summary.csv"), "bootstrap_summary.csv", schema::bootstrap_summary());
  if (has("council_trace.csv"))
    run.council_trace = CsvTable::parse(text_of("council_trace.csv"), "council_trace.csv", schema::council_trace());
  if (has("council_candidates.csv"))
    run.council_candidates = CsvTable::parse(text_of("council_candidates.csv"), "council_candidates.csv", schema::council_candidates());
  if (has("studies/rubric_records.csv"))
    run.rubric_records = CsvTable::parse(text_of("studies/rubric_records.csv"), "rubric_records.csv", schema::rubric_records());
  if (has("studies/rubric_sensitivity.csv"))
    run.rubric_sensitivity = CsvTable::parse(text_of("studies/rubric_sensitivity.csv"), "rubric_sensitivity.csv", schema::rubric_sensitivity());
  if (has("studies/framing.csv"))
    run.framing = CsvTable::parse(text_of("studies/framing.csv"), "framing.csv", schema::framing());
  if (has("studies/components.csv"))
    run.components = CsvTable::parse(text_of("studies/components.csv"), "components.csv", schema::components());
  const auto tables = build_tables(run, recorded_bootstrap(run.bootstrap_summary));

  // Write: CSVs, studies, tables, and run_metadata.json last (its presence marks a complete run).
  write_files(opts.out_dir, files);
  if (!study_files.empty()) write_files(opts.out_dir, study_files);
  write_files((fs::path(opts.out_dir) / "tables").string(), tables);
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  io::write_file_atomic((fs::path(opts.out_dir) / "run_metadata.json").string(), metadata_json(plan, opts, summary, threads));
  return summary;
}

}  // namespace advplan
