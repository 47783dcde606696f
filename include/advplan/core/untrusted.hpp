#pragma once
// Helpers for text that comes from outside the program (policy and server replies, plan files, configs,
// templates, CSV cells): bounded JSON parsing, short one-line excerpts for messages, UTF-8 checks, secret
// redaction and safe path components. The limits are documented in docs/POLICIES.md and docs/LLM.md.
#include <nlohmann/json_fwd.hpp>
#include <cstddef>
#include <string>
#include <string_view>

namespace advplan::untrusted {

/// Deepest nesting of arrays and objects accepted in any JSON read from outside (plans, policy replies, LLM
/// bodies). A plan needs 4 levels; the limit only stops hostile input from exhausting the stack.
inline constexpr std::size_t kMaxJsonDepth = 64;
/// The most actions a plan may hold; the chain and the branch options together may name at most this many
/// steps each. Plans of normal size have tens of actions; the cap keeps scoring and validation bounded.
inline constexpr std::size_t kMaxPlanActions = 1000;
/// The most characters of untrusted text quoted in a message, a trace cell or a re-prompt.
inline constexpr std::size_t kExcerptChars = 160;

/// "" when `text`, read as JSON, nests at most `max_depth` arrays/objects; else the sentence
/// "JSON nests deeper than N levels". A linear scan that never builds a value; sound for any text that the
/// JSON parser would accept.
std::string json_depth_error(std::string_view text, std::size_t max_depth = kMaxJsonDepth);

/// Parses `text` into `out` after the depth check. Returns "" on success, else one sentence (the depth error,
/// or "invalid JSON at byte N"). Never throws; `out` is left discarded on failure.
std::string parse_json_bounded(std::string_view text, nlohmann::json& out, std::size_t max_depth = kMaxJsonDepth);

/// True when the value nests deeper than `max_depth` (iterative: safe on any value).
bool json_deeper_than(const nlohmann::json& j, std::size_t max_depth = kMaxJsonDepth);

/// "" when the plan JSON `j` is within kMaxJsonDepth and kMaxPlanActions (actions, chain steps, branch
/// option steps), else one sentence naming the field. Cheap: looks at array sizes and walks the value once.
std::string plan_json_limit_error(const nlohmann::json& j);

/// A one-line excerpt of untrusted text for a message: control characters become spaces, invalid UTF-8
/// becomes U+FFFD, and at most `max_chars` bytes are kept (cut on a character boundary, "..." appended).
std::string excerpt(std::string_view text, std::size_t max_chars = kExcerptChars);
/// An excerpt of a JSON value's compact text (the value must be depth-bounded).
std::string json_excerpt(const nlohmann::json& j, std::size_t max_chars = kExcerptChars);

/// Byte offset of the first byte that is not part of well-formed UTF-8, or npos when `text` is valid.
std::size_t first_invalid_utf8(std::string_view text);
inline bool valid_utf8(std::string_view text) { return first_invalid_utf8(text) == std::string_view::npos; }
/// `text` with every ill-formed byte replaced by U+FFFD; valid text is returned unchanged.
std::string to_valid_utf8(std::string_view text);

/// `text` with every occurrence of `secret` replaced by "[redacted]" (no-op for an empty secret): literal
/// occurrences, and occurrences spelt with JSON string escapes (\u0073\u006b..., up to three levels deep), which
/// a JSON parser would decode into the clear key. The escaped bytes are replaced as a whole.
std::string redact(std::string text, std::string_view secret);

/// A single directory-name component made from data: keeps [A-Za-z0-9._-], maps anything else to '_',
/// never "", "." or "..", at most 64 bytes. Distinct inputs may map to one name; callers disambiguate.
std::string safe_path_component(std::string_view value);

/// Members of a JSON value read from outside, without the library's type_error: the member `key` of `j` when `j`
/// is an object holding a value of that kind, else `fallback` (nlohmann's value(key, fallback) throws when the
/// member has another type, which a hostile file chooses). For nlohmann::json and nlohmann::ordered_json alike.
template <class Json>
std::string string_member(const Json& j, std::string_view key, std::string fallback = {}) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(std::string(key));
  return it != j.end() && it->is_string() ? it->template get<std::string>() : fallback;
}
/// A non-negative integer member (see string_member).
template <class Json>
std::size_t count_member(const Json& j, std::string_view key, std::size_t fallback = 0) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(std::string(key));
  return it != j.end() && it->is_number_unsigned() ? it->template get<std::size_t>() : fallback;
}
/// A boolean member (see string_member).
template <class Json>
bool bool_member(const Json& j, std::string_view key, bool fallback) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(std::string(key));
  return it != j.end() && it->is_boolean() ? it->template get<bool>() : fallback;
}

}  // namespace advplan::untrusted
