#pragma once
// Appending JSON values to text exactly as nlohmann's dump() writes them, without building its DOM (library
// internal; docs/DECISIONS.md "Speed"). A writer of a fixed shape calls these in nlohmann's key order (its objects
// are std::maps, so the keys come out sorted); what these do not write themselves goes to nlohmann, so the bytes
// and the errors are nlohmann's. Heavy: include from .cpp files only.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace advplan::json_text {

/// A string: plain printable ASCII other than '"' and '\' as is; anything else (escapes, UTF-8 and the
/// invalid-UTF-8 error) by nlohmann itself.
inline void string(std::string& out, std::string_view s) {
  const bool plain = std::all_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7f && c != '"' && c != '\\';
  });
  if (plain) {
    out.push_back('"');
    out.append(s);
    out.push_back('"');
  } else {
    out.append(nlohmann::json(std::string(s)).dump());
  }
}

/// An object key and its colon.
inline void key(std::string& out, std::string_view k) {
  string(out, k);
  out.push_back(':');
}

/// A double: nlohmann's shortest round-trip form, or null when not finite. Through nlohmann's public dump(): its
/// Grisu2 digits are not always the shortest (std::to_chars differs from them for about 1 double in 1,000), so no
/// other formatter gives its bytes (docs/DECISIONS.md "Architecture"). The writers that call this are not on the
/// run's hot path (prompts, judges, `scenarios dump`), so the dump's allocation costs nothing measurable.
inline void number(std::string& out, double x) {
  if (!std::isfinite(x)) {
    out.append("null");
    return;
  }
  out.append(nlohmann::json(x).dump());
}

/// An integer, in decimal.
inline void integer(std::string& out, long long x) { out.append(std::to_string(x)); }

inline void boolean(std::string& out, bool b) { out.append(b ? "true" : "false"); }

/// An array of strings.
inline void strings(std::string& out, const std::vector<std::string>& v) {
  out.push_back('[');
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out.push_back(',');
    string(out, v[i]);
  }
  out.push_back(']');
}

}  // namespace advplan::json_text
