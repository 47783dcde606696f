#pragma once
// Reading untrusted JSON-lines files in MA-Bench's layout (library internal, defined in src/rubric/mabench.cpp):
// the bounds of include/advplan/rubric/mabench.hpp, and errors of one sentence naming the file, line and field.
#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "advplan/rubric/score.hpp"

namespace advplan::rubric::detail {

/// The whole file, refused above kMaxJsonlBytes.
std::string read_bounded(const std::string& path);
/// Calls `fn(record, line number)` for each non-blank line of JSON-lines text; every line must be an object. The
/// text must be valid UTF-8; a line is at most kMaxJsonlLine bytes, at most kMaxJsonlRecords records, each parsed
/// with the bounded JSON parser.
void for_each_record(const std::string& text, const std::string& source,
                     const std::function<void(const nlohmann::json&, std::size_t)>& fn);
/// "SOURCE line N, field 'F'".
std::string where(const std::string& source, std::size_t line, std::string_view field);
/// A required non-empty string of at most kMaxIdBytes (an integer read as text when `number_ok`).
std::string id_field(const nlohmann::json& j, std::string_view field, const std::string& source, std::size_t line,
                     bool number_ok = false);
/// An item's grading fields: integer `tier` 1..3, `severity`, optional `polarity` and `weight` (which must agree with
/// the severity) and the optional texts `question`, `pass_condition`, `fail_condition`.
void read_item_grading(const nlohmann::json& j, const std::string& source, std::size_t line, RubricItem& it);
/// An optional string ("" when absent or null).
std::string text_field(const nlohmann::json& j, std::string_view field, const std::string& source, std::size_t line);

}  // namespace advplan::rubric::detail
