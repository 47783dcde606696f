#include "advplan/policy/openai_client.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "advplan/core/error.hpp"
#include "advplan/core/stop_error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/io/modules.hpp"
#include "advplan/policy/policy_settings.hpp"
#include "http_module/http_module.hpp"

#include <tbb/task.h>
#include <tbb/task_arena.h>

namespace advplan {
using nlohmann::json;

namespace {

constexpr std::size_t kExcerptChars = 200;
constexpr double kRetryAfterCap = 30.0;  // seconds; a server asking for longer is not waited on longer

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

struct ParsedUrl {
  std::string origin;  ///< scheme://host[:port]
  std::string path;    ///< the chat-completions path
};

/// "http://h:1" -> {"http://h:1", "/v1/chat/completions"}; "https://h/v1/" -> {"https://h",
/// "/v1/chat/completions"}; "http://h/proxy" -> {"http://h", "/proxy/v1/chat/completions"}. Nullopt for
/// anything else.
std::optional<ParsedUrl> parse_endpoint(std::string_view url) {
  std::string_view rest;
  std::string scheme;
  for (const char* s : {"http://", "https://"}) {
    if (url.substr(0, std::char_traits<char>::length(s)) == s) {
      scheme = s;
      rest = url.substr(scheme.size());
    }
  }
  if (scheme.empty()) return std::nullopt;
  if (const auto q = rest.find_first_of("?#"); q != std::string_view::npos) return std::nullopt;
  const auto slash = rest.find('/');
  const std::string_view host = rest.substr(0, slash);
  if (host.empty() || host.find('@') != std::string_view::npos || host.find(' ') != std::string_view::npos)
    return std::nullopt;
  std::string path(slash == std::string_view::npos ? std::string_view{} : rest.substr(slash));
  while (!path.empty() && path.back() == '/') path.pop_back();
  const bool has_v1 = path.size() >= 3 && path.compare(path.size() - 3, 3, "/v1") == 0;
  path += has_v1 ? "/chat/completions" : "/v1/chat/completions";
  return ParsedUrl{scheme + std::string(host), path};
}

/// At most kExcerptChars characters of a response body, on one line, valid UTF-8, without the key.
std::string excerpt(const std::string& body, const std::string& secret) {
  // The whole body is redacted before it is cut: a key escaped near the cut would otherwise leave a part behind.
  std::string s = untrusted::excerpt(untrusted::redact(body, secret), kExcerptChars);
  return s.empty() ? "(empty body)" : s;
}

bool retryable_status(int status) { return status == 429 || (status >= 500 && status <= 599); }

/// A reported token count: a non-negative integer, saturated at INT_MAX; -1 when absent, negative or not an
/// integer (a count the server got wrong is treated as not reported).
int token_count(const json& usage, const char* key) {
  if (!usage.is_object()) return -1;
  const auto it = usage.find(key);
  if (it == usage.end()) return -1;
  if (it->is_number_unsigned())
    return static_cast<int>(std::min<std::uint64_t>(it->get<std::uint64_t>(), std::numeric_limits<int>::max()));
  if (it->is_number_integer()) {
    const auto v = it->get<std::int64_t>();
    return v < 0 ? -1 : static_cast<int>(std::min<std::int64_t>(v, std::numeric_limits<int>::max()));
  }
  return -1;
}

/// The entry points of libadvplan_http.so (src/http_module), loaded on first use.
struct HttpModule {
  http::PostFn post = nullptr;
  http::SubmitFn submit = nullptr;
  http::LimitFn limit = nullptr;
};
const HttpModule& http_module() {
  static const HttpModule m = [] {
    const std::string file = "libadvplan_http.so";
    void* h = io::open_module(file, /*global=*/false, "the HTTP client");
    HttpModule out;
    out.post = reinterpret_cast<http::PostFn>(io::module_symbol(h, file, http::kPostSymbol));
    out.submit = reinterpret_cast<http::SubmitFn>(io::module_symbol(h, file, http::kSubmitSymbol));
    out.limit = reinterpret_cast<http::LimitFn>(io::module_symbol(h, file, http::kLimitSymbol));
    return out;
  }();
  return m;
}

thread_local int t_no_suspend = 0;
std::atomic<int> g_async_scopes{0};

/// One POST: inside a TBB task (and outside a NoSuspendScope) the task is suspended while the I/O thread carries
/// the request, so the worker thread runs other tasks; otherwise it blocks in libcurl's easy interface.
void send(const http::Post& post, http::Reply& r) {
  const HttpModule& m = http_module();
  if (g_async_scopes.load() == 0 || t_no_suspend > 0 ||
      tbb::this_task_arena::current_thread_index() == tbb::task_arena::not_initialized) {
    m.post(post, r);
    return;
  }
  tbb::task::suspend_point sp = nullptr;
  tbb::task::suspend([&](tbb::task::suspend_point here) {
    sp = here;
    m.submit(post, r, [](void* arg) noexcept { tbb::task::resume(*static_cast<tbb::task::suspend_point*>(arg)); },
             &sp);
  });
}

}  // namespace

void read_success_body(const std::string& body, const std::string& secret, Completion& out) {
  json j;
  if (const std::string err = untrusted::parse_json_bounded(body, j); !err.empty() || !j.is_object()) {
    out.error = err.find("deeper") != std::string::npos ? "response " + err
                                                        : "response is not a JSON object: " + excerpt(body, secret);
    return;
  }
  if (const auto u = j.find("usage"); u != j.end()) {
    out.prompt_tokens = token_count(*u, "prompt_tokens");
    out.completion_tokens = token_count(*u, "completion_tokens");
  }
  const json* content = nullptr;
  if (const auto ch = j.find("choices");
      ch != j.end() && ch->is_array() && !ch->empty() && (*ch)[0].is_object())
    if (const auto m = (*ch)[0].find("message"); m != (*ch)[0].end() && m->is_object())
      if (const auto c = m->find("content"); c != m->end() && c->is_string()) content = &*c;
  if (!content) {
    const auto e = j.find("error");
    out.error = e != j.end() && e->is_object() && e->contains("message") && (*e)["message"].is_string()
                    ? "server error: " + excerpt((*e)["message"].get<std::string>(), secret)
                    : "response has no choices[0].message.content: " + excerpt(body, secret);
    return;
  }
  // The key never travels further than the transport: a server echoing it into the content gets it redacted
  // before the text reaches the parser, the validator's messages or any trace.
  out.text = untrusted::redact(content->get<std::string>(), secret);
  if (const auto f = (*j.find("choices"))[0].find("finish_reason"); f != (*j.find("choices"))[0].end() && f->is_string())
    out.finish_reason = excerpt(f->get<std::string>(), secret);
  out.ok = true;
}

OpenAiCompatibleClient::OpenAiCompatibleClient(const LlmSettings& s)
    : OpenAiCompatibleClient(s.endpoint, s.model, s.api_key, s.timeout_s, s.max_retries, s.backoff_s) {
  set_max_connections(s.max_connections);
  key_env_ = s.key_env;
}

void OpenAiCompatibleClient::set_max_connections(int n) { http_module().limit(std::max(1, n)); }

AsyncRequestsScope::AsyncRequestsScope() { ++g_async_scopes; }
AsyncRequestsScope::~AsyncRequestsScope() { --g_async_scopes; }

NoSuspendScope::NoSuspendScope() { ++t_no_suspend; }
NoSuspendScope::~NoSuspendScope() { --t_no_suspend; }

Completion parse_chat_completion_body(const std::string& body, const std::string& secret) {
  Completion out;
  read_success_body(body, secret, out);
  return out;
}

LlmSettings resolve_llm_settings(const LlmConfig& cfg, std::string_view model_override,
                                 std::string_view who) {
  LlmSettings s;
  s.endpoint = env_or("ADVPLAN_LLM_ENDPOINT", cfg.endpoint);
  if (s.endpoint.empty())
    throw PolicyError(
        fmt::format("{}: no endpoint: set llm.endpoint in the config or ADVPLAN_LLM_ENDPOINT", who));
  if (!parse_endpoint(s.endpoint))
    throw PolicyError(fmt::format("{}: endpoint '{}' is not an http:// or https:// base URL without query",
                                  who, s.endpoint));
  s.model = model_override.empty() ? env_or("ADVPLAN_LLM_MODEL", cfg.model) : std::string(model_override);
  s.api_key = cfg.api_key_env.empty() ? "" : env_or(cfg.api_key_env.c_str(), "");
  s.key_env = cfg.api_key_env;
  s.timeout_s = cfg.timeout_s;
  s.max_retries = cfg.max_retries;
  s.backoff_s = cfg.backoff_s;
  s.max_repairs = cfg.max_repairs;
  s.max_connections = cfg.max_connections;
  return s;
}

OpenAiCompatibleClient::OpenAiCompatibleClient(std::string endpoint, std::string model, std::string api_key,
                                               double timeout_s, int max_retries, double backoff_s)
    : model_(std::move(model)),
      api_key_(std::move(api_key)),
      timeout_s_(timeout_s),
      max_retries_(max_retries),
      backoff_s_(backoff_s) {
  const auto url = parse_endpoint(endpoint);
  if (!url)
    throw PolicyError(
        fmt::format("LLM endpoint '{}' is not an http:// or https:// base URL without query", endpoint));
  if (!(timeout_s > 0))
    throw PolicyError(
        fmt::format("llm.timeout_s must be greater than 0, while a value of {} was given", timeout_s));
  if (max_retries < 0)
    throw PolicyError(
        fmt::format("llm.max_retries must be at least 0, while a value of {} was given", max_retries));
  if (!(backoff_s >= 0))
    throw PolicyError(
        fmt::format("llm.backoff_s must be at least 0, while a value of {} was given", backoff_s));
  origin_ = url->origin;
  path_ = url->path;
  // The HTTP module is loaded here, so that a missing libadvplan_http.so fails before any work, as a policy error,
  // rather than in the middle of a run.
  try {
    (void)http_module();
  } catch (const std::exception& e) {
    throw PolicyError(fmt::format("LLM endpoint {}: {}", endpoint, e.what()));
  }
}

namespace {

/// One POST (a total deadline, a cap on the body, no compressed body), as the client's messages.
struct Attempt {
  std::optional<int> status;
  std::string body;
  std::string error;        ///< set: the attempt failed (transport, deadline, size or encoding)
  bool retryable = false;   ///< transport failures and deadlines are retried
  std::optional<double> retry_after;
};

Attempt post_once(const http::Post& post, const std::string& secret) {
  using Kind = http::Reply::Kind;
  http::Reply r;
  send(post, r);
  Attempt a;
  switch (r.kind) {
    case Kind::deadline:
      a.error = fmt::format("timeout: no complete response from {} within {} s", post.origin, post.timeout_s);
      a.retryable = true;
      break;
    case Kind::compressed:
      a.error = fmt::format("the server sent a compressed body (Content-Encoding: {}) that was not asked for",
                            untrusted::excerpt(untrusted::redact(r.encoding, secret), 40));
      break;
    case Kind::too_big:
      a.error = fmt::format("response body exceeds {} bytes ({} bytes)", post.max_body, untrusted::excerpt(r.size, 40));
      break;
    case Kind::transport:
      a.error = fmt::format("{} ({})", r.transport_error, post.origin);
      a.retryable = true;
      break;
    case Kind::response:
      a.status = r.status;
      a.body = std::move(r.body);
      if (retryable_status(r.status)) {
        a.retryable = true;
        if (r.retry_after) a.retry_after = std::min(*r.retry_after, kRetryAfterCap);
      }
      break;
  }
  return a;
}

}  // namespace

namespace {
/// The chat-completions `response_format` of a structured request (docs/LLM.md "Structured output"), or nullopt.
std::optional<json> response_format(const CompletionRequest& req) {
  if (req.structured == StructuredOutput::off) return std::nullopt;
  if (req.structured == StructuredOutput::json_object || req.output_schema.empty())
    return json{{"type", "json_object"}};
  json schema = json::parse(req.output_schema, nullptr, false);
  if (schema.is_discarded()) return json{{"type", "json_object"}};
  return json{{"type", "json_schema"},
              {"json_schema", {{"name", req.schema_name}, {"strict", req.strict_schema}, {"schema", std::move(schema)}}}};
}
}  // namespace

std::string chat_request_body(const CompletionRequest& req, const std::string& model) {
  json body = {{"messages", json::array()}, {"temperature", req.temperature}};
  if (req.send_seed) body["seed"] = req.seed;
  if (req.top_p) body["top_p"] = *req.top_p;
  if (req.max_tokens) body["max_tokens"] = *req.max_tokens;
  if (!req.stop.empty()) body["stop"] = req.stop;
  if (!req.extra_json.empty()) {
    // Checked when the config was read: an object, whose keys are none of the fields set here.
    const json extra = json::parse(req.extra_json, nullptr, false);
    if (extra.is_object())
      for (const auto& [k, v] : extra.items()) body[k] = v;
  }
  if (auto rf = response_format(req)) body["response_format"] = std::move(*rf);
  if (!model.empty()) body["model"] = model;
  for (const auto& m : req.messages) body["messages"].push_back({{"role", m.role}, {"content", m.content}});
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string OpenAiCompatibleClient::refused_key_message(int status, const std::string& body) const {
  const std::string key = key_env_.empty() ? std::string("no key variable is configured (llm.api_key_env)")
                          : api_key_.empty() ? fmt::format("the key variable {} is not set", key_env_)
                                             : fmt::format("the key in {} was refused", key_env_);
  return fmt::format("the LLM endpoint {}{} answered HTTP {} ({}), so every further request would fail: {}; "
                     "nothing more is asked", origin_, path_, status, body, key);
}

Completion OpenAiCompatibleClient::complete(const CompletionRequest& req) const {
  const std::string payload = chat_request_body(req, model_);
  // Identity encoding only: a compressed body could inflate far past the size cap.
  http::Post post;
  post.origin = origin_;
  post.path = path_;
  post.headers = {{"Accept", "application/json"}, {"Accept-Encoding", "identity"}};
  if (!api_key_.empty()) post.headers.emplace_back("Authorization", "Bearer " + api_key_);
  post.payload = payload;
  post.timeout_s = timeout_s_;
  post.max_body = max_response_bytes_;

  Completion out;
  out.model = model_;
  for (int attempt = 0;; ++attempt) {
    // A client per call (and per attempt): nothing is shared between threads.
    const Attempt a = post_once(post, api_key_);
    std::optional<double> wait;  // set: retryable
    if (!a.status) {
      out.error = untrusted::redact(a.error, api_key_);
      if (a.retryable) wait = backoff_s_ * std::ldexp(1.0, attempt);
    } else if (*a.status >= 200 && *a.status <= 299) {
      out.error.clear();
      read_success_body(a.body, api_key_, out);
      return out;
    } else if (*a.status == 401 || *a.status == 403) {
      throw StopRunError(refused_key_message(*a.status, excerpt(a.body, api_key_)));
    } else {
      out.error = fmt::format("HTTP {}: {}", *a.status, excerpt(a.body, api_key_));
      if (a.retryable) wait = a.retry_after.value_or(backoff_s_ * std::ldexp(1.0, attempt));
    }
    if (!wait) return out;
    if (attempt >= max_retries_) {
      if (max_retries_ > 0) out.error += fmt::format(" (after {} retries)", max_retries_);
      return out;
    }
    ++out.http_retries;
    std::this_thread::sleep_for(std::chrono::duration<double>(*wait));
  }
}

}  // namespace advplan
