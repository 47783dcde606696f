// `advplan merge SHARD_DIR... --out DIR [--config CONFIG] [--force] [--threads N]`: combines the shard directories of
// one run (`advplan run --shard i/N` or `--shards N` under a Slurm array) into the run directory a single process
// writes, byte for byte.
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "advplan/pipeline/standard_run.hpp"
#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/run/runner.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/run_store.hpp"
#include "commands.hpp"

namespace advplan::cli {
namespace fs = std::filesystem;

namespace {

struct Shard {
  std::string dir;
  nlohmann::ordered_json meta;
  std::size_t index = 0, count = 0;
};

Shard read_shard(const std::string& dir) {
  io::verify_run_directory(dir);  // one complete shard, matching its MANIFEST
  Shard s;
  s.dir = dir;
  const std::string path = io::run_metadata_path(dir);
  s.meta = io::read_run_metadata_ordered(dir);
  if (!s.meta.contains("shard") || !s.meta["shard"].is_object())
    throw ConfigError(fmt::format("{}: shard: missing, so {} is not a shard (write shards with advplan run --shard "
                                  "INDEX/COUNT)",
                                  path, dir));
  s.index = untrusted::count_member(s.meta["shard"], "index");
  s.count = untrusted::count_member(s.meta["shard"], "count");
  if (!s.meta.contains("run_key") || !s.meta["run_key"].is_object())
    throw ConfigError(fmt::format("{}: run_key: missing", path));
  return s;
}

std::string key_value(const nlohmann::ordered_json& key, const std::string& field) {
  return key.contains(field) && key[field].is_string() ? key[field].get<std::string>() : "none";
}

}  // namespace

void add_merge_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("merge", "Combine the shard directories of one run into one run directory");
  auto dirs = std::make_shared<std::vector<std::string>>();
  auto out = std::make_shared<std::string>();
  auto config = std::make_shared<std::string>();
  auto threads = std::make_shared<int>(0);
  auto force = std::make_shared<bool>(false);
  cmd->add_option("SHARD_DIRS", *dirs, "the shard directories, in any order")->required();
  cmd->add_option("--out", *out, "run directory to write (must be new or empty)")->required();
  cmd->add_option("--config", *config,
                  "the shards' config file, when its recorded path does not resolve from here (it must be the same "
                  "config: its sha256 is checked)");
  cmd->add_option("--threads", *threads, "worker threads for the summaries and studies (default: all cores)")
      ->check(CLI::Range(1, 1024));
  cmd->add_flag("--force", *force, "clear a non-empty --out directory first");
  cmd->callback([&run, dirs, out, config, threads, force] {
    run = [dirs, out, config, threads, force] {
      std::vector<Shard> shards;
      for (const auto& d : *dirs) shards.push_back(read_shard(d));
      const Shard& first = shards.front();
      const nlohmann::ordered_json& ref = first.meta["run_key"];
      // Every shard of one run: the same config, templates, conditions, seed, corpus size, shard count and version.
      for (const Shard& s : shards) {
        for (const auto& [field, value] : ref.items()) {
          if (field == "shard_index") continue;
          if (key_value(s.meta["run_key"], field) != key_value(ref, field))
            throw ConfigError(fmt::format(
                "{}: shard {}/{} differs from {} (shard {}/{}) in {} ({} against {}); merge only the shards of one run",
                s.dir, s.index, s.count, first.dir, first.index, first.count, field, key_value(s.meta["run_key"], field),
                key_value(ref, field)));
        }
      }
      const std::size_t n = first.count;
      std::map<std::size_t, std::string> by_index;
      for (const Shard& s : shards) {
        if (s.index >= n) throw ConfigError(fmt::format("{}: shard {}/{} is out of range", s.dir, s.index, n));
        auto [it, fresh] = by_index.emplace(s.index, s.dir);
        if (!fresh) throw ConfigError(fmt::format("{}: shard {}/{} is given twice (also {})", s.dir, s.index, n, it->second));
      }
      for (std::size_t i = 0; i < n; ++i)
        if (!by_index.contains(i))
          throw ConfigError(fmt::format("shard {}/{} is missing: {} shard directories were given, and the run has {}",
                                        i, n, shards.size(), n));
      // The config the shards ran, re-read (its templates from disk) and checked against the recorded key.
      const std::string source = untrusted::string_member(first.meta, "config_source");
      ExperimentConfig cfg = recorded_config(untrusted::string_member(first.meta, "config_text"), source, *config);
      cfg.candidate_plans = key_value(ref, "candidate_plans") == "true";  // --candidate-plans is not in the config text
      std::vector<Condition> conds;
      for (const auto& c : first.meta["conditions"]) {
        Condition cond{untrusted::string_member(c, "label"), untrusted::string_member(c, "blue"),
                       untrusted::string_member(c, "red"), untrusted::string_member(c, "group")};
        if (c.is_object() && c.contains("settings") && c["settings"].is_object())  // a sweep point
          for (const auto& [path, v] : c["settings"].items())
            if (v.is_number()) cond.settings.push_back({path, v.get<double>()});
        conds.push_back(std::move(cond));
      }
      const RunPlan plan = prepare_run(cfg, conds);
      for (const auto& [field, value] : run_identity(plan, n))
        if (key_value(ref, field) != value)
          throw ConfigError(fmt::format("{}: {} differs from the shards' ({} against {}); merge with the config the "
                                        "shards ran",
                                        config->empty() ? source : *config, field, value, key_value(ref, field)));
      std::vector<std::string> ordered;
      for (const auto& [i, d] : by_index) ordered.push_back(d);
      RunOptions opts;
      opts.out_dir = *out;
      opts.threads = *threads;
      opts.force = *force;
      opts.studies = untrusted::bool_member(first.meta, "studies", true);
      opts.observers = standard_observers(opts.studies);
      opts.command = untrusted::string_member(first.meta, "command", "run");
      const RunSummary s = merge_shards(plan, ordered, opts);
      fmt::print(stderr, "advplan: merged {} shards: {} scenarios, {} rows ({} failed) in {:.2f}s; wrote {}\n", n,
                 s.scenarios, s.rows, s.failed_rows, s.seconds, *out);
      return all_failed_status(s, *out);
    };
  });
}

}  // namespace advplan::cli
