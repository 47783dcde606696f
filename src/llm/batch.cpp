#include "advplan/llm/batch.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "transport.hpp"

namespace advplan::batch {
using nlohmann::json;

namespace {

bool is_key(const std::string& s) {
  if (s.size() != 64) return false;
  for (const char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

[[noreturn]] void bad_line(const std::string& file, std::size_t line, const std::string& what) {
  throw IoError(fmt::format("{}: line {}: {}", file, line, what));
}

/// An OpenAI result line: {custom_id, response: {status_code, body}, error}.
Completion openai_reply(const json& j, const std::string& file, std::size_t line, const std::string& secret,
                        bool& settled) {
  Completion c;
  const auto r = j.find("response");
  const std::size_t status = r != j.end() && r->is_object() ? untrusted::count_member(*r, "status_code", 0) : 0;
  settled = status >= 400 && status <= 499 && status != 408 && status != 409 && status != 429;
  if (status == 200) {
    const auto body = r->find("body");
    if (body == r->end() || !body->is_object()) bad_line(file, line, "response.body is not an object");
    read_success_body(body->dump(-1, ' ', false, json::error_handler_t::replace), secret, c);
    return c;
  }
  const auto e = j.find("error");
  const std::string why = e != j.end() && e->is_object() ? untrusted::string_member(*e, "message")
                          : r != j.end() && r->is_object()
                              ? fmt::format("status {}", untrusted::count_member(*r, "status_code", 0))
                              : std::string("no response");
  c.error = "batch request failed: " + llm_detail::excerpt(why, secret);
  c.error_kind = ErrorKind::http;
  return c;
}

/// An Anthropic result line: {custom_id, result: {type: succeeded | errored | canceled | expired, message | error}}.
Completion anthropic_reply(const json& j, const std::string& file, std::size_t line, const std::string& secret,
                           bool& settled) {
  const auto r = j.find("result");
  if (r == j.end() || !r->is_object()) bad_line(file, line, "result is missing or not an object");
  const std::string type = untrusted::string_member(*r, "type");
  if (type == "succeeded") {
    const auto m = r->find("message");
    if (m == r->end() || !m->is_object()) bad_line(file, line, "result.message is not an object");
    return parse_messages_body(m->dump(-1, ' ', false, json::error_handler_t::replace), secret);
  }
  if (type != "errored" && type != "canceled" && type != "expired")
    bad_line(file, line, fmt::format("result.type '{}' is not succeeded, errored, canceled or expired",
                                     untrusted::excerpt(type, 40)));
  Completion c;
  c.error = "batch request " + type;
  if (type == "errored") {
    // {"type": "error", "error": {"type", "message"}}, as the online error body; or the inner object alone.
    static const json none;
    const auto e = r->find("error");
    const json* err = e != r->end() ? &*e : &none;
    if (const auto in = err->is_object() ? err->find("error") : err->end(); err->is_object() && in != err->end() &&
                                                                             in->is_object())
      err = &*in;
    const std::string etype = untrusted::string_member(*err, "type");
    c.error += ": " + llm_detail::excerpt(etype + " " + untrusted::string_member(*err, "message"), secret);
    settled = etype == "invalid_request_error" || etype == "not_found_error" || etype == "permission_error" ||
              etype == "request_too_large";
  }
  c.error_kind = ErrorKind::http;
  return c;
}

}  // namespace

std::string input_text(LlmProvider p, const std::string& path, const std::vector<Request>& requests) {
  if (p == LlmProvider::anthropic) {
    json all = {{"requests", json::array()}};
    for (const Request& r : requests)
      all["requests"].push_back({{"custom_id", r.custom_id}, {"params", json::parse(r.body)}});
    return all.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  }
  std::string out;
  for (const Request& r : requests) {
    nlohmann::ordered_json line;
    line["custom_id"] = r.custom_id;
    line["method"] = "POST";
    line["url"] = path;
    line["body"] = nlohmann::ordered_json::parse(r.body);
    out += line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  }
  return out;
}

std::vector<Result> read_results(LlmProvider p, const std::string& text, const std::string& file,
                                 const std::string& secret) {
  if (text.size() > kMaxResultsBytes)
    throw IoError(fmt::format("{}: larger than {} bytes; a results file of a wave is smaller", file, kMaxResultsBytes));
  std::vector<Result> out;
  std::size_t pos = 0, line = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    const std::size_t end = nl == std::string::npos ? text.size() : nl;
    ++line;
    const std::string_view s(text.data() + pos, end - pos);
    pos = end + 1;
    if (s.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (s.size() > kMaxResultLineBytes) bad_line(file, line, fmt::format("longer than {} bytes", kMaxResultLineBytes));
    json j;
    if (const std::string err = untrusted::parse_json_bounded(std::string(s), j); !err.empty()) bad_line(file, line, err);
    if (!j.is_object()) bad_line(file, line, "not a JSON object");
    Result r;
    r.custom_id = untrusted::string_member(j, "custom_id");
    if (!is_key(r.custom_id)) bad_line(file, line, "custom_id is not an advplan request (64 hex digits)");
    r.reply = p == LlmProvider::anthropic ? anthropic_reply(j, file, line, secret, r.settled)
                                          : openai_reply(j, file, line, secret, r.settled);
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

llm_detail::ErrorReading read_error(int status, const std::string& body, const std::string& secret) {
  llm_detail::ErrorReading e;
  e.message = llm_detail::excerpt(body, secret);
  e.retry = status == 429 || (status >= 500 && status <= 599);
  return e;
}

/// The exchange of a batch request: the provider's headers, a 60 s deadline, 3 retries.
llm_detail::Exchange exchange_of(const LlmSettings& s, const std::string& leaf) {
  const auto url = llm_detail::parse_endpoint(s.endpoint, leaf);
  if (!url) throw PolicyError(fmt::format("LLM endpoint '{}' is not an http:// or https:// base URL", s.endpoint));
  llm_detail::load_http_module(s.endpoint);
  llm_detail::Exchange ex;
  ex.origin = url->origin;
  ex.path = url->path;
  if (s.provider == LlmProvider::anthropic) {
    if (!s.api_key.empty()) ex.headers.emplace_back("x-api-key", s.api_key);
    ex.headers.emplace_back("anthropic-version", s.anthropic_version);
  } else if (!s.api_key.empty()) {
    ex.headers.emplace_back("Authorization", "Bearer " + s.api_key);
  }
  ex.secret = s.api_key;
  ex.key_env = s.key_env;
  ex.timeout_s = std::max(60.0, s.timeout_s);
  ex.max_retries = 3;
  ex.backoff_s = std::max(0.01, s.backoff_s);
  ex.max_body = kMaxResultsBytes;
  ex.read_error = &read_error;
  return ex;
}

/// The path of `url` when it is on the endpoint's origin ("" otherwise: the key is never sent elsewhere); a path as it is.
std::string path_on_origin(const std::string& url, const std::string& origin) {
  if (!url.empty() && url.front() == '/') return url;
  if (url.rfind(origin + "/", 0) == 0) return url.substr(origin.size());
  return "";
}

Status status_of(const LlmSettings& s, const llm_detail::Fetched& f, const std::string& origin) {
  Status st;
  if (!f.error.empty()) {
    st.error = f.error;
    return st;
  }
  json j;
  if (const std::string err = untrusted::parse_json_bounded(f.body, j); !err.empty() || !j.is_object()) {
    st.error = "the batch reply is not a JSON object: " + llm_detail::excerpt(f.body, s.api_key);
    return st;
  }
  st.id = untrusted::excerpt(untrusted::string_member(j, "id"), 120);
  if (s.provider == LlmProvider::anthropic) {
    st.state = untrusted::excerpt(untrusted::string_member(j, "processing_status"), 40);
    st.ended = st.state == "ended";
    const std::string url = untrusted::string_member(j, "results_url");
    st.results_path = path_on_origin(url, origin);
    if (st.ended && st.results_path.empty())
      st.error = fmt::format("batch {}: results_url '{}' is not on the endpoint's origin {}; it is not fetched (the key "
                             "would go with the request)", st.id, untrusted::excerpt(url, 120), origin);
    return st;
  }
  st.state = untrusted::excerpt(untrusted::string_member(j, "status"), 40);
  st.ended = st.state == "completed" || st.state == "failed" || st.state == "expired" || st.state == "cancelled";
  const std::string out = untrusted::string_member(j, "output_file_id"), err = untrusted::string_member(j, "error_file_id");
  const auto files = llm_detail::parse_endpoint(s.endpoint, "files/");
  if (!out.empty() && files) st.results_path = files->path + untrusted::excerpt(out, 120) + "/content";
  if (!err.empty() && files) st.errors_path = files->path + untrusted::excerpt(err, 120) + "/content";
  return st;
}

}  // namespace

Status submit(const LlmSettings& s, const std::string& input) {
  // A submission is not retried: a timeout after the provider accepted it would create (and bill) a second batch.
  if (s.provider == LlmProvider::anthropic) {
    llm_detail::Exchange ex = exchange_of(s, "messages/batches");
    ex.max_retries = 0;
    return status_of(s, llm_detail::fetch(ex, ex.path, input, false), ex.origin);
  }
  llm_detail::Exchange files = exchange_of(s, "files");
  files.max_retries = 0;
  const std::string boundary = "advplan-batch-boundary-7c1f3e";
  const std::string form = "--" + boundary + "\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n--" +
                           boundary +
                           "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"wave.jsonl\"\r\n"
                           "Content-Type: application/jsonl\r\n\r\n" +
                           input + "\r\n--" + boundary + "--\r\n";
  const llm_detail::Fetched up =
      llm_detail::fetch(files, files.path, form, false, "multipart/form-data; boundary=" + boundary);
  Status st;
  json j;
  if (!up.error.empty() || !untrusted::parse_json_bounded(up.body, j).empty() ||
      untrusted::string_member(j, "id").empty()) {
    st.error = up.error.empty() ? "the file upload gave no file id" : "the file upload failed: " + up.error;
    return st;
  }
  llm_detail::Exchange batches = exchange_of(s, "batches");
  batches.max_retries = 0;
  const auto chat = llm_detail::parse_endpoint(s.endpoint, "chat/completions");
  const json create = {{"input_file_id", untrusted::string_member(j, "id")},
                       {"endpoint", chat ? chat->path : std::string("/v1/chat/completions")},
                       {"completion_window", "24h"}};
  return status_of(s, llm_detail::fetch(batches, batches.path, create.dump(), false), batches.origin);
}

Status poll(const LlmSettings& s, const std::string& id) {
  const llm_detail::Exchange ex =
      exchange_of(s, s.provider == LlmProvider::anthropic ? "messages/batches/" + id : "batches/" + id);
  return status_of(s, llm_detail::fetch(ex, ex.path, "", true), ex.origin);
}

Download download(const LlmSettings& s, const std::string& path) {
  const llm_detail::Exchange ex = exchange_of(s, "");
  const llm_detail::Fetched f = llm_detail::fetch(ex, path, "", true);
  return Download{f.body, f.error};
}

}  // namespace advplan::batch
