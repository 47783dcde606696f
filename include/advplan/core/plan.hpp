#pragma once
// The plan contract (docs/POLICIES.md "1.5 The plan"), shared by every policy (C++, external process, language model).
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "advplan/core/vocabulary.hpp"

namespace advplan {

/// Equality of short ids and labels ("a12", "b-inf-3", a place name): an inline loop from the back, where such
/// ids differ, instead of a call to memcmp. The hot paths (validation, layout, scoring) compare with it.
inline bool same_id(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = a.size(); i-- > 0;)
    if (a[i] != b[i]) return false;
  return true;
}

struct Action {
  std::string id;
  std::string asset;
  std::string verb;
  Category category = Category::movement;
  std::string target;
  int priority = 3;  ///< 1..5
  std::map<std::string, std::string> metadata;
  bool operator==(const Action&) const = default;
};

/// Mutually exclusive implementation paths at chain step `at`; each option is a sequence of action ids
/// outside the chain.
struct Branch {
  std::string at;
  std::string condition;
  std::vector<std::vector<std::string>> options;
  bool operator==(const Branch&) const = default;
};

struct ToolCall {
  std::string name;
  std::string arguments_json = "{}";  ///< the arguments object, kept as compact JSON text
  bool operator==(const ToolCall&) const = default;
};

struct Plan {
  std::string plan_id;
  Side side = Side::Blue;
  std::string objective;
  std::string domain;
  std::map<std::string, std::string> roles;  ///< asset id -> role label
  std::vector<Action> actions;
  std::vector<std::string> chain;
  std::vector<Branch> branches;
  std::vector<ToolCall> tool_calls;
  bool operator==(const Plan&) const = default;

  /// Index into `actions` of the action with this id, or -1.
  int find_action(std::string_view id) const;
};

}  // namespace advplan
