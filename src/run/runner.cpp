#include "advplan/run/runner.hpp"

#include <fmt/format.h>
#include <tbb/global_control.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_pipeline.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>
#include <sstream>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <set>
#include <thread>

#include "advplan/core/untrusted.hpp"
#include "advplan/core/error.hpp"
#include "advplan/run/summaries.hpp"
#include "advplan/run/sweep_points.hpp"
#include "advplan/run/observer.hpp"
#include "advplan/run/geo_eval.hpp"
#include "advplan/run/progress.hpp"
#include "advplan/run/scenario_eval.hpp"
#include "advplan/run/stream_summary.hpp"
#include "advplan/run/interrupt.hpp"
#include "advplan/run/trace_schema.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/csv.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/io/sandbox.hpp"
#include "advplan/io/sha256.hpp"
#include "advplan/io/plugins.hpp"
#include "advplan/policy/completion_cache.hpp"
#include "advplan/llm/providers.hpp"
#include "advplan/scenario/generator.hpp"
#include "advplan/version.hpp"
#include "plan_set_key.hpp"
#include "run/run_internal.hpp"

namespace advplan {
namespace fs = std::filesystem;
using io::CsvTable;
using namespace run_detail;  // the work directory, its streams and journal (src/run/journal.cpp)

namespace {

/// The scenarios the run generated, kept for the observers that read the whole corpus (wants_corpus), so that
/// they do not generate it again. Filled from the scenario tasks (distinct indices); complete() generates what a
/// resumed run did not evaluate itself.
class KeptCorpus {
 public:
  explicit KeptCorpus(std::size_t total) : scenarios_(total), kept_(total, 0) {}
  void put(std::size_t index, Scenario sc) {
    scenarios_[index] = std::move(sc);
    kept_[index] = 1;
  }
  /// The whole corpus of `cfg`, in corpus order (call from one thread, after the scenarios).
  const std::vector<Scenario>& complete(const ExperimentConfig& cfg) {
    if (scenarios_.size() != corpus_size(cfg)) throw Error("the kept corpus is not this config's");
    tbb::parallel_for(std::size_t{0}, scenarios_.size(), [&](std::size_t i) {
      if (!kept_[i]) scenarios_[i] = corpus_scenario(cfg, i);
    });
    std::fill(kept_.begin(), kept_.end(), 1);
    return scenarios_;
  }

 private:
  std::vector<Scenario> scenarios_;
  std::vector<unsigned char> kept_;
};

}  // namespace

namespace {

/// What identifies a run for --resume: a resumed run must be the same run.
/// total * i / n without overflow (a shard count near 2^64 once wrapped the product).
__extension__ typedef unsigned __int128 u128;  // GCC and clang; __extension__ keeps -Wpedantic quiet
std::size_t shard_bound(std::size_t total, std::size_t i, std::size_t n) {
  return static_cast<std::size_t>(static_cast<u128>(total) * i / n);
}

/// The id of scenario i of the corpus order (generate_corpus: templates in order, seeds ascending).
std::string corpus_id(const ExperimentConfig& cfg, std::size_t i) {
  const auto per_template = static_cast<std::size_t>(cfg.seed_to - cfg.seed_from + 1);
  return fmt::format("{}-{}", cfg.templates.at(i / per_template).id, cfg.seed_from + i % per_template);
}

constexpr const char* kTranscriptsFile = "transcripts.jsonl";

/// Whether the run writes transcripts.jsonl: some policy of it is external and traces.transcripts is not none.
bool records_transcripts(const RunPlan& plan) {
  return plan.cfg->transcripts != TranscriptsMode::none && has_external_policy(plan);
}

std::vector<std::pair<std::string, std::string>> run_key(const RunPlan& plan, std::size_t total, std::size_t shards) {
  const ExperimentConfig& cfg = *plan.cfg;
  std::string conds;
  for (const auto& c : plan.conditions) {
    conds += c.label + "|" + c.blue + "|" + c.red + "|" + c.group;
    // A sweep point's settings, so that a merge refuses shards whose recorded settings were changed (conditions
    // without settings hash as before).
    for (const Setting& s : c.settings) conds += fmt::format("|{}={:.17g}", s.path, s.value);
    conds += "\n";
  }
  std::string tpls;
  for (const auto& [src, text] : cfg.template_texts) tpls += io::sha256_hex(text) + "\n";
  // Loaded plug-ins by content: a shard whose policies came from a plug-in never mixes with one that had none.
  std::vector<std::string> plugin_sums;
  for (const auto& p : io::loaded_plugins()) plugin_sums.push_back(p.sha256);
  std::sort(plugin_sums.begin(), plugin_sums.end());
  std::string plugins;
  for (const auto& s : plugin_sums) plugins += s + "\n";
  // The most specific fields first, so an error names the seed rather than the config hash that it changes.
  std::vector<std::pair<std::string, std::string>> key{{"program_version", std::string(version_string())},
          {"program_commit", std::string(git_commit())},
          {"plugins_sha256", plugin_sums.empty() ? std::string("none") : io::sha256_hex(plugins)},
          {"seed", std::to_string(cfg.seed)},
          {"scenarios", std::to_string(total)},
          {"shards", std::to_string(shards)},
          {"conditions_sha256", io::sha256_hex(conds)},
          {"templates_sha256", io::sha256_hex(tpls)},
          {"config_sha256", io::sha256_hex(cfg.text)},
          {"candidate_plans", cfg.candidate_plans ? "true" : "false"},
          {"transcripts", records_transcripts(plan) ? to_string(cfg.transcripts) : "none"},
          {"plans", records_plans(plan) ? "true" : "false"}};
  // A user's map (terrain: {geo: {geojson: FILE}}) is part of what the run is, but not of the config's text.
  if (!cfg.geo_map_sha256.empty()) key.emplace_back("geo_map_sha256", cfg.geo_map_sha256);
  // A sandboxed run is resumed and merged only with sandboxed parts, so that its record stays true (a run without a
  // sandbox keeps the key it had).
  if (process_sandbox()) key.emplace_back("sandbox", "bwrap");
  // The plan sets the conditions replay, by content (like the map): a resume or a merge never plays an edited one.
  for (auto& field : detail::plan_set_key_fields(plan.conditions)) key.push_back(std::move(field));
  return key;
}

/// The streamed files, in a fixed order: scenarios, per_scenario, candidates, the BLUE policies' extra trace
/// files (in the order the conditions first name them), geo_moves, candidate_plans, then each observer's traces.

/// Where make_streams put the streams that are not the fixed three.
struct StreamLayout {
  std::vector<std::string> extra_names;  ///< the extra trace files (and geo_moves), streams 3, 4, ...
  std::size_t candidate_plans = SIZE_MAX;  ///< candidate_plans.jsonl's stream, when written
  std::size_t transcripts = SIZE_MAX;      ///< transcripts.jsonl's stream, when written
  std::size_t plans = SIZE_MAX;            ///< plans.jsonl's stream, when written
  std::vector<std::size_t> observer_first;  ///< per observer, its first trace's stream
};

std::vector<Stream> make_streams(const RunPlan& plan, const RunObservers& observers, const fs::path& work,
                                 StreamLayout& layout) {
  std::vector<std::string>& extra_names = layout.extra_names;
  std::vector<Stream> streams;
  auto add_stream = [&](const std::string& name, const std::vector<std::string>& header, const std::string& work_name,
                        bool optional = false, bool jsonl = false) {
    Stream st;
    st.name = name;
    st.work = (work / work_name).string();
    st.header = header;
    st.jsonl = jsonl;
    st.optional = optional;
    st.header_bytes = header_text(st).size();
    streams.push_back(std::move(st));
  };
  add_stream("scenarios.csv", schema::scenarios(), "scenarios.csv");
  const bool sampled = plan.cfg->samples > 1;
  add_stream("per_scenario.csv", schema::per_scenario(sampled), "per_scenario.csv");
  add_stream("candidates.csv", schema::candidates(sampled), "candidates.csv");
  for (const auto& c : plan.conditions)
    for (const auto& f : plan.blue(c).info().traces)
      if (std::find(extra_names.begin(), extra_names.end(), f.name) == extra_names.end()) {
        extra_names.push_back(f.name);
        add_stream(f.name, f.header, f.name, true);
      }
  if (std::any_of(plan.sims.begin(), plan.sims.end(), [](const SimConfig& s) { return s.model == "engagement"; })) {
    // The engagement wargame's traces (docs/TRACES.md "engagements.csv"), written like extra trace files.
    for (const auto& [name, header] : {std::pair{kEngagementsFile, &schema::engagements()},
                                       std::pair{kReplicationsFile, &schema::replications()}}) {
      extra_names.push_back(name);
      add_stream(name, *header, name, true);
    }
    if (std::any_of(plan.conditions.begin(), plan.conditions.end(),
                    [&](const Condition& c) { return plan.blue(c).replans() || plan.red(c).replans(); })) {
      extra_names.push_back(kReplansFile);  // docs/TRACES.md "replans.csv"
      add_stream(kReplansFile, schema::replans(), kReplansFile, true);
    }
  }
  if (plan.cfg->terrain_geo) {  // the moves on the map (docs/GEO.md), written like an extra trace file
    extra_names.push_back(kGeoMovesFile);
    add_stream(kGeoMovesFile, schema::geo_moves(), kGeoMovesFile, true);
  }
  if (plan.cfg->candidate_plans) {
    layout.candidate_plans = streams.size();
    add_stream("candidate_plans.jsonl", {}, "candidate_plans.jsonl", false, true);
  }
  if (records_transcripts(plan)) {
    layout.transcripts = streams.size();
    add_stream(kTranscriptsFile, {}, kTranscriptsFile, false, true);
  }
  if (records_plans(plan)) {
    layout.plans = streams.size();
    add_stream("plans.jsonl", {}, "plans.jsonl", false, true);
  }
  for (const auto& obs : observers) {
    layout.observer_first.push_back(streams.size());
    for (const auto& t : obs->traces(plan)) {
      add_stream(t.name, t.header, t.name, true);
      streams.back().shard_only = true;
    }
  }
  return streams;
}

/// Records the wall time since the previous phase (or since t0) as phase `name`.
void mark_phase(RunSummary& s, const char* name, std::chrono::steady_clock::time_point t0) {
  double before = 0;
  for (const auto& [n, secs] : s.phase_seconds) before += secs;
  const double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.phase_seconds.emplace_back(name, now - before);
}

/// MANIFEST, then run_metadata.json, then the work directory goes (its journal first: from then on the run is
/// complete, and a half-removed work directory is cleared by --resume).
RunSummary seal_run(const RunPlan& plan, const RunOptions& opts, RunSummary summary, int threads,
                    std::chrono::steady_clock::time_point t0, const std::vector<std::pair<std::string, std::string>>& key) {
  const fs::path dir(opts.out_dir), work = dir / kWork;
  const std::string manifest = io::write_manifest(opts.out_dir);
  mark_phase(summary, "manifest", t0);
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  io::write_file_atomic((dir / io::kMetadataFile).string(),
                        run_detail::metadata_json(plan, opts, summary, threads, io::sha256_hex(manifest), key));
  fs::remove(work / kJournal);
  fs::remove_all(work);
  return summary;
}

/// Every scenario is on disk in the work directory: moves the traces into place and writes what derives from
/// them.
RunSummary finish_run(const RunPlan& plan, const RunOptions& opts, std::vector<Stream>& streams,
                      const StreamLayout& layout, KeptCorpus* corpus, RunSummary summary, int threads,
                      std::chrono::steady_clock::time_point t0, const std::vector<std::pair<std::string, std::string>>& key) {
  mark_phase(summary, "scenarios", t0);
  const ExperimentConfig& cfg = *plan.cfg;
  const fs::path dir(opts.out_dir);
  // Every scenario is on disk: move the traces into place (an extra trace file without rows is not written).
  // A shard keeps the observers' traces too (the merge hands them on) and stops there: the summaries and the
  // observers' files are corpus-level.
  const bool shard = opts.shard_count > 0;
  for (std::size_t i = 0; i < streams.size(); ++i) {
    const Stream& st = streams[i];
    if ((st.shard_only && !shard) || !fs::exists(st.work)) continue;
    if (st.optional && st.size == st.header_bytes) continue;
    if (std::rename(st.work.c_str(), (dir / st.name).c_str()) != 0)
      throw IoError(fmt::format("{}: cannot move into place ({})", (dir / st.name).string(), std::strerror(errno)));
  }

  if (cfg.terrain_geo && !shard) write_run_maps(cfg, opts.out_dir);  // maps/<scenario>.geojson (docs/GEO.md)
  if (shard) return seal_run(plan, opts, summary, threads, t0, key);

  const BootstrapSettings bs{cfg.bootstrap.resamples, cfg.bootstrap.seed};
  // A run of several samples averages them within each scenario first, which the streamed summaries do not.
  if (cfg.samples == 1 && (opts.summary == "streaming" ||
                           (opts.summary == "auto" && summary.rows - summary.failed_rows > kStreamingSummaryRows))) {
    // At scale: one pass over per_scenario.csv, memory independent of the corpus (docs/RESULTS.md).
    const StreamedSummaries ss = stream_summaries((dir / "per_scenario.csv").string(), bs);
    summary.first_failure = ss.first_failure;
    summary.streamed_summaries = true;
    io::write_files(opts.out_dir, {{"bootstrap_summary.csv", ss.bootstrap_summary},
                               {"budget_curve.csv", ss.budget_curve},
                               {"terrain_summary.csv", ss.terrain_summary}});
    if (opts.before_manifest) opts.before_manifest(opts.out_dir);
    return seal_run(plan, opts, summary, threads, t0, key);
  }

  // Everything derived is computed from the written CSVs, through the same functions `advplan tables` uses.
  RunTraces run;
  run.dir = opts.out_dir;
  run.scenarios = CsvTable::read((dir / "scenarios.csv").string(), schema::scenarios());
  run.per_scenario = CsvTable::read((dir / "per_scenario.csv").string(), schema::per_scenario(cfg.samples > 1));
  // A run of several samples: every summary and observer reads the samples' means (sample_means).
  if (cfg.samples > 1) run.per_scenario = sample_means(run.per_scenario);
  const CsvTable& per = run.per_scenario;
  {
    const auto cs = per.col("status"), cr = per.col("failure_reason");
    for (const auto& r : per.rows())
      if (r[cs] != "ok") {
        summary.first_failure = r[cr];
        break;
      }
  }
  std::vector<std::pair<std::string, std::string>> files;
  const CsvTable boot = bootstrap_summary_table(per, bs);
  files.emplace_back("bootstrap_summary.csv", boot.to_string());
  {
    CsvTable storage;
    const CsvTable& ok = ok_rows(per, storage);
    const SummaryIntervals iv(boot, ok, bs);
    files.emplace_back("budget_curve.csv", budget_curve_table(ok, iv).to_string());
    files.emplace_back("terrain_summary.csv", terrain_summary_table(ok, iv).to_string());
  }
  io::write_files(opts.out_dir, files);
  run.bootstrap_summary = boot;
  mark_phase(summary, "summaries", t0);
  // A run in which every row failed keeps its rows and reasons, but has nothing for the analyses to derive.
  if (summary.rows > summary.failed_rows) {
    const std::vector<Scenario>* whole = corpus ? &corpus->complete(cfg) : nullptr;
    for (std::size_t o = 0; o < opts.observers.size(); ++o) {
      RunObserver& obs = *opts.observers[o];
      RunArtifacts a{plan, run, bs, {}, whole};
      const auto traces = obs.traces(plan);
      for (std::size_t t = 0; t < traces.size(); ++t)
        a.traces.push_back(CsvTable::read(streams[layout.observer_first[o] + t].work, traces[t].header));
      io::write_files(opts.out_dir, obs.finish(a));
      mark_phase(summary, obs.name().c_str(), t0);
    }
  }
  if (opts.before_manifest) opts.before_manifest(opts.out_dir);
  return seal_run(plan, opts, summary, threads, t0, key);
}

}  // namespace

namespace {

/// The options no run may start with, refused before any work.
void check_run_options(const RunOptions& opts) {
  if (opts.force && opts.resume) throw ConfigError("run: use at most one of --force and --resume");
  (void)parse_progress_mode(opts.progress_mode);  // a bad --progress fails before any work
  if (opts.summary != "auto" && opts.summary != "bootstrap" && opts.summary != "streaming")
    throw ConfigError(fmt::format("--summary {}: accepted values are auto, bootstrap and streaming", opts.summary));
  if (opts.shard_count > 0 && opts.stop_when)
    throw ConfigError(fmt::format("--shard {}/{}: a shard cannot stop early (its looks would see only its slice of "
                                  "the corpus); run the stopping run in one process",
                                  opts.shard_index, opts.shard_count));
  if (opts.shard_count > 0 && opts.shard_index >= opts.shard_count)
    throw ConfigError(fmt::format("--shard {}/{}: the shard index must be below the shard count (0 to {})",
                                  opts.shard_index, opts.shard_count, opts.shard_count - 1));
}

/// A scenario's rows rendered as CSV text per stream (in the parallel stage, so the in-order stage only appends
/// text: append_csv_row writes a row the same wherever it is called).
struct Rendered {
  std::shared_ptr<ScenarioOutcome> o;
  std::vector<std::string> text;    // per stream
  std::vector<std::uint64_t> rows;  // per stream
};

/// Corpus scenario `c`: generated, evaluated, shown to the observers (before it is kept or dropped; their rows
/// follow the traces'), and rendered.
std::shared_ptr<Rendered> evaluate_and_render(const RunPlan& plan, const RunOptions& opts, const StreamLayout& layout,
                                              std::size_t nstreams, std::size_t c, std::optional<KeptCorpus>& corpus) {
  const ExperimentConfig& cfg = *plan.cfg;
  const std::size_t per_template = cfg.seed_to - cfg.seed_from + 1;
  Scenario sc = generate_scenario(cfg.templates[c / per_template], cfg.seed_from + c % per_template,
                                  GeneratorOptions{cfg.framing_mode, std::nullopt});
  auto r = std::make_shared<Rendered>();
  r->o = std::make_shared<ScenarioOutcome>(evaluate_scenario(sc, plan));
  r->text.resize(nstreams);
  r->rows.assign(nstreams, 0);
  const ScenarioOutcome& o = *r->o;
  auto add = [&](std::size_t s, const std::vector<std::string>& row) {
    io::append_csv_row(r->text[s], row);
    ++r->rows[s];
  };
  add(0, o.scenario_row);
  for (const auto& row : o.per_scenario) add(1, row);
  for (const auto& row : o.candidates) add(2, row);
  for (std::size_t e = 0; e < layout.extra_names.size(); ++e)
    if (auto it = o.extra.find(layout.extra_names[e]); it != o.extra.end())
      for (const auto& row : it->second) add(3 + e, row);
  auto add_lines = [&](std::size_t s, const std::vector<std::string>& lines) {
    if (s == SIZE_MAX) return;
    for (const auto& line : lines) {
      r->text[s] += line;
      r->text[s] += '\n';
      ++r->rows[s];
    }
  };
  add_lines(layout.candidate_plans, o.candidate_plans);
  add_lines(layout.transcripts, o.transcripts);
  add_lines(layout.plans, o.plans);
  std::vector<std::vector<TraceRow>> observer_rows;
  for (std::size_t k = 0; k < opts.observers.size(); ++k) {
    const std::size_t first = layout.observer_first[k];
    const std::size_t n = (k + 1 < opts.observers.size() ? layout.observer_first[k + 1] : nstreams) - first;
    observer_rows.assign(n, {});
    opts.observers[k]->scenario(c, sc, o, observer_rows);
    for (std::size_t t = 0; t < n; ++t)
      for (const auto& row : observer_rows[t]) add(first + t, row);
  }
  if (corpus) corpus->put(c, std::move(sc));
  return r;
}

/// The limit `usage` is past (--max-tokens, --max-cost), as a phrase for the stop message; "" when none.
std::string limit_passed(const std::vector<ModelUsage>& usage, const RunOptions& opts, const LlmConfig& llm) {
  std::uint64_t tokens = 0;
  double cost = 0;
  for (const ModelUsage& u : usage) {
    tokens += u.prompt_tokens + u.completion_tokens;
    cost += cost_usd(u, llm).value_or(0.0);
  }
  if (opts.max_tokens > 0 && tokens > opts.max_tokens)
    return fmt::format("--max-tokens {} ({} tokens spent)", opts.max_tokens, tokens);
  if (opts.max_cost_usd > 0 && cost > opts.max_cost_usd)
    return fmt::format("--max-cost {} (${:.4f} spent under llm.prices)", opts.max_cost_usd, cost);
  return "";
}

/// How many scenarios may be in flight or waiting for their turn to be written. With a live model (a policy whose
/// server decides), a scenario waiting on a reply gives its thread to another (the client suspends its task), so
/// the window holds enough scenarios to keep llm.max_connections requests in flight; the order of the rows is that
/// of the corpus all the same.
std::size_t pipeline_tokens(const RunPlan& plan, int threads) {
  bool live = false;
  for (const auto& [name, p] : plan.blues) live = live || !p->info().reproducible;
  for (const auto& [name, p] : plan.reds) live = live || !p->info().reproducible;
  return std::max(static_cast<std::size_t>(threads) * 4,
                  live ? 2 * static_cast<std::size_t>(std::max(1, plan.cfg->llm.max_connections)) : 0);
}

/// Scenarios [start, count) of this process's slice (corpus indices lo + i), evaluated in parallel and appended
/// in corpus order, with a checkpoint (flush and journal entry) at least every 200 ms or 4 MiB, or every
/// opts.checkpoint_every scenarios. Throws RunInterrupted when a stop was asked for.
void evaluate_scenarios(const RunPlan& plan, const RunOptions& opts, const StreamLayout& layout,
                        std::vector<Stream>& streams, Journal& journal, std::size_t lo, std::size_t start,
                        std::size_t count, int threads, std::optional<KeptCorpus>& corpus, RunSummary& summary) {
  Progress progress("advplan", count, opts.progress ? parse_progress_mode(opts.progress_mode) : ProgressMode::none,
                    start, opts.progress_interval_s);
  const auto& per_header = schema::per_scenario(plan.cfg->samples > 1);
  const auto col = [&](const char* name) {
    return static_cast<std::size_t>(std::find(per_header.begin(), per_header.end(), name) - per_header.begin());
  };
  const std::size_t c_status = col("status"), c_reason = col("failure_reason"), c_scenario = col("scenario_id"),
                    c_condition = col("condition");
  std::size_t next = start, done = start;
  auto last_flush = std::chrono::steady_clock::now();
  // Set in the in-order stage once the scenarios kept have spent past --max-tokens or --max-cost: no scenario is
  // started or kept after that one.
  std::atomic<bool> limited{false};
  std::string limit;
  // Set in the in-order stage once opts.stop_when says the corpus prefix kept so far decides the run.
  std::atomic<bool> stopped{false};
  // The scenario tasks may be suspended while a live model answers (OpenAiCompatibleClient), so that the threads
  // serve other scenarios meanwhile.
  const AsyncRequestsScope async_requests;
  auto source = [&](tbb::flow_control& fc) -> std::size_t {
    if (next >= count || run_interrupt_requested() || limited.load() || stopped.load()) {
      fc.stop();
      return 0;
    }
    return next++;
  };
  auto evaluate = [&](std::size_t i) { return evaluate_and_render(plan, opts, layout, streams.size(), lo + i, corpus); };
  // Batch mode: set in the in-order stage at the first scenario with a call that waits in the batch wave. No scenario is
  // kept from then on, but every one is still played up to its calls, so that the wave holds them all.
  bool waiting = false;
  auto keep = [&](std::shared_ptr<Rendered> r) {
    // Once a stop is asked for, nothing more is kept: a scenario in flight may hold the failure of a policy that
    // saw the interrupt. Its rows are computed again by the resume.
    if (run_interrupt_requested() || limited.load() || stopped.load()) return;
    waiting = waiting || std::any_of(r->o->usage.begin(), r->o->usage.end(), [](const ModelUsage& u) { return u.deferred > 0; });
    if (waiting) return;
    for (std::size_t s = 0; s < streams.size(); ++s) {
      streams[s].buf += r->text[s];
      streams[s].buf_rows += r->rows[s];
    }
    const ScenarioOutcome& o = *r->o;
    summary.rows += o.per_scenario.size();
    summary.failed_rows += o.failed_rows;
    summary.scenarios_with_blue_plan += o.produced_plan ? 1 : 0;
    ++done;
    if (!o.usage.empty()) {
      for (const ModelUsage& u : o.usage) add_usage(summary.usage, u);
      limit = limit_passed(summary.usage, opts, plan.cfg->llm);
      if (!limit.empty()) limited = true;
    }
    for (const auto& row : o.per_scenario)
      if (row[c_status] != "ok") progress.failure(row[c_scenario], row[c_condition], row[c_reason]);
    progress.scenario_done(o.failed_rows);
    if (opts.stop_when && opts.stop_when({done, &o, {}})) stopped = true;
    std::size_t bytes = 0;
    for (const Stream& st : streams) bytes += st.buf.size();
    const auto now = std::chrono::steady_clock::now();
    const bool due = opts.checkpoint_every > 0 ? (done - start) % opts.checkpoint_every == 0
                                               : now - last_flush > std::chrono::milliseconds(200);
    if (bytes > (4u << 20) || due || limited.load() || stopped.load()) {
      journal.flush(streams, done, summary);
      last_flush = now;
    }
  };
  tbb::parallel_pipeline(
      pipeline_tokens(plan, threads),
      tbb::make_filter<void, std::size_t>(tbb::filter_mode::serial_in_order, source) &
          tbb::make_filter<std::size_t, std::shared_ptr<Rendered>>(tbb::filter_mode::parallel, evaluate) &
          tbb::make_filter<std::shared_ptr<Rendered>, void>(tbb::filter_mode::serial_in_order, keep));
  journal.flush(streams, done, summary);
  if (run_interrupt_requested()) {
    ::close(journal.fd);
    journal.fd = -1;
    for (Stream& st : streams) {
      if (st.fd >= 0) ::close(st.fd);
      st.fd = -1;
    }
    throw RunInterrupted(fmt::format("{}: interrupted after {} of {} scenarios; the run is kept as it was, and "
                                     "`advplan run ... --resume` (Python: resume=True) continues it",
                                     opts.out_dir, done, count));
  }
  if (waiting) {
    journal.close(streams);
    throw BatchWaiting(fmt::format("{}: {} of {} scenarios are done; the others wait for the answers of the run's batch "
                                   "wave", opts.out_dir, done, count));
  }
  if (stopped.load() && done < count) {
    summary.scenarios = done;
    summary.stopped = true;
  }
  if (limited.load() && done < count) {
    journal.close(streams);
    throw RunLimitReached(fmt::format("{}: stopped at {} after {} of {} scenarios; the run is kept, and `--resume` "
                                      "with a higher limit (or none) continues it",
                                      opts.out_dir, limit, done, count));
  }
}

/// opts.stop_when asked before the first scenario a resume plays, with the rows the run already has: the first
/// bytes of per_scenario.csv that `entry` vouches for, in the work directory or already moved into place (a run
/// killed while it finished after a stop).
bool stop_before(const RunOptions& opts, const std::vector<Stream>& streams, const fs::path& dir,
                 const JournalEntry& entry) {
  if (!opts.stop_when) return false;
  std::string kept;
  for (std::size_t i = 0; i < streams.size(); ++i) {
    if (streams[i].name != "per_scenario.csv") continue;
    const fs::path at = fs::exists(fs::symlink_status(streams[i].work)) ? fs::path(streams[i].work) : dir / streams[i].name;
    kept = io::read_text_file(at.string());  // its first bytes verified against the journal entry
    kept.resize(std::min<std::size_t>(kept.size(), static_cast<std::size_t>(entry.files[i].bytes)));
  }
  return opts.stop_when({entry.done, nullptr, kept});
}

}  // namespace

RunSummary run_experiment(const RunPlan& plan, const RunOptions& opts) {
  const auto t0 = std::chrono::steady_clock::now();
  const ExperimentConfig& cfg = *plan.cfg;
  check_run_options(opts);
  if (cfg.samples > 1 && opts.summary == "streaming")
    throw ConfigError(fmt::format("{}: samples: {} needs the bootstrap summaries (the streamed ones do not average "
                                  "the samples within a scenario): drop --summary streaming",
                                  cfg.source, cfg.samples));
  const io::DirMode mode = opts.resume ? io::DirMode::resume : opts.force ? io::DirMode::force : io::DirMode::fresh;
  // Held until the run returns: no second run or merge writes into this directory meanwhile.
  const io::PreparedDirectory prepared = io::prepare_run_directory(opts.out_dir, mode, {cfg.source});
  const int threads = opts.threads > 0 ? opts.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));

  const fs::path dir(opts.out_dir), work = dir / kWork;
  const std::size_t per_template = cfg.seed_to >= cfg.seed_from ? cfg.seed_to - cfg.seed_from + 1 : 0;
  const std::size_t total = cfg.templates.size() * per_template;
  RunKey key = run_key(plan, total, opts.shard_count);
  // The resume check also compares the shard; a merge compares every field but this one.
  key.emplace_back("shard_index", std::to_string(opts.shard_index));
  for (const auto& kv : opts.key_extra) key.push_back(kv);
  // This process's slice of the corpus: a contiguous block, so shards merge by concatenation in shard order.
  const std::size_t lo = opts.shard_count > 0 ? shard_bound(total, opts.shard_index, opts.shard_count) : 0;
  const std::size_t hi = opts.shard_count > 0 ? shard_bound(total, opts.shard_index + 1, opts.shard_count) : total;

  StreamLayout layout;
  std::vector<Stream> streams = make_streams(plan, opts.observers, work, layout);

  // State an observer keeps from the scenarios reaches its finish() only when this process runs the whole corpus
  // with its summaries in memory; only then is the corpus kept, so memory stays independent of the corpus at scale.
  const bool in_memory = opts.summary == "bootstrap" || plan.cfg->samples > 1 ||
                         (opts.summary == "auto" && total * plan.conditions.size() <= kStreamingSummaryRows);
  const RunScope scope{total, opts.shard_count == 0 && in_memory};
  bool wants_corpus = false;
  for (const auto& obs : opts.observers) {
    obs->begin(plan, scope);
    wants_corpus = wants_corpus || obs->wants_corpus();
  }
  std::optional<KeptCorpus> corpus;
  if (scope.whole_run_here && wants_corpus) corpus.emplace(total);

  RunSummary summary;
  const std::size_t count = hi - lo;  // scenarios of this process
  summary.scenarios = count;
  std::size_t start = 0;
  Journal journal{(work / kJournal).string()};
  bool resuming = false;
  if (prepared.had_files) {
    // Work directories of a run killed before its first journal entry hold nothing to keep.
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().filename().string().rfind(std::string(kWork) + "-", 0) == 0) fs::remove_all(e.path());
    resuming = fs::exists(work / kJournal);
    // Complete: but only this run is "already complete", so its recorded key is compared field by field first.
    if (!resuming)
      if (auto complete = complete_run(dir, work, key, count)) return *complete;
    if (!resuming && fs::directory_iterator(dir) != fs::directory_iterator())
      throw IoError(fmt::format("{}: --resume: no interrupted advplan run here ({} is missing)", opts.out_dir,
                                journal.path));
  }
  if (resuming) {
    // The interrupted run must be the same run.
    check_interrupted_key(work, key);
    const JournalEntry entry = verified_journal_entry(dir, journal.path, streams, count);
    start = entry.done;
    summary.resumed_from = start;
    summary.rows = entry.rows;
    summary.failed_rows = entry.failed;
    summary.scenarios_with_blue_plan = entry.with_plan;
    remove_stale_temporaries(opts.out_dir);
    // A run the rule stopped at `start` was finishing: its traces may already be in place, as a complete one's.
    summary.stopped = start < count && stop_before(opts, streams, dir, entry);
    if (summary.stopped) summary.scenarios = start;
    reopen_streams(streams, entry, start == count || summary.stopped);
    journal.fd = ::open(journal.path.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (journal.fd < 0) throw IoError(fmt::format("{}: cannot open ({})", journal.path, std::strerror(errno)));
  } else {
    journal.fd = create_work_directory(dir, work, key, streams, journal.path, summary);
  }

  // Batch mode: the wave is open only while the scenarios are played; the judges after them are asked online.
  const auto wave = batch_wave_of(plan.ctx);
  if (wave) wave->open();
  try {
    if (start < count && !summary.stopped) evaluate_scenarios(plan, opts, layout, streams, journal, lo, start, count, threads, corpus, summary);
  } catch (...) {
    if (wave) wave->close();
    throw;
  }
  if (wave) wave->close();
  journal.close(streams);

  return finish_run(plan, opts, streams, layout, corpus ? &*corpus : nullptr, summary, threads, t0, key);
}

std::vector<std::pair<std::string, std::string>> run_identity(const RunPlan& plan, std::size_t shard_count) {
  const ExperimentConfig& cfg = *plan.cfg;
  const std::size_t per_template = cfg.seed_to >= cfg.seed_from ? cfg.seed_to - cfg.seed_from + 1 : 0;
  return run_key(plan, cfg.templates.size() * per_template, shard_count);
}

RunSummary merge_shards(const RunPlan& plan, const std::vector<std::string>& shard_dirs, const RunOptions& opts) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> inputs = shard_dirs;
  inputs.push_back(plan.cfg->source);
  const io::PreparedDirectory prepared =
      io::prepare_run_directory(opts.out_dir, opts.force ? io::DirMode::force : io::DirMode::fresh, inputs);
  const int threads = opts.threads > 0 ? opts.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
  const fs::path dir(opts.out_dir), work = dir / kWork;
  if (::mkdir(work.c_str(), 0755) != 0)
    throw IoError(fmt::format("{}: cannot create the work directory ({})", work.string(), std::strerror(errno)));
  // The shards' order is their index in run_metadata.json, which the MANIFEST does not cover: each shard's
  // scenarios.csv (which it does) must hold exactly its slice of the corpus order, so swapped indices are refused.
  {
    const std::size_t total = corpus_size(*plan.cfg), n = shard_dirs.size();
    for (std::size_t k = 0; k < n; ++k) {
      const std::string path = (fs::path(shard_dirs[k]) / "scenarios.csv").string();
      const io::CsvTable t = io::CsvTable::read(path, schema::scenarios());
      const std::size_t lo = shard_bound(total, k, n), hi = shard_bound(total, k + 1, n);
      if (t.size() != hi - lo)
        throw CsvError(fmt::format("{}: {} scenarios, while shard {}/{} of this corpus has {}; the shard's index in its "
                                   "run_metadata.json does not match its rows",
                                   path, t.size(), k, n, hi - lo));
      const std::size_t cid = t.col("scenario_id");
      for (std::size_t i = 0; i < t.size(); ++i)
        if (t.rows()[i][cid] != corpus_id(*plan.cfg, lo + i))
          throw CsvError(fmt::format("{}: line {}: scenario {}, while shard {}/{} of this corpus has {} there; the "
                                     "shard's index in its run_metadata.json does not match its rows",
                                     path, i + 2, untrusted::excerpt(t.rows()[i][cid], 60), k, n,
                                     corpus_id(*plan.cfg, lo + i)));
    }
  }
  StreamLayout layout;
  std::vector<Stream> streams = make_streams(plan, opts.observers, work, layout);
  // The merge evaluates no scenario: the observers keep nothing, and the corpus is theirs to generate.
  for (const auto& obs : opts.observers) obs->begin(plan, RunScope{corpus_size(*plan.cfg), false});
  RunSummary summary;
  for (std::size_t i = 0; i < streams.size(); ++i) {
    Stream& st = streams[i];
    const std::string& shard_name = st.name;
    st.fd = ::open(st.work.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (st.fd < 0) throw IoError(fmt::format("{}: cannot create ({})", st.work, std::strerror(errno)));
    const std::string h = header_text(st);
    write_all(st.fd, h, st.work);
    st.size = h.size();
    // Each shard's rows after its header line, in shard order: the contiguous blocks make the corpus order.
    for (const auto& sd : shard_dirs) {
      const std::string path = (fs::path(sd) / shard_name).string();
      if (!fs::exists(path)) continue;  // an optional file the shard had no rows for
      const std::string text = io::read_text_file(path);
      if (text.compare(0, h.size(), h) != 0)
        throw CsvError(fmt::format("{}: line 1: the header is not the one this run writes", path));
      write_all(st.fd, text.substr(h.size()), st.work);
      st.size += text.size() - h.size();
    }
    ::close(st.fd);
    st.fd = -1;
  }
  for (const auto& sd : shard_dirs) {
    const auto meta = nlohmann::json::parse(io::read_text_file((fs::path(sd) / io::kMetadataFile).string(), io::kMaxDocumentBytes), nullptr, false);
    summary.scenarios += untrusted::count_member(meta, "scenarios");
    summary.rows += untrusted::count_member(meta, "rows");
    summary.failed_rows += untrusted::count_member(meta, "failed_rows");
    summary.scenarios_with_blue_plan += untrusted::count_member(meta, "scenarios_with_blue_plan");
  }
  RunOptions merged = opts;
  merged.shard_count = 0;
  merged.shard_index = 0;
  auto key = run_identity(plan, 0);
  key.emplace_back("shard_index", "0");
  return finish_run(plan, merged, streams, layout, nullptr, summary, threads, t0, key);
}

}  // namespace advplan
