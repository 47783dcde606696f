#pragma once
// The rubric layer's JSON lines, written as nlohmann's dump() writes the same objects (library internal; the
// writer is src/core/json_text.hpp). A test compares each with the nlohmann object it replaces.
#include <string>
#include <string_view>

#include "advplan/rubric/score.hpp"

namespace advplan::rubric::detail {

/// Appends the rubric_items.jsonl line of `item` in case `case_id`, newline included.
void append_item_line(std::string& out, std::string_view case_id, const RubricItem& item);
/// Appends the verdicts.jsonl line of a rule judge's verdict (no failures with evidence, no reason), newline
/// included.
void append_rule_verdict_line(std::string& out, const Verdict& v);

}  // namespace advplan::rubric::detail
