#pragma once
// A content-addressed store of language-model completions on disk (docs/LLM.md "Completion cache"), shared by
// every LLM call of a run: `llm:` BLUE policies, `llm_live` RED and the LLM rubric judges. The key is the SHA-256
// of the endpoint, the model, every request parameter and the full messages; never the API key. An entry is
// written atomically (temporary file + rename), so a run killed at any point leaves only whole entries. A
// corrupt, foreign or oversized entry is a miss with a warning, never a crash.
#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "advplan/policy/llm_contract.hpp"

namespace advplan {

class PolicyContext;
struct LlmSettings;

class CompletionCache {
 public:
  /// Nothing is created until the first entry is stored.
  explicit CompletionCache(std::string dir);
  const std::string& dir() const { return dir_; }

  /// Lower-case hex SHA-256 of the canonical JSON of {endpoint, model, temperature, seed, messages}.
  static std::string key_of(std::string_view endpoint, std::string_view model, const CompletionRequest& req);
  /// The path of an entry: DIR/<first two hex digits>/<key>.json.
  std::string entry_path(const std::string& key) const;

  /// The stored completion, counted as a hit; nullopt (a miss) when there is none, or when the entry is larger
  /// than kMaxEntryBytes, not the JSON of an entry, or written for another key (then with a warning on stderr).
  std::optional<Completion> lookup(const std::string& key) const;
  /// Stores a successful completion (failures are never stored: a rerun asks again). An entry that cannot be
  /// written is a warning and counted; the run goes on.
  void store(const std::string& key, std::string_view model, const Completion& c) const;

  struct Stats {
    std::size_t hits = 0, misses = 0, corrupt = 0, writes = 0, write_errors = 0;
  };
  Stats stats() const;

  /// An entry file larger than this is not read (a miss with a warning).
  static constexpr std::size_t kMaxEntryBytes = 8u << 20;

 private:
  std::string dir_;
  mutable std::atomic<std::size_t> hits_{0}, misses_{0}, corrupt_{0}, writes_{0}, write_errors_{0};
};

/// A client that answers from `cache` and asks `inner` only on a miss, storing what comes back when it is ok.
/// `endpoint` and `model` go into the key. Thread safety: as `inner` (the cache itself is safe to share).
class CachingCompletionClient final : public CompletionClient {
 public:
  CachingCompletionClient(std::unique_ptr<CompletionClient> inner, std::string endpoint, std::string model,
                          std::shared_ptr<CompletionCache> cache);
  Completion complete(const CompletionRequest& req) const override;
  std::string name() const override { return inner_->name(); }

 private:
  std::unique_ptr<CompletionClient> inner_;
  std::string endpoint_, model_;
  std::shared_ptr<CompletionCache> cache_;
};

/// The requests of a batch wave (advplan run --batch, docs/LLM.md "Batch"): while the wave is open, every live call the
/// completion cache cannot answer is recorded here under its cache key, with its model and provider body, and
/// answered at once as deferred (ErrorKind::deferred). Thread safe.
class BatchWave {
 public:
  struct Entry {
    std::string model, body;
  };
  /// Records `key` (the first body of a key is kept).
  void add(const std::string& key, const std::string& model, const std::string& body);
  /// The requests so far, by key.
  std::map<std::string, Entry> entries() const;
  /// A request the batch failed for good (batch::Result::settled): answered with `error` as a failed call, as online.
  void settle(const std::string& key, const std::string& error);
  std::optional<std::string> settled(const std::string& key) const;
  /// The wave is open only while the runner plays the scenarios (run_experiment); before and after (the judges, other
  /// commands) calls are made online.
  void open() { open_ = true; }
  void close() { open_ = false; }
  bool is_open() const { return open_; }

 private:
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;
  std::map<std::string, std::string> settled_;
  std::atomic<bool> open_{false};
};

/// The run's batch wave (set in the context by policy_context when llm.mode is batch), or nullptr.
std::shared_ptr<BatchWave> batch_wave_of(const PolicyContext& ctx);

/// The run's completion cache (set in the context from llm.cache_dir by policy_context), or nullptr.
std::shared_ptr<CompletionCache> completion_cache_of(const PolicyContext& ctx);

/// The live client for `s` (OpenAiCompatibleClient), behind the run's cache when `ctx` has one.
std::unique_ptr<CompletionClient> make_live_client(const LlmSettings& s, const PolicyContext& ctx);

}  // namespace advplan
