#include "core/plan_text.hpp"

#include <algorithm>
#include <array>
#include <bitset>
#include <map>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "advplan/core/plan_json.hpp"
#include "advplan/core/untrusted.hpp"
#include "core/json_dom.hpp"
#include "advplan/core/vocabulary.hpp"
#include "core/json_text.hpp"
#include "core/plan_fields.hpp"

namespace advplan::detail {

namespace {

using namespace json_dom;

/// An object whose values are all strings, into a sorted map (the last of duplicate keys winning); false otherwise.
bool string_map(element e, std::map<std::string, std::string>& dst) {
  object o;
  if (e.get_object().get(o)) return false;
  for (auto [k, v] : o) {
    std::string_view s;
    if (v.get_string().get(s)) return false;
    dst[std::string(k)] = std::string(s);
  }
  return true;
}

/// Reads a plan's JSON text field by field through the field table (core/plan_fields.hpp). Each read is false on
/// anything the fast path leaves to the DOM path: a wrong type, an unknown name, a value out of range, a count
/// above the limits of untrusted::plan_json_limit_error.
struct Reader {
  std::size_t steps = 0;  ///< branches, their options and the options' steps, against untrusted::kMaxPlanActions

  template <class T>
  bool object(element e, T& dst) {
    const auto& table = plan_fields::table<T>();
    static constexpr auto names = plan_fields::names(plan_fields::table<T>());
    std::array<element, names.size()> f;
    std::bitset<names.size()> has;
    if (!fields(e, names, f, has)) return false;
    bool ok = true;
    std::size_t i = 0;
    plan_fields::for_each(table, [&](const auto& field) {
      if (ok) {
        if (!has[i])
          ok = !field.required;
        else if constexpr (std::decay_t<decltype(field)>::json_text)
          ok = arguments(f[i], dst.*field.member);
        else
          ok = read(f[i], dst.*field.member);
      }
      ++i;
    });
    return ok;
  }

  bool read(element e, std::string& dst) { return get_str(e, dst); }
  bool read(element e, std::map<std::string, std::string>& dst) { return string_map(e, dst); }
  bool read(element e, Category& dst) { return named(e, dst, [](std::string_view s) { return parse_category(s); }); }
  bool read(element e, Side& dst) { return named(e, dst, [](std::string_view s) { return parse_side(s); }); }
  /// A string that `parse` names a value of `T` by.
  template <class T, class Parse>
  static bool named(element e, T& dst, Parse parse) {
    std::string_view s;
    if (e.get_string().get(s)) return false;
    const std::optional<T> v = parse(s);
    if (v) dst = *v;
    return v.has_value();
  }
  /// The one integer field, an action's priority: an integer in 1..5 (nlohmann's is_number_integer: signed or
  /// unsigned, not a double; above INT64_MAX is out of range, a violation).
  bool read(element e, int& dst) {
    if (!e.is_int64()) return false;
    const std::int64_t pr = e.get_int64().value_unsafe();
    if (pr < 1 || pr > 5) return false;
    dst = static_cast<int>(pr);
    return true;
  }
  /// The chain.
  bool read(element e, std::vector<std::string>& dst) {
    return get_str_list(e, dst) && dst.size() <= untrusted::kMaxPlanActions;
  }
  /// A branch's options.
  bool read(element e, std::vector<std::vector<std::string>>& dst) {
    array options;
    if (e.get_array().get(options)) return false;
    for (element o : options) {
      ++steps;
      auto& opt = dst.emplace_back();
      if (!get_str_list(o, opt)) return false;
      steps += opt.size();
    }
    return true;
  }
  /// The actions, branches and tool calls.
  template <class T>
  bool read(element e, std::vector<T>& dst) {
    array items;
    if (e.get_array().get(items)) return false;
    for (element x : items) {
      if constexpr (std::is_same_v<T, Branch>) {
        ++steps;
      } else if (dst.size() == untrusted::kMaxPlanActions) {
        return false;
      }
      if (!object(x, dst.emplace_back())) return false;
    }
    return steps <= untrusted::kMaxPlanActions;
  }
  /// A tool call's arguments: the decoder keeps them as nlohmann's dump() of the object, written here for an
  /// object of strings (its keys sorted, the last of duplicates winning); any other arguments are the DOM path's.
  bool arguments(element e, std::string& dst) {
    std::map<std::string, std::string> args;
    if (!string_map(e, args)) return false;
    std::string out = "{";
    bool first = true;
    for (const auto& [k, v] : args) {
      if (!first) out.push_back(',');
      first = false;
      json_text::key(out, k);
      json_text::string(out, v);
    }
    out.push_back('}');
    dst = std::move(out);
    return true;
  }
};

}  // namespace

std::optional<Plan> plan_from_text_fast(std::string_view text) {
  // A plan nests four levels deep (plan, actions, action, metadata); unknown keys may nest more, and the decoder
  // reports a document deeper than untrusted::kMaxJsonDepth. The parser refuses anything deeper than kDepth (well below
  // that limit), so every text read here is within it; a deeper one is the DOM path's.
  constexpr std::size_t kDepth = 16;
  static_assert(kDepth < untrusted::kMaxJsonDepth);
  thread_local simdjson::dom::parser parser = [] {
    simdjson::dom::parser p;
    if (p.allocate(1 << 16, kDepth)) throw std::bad_alloc();
    return p;
  }();
  element root;
  if (parser.parse(text.data(), text.size(), true).get(root)) return std::nullopt;
  Plan p;
  Reader r;
  if (!r.object(root, p)) return std::nullopt;
  return p;
}

}  // namespace advplan::detail

// ------------------------------------------------------------------------------------------------------------
// Writer: to_json(plan).dump(indent), byte for byte, without the DOM (docs/DECISIONS.md "Speed"). The LLM prompt
// carries the BLUE plan as this text and the offline client answers with a plan as this text (indented), both once
// per call. nlohmann's objects are std::maps, so keys come out sorted: the field table's order (core/plan_fields.hpp) is
// theirs, and the roles and metadata maps are already in key order. Strings that need escaping, and each tool call's
// arguments, go to nlohmann, so those bytes (and errors, such as invalid UTF-8) are nlohmann's.

namespace advplan {

namespace {

struct PlanWriter {
  std::string& out;
  int indent;  ///< as dump(indent): < 0 compact, else spaces per level
  int level = 0;

  void newline() {
    if (indent < 0) return;
    out.push_back('\n');
    out.append(static_cast<std::size_t>(level * indent), ' ');
  }
  /// Before an element of an object or array (the first when `first`) at the current level.
  void item(bool& first) {
    if (!first) out.push_back(',');
    first = false;
    newline();
  }
  void key(std::string_view k, bool& first) {
    item(first);
    json_text::string(out, k);
    out.append(indent < 0 ? ":" : ": ");
  }
  void str(std::string_view s) { json_text::string(out, s); }
  void open(char c) {
    out.push_back(c);
    ++level;
  }
  void close(char c, bool empty) {
    --level;
    if (!empty) newline();
    out.push_back(c);
  }
  void strings(const std::vector<std::string>& v) {
    open('[');
    bool first = true;
    for (const auto& s : v) {
      item(first);
      str(s);
    }
    close(']', v.empty());
  }
  void string_map(const std::map<std::string, std::string>& m) {
    open('{');
    bool first = true;
    for (const auto& [k, v] : m) {
      key(k, first);
      str(v);
    }
    close('}', m.empty());
  }
  /// An object of a plan type, field by field in the table's order (nlohmann's: sorted by name); none is empty.
  template <class T>
  void object(const T& x) {
    open('{');
    bool first = true;
    plan_fields::for_each(plan_fields::table<T>(), [&](const auto& field) {
      key(field.name, first);
      if constexpr (std::decay_t<decltype(field)>::json_text)
        arguments(x.*field.member);
      else
        write(x.*field.member);
    });
    close('}', false);
  }
  void write(const std::string& s) { str(s); }
  void write(Category c) { str(to_string(c)); }
  void write(Side s) { str(to_string(s)); }
  void write(int i) { json_text::integer(out, i); }
  void write(const std::vector<std::string>& v) { strings(v); }
  void write(const std::map<std::string, std::string>& m) { string_map(m); }
  template <class T>
  void write(const std::vector<T>& v) {
    open('[');
    bool first = true;
    for (const T& x : v) {
      item(first);
      if constexpr (std::is_same_v<T, std::vector<std::string>>)
        strings(x);
      else
        object(x);
    }
    close(']', v.empty());
  }
  /// A tool call's arguments, as to_json reads them: the object the text holds, or {} when it is not JSON.
  void arguments(const std::string& text) {
    nlohmann::json args = nlohmann::json::parse(text, nullptr, false);
    if (args.is_discarded()) args = nlohmann::json::object();
    value(args);
  }
  /// Any JSON value nlohmann writes, at the current level: its own dump, each line break followed by this level's
  /// indentation (nlohmann indents a nested value by adding its level's spaces to every line; strings it writes
  /// hold no raw line break).
  void value(const nlohmann::json& j) {
    const std::string text = j.dump(indent);
    if (indent < 0 || level == 0) {
      out.append(text);
      return;
    }
    const std::string pad(static_cast<std::size_t>(level * indent), ' ');
    for (const char c : text) {
      out.push_back(c);
      if (c == '\n') out.append(pad);
    }
  }
};

}  // namespace

std::string plan_to_string(const Plan& p, int indent) {
  std::string out;
  out.reserve(512 + 160 * p.actions.size());
  PlanWriter w{out, indent < 0 ? -1 : indent};
  w.object(p);
  return out;
}

std::string plan_to_string(const Plan& p) { return plan_to_string(p, -1); }

}  // namespace advplan
