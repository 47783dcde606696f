#pragma once
// The plan's JSON field table (library internal): for each plan type, the name of each field in the JSON text,
// whether a plan must have it, and the member it fills. The three codecs that know a plan's shape read it from
// here: nlohmann's writer (to_json in plan_json.cpp), the hand writer and the simdjson fast reader (plan_text.cpp).
// The nlohmann decoder (plan_from_json) reports violations field by field in its own order and with its own
// messages, so it names the fields itself; tests/policy/hot_path_test.cpp checks every codec against it.
//
// A table lists its fields sorted by name, the order in which nlohmann's objects (std::maps) write them, so a
// writer that walks the table writes nlohmann's bytes; a static_assert below keeps them sorted.
#include <array>
#include <cstddef>
#include <string_view>
#include <tuple>

#include "advplan/core/plan.hpp"

namespace advplan::plan_fields {

/// A field of `T` held in member `M`. `Json`: the member is JSON text, written as the value it holds (a tool
/// call's arguments), not as a string.
template <class T, class M, bool Json = false>
struct Field {
  std::string_view name;
  bool required;
  M T::*member;
  static constexpr bool json_text = Json;
};

template <class T, class M>
constexpr Field<T, M> required(std::string_view name, M T::*member) {
  return {name, true, member};
}
template <class T, class M>
constexpr Field<T, M> optional(std::string_view name, M T::*member) {
  return {name, false, member};
}
template <class T>
constexpr Field<T, std::string, true> optional_json(std::string_view name, std::string T::*member) {
  return {name, false, member};
}

inline constexpr auto kAction =
    std::tuple{required("asset", &Action::asset),         required("category", &Action::category),
               required("id", &Action::id),               optional("metadata", &Action::metadata),
               required("priority", &Action::priority),   optional("target", &Action::target),
               required("verb", &Action::verb)};
inline constexpr auto kBranch = std::tuple{required("at", &Branch::at), optional("condition", &Branch::condition),
                                           required("options", &Branch::options)};
inline constexpr auto kToolCall =
    std::tuple{optional_json("arguments", &ToolCall::arguments_json), required("name", &ToolCall::name)};
inline constexpr auto kPlan =
    std::tuple{required("actions", &Plan::actions),     optional("branches", &Plan::branches),
               required("chain", &Plan::chain),         optional("domain", &Plan::domain),
               required("objective", &Plan::objective), required("plan_id", &Plan::plan_id),
               optional("roles", &Plan::roles),         required("side", &Plan::side),
               optional("tool_calls", &Plan::tool_calls)};

/// The table of a plan type.
template <class T>
constexpr const auto& table();
template <>
constexpr const auto& table<Action>() { return kAction; }
template <>
constexpr const auto& table<Branch>() { return kBranch; }
template <>
constexpr const auto& table<ToolCall>() { return kToolCall; }
template <>
constexpr const auto& table<Plan>() { return kPlan; }

/// Calls f(field) for each field of the table, in order.
template <class Table, class F>
constexpr void for_each(const Table& t, F&& f) {
  std::apply([&](const auto&... field) { (f(field), ...); }, t);
}

/// The fields' names, in order.
template <class Table>
constexpr auto names(const Table& t) {
  return std::apply([](const auto&... field) { return std::array<std::string_view, sizeof...(field)>{field.name...}; },
                    t);
}

template <class Table>
constexpr bool sorted_by_name(const Table& t) {
  const auto n = names(t);
  for (std::size_t i = 1; i < n.size(); ++i)
    if (!(n[i - 1] < n[i])) return false;
  return true;
}
static_assert(sorted_by_name(kAction) && sorted_by_name(kBranch) && sorted_by_name(kToolCall) &&
              sorted_by_name(kPlan));

}  // namespace advplan::plan_fields
