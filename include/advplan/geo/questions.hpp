#pragma once
// Tiered map questions with exact reference answers (docs/GEO.md "Questions"): three tiers (single-hop,
// multi-hop over one source, multi-hop across map and order) and seven categories (1 where, 2 size, 3 relations,
// 4 optimal paths, 5 patterns, 6 predictions, 7 unsolvable). Reference answers are computed by the tools.
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "advplan/geo/map.hpp"

namespace advplan::geo {

struct EvidenceCall {
  std::string tool;
  std::string args;  ///< JSON object text
};

struct Question {
  std::string id;        ///< "<scenario>/<kind>"
  std::string scenario;
  std::string kind;      ///< sector, area, distance, nearest_place, line_of_sight, nearest_threat, places_in_threats, route_length,
                         ///< order_reach, first_to_reach, deadline
  int tier = 1;
  std::vector<int> categories;
  std::string format;    ///< numeric, text, boolean, choice
  std::string question;
  std::string answer;    ///< "unsolvable" for an unsolvable question
  double tolerance = 0;  ///< absolute, numeric answers
  bool unsolvable = false;
  /// The closed set of answers of a closed question (docs/GEO.md "Questions"): the sectors, yes/no, the zone ids,
  /// the place names, the asset ids and `unsolvable`; empty for numeric questions (and for old files without it).
  /// Strict grading counts how many of them an answer names.
  std::vector<std::string> options;
  std::map<std::string, std::string> params;  ///< the features the question names (asset, place, zone, ...)
  std::vector<EvidenceCall> evidence;          ///< the tool calls that computed the answer
};

/// The most options a question read from a file may have, and the longest one (they bound strict grading's work).
inline constexpr std::size_t kMaxOptions = 256;
inline constexpr std::size_t kMaxOptionBytes = 256;

std::vector<Question> generate_questions(const GeoMap& m);
/// One JSON line (no newline).
std::string question_to_json(const Question& q);
/// Parses a line written by question_to_json; throws ConfigError naming `where` and the field.
Question question_from_json(const std::string& line, const std::string& where);

/// The numeric tolerance of a reference value: max(0.01, 1% of |value|).
double numeric_tolerance(double value);

}  // namespace advplan::geo
