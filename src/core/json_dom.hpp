#pragma once
// Helpers of the simdjson readers (src/core/scenario_text.cpp, src/core/plan_text.cpp; library internal). Each
// object is walked field by field in document order and assigned as it comes, so the last of duplicate keys wins,
// as in nlohmann's map. Heavy (simdjson.h): include from those .cpp files only.
#include <simdjson.h>

#include <array>
#include <bitset>
#include <string>
#include <string_view>
#include <vector>

namespace advplan::detail::json_dom {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

/// A string into `dst`; false for any other type.
inline bool get_str(element e, std::string& dst) {
  std::string_view v;
  if (e.get_string().get(v)) return false;
  dst.assign(v);
  return true;
}

/// An array of strings into `dst` (cleared first); false for anything else.
inline bool get_str_list(element e, std::vector<std::string>& dst) {
  array a;
  if (e.get_array().get(a)) return false;
  dst.clear();
  for (element x : a) {
    std::string_view v;
    if (x.get_string().get(v)) return false;
    dst.emplace_back(v);
  }
  return true;
}

/// An object's fields by name (the last of duplicates winning), `seen` marking those present; false on a
/// non-object.
template <std::size_t N>
bool fields(element e, const std::array<std::string_view, N>& names, std::array<element, N>& out,
            std::bitset<N>& seen) {
  object o;
  if (e.get_object().get(o)) return false;
  for (auto [k, v] : o)
    for (std::size_t i = 0; i < N; ++i)
      if (k == names[i]) {
        out[i] = v;
        seen.set(i);
        break;
      }
  return true;
}

}  // namespace advplan::detail::json_dom
