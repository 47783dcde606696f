// `advplan run|evaluate ... --batch [--batch-export DIR] [--batch-results FILE]` (docs/LLM.md "Batch"): a run whose
// live calls go through the provider's batch API in waves. Each wave is the calls the completion cache cannot answer;
// the same command with --resume polls the provider (or reads --batch-results files), stores the answers in the cache
// and replays the run to its next wave or its end. Everything but the batch ids and the wave's request list comes from
// the user's own command line and config, never from the run directory, which may be hostile.
#include <fmt/format.h>

#include <cctype>
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
constexpr std::size_t kMaxStateBytes = 64u << 20;

std::vector<std::string>& command_line() {
  static std::vector<std::string> args;
  return args;
}

fs::path batch_dir(const std::string& run) { return fs::path(run) / ".advplan-work" / "batch"; }
std::string state_path(const std::string& run) { return (batch_dir(run) / "state.json").string(); }

const char* provider_name(LlmProvider p) { return p == LlmProvider::anthropic ? "anthropic" : "openai"; }

bool is_id(const std::string& s) {
  if (s.empty() || s.size() > 120) return false;
  for (const char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  return true;
}

/// A wave file's name: wave-N-K.json or .jsonl.
bool is_wave_file(const std::string& s) {
  if (s.rfind("wave-", 0) != 0 || s.size() > 64 || s.find("..") != std::string::npos) return false;
  for (const char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.') return false;
  return true;
}

[[noreturn]] void bad_state(const std::string& run, const std::string& field) {
  throw IoError(fmt::format("{}: {} is missing or malformed; the batch state is not advplan's (start the run again "
                            "with --force)", state_path(run), field));
}

/// The run's batch state: {format, wave, provider, batches: [{model, file, requests, id}], models: {key: model},
/// failed: {key: error}}, every field checked. Nullopt when the run has none.
std::optional<json> read_state(const std::string& run) {
  const std::string file = state_path(run);
  if (!fs::exists(fs::symlink_status(file))) return std::nullopt;
  if (!fs::is_regular_file(fs::symlink_status(file))) bad_state(run, "the file");
  json st;
  if (!untrusted::parse_json_bounded(io::read_text_file(file, kMaxStateBytes), st).empty() || !st.is_object() ||
      untrusted::string_member(st, "format") != kStateFormat)
    bad_state(run, "format");
  for (const char* k : {"batches", "models", "failed"})
    if (!st.contains(k) || (std::string(k) == "batches" ? !st[k].is_array() : !st[k].is_object())) bad_state(run, k);
  for (const json& b : st["batches"])
    if (!b.is_object() || !is_wave_file(untrusted::string_member(b, "file")) ||
        (b.contains("id") && !is_id(untrusted::string_member(b, "id"))))
      bad_state(run, "batches");
  for (const char* k : {"models", "failed"})
    for (const auto& [key, v] : st[k].items())
      if (key.size() != 64 || !v.is_string() || v.get<std::string>().size() > 1000) bad_state(run, k);
  return st;
}

void write_state(const std::string& run, const json& st) { io::write_file_atomic(state_path(run), st.dump(1) + "\n"); }

/// One input file per model (a provider's batch takes one model) and per chunk within the provider's limits (OpenAI:
/// 50,000 requests or 200 MB a batch; Anthropic: 100,000 or 256 MB; advplan stays at 90% of the bytes), named
/// wave-<n>-<k>.<ext>.
json write_inputs(const BatchWave& wave, const LlmSettings& s, const fs::path& dir, int n) {
  const bool anthropic = s.provider == LlmProvider::anthropic;
  const std::size_t max_requests = anthropic ? 100000 : 50000;
  const std::size_t max_bytes = (anthropic ? 256u : 200u) * 1000 * 1000 / 10 * 9;
  std::map<std::string, std::vector<std::vector<batch::Request>>> by_model;
  std::map<std::string, std::size_t> bytes;
  for (const auto& [key, e] : wave.entries()) {
    auto& chunks = by_model[e.model];
    if (chunks.empty() || chunks.back().size() >= max_requests || bytes[e.model] + e.body.size() > max_bytes) {
      chunks.emplace_back();
      bytes[e.model] = 0;
    }
    chunks.back().push_back({key, e.body});
    bytes[e.model] += e.body.size() + 200;
  }
  const std::string path = anthropic ? "/v1/messages" : "/v1/chat/completions";
  json files = json::array();
  int k = 0;
  for (const auto& [model, chunks] : by_model)
    for (const auto& reqs : chunks) {
      const std::string name = fmt::format("wave-{}-{}.{}", n, k++, anthropic ? "json" : "jsonl");
      io::write_file_atomic((dir / name).string(), batch::input_text(s.provider, path, reqs));
      files.push_back({{"model", model}, {"file", name}, {"requests", reqs.size()}});
    }
  return files;
}

/// Stores a results file's answers in the cache (marked as batch answers); failures for good go to state.failed.
void store_results(json& st, const RunPlan& plan, const std::string& text, const std::string& file) {
  const LlmSettings s = resolve_llm_settings(plan.cfg->llm, "", "--batch");
  const auto cache = completion_cache_of(plan.ctx);
  std::size_t stored = 0, settled = 0, again = 0, foreign = 0;
  for (batch::Result& r : batch::read_results(s.provider, text, file, s.api_key)) {
    const auto m = st["models"].find(r.custom_id);
    if (m == st["models"].end()) {
      ++foreign;
    } else if (r.reply.ok) {
      r.reply.batch = true;
      cache->store(r.custom_id, m->get<std::string>(), r.reply);
      ++stored;
    } else if (r.settled) {
      st["failed"][r.custom_id] = r.reply.error;
      ++settled;
    } else {
      ++again;
    }
  }
  fmt::print(stderr, "advplan: {}: {} answers stored in the cache, {} failed for good, {} to ask again{}\n", file, stored,
             settled, again, foreign ? fmt::format(", {} not of this run's wave ignored", foreign) : "");
}

/// Polls the wave's batches on the config's endpoint; stores their results once all have ended. False while one runs.
bool poll_batches(json& st, const RunPlan& plan, const std::string& run) {
  const LlmSettings s = resolve_llm_settings(plan.cfg->llm, "", "--batch");
  std::vector<batch::Status> ended;
  for (const json& b : st["batches"]) {
    const std::string id = untrusted::string_member(b, "id");
    if (id.empty())
      throw ConfigError(fmt::format("{}: wave {} was exported, not submitted: give its results with --batch-results FILE",
                                    run, untrusted::count_member(st, "wave", 0)));
    const batch::Status bs = batch::poll(s, id);
    if (!bs.error.empty()) throw IoError(fmt::format("batch {}: {}", id, bs.error));
    if (!bs.ended) {
      fmt::print(stderr, "advplan: batch {} is {}; run the same command again later\n", id, bs.state);
      return false;
    }
    ended.push_back(bs);
  }
  for (const batch::Status& bs : ended)
    for (const std::string& p : {bs.results_path, bs.errors_path}) {
      if (p.empty()) continue;
      const batch::Download d = batch::download(s, p);
      if (!d.error.empty()) throw IoError(fmt::format("batch {}: its results {}: {}", bs.id, p, d.error));
      store_results(st, plan, d.text, "batch " + bs.id);
    }
  return true;
}

/// Submits each input file; records each batch's id in the state as it goes, so none is lost to a later failure.
void submit_all(json& st, const LlmSettings& s, const fs::path& dir, const std::string& run) {
  for (json& f : st["batches"]) {
    const std::string file = (dir / f["file"].get<std::string>()).string();
    const batch::Status bs = batch::submit(s, io::read_text_file(file, batch::kMaxResultsBytes));
    if (!bs.error.empty() || !is_id(bs.id))
      throw IoError(fmt::format("the batch of {} could not be submitted to {}: {}; the run is kept, and the same command "
                                "with --resume --batch-results FILE takes results you submit yourself",
                                file, s.endpoint, bs.error.empty() ? "no usable batch id" : bs.error));
    f["id"] = bs.id;
    write_state(run, st);
  }
}

/// The command that continues the run: this one, with --resume for --force.
std::string continuation() {
  std::string out = "advplan";
  for (const std::string& a : command_line())
    if (a != "--force" && a != "--resume") out += " " + untrusted::excerpt(a, 300);
  return out + " --resume";
}

}  // namespace

void set_command_line(int argc, char** argv) { command_line().assign(argv + 1, argv + argc); }

int continue_batch(const RunPlan& plan, const RunOptions& opts, const std::vector<std::string>& results) {
  const auto wave = batch_wave_of(plan.ctx);
  if (!wave || !opts.resume) {
    if (!results.empty()) throw ConfigError("--batch-results continues a batch run: give it with --batch and --resume");
    return -1;
  }
  std::optional<json> st = read_state(opts.out_dir);
  if (!st) {
    if (!results.empty()) throw IoError(fmt::format("{}: no batch wave is waiting for results", opts.out_dir));
    return -1;
  }
  if (untrusted::string_member(*st, "provider") != provider_name(plan.cfg->llm.provider))
    throw ConfigError(fmt::format("{}: the waiting wave was written for llm.provider {}, while the config says {}",
                                  opts.out_dir, untrusted::string_member(*st, "provider"),
                                  provider_name(plan.cfg->llm.provider)));
  for (const std::string& f : results) store_results(*st, plan, io::read_text_file(f, batch::kMaxResultsBytes), f);
  if (results.empty() && !untrusted::bool_member(*st, "answered", false) && !poll_batches(*st, plan, opts.out_dir))
    return kBatchWaitingStatus;
  (*st)["answered"] = true;
  write_state(opts.out_dir, *st);
  for (const auto& [key, error] : (*st)["failed"].items()) wave->settle(key, error.get<std::string>());
  return -1;
}

int finish_batch_wave(const RunPlan& plan, const RunOptions& opts, const std::string& export_dir, const BatchWaiting& e) {
  const auto wave = batch_wave_of(plan.ctx);
  const LlmSettings s = resolve_llm_settings(plan.cfg->llm, "", "--batch");
  const fs::path dir = batch_dir(opts.out_dir);
  fs::create_directories(dir);
  const std::optional<json> before = read_state(opts.out_dir);
  const int n = before ? static_cast<int>(untrusted::count_member(*before, "wave", 0)) + 1 : 1;
  json models = json::object();
  for (const auto& [key, entry] : wave->entries()) models[key] = entry.model;
  json st = {{"format", kStateFormat}, {"wave", n}, {"provider", provider_name(s.provider)},
             {"batches", write_inputs(*wave, s, dir, n)}, {"models", models},
             {"failed", before ? (*before)["failed"] : json::object()}};
  write_state(opts.out_dir, st);  // before submitting: a failed submission still leaves the wave's list
  fmt::print(stderr, "advplan: {}\n", e.what());
  if (export_dir.empty()) {
    submit_all(st, s, dir, opts.out_dir);
    fmt::print(stderr, "advplan: wave {}: {} requests submitted as {} batch(es) to {}; `{}` polls them and continues the "
                       "run once the provider has the answers\n",
               n, models.size(), st["batches"].size(), s.endpoint, continuation());
    return kBatchWaitingStatus;
  }
  fs::create_directories(export_dir);
  for (const json& f : st["batches"])
    fs::copy_file(dir / f["file"].get<std::string>(), fs::path(export_dir) / f["file"].get<std::string>(),
                  fs::copy_options::overwrite_existing);
  fmt::print(stderr, "advplan: wave {}: {} requests written to {} ({} file(s), the provider's batch input format); "
                     "submit them, then `{} --batch-results RESULTS.jsonl` continues the run\n",
             n, models.size(), export_dir, st["batches"].size(), continuation());
  return kBatchWaitingStatus;
}

std::optional<int> run_with_batches(const RunPlan& plan, const RunOptions& opts, const RunDirFlags& flags, RunSummary& s) {
  if (const int waiting = continue_batch(plan, opts, flags.batch_results); waiting >= 0) return waiting;
  try {
    s = run_experiment(plan, opts);
  } catch (const BatchWaiting& e) {
    return finish_batch_wave(plan, opts, flags.batch_export, e);
  }
  return std::nullopt;
}

}  // namespace advplan::cli
