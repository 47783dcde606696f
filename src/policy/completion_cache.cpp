#include "advplan/policy/completion_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "advplan/core/untrusted.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/sha256.hpp"
#include "advplan/llm/providers.hpp"
#include "advplan/policy/policy_context.hpp"

namespace advplan {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kFormat = "advplan-llm-cache/1";

/// The digest an entry carries: the sha256 of its fields in a fixed order (an edited text or token count with the key
/// kept no longer matches). The finish reason joins the material only when there is one, so entries written before
/// it was kept still match.
std::string entry_digest(const std::string& key, const std::string& model, const std::string& text, const json& prompt,
                         const json& completion, const std::string& finish_reason, const json& details) {
  json material = json::array({kFormat, key, model, text, prompt, completion});
  if (!finish_reason.empty()) material.push_back(finish_reason);
  if (!details.is_null()) material.push_back(details);
  return io::sha256_hex(material.dump(-1, ' ', true, json::error_handler_t::replace));
}

/// Whether `p` is a symbolic link (lstat; false when it does not exist).
bool is_link(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

/// Reads at most `max` + 1 bytes of `path`; nullopt when it cannot be opened (no entry). A symbolic link, at the entry
/// or at its two-letter folder, is never followed: "linked" is set and nothing is read.
std::optional<std::string> read_bounded(const std::string& path, std::size_t max, bool& linked) {
  linked = is_link(fs::path(path).parent_path().string()) || is_link(path);
  if (linked) return std::nullopt;
  // O_NONBLOCK so a FIFO planted at an entry's path cannot block the open; only a regular file is an entry.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (fd < 0) {
    linked = errno == ELOOP;
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return std::nullopt;
  }
  std::string out;
  char buf[65536];
  while (out.size() <= max) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

void warn(const std::string& what) { fmt::print(stderr, "advplan: warning: {}\n", what); }

}  // namespace

CompletionCache::CompletionCache(std::string dir) : dir_(std::move(dir)) {}

std::string CompletionCache::key_of(std::string_view endpoint, std::string_view model, const CompletionRequest& req) {
  json msgs = json::array();
  for (const auto& m : req.messages) msgs.push_back(json::array({m.role, m.content}));
  // Array form: the order is fixed, so the text is canonical. The key never includes the API key.
  json material = json::array({kFormat, std::string(endpoint), std::string(model),
                               fmt::format("{:.17g}", req.temperature), req.seed, msgs});
  // Every other generation setting, when one is not at its default (so the keys of earlier entries stay).
  if (req.top_p || req.max_tokens || !req.stop.empty() || !req.send_seed || !req.extra_json.empty())
    material.push_back(json::array({req.top_p ? json(fmt::format("{:.17g}", *req.top_p)) : json(),
                                    req.max_tokens ? json(*req.max_tokens) : json(), req.stop, req.send_seed,
                                    req.extra_json}));
  // Structured output, when asked for: the mode, strictness and the schema sent (docs/LLM.md "Structured output").
  if (req.structured != StructuredOutput::off)
    material.push_back(json::array({"structured", static_cast<int>(req.structured), req.strict_schema,
                                    req.schema_name, req.output_schema}));
  return io::sha256_hex(material.dump(-1, ' ', true, json::error_handler_t::replace));
}

std::string CompletionCache::entry_path(const std::string& key) const {
  return (fs::path(dir_) / key.substr(0, 2) / (key + ".json")).string();
}

std::optional<Completion> CompletionCache::lookup(const std::string& key) const {
  const std::string path = entry_path(key);
  bool linked = false;
  const auto text = read_bounded(path, kMaxEntryBytes, linked);
  auto corrupt = [&](const std::string& why) -> std::optional<Completion> {
    ++corrupt_;
    ++misses_;
    warn(fmt::format("LLM cache entry {} is ignored ({}); the model is asked again", path, why));
    return std::nullopt;
  };
  if (linked) return corrupt("a symbolic link, which the cache never follows");
  if (!text) {
    ++misses_;
    return std::nullopt;
  }
  if (text->size() > kMaxEntryBytes) return corrupt(fmt::format("larger than {} bytes", kMaxEntryBytes));
  json j;
  if (const std::string err = untrusted::parse_json_bounded(*text, j); !err.empty()) return corrupt(err);
  if (!j.is_object() || untrusted::string_member(j, "format") != kFormat || untrusted::string_member(j, "key") != key)
    return corrupt("not an entry of this key");
  const auto t = j.find("text");
  if (t == j.end() || !t->is_string()) return corrupt("no text");
  const auto model = j.find("model");
  const auto digest = j.find("digest");
  if (model == j.end() || !model->is_string() || digest == j.end() || !digest->is_string())
    return corrupt("no model or digest");
  const json none;
  const json& pt = j.contains("prompt_tokens") ? j["prompt_tokens"] : none;
  const json& ct = j.contains("completion_tokens") ? j["completion_tokens"] : none;
  const auto fr = j.find("finish_reason");
  if (fr != j.end() && !fr->is_string()) return corrupt("a finish_reason that is not a string");
  const std::string finish = fr == j.end() ? std::string() : fr->get<std::string>();
  const json& details = j.contains("usage_details") ? j["usage_details"] : none;
  if (!details.is_null() && !details.is_object()) return corrupt("usage_details that are not an object");
  if (digest->get<std::string>() !=
      entry_digest(key, model->get<std::string>(), t->get<std::string>(), pt, ct, finish, details))
    return corrupt("its content does not match its digest: it was changed after it was written");
  Completion c;
  c.ok = true;
  c.text = t->get<std::string>();
  auto count = [&](const char* k) {
    const auto it = j.find(k);
    return it != j.end() && it->is_number_integer() ? it->get<int>() : -1;
  };
  c.prompt_tokens = count("prompt_tokens");
  c.completion_tokens = count("completion_tokens");
  c.finish_reason = finish;
  if (details.is_object()) {
    auto detail = [&](const char* k) {  // a count in 0..INT_MAX, else not reported
      const auto it = details.find(k);
      if (it == details.end() || !it->is_number_integer()) return -1;
      const auto v = it->get<std::int64_t>();
      return v < 0 || v > std::numeric_limits<int>::max() ? -1 : static_cast<int>(v);
    };
    c.cached_tokens = detail("cached_tokens");
    c.cache_write_tokens = detail("cache_write_tokens");
    c.reasoning_tokens = detail("reasoning_tokens");
    c.served_by = untrusted::string_member(details, "served_by");
    c.batch = untrusted::bool_member(details, "batch", false);
  }
  c.model = model->get<std::string>();
  ++hits_;
  return c;
}

void CompletionCache::store(const std::string& key, std::string_view model, const Completion& c) const {
  if (!c.ok) return;
  const std::string path = entry_path(key);
  const json pt = c.prompt_tokens, ct = c.completion_tokens;
  json details;  // null unless a provider reported one of them (entries without them keep their digest)
  if (c.cached_tokens >= 0 || c.cache_write_tokens >= 0 || c.reasoning_tokens >= 0 || !c.served_by.empty() || c.batch)
    details = {{"cached_tokens", c.cached_tokens},
               {"cache_write_tokens", c.cache_write_tokens},
               {"reasoning_tokens", c.reasoning_tokens},
               {"served_by", c.served_by}};
  if (c.batch) details["batch"] = true;
  json j = {{"format", kFormat},
            {"key", key},
            {"model", std::string(model)},
            {"text", c.text},
            {"prompt_tokens", pt},
            {"completion_tokens", ct},
            {"digest", entry_digest(key, std::string(model), c.text, pt, ct, c.finish_reason, details)}};
  if (!c.finish_reason.empty()) j["finish_reason"] = c.finish_reason;
  if (!details.is_null()) j["usage_details"] = details;
  try {
    std::error_code ec;
    const std::string folder = fs::path(path).parent_path().string();
    if (is_link(folder)) throw std::runtime_error("its folder is a symbolic link, which the cache never follows");
    fs::create_directories(folder, ec);
    if (ec) throw std::runtime_error(ec.message());
    io::write_file_atomic(path, j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
    ++writes_;
  } catch (const std::exception& e) {
    ++write_errors_;
    warn(fmt::format("LLM cache entry {} could not be written ({})", path, untrusted::excerpt(e.what(), 200)));
  }
}

CompletionCache::Stats CompletionCache::stats() const {
  return Stats{hits_.load(), misses_.load(), corrupt_.load(), writes_.load(), write_errors_.load()};
}

CachingCompletionClient::CachingCompletionClient(std::unique_ptr<CompletionClient> inner, std::string endpoint,
                                                 std::string model, std::shared_ptr<CompletionCache> cache)
    : inner_(std::move(inner)), endpoint_(std::move(endpoint)), model_(std::move(model)), cache_(std::move(cache)) {}

Completion CachingCompletionClient::complete(const CompletionRequest& req) const {
  const std::string key = CompletionCache::key_of(endpoint_, model_, req);
  if (auto hit = cache_->lookup(key)) {
    hit->cache_key = key;
    return std::move(*hit);
  }
  Completion c = inner_->complete(req);
  cache_->store(key, model_, c);
  c.cache_key = key;
  return c;
}

std::shared_ptr<CompletionCache> completion_cache_of(const PolicyContext& ctx) {
  return ctx.get<std::shared_ptr<CompletionCache>>();
}

void BatchWave::add(const std::string& key, const std::string& model, const std::string& body) {
  std::lock_guard lock(mu_);
  entries_.try_emplace(key, Entry{model, body});
}

std::map<std::string, BatchWave::Entry> BatchWave::entries() const {
  std::lock_guard lock(mu_);
  return entries_;
}

void BatchWave::settle(const std::string& key, const std::string& error) {
  std::lock_guard lock(mu_);
  settled_[key] = error;
}

std::optional<std::string> BatchWave::settled(const std::string& key) const {
  std::lock_guard lock(mu_);
  const auto it = settled_.find(key);
  return it == settled_.end() ? std::nullopt : std::optional<std::string>(it->second);
}

std::shared_ptr<BatchWave> batch_wave_of(const PolicyContext& ctx) { return ctx.get<std::shared_ptr<BatchWave>>(); }

namespace {

/// While the run's wave is open, records each request it is asked (a cache miss) and answers it as deferred; after,
/// asks the provider.
class DeferringClient final : public CompletionClient {
 public:
  DeferringClient(std::unique_ptr<CompletionClient> live, LlmSettings s, std::string endpoint, std::shared_ptr<BatchWave> wave)
      : live_(std::move(live)), s_(std::move(s)), endpoint_(std::move(endpoint)), wave_(std::move(wave)) {}
  Completion complete(const CompletionRequest& req) const override {
    if (!wave_->is_open()) return live_->complete(req);
    const std::string key = CompletionCache::key_of(endpoint_, s_.model, req);
    Completion c;
    c.model = s_.model;
    if (auto error = wave_->settled(key)) {  // the batch failed it for good: the call fails, as it would online
      c.error = std::move(*error);
      c.error_kind = ErrorKind::http;
      return c;
    }
    const std::string body = s_.provider == LlmProvider::anthropic ? messages_request_body(req, s_.model)
                                                                    : chat_request_body(req, s_.model);
    wave_->add(key, s_.model, body);
    c.error = "the request waits in a batch";
    c.error_kind = ErrorKind::deferred;
    return c;
  }
  std::string name() const override { return live_->name(); }

 private:
  std::unique_ptr<CompletionClient> live_;
  LlmSettings s_;
  std::string endpoint_;
  std::shared_ptr<BatchWave> wave_;
};

}  // namespace

std::unique_ptr<CompletionClient> make_live_client(const LlmSettings& s, const PolicyContext& ctx) {
  std::string endpoint;
  std::unique_ptr<CompletionClient> live = make_provider_client(s, &endpoint);
  auto cache = completion_cache_of(ctx);
  if (auto wave = batch_wave_of(ctx)) live = std::make_unique<DeferringClient>(std::move(live), s, endpoint, std::move(wave));
  if (!cache) return live;
  return std::make_unique<CachingCompletionClient>(std::move(live), std::move(endpoint), s.model, std::move(cache));
}

}  // namespace advplan
