#include "core/plan_text.hpp"

#include <algorithm>
#include <array>
#include <bitset>
#include <map>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "advplan/core/plan_json.hpp"
#include "advplan/core/untrusted.hpp"
#include "core/json_dom.hpp"
#include "advplan/core/vocabulary.hpp"
#include "core/json_text.hpp"

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

bool action(element e, Action& a) {
  static constexpr std::array<std::string_view, 7> names{"id",       "asset",    "verb",    "target",
                                                         "category", "priority", "metadata"};
  std::array<element, 7> f;
  std::bitset<7> has;
  if (!fields(e, names, f, has)) return false;
  if (!has[0] || !has[1] || !has[2] || !has[4] || !has[5]) return false;
  if (!get_str(f[0], a.id) || !get_str(f[1], a.asset) || !get_str(f[2], a.verb)) return false;
  if (has[3] && !get_str(f[3], a.target)) return false;
  std::string_view cat;
  if (f[4].get_string().get(cat)) return false;
  const auto c = parse_category(cat);
  if (!c) return false;
  a.category = *c;
  // An integer in 1..5 (nlohmann's is_number_integer: signed or unsigned, not a double).
  std::int64_t pr = 0;
  if (f[5].is_int64()) {
    pr = f[5].get_int64().value_unsafe();
  } else if (f[5].is_uint64()) {
    return false;  // above INT64_MAX: out of range, a violation
  } else {
    return false;
  }
  if (pr < 1 || pr > 5) return false;
  a.priority = static_cast<int>(pr);
  // Metadata values that are not strings are written back as JSON text by the decoder: the DOM path's.
  if (has[6] && !string_map(f[6], a.metadata)) return false;
  return true;
}

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
  enum { kId, kSide, kObjective, kDomain, kRoles, kActions, kChain, kBranches, kTools, kTop };
  static constexpr std::array<std::string_view, kTop> top{"plan_id", "side",  "objective", "domain",    "roles",
                                                          "actions", "chain", "branches",  "tool_calls"};
  std::array<element, kTop> f;
  std::bitset<kTop> has;
  if (!fields(root, top, f, has)) return std::nullopt;
  if (!has[kId] || !has[kSide] || !has[kObjective] || !has[kActions] || !has[kChain]) return std::nullopt;
  Plan p;
  if (!get_str(f[kId], p.plan_id) || !get_str(f[kObjective], p.objective)) return std::nullopt;
  {
    std::string_view side;
    if (f[kSide].get_string().get(side)) return std::nullopt;
    const auto s = parse_side(side);
    if (!s) return std::nullopt;
    p.side = *s;
  }
  if (has[kDomain] && !get_str(f[kDomain], p.domain)) return std::nullopt;
  if (has[kRoles] && !string_map(f[kRoles], p.roles)) return std::nullopt;
  // The limits of untrusted::plan_json_limit_error: an action, chain, branch or tool-call count above them is the DOM
  // path's (a violation).
  std::size_t steps = 0;
  {
    array actions;
    if (f[kActions].get_array().get(actions)) return std::nullopt;
    for (element a : actions) {
      if (p.actions.size() == untrusted::kMaxPlanActions) return std::nullopt;
      if (!action(a, p.actions.emplace_back())) return std::nullopt;
    }
  }
  if (!get_str_list(f[kChain], p.chain) || p.chain.size() > untrusted::kMaxPlanActions) return std::nullopt;
  if (has[kBranches]) {
    array branches;
    if (f[kBranches].get_array().get(branches)) return std::nullopt;
    static constexpr std::array<std::string_view, 3> names{"at", "condition", "options"};
    for (element b : branches) {
      ++steps;
      std::array<element, 3> bf;
      std::bitset<3> bh;
      if (!fields(b, names, bf, bh) || !bh[0] || !bh[2]) return std::nullopt;
      Branch& br = p.branches.emplace_back();
      if (!get_str(bf[0], br.at)) return std::nullopt;
      if (bh[1] && !get_str(bf[1], br.condition)) return std::nullopt;
      array options;
      if (bf[2].get_array().get(options)) return std::nullopt;
      for (element o : options) {
        ++steps;
        auto& opt = br.options.emplace_back();
        if (!get_str_list(o, opt)) return std::nullopt;
        steps += opt.size();
      }
    }
    if (steps > untrusted::kMaxPlanActions) return std::nullopt;
  }
  if (has[kTools]) {
    array tools;
    if (f[kTools].get_array().get(tools)) return std::nullopt;
    static constexpr std::array<std::string_view, 2> names{"name", "arguments"};
    for (element t : tools) {
      if (p.tool_calls.size() == untrusted::kMaxPlanActions) return std::nullopt;
      std::array<element, 2> tf;
      std::bitset<2> th;
      if (!fields(t, names, tf, th) || !th[0]) return std::nullopt;
      ToolCall& tc = p.tool_calls.emplace_back();
      if (!get_str(tf[0], tc.name)) return std::nullopt;
      if (th[1]) {
        // The decoder keeps the arguments as nlohmann's dump() of the object: written here for an object of
        // strings (its keys sorted, the last of duplicates winning); any other arguments are the DOM path's.
        std::map<std::string, std::string> args;
        if (!string_map(tf[1], args)) return std::nullopt;
        std::string out = "{";
        bool first = true;
        for (const auto& [k, v] : args) {
          if (!first) out.push_back(',');
          first = false;
          json_text::key(out, k);
          json_text::string(out, v);
        }
        out.push_back('}');
        tc.arguments_json = std::move(out);
      }
    }
  }
  return p;
}

}  // namespace advplan::detail

// ------------------------------------------------------------------------------------------------------------
// Writer: to_json(plan).dump(indent), byte for byte, without the DOM (docs/DECISIONS.md "Speed"). The LLM prompt
// carries the BLUE plan as this text and the offline client answers with a plan as this text (indented), both once
// per call. nlohmann's objects are std::maps, so keys come out sorted: the fixed key orders below are those, and
// the roles and metadata maps are already in key order. Strings that need escaping, and each tool call's
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
  bool top = true;
  w.open('{');
  w.key("actions", top);
  w.open('[');
  bool first_action = true;
  for (const Action& a : p.actions) {
    w.item(first_action);
    w.open('{');
    bool f = true;
    w.key("asset", f);
    w.str(a.asset);
    w.key("category", f);
    w.str(to_string(a.category));
    w.key("id", f);
    w.str(a.id);
    w.key("metadata", f);
    w.string_map(a.metadata);
    w.key("priority", f);
    json_text::integer(out, a.priority);
    w.key("target", f);
    w.str(a.target);
    w.key("verb", f);
    w.str(a.verb);
    w.close('}', false);
  }
  w.close(']', p.actions.empty());
  w.key("branches", top);
  w.open('[');
  bool first_branch = true;
  for (const Branch& b : p.branches) {
    w.item(first_branch);
    w.open('{');
    bool f = true;
    w.key("at", f);
    w.str(b.at);
    w.key("condition", f);
    w.str(b.condition);
    w.key("options", f);
    w.open('[');
    bool first_option = true;
    for (const auto& o : b.options) {
      w.item(first_option);
      w.strings(o);
    }
    w.close(']', b.options.empty());
    w.close('}', false);
  }
  w.close(']', p.branches.empty());
  w.key("chain", top);
  w.strings(p.chain);
  w.key("domain", top);
  w.str(p.domain);
  w.key("objective", top);
  w.str(p.objective);
  w.key("plan_id", top);
  w.str(p.plan_id);
  w.key("roles", top);
  w.string_map(p.roles);
  w.key("side", top);
  w.str(to_string(p.side));
  w.key("tool_calls", top);
  w.open('[');
  bool first_tool = true;
  for (const ToolCall& t : p.tool_calls) {
    w.item(first_tool);
    w.open('{');
    bool f = true;
    w.key("arguments", f);
    nlohmann::json args = nlohmann::json::parse(t.arguments_json, nullptr, false);  // as to_json reads them
    if (args.is_discarded()) args = nlohmann::json::object();
    w.value(args);
    w.key("name", f);
    w.str(t.name);
    w.close('}', false);
  }
  w.close(']', p.tool_calls.empty());
  w.close('}', false);
  return out;
}

std::string plan_to_string(const Plan& p) { return plan_to_string(p, -1); }

}  // namespace advplan
