// `advplan run|evaluate ... --batch [--batch-export DIR]`, `advplan batch poll RUN`, `advplan batch ingest RUN FILE...`
// (docs/LLM.md "Batch"): a run whose live calls go through the provider's batch API in waves. Each wave is the calls the
// completion cache cannot answer; their answers go into the cache, and the run resumes to its next wave or its end.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/llm/batch.hpp"
#include "advplan/policy/completion_cache.hpp"
#include "advplan/run/runner.hpp"
#include "commands.hpp"

namespace advplan::cli {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kStateFormat = "advplan-batch/1";
constexpr std::size_t kMaxStateBytes = 16u << 20;

std::vector<std::string>& command_line() {
  static std::vector<std::string> args;
  return args;
}

fs::path batch_dir(const std::string& run) { return fs::path(run) / ".advplan-work" / "batch"; }

const char* provider_name(LlmProvider p) { return p == LlmProvider::anthropic ? "anthropic" : "openai"; }

/// The settings of the run's provider, from the state (the key from the environment variable it names).
LlmSettings settings_of(const json& st) {
  LlmConfig c;
  c.provider = untrusted::string_member(st, "provider") == "anthropic" ? LlmProvider::anthropic : LlmProvider::openai;
  c.endpoint = untrusted::string_member(st, "endpoint");
  c.anthropic_version = untrusted::string_member(st, "anthropic_version", c.anthropic_version);
  c.api_key_env = untrusted::string_member(st, "api_key_env");
  return resolve_llm_settings(c, "", "batch");
}

json read_state(const std::string& run) {
  const fs::path file = batch_dir(run) / "state.json";
  if (!fs::is_regular_file(fs::symlink_status(file)))
    throw IoError(fmt::format("{}: no batch is waiting in this run (advplan run --batch writes it)", file.string()));
  json st;
  const std::string text = io::read_text_file(file.string(), kMaxStateBytes);
  if (const std::string err = untrusted::parse_json_bounded(text, st); !err.empty() || !st.is_object() ||
      untrusted::string_member(st, "format") != kStateFormat)
    throw IoError(fmt::format("{}: not a batch state of this advplan ({})", file.string(), err.empty() ? "format" : err));
  return st;
}

/// One input file per model (a provider's batch takes one model), named wave-<n>-<k>.<ext>.
json write_inputs(const BatchWave& wave, const LlmSettings& s, const fs::path& dir, int n) {
  std::map<std::string, std::vector<batch::Request>> by_model;
  for (const auto& [key, e] : wave.entries()) by_model[e.model].push_back({key, e.body});
  const std::string path = s.provider == LlmProvider::anthropic ? "/v1/messages" : "/v1/chat/completions";
  json files = json::array();
  int k = 0;
  for (const auto& [model, reqs] : by_model) {
    const std::string name =
        fmt::format("wave-{}-{}.{}", n, k++, s.provider == LlmProvider::anthropic ? "json" : "jsonl");
    io::write_file_atomic((dir / name).string(), batch::input_text(s.provider, path, reqs));
    files.push_back({{"model", model}, {"file", name}, {"requests", reqs.size()}});
  }
  return files;
}

/// Submits each input file; records each batch's id and state. Throws on a refused submission.
void submit_all(json& files, const LlmSettings& s, const fs::path& dir) {
  for (json& f : files) {
    const std::string input = io::read_text_file((dir / f["file"].get<std::string>()).string(), batch::kMaxResultsBytes);
    const batch::Status st = batch::submit(s, input);
    if (!st.error.empty() || st.id.empty())
      throw IoError(fmt::format("the batch of {} could not be submitted to {}: {}; the run is kept, and `advplan batch "
                                "ingest` takes results you submit yourself ({})",
                                f["file"].get<std::string>(), s.endpoint, st.error.empty() ? "no batch id" : st.error,
                                (dir / f["file"].get<std::string>()).string()));
    f["id"] = st.id;
    f["state"] = st.state;
  }
}

/// Stores the answered results in the cache, marked as batch answers. Returns how many were stored.
std::size_t store_results(const json& st, const std::string& text, const std::string& file) {
  const LlmSettings s = settings_of(st);
  CompletionCache cache(untrusted::string_member(st, "cache_dir"));
  const json& models = st["models"];
  std::size_t stored = 0, failed = 0, foreign = 0;
  for (batch::Result& r : batch::read_results(s.provider, text, file, s.api_key)) {
    if (!models.contains(r.custom_id)) {
      ++foreign;
      continue;
    }
    if (!r.reply.ok) {
      ++failed;
      continue;
    }
    r.reply.batch = true;
    cache.store(r.custom_id, models[r.custom_id].get<std::string>(), r.reply);
    ++stored;
  }
  fmt::print(stderr, "advplan: {}: {} answers stored in the cache, {} failed (asked again in the next wave){}\n", file,
             stored, failed, foreign ? fmt::format(", {} not of this run's wave ignored", foreign) : "");
  return stored;
}

/// Replaces this process with the run's own command, --resume added: the next wave, or the end of the run.
[[noreturn]] void continue_run(const json& st) {
  std::vector<std::string> args;
  for (const json& a : st["command"])
    if (a.is_string() && a != "--force" && a != "--resume") args.push_back(a.get<std::string>());
  args.push_back("--resume");
  const std::string cwd = untrusted::string_member(st, "cwd");
  if (!cwd.empty() && ::chdir(cwd.c_str()) != 0)
    throw IoError(fmt::format("{}: the run's working directory cannot be entered", cwd));
  fmt::print(stderr, "advplan: continuing the run: advplan");
  for (const auto& a : args) fmt::print(stderr, " {}", a);
  fmt::print(stderr, "\n");
  std::fflush(stderr);
  std::vector<char*> argv;
  std::string self = "advplan";
  argv.push_back(self.data());
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv("/proc/self/exe", argv.data());
  throw IoError(fmt::format("the run could not be continued ({})", std::strerror(errno)));
}

}  // namespace

void set_command_line(int argc, char** argv) {
  command_line().assign(argv + 1, argv + argc);
}

int finish_batch_wave(const RunPlan& plan, const RunOptions& opts, const std::string& export_dir, const BatchWaiting& e) {
  const auto wave = batch_wave_of(plan.ctx);
  const LlmConfig& llm = plan.cfg->llm;
  const LlmSettings s = resolve_llm_settings(llm, "", "--batch");
  const fs::path dir = batch_dir(opts.out_dir);
  fs::create_directories(dir);
  int n = 1;
  if (fs::exists(dir / "state.json")) n = static_cast<int>(untrusted::count_member(read_state(opts.out_dir), "wave", 0)) + 1;
  json files = write_inputs(*wave, s, dir, n);
  json models = json::object();
  for (const auto& [key, entry] : wave->entries()) models[key] = entry.model;
  if (export_dir.empty()) submit_all(files, s, dir);
  else {
    fs::create_directories(export_dir);
    for (const json& f : files) fs::copy_file(dir / f["file"].get<std::string>(), fs::path(export_dir) / f["file"].get<std::string>(), fs::copy_options::overwrite_existing);
  }
  json st = {{"format", kStateFormat}, {"wave", n}, {"provider", provider_name(llm.provider)},
             {"endpoint", s.endpoint}, {"anthropic_version", llm.anthropic_version}, {"api_key_env", llm.api_key_env},
             {"cache_dir", fs::absolute(llm.cache_dir).string()}, {"cwd", fs::current_path().string()},
             {"command", command_line()}, {"batches", files}, {"models", models}};
  io::write_file_atomic((dir / "state.json").string(), st.dump(1) + "\n");
  fmt::print(stderr, "advplan: {}\n", e.what());
  if (export_dir.empty())
    fmt::print(stderr, "advplan: wave {}: {} requests submitted as {} batch(es) to {}; `advplan batch poll {}` fetches "
                       "the answers once the provider has them and continues the run\n",
               n, models.size(), files.size(), s.endpoint, opts.out_dir);
  else
    fmt::print(stderr, "advplan: wave {}: {} requests written to {} ({} file(s), the provider's batch input format); "
                       "submit them, then `advplan batch ingest {} RESULTS...` continues the run\n",
               n, models.size(), export_dir, files.size(), opts.out_dir);
  return kBatchWaitingStatus;
}

void add_batch_command(CLI::App& app, Action& run) {
  auto* cmd = app.add_subcommand("batch", "Answers of a run's batch wave (advplan run --batch): poll or ingest");
  cmd->require_subcommand(1);
  auto run_dir = std::make_shared<std::string>();
  auto files = std::make_shared<std::vector<std::string>>();
  auto* poll = cmd->add_subcommand("poll", "fetch the wave's results from the provider once ready, and continue the run");
  poll->add_option("RUN", *run_dir, "the run directory")->required();
  poll->callback([&run, run_dir] {
    run = [run_dir]() -> int {
      const json st = read_state(*run_dir);
      const LlmSettings s = settings_of(st);
      std::vector<batch::Status> ready;
      for (const json& b : st["batches"]) {
        const batch::Status bs = batch::poll(s, untrusted::string_member(b, "id"));
        if (!bs.error.empty()) throw IoError(fmt::format("batch {}: {}", untrusted::string_member(b, "id"), bs.error));
        if (!bs.ended) {
          fmt::print(stderr, "advplan: batch {} is {}; poll again later\n", bs.id, bs.state);
          return kBatchWaitingStatus;
        }
        ready.push_back(bs);
      }
      for (const batch::Status& bs : ready)
        for (const std::string& p : {bs.results_path, bs.errors_path}) {
          if (p.empty()) continue;
          const batch::Download d = batch::download(s, p);
          if (!d.error.empty()) throw IoError(fmt::format("batch {}: its results {}: {}", bs.id, p, d.error));
          store_results(st, d.text, "batch " + bs.id + " results");
        }
      continue_run(st);
    };
  });
  auto* ingest = cmd->add_subcommand("ingest", "store results files of the wave (the provider's format) and continue the run");
  ingest->add_option("RUN", *run_dir, "the run directory")->required();
  ingest->add_option("RESULTS", *files, "results files, as the provider writes them (JSONL)")->required();
  ingest->callback([&run, run_dir, files] {
    run = [run_dir, files]() -> int {
      const json st = read_state(*run_dir);
      for (const std::string& f : *files) store_results(st, io::read_text_file(f, batch::kMaxResultsBytes), f);
      continue_run(st);
    };
  });
}

}  // namespace advplan::cli
