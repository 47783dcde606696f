#pragma once
// Provider batch APIs (docs/LLM.md "Batch"): the input file of a wave of requests, its submission, its status, and
// its results, in each provider's own format. OpenAI: a JSONL file of {custom_id, method, url, body} uploaded to
// /v1/files (purpose batch) and run by /v1/batches; results {custom_id, response: {status_code, body}, error}.
// Anthropic: {requests: [{custom_id, params}]} posted to /v1/messages/batches; results {custom_id, result: {type,
// message | error}}. custom_id is the completion cache's key, so an answer lands where the run will look for it.
#include <cstddef>
#include <string>
#include <vector>

#include "advplan/llm/providers.hpp"
#include "advplan/llm/request.hpp"
#include "advplan/llm/settings.hpp"

namespace advplan::batch {

/// One request of a wave: the completion cache's key, and the provider's request body (with the model).
struct Request {
  std::string custom_id;
  std::string body;
};

/// The wave's input in the provider's batch format: OpenAI, one line per request; Anthropic, one JSON object. The
/// requests in the order given (the runner sorts them by custom_id).
std::string input_text(LlmProvider p, const std::string& path, const std::vector<Request>& requests);

/// One line of a results file: ok with the reply (read as the provider's online reply is), or why not (errored,
/// expired, canceled, a non-200 status).
struct Result {
  std::string custom_id;
  Completion reply;      ///< ok: an answer to store in the cache
  bool settled = false;  ///< not ok, and asking again would fail again (a 4xx other than 408, 409 and 429; Anthropic's
                         ///< invalid_request_error and kin): the call fails, as it would online
};

/// Limits on a results file: its size, and the bytes of one line.
inline constexpr std::size_t kMaxResultsBytes = 512u << 20;
inline constexpr std::size_t kMaxResultLineBytes = 8u << 20;

/// Reads a results file of provider `p` (JSONL, a line per request; blank lines skipped). Throws IoError naming the
/// file, the line and the field when a line is not a result of that provider's format, or the file passes a limit;
/// a custom_id that is not 64 lower-case hex digits is refused too (it could not be a cache key). Keys are redacted
/// from the replies as the online client redacts them.
std::vector<Result> read_results(LlmProvider p, const std::string& text, const std::string& file,
                                 const std::string& secret);

/// What a provider says of a submitted batch.
struct Status {
  std::string id;
  std::string state;         ///< the provider's word: validating, in_progress, finalizing, completed, failed,
                             ///< expired, cancelled (OpenAI); in_progress, canceling, ended (Anthropic)
  bool ended = false;        ///< results can be fetched (or never will be: failed, expired, cancelled)
  std::string results_path;  ///< where the results are (a path on the endpoint's origin); "" until ended
  std::string errors_path;   ///< OpenAI's error file, "" when none
  std::string error;         ///< set: the request failed, one sentence
};

/// Submits a wave: OpenAI uploads `input` as a file (multipart, purpose batch) and creates the batch on
/// /v1/chat/completions with a 24h window; Anthropic posts it to /v1/messages/batches. The batch's status, or error.
Status submit(const LlmSettings& s, const std::string& input);
/// The status of batch `id`.
Status poll(const LlmSettings& s, const std::string& id);
/// The text at `path` on the endpoint's origin (a results or error file), bounded by kMaxResultsBytes; error set
/// when it cannot be fetched.
struct Download {
  std::string text, error;
};
Download download(const LlmSettings& s, const std::string& path);

}  // namespace advplan::batch
