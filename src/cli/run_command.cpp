// `advplan run [CONFIG] [--out DIR] [--threads N] [--force | --resume]`
#include <fmt/format.h>

#include <charconv>
#include <cstdlib>

#include "advplan/pipeline/standard_run.hpp"
#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"

#include <filesystem>

#include "advplan/run/runner.hpp"
#include "advplan/io/run_store.hpp"
#include "commands.hpp"
#include "mpi_support.hpp"

namespace advplan::cli {

namespace {

bool parse_count(const std::string& s, std::size_t& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

/// `--shard i/N`, or `--shards N` with the index from SLURM_ARRAY_TASK_ID (less SLURM_ARRAY_TASK_MIN when set).
void set_shard(RunOptions& opts, const std::string& shard, std::size_t shards) {
  if (!shard.empty() && shards > 0) throw ConfigError("run: use one of --shard INDEX/COUNT and --shards COUNT");
  if (!shard.empty()) {
    const auto slash = shard.find('/');
    if (slash == std::string::npos || !parse_count(shard.substr(0, slash), opts.shard_index) ||
        !parse_count(shard.substr(slash + 1), opts.shard_count) || opts.shard_count == 0)
      throw ConfigError(fmt::format("--shard {}: expected INDEX/COUNT with 0 <= INDEX < COUNT, e.g. 0/4", shard));
    return;
  }
  if (shards == 0) return;
  const char* id = std::getenv("SLURM_ARRAY_TASK_ID");
  if (id == nullptr)
    throw ConfigError(fmt::format("--shards {}: SLURM_ARRAY_TASK_ID is not set (not a Slurm array task); give "
                                  "--shard INDEX/{} instead",
                                  shards, shards));
  std::size_t task = 0, min = 0;
  if (!parse_count(id, task)) throw ConfigError(fmt::format("--shards {}: SLURM_ARRAY_TASK_ID '{}' is not a number", shards, id));
  if (const char* m = std::getenv("SLURM_ARRAY_TASK_MIN"); m != nullptr && parse_count(m, min) && min <= task) task -= min;
  opts.shard_index = task;
  opts.shard_count = shards;
}

/// `mpirun -n N advplan run CONFIG --out DIR`: rank r runs shard r/N into a directory beside DIR, and rank 0 merges
/// the shards into DIR, byte-identical to a single process. --resume resumes every rank's shard (same N).
int run_over_ranks(const MpiWorld& w, const RunPlan& plan, const RunOptions& opts) {
  namespace fs = std::filesystem;
  if (opts.shard_count > 0) throw ConfigError("run: --shard and --shards do not combine with mpirun, which shards by rank");
  if (plan.cfg->llm.batch) throw ConfigError("run: --batch (llm.mode: batch) does not combine with mpirun: run it in one process");
  fs::path out = fs::absolute(opts.out_dir).lexically_normal();
  if (out.filename().empty()) out = out.parent_path();
  const fs::path shards = out.parent_path() / ("." + out.filename().string() + ".mpi-shards");
  bool ok = true;
  std::string error;
  bool complete = false;
  if (w.rank == 0) {
    try {
      complete = opts.resume && fs::exists(out / io::kManifestFile) && !fs::exists(shards);
      if (complete) io::verify_run_directory(out.string());  // "complete" only while its files match its MANIFEST
      if (!complete) {
        io::prepare_run_directory(out.string(), opts.resume ? io::DirMode::resume
                                                            : opts.force ? io::DirMode::force : io::DirMode::fresh);
        if (!opts.resume) fs::remove_all(shards);
        fs::create_directories(shards);
      }
    } catch (const Error& e) {
      ok = false;
      error = e.what();
    }
  }
  if (!mpi_all(ok)) {
    if (w.rank == 0) throw IoError(error);
    return 1;
  }
  if (!mpi_all(!complete)) {  // rank 0 found a complete run: nothing to do on any rank
    if (w.rank == 0) fmt::print(stderr, "advplan: {} is already a complete run; nothing to resume\n", opts.out_dir);
    return 0;
  }
  RunOptions mine = opts;
  mine.out_dir = (shards / fmt::format("shard-{}", w.rank)).string();
  mine.shard_index = static_cast<std::size_t>(w.rank);
  mine.shard_count = static_cast<std::size_t>(w.size);
  mine.force = false;
  mine.progress = opts.progress && w.rank == 0;
  try {
    run_experiment(plan, mine);
  } catch (const Error& e) {
    ok = false;
    fmt::print(stderr, "advplan: rank {} of {}: {}\n", w.rank, w.size, e.what());
  }
  if (!mpi_all(ok)) return 1;
  int status = 0;
  if (w.rank == 0) {
    try {
      std::vector<std::string> dirs;
      for (int r = 0; r < w.size; ++r) dirs.push_back((shards / fmt::format("shard-{}", r)).string());
      RunOptions merged = opts;
      merged.force = true;  // checked above; an interrupted merge may have left files
      merged.resume = false;
      const RunSummary s = merge_shards(plan, dirs, merged);
      fs::remove_all(shards);
      fmt::print(stderr, "advplan: {} ranks: {} scenarios, {} rows ({} failed) in {:.2f}s; wrote {}\n", w.size,
                 s.scenarios, s.rows, s.failed_rows, s.seconds, opts.out_dir);
      if (s.rows > 0 && s.failed_rows == s.rows) {
        fmt::print(stderr, "advplan: every row failed (first reason: {}); the reasons are in {}/per_scenario.csv\n",
                   s.first_failure, opts.out_dir);
        status = 1;
      }
    } catch (const Error& e) {
      ok = false;
      fmt::print(stderr, "advplan: {}\n", e.what());
    }
  }
  if (!mpi_all(ok)) return 1;
  return status;
}

}  // namespace

void add_run_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("run", "Run an experiment and write the run directory");
  auto config = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto threads = std::make_shared<int>(0);
  auto dir_flags = std::make_shared<RunDirFlags>();
  auto summary = std::make_shared<std::string>("auto");
  auto shard = std::make_shared<std::string>();
  auto shards = std::make_shared<std::size_t>(0);
  auto candidate_plans = std::make_shared<bool>(false);
  cmd->add_option("CONFIG", *config, "experiment config (default: the built-in configs/experiments/paper.yaml)");
  cmd->add_option("--out", *out, "run directory to write (must be new or empty; default: runs/<config name>)");
  cmd->add_option("--threads", *threads, "worker threads (default: all cores)")->check(CLI::Range(1, 1024));
  dir_flags->add_to(cmd);
  cmd->add_option("--summary", *summary,
                  "auto, bootstrap or streaming (one pass, normal-approximation intervals, no studies or tables; "
                  "auto streams above 100000 ok rows)")
      ->capture_default_str();
  cmd->add_option("--shard", *shard,
                  "run shard INDEX/COUNT of the corpus (0-based), to be combined with advplan merge");
  cmd->add_option("--shards", *shards, "run one of COUNT shards, the index from SLURM_ARRAY_TASK_ID");
  cmd->add_flag("--candidate-plans", *candidate_plans,
                "also write candidate_plans.jsonl, every RED candidate plan (config: traces.candidate_plans)");
  cmd->callback([&run, config, out, threads, dir_flags, shard, shards, summary, candidate_plans] {
    run = [config, out, threads, dir_flags, shard, shards, summary, candidate_plans] {
      RunOptions opts;
      set_shard(opts, *shard, *shards);  // bad shard specs fail before the config is read
      ExperimentConfig cfg = config->empty() ? default_experiment_config() : load_experiment_config(*config);
      if (*candidate_plans) cfg.candidate_plans = true;
      dir_flags->apply(cfg);
      const RunPlan plan = prepare_run(cfg, run_conditions(cfg));
      // Without --out, the run goes to runs/<config name> (one safe path component), as the README's commands
      // expect (`advplan run configs/experiments/metagame.yaml && advplan metagame runs/metagame`).
      if (out->empty()) {
        *out = (std::filesystem::path("runs") / untrusted::safe_path_component(cfg.name.empty() ? "run" : cfg.name)).string();
        fmt::print(stderr, "advplan: writing the run to {} (--out names another directory)\n", *out);
      }
      opts.out_dir = *out;
      opts.threads = *threads;
      dir_flags->apply(opts);
      opts.summary = *summary;
      opts.observers = standard_observers(opts.studies, opts.studies,
                                          opts.progress ? parse_progress_mode(opts.progress_mode) : ProgressMode::none);
      if (const MpiWorld w = mpi_world(); w.size > 1) return run_over_ranks(w, plan, opts);
      RunSummary s;
      if (const auto ended = run_with_batches(plan, opts, *dir_flags, s)) return *ended;
      if (s.already_complete) {
        fmt::print(stderr, "advplan: {} is already a complete run; nothing to resume\n", *out);
        return 0;
      }
      fmt::print(stderr, "advplan: {} scenarios, {} rows ({} failed) in {:.2f}s; wrote {}\n", s.scenarios, s.rows,
                 s.failed_rows, s.seconds, *out);
      if (const std::string u = usage_summary(s.usage, cfg.llm); !u.empty()) fmt::print(stderr, "advplan: {}\n", u);
      if (s.streamed_summaries)
        fmt::print(stderr, "advplan: summaries streamed with normal-approximation intervals; no studies or tables "
                           "(docs/RESULTS.md \"Summaries at scale\")\n");
      return all_failed_status(s, *out);
    };
  });
}

}  // namespace advplan::cli
