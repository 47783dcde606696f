#include "advplan/core/untrusted.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <utility>
#include <vector>

namespace advplan::untrusted {

std::string json_depth_error(std::string_view text, std::size_t max_depth) {
  std::size_t depth = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return fmt::format("JSON nests deeper than {} levels", max_depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return "";
}

std::string parse_json_bounded(std::string_view text, nlohmann::json& out, std::size_t max_depth) {
  out = nlohmann::json(nlohmann::json::value_t::discarded);
  if (auto e = json_depth_error(text, max_depth); !e.empty()) return e;
  try {
    out = nlohmann::json::parse(text.begin(), text.end());
    return "";
  } catch (const nlohmann::json::parse_error& e) {
    out = nlohmann::json(nlohmann::json::value_t::discarded);
    return fmt::format("invalid JSON at byte {}", e.byte);
  } catch (const nlohmann::json::exception& e) {
    // e.g. out_of_range 406 for 1e400: "number overflow parsing '1e400'", without the library's tag.
    out = nlohmann::json(nlohmann::json::value_t::discarded);
    std::string m = e.what();
    if (const auto p = m.find("] "); m.starts_with("[json.exception") && p != std::string::npos) m.erase(0, p + 2);
    return "invalid JSON: " + excerpt(m, 80);
  }
}

bool json_deeper_than(const nlohmann::json& j, std::size_t max_depth) {
  std::vector<std::pair<const nlohmann::json*, std::size_t>> stack{{&j, 0}};
  while (!stack.empty()) {
    const auto [v, d] = stack.back();
    stack.pop_back();
    if (!v->is_structured()) continue;
    if (d + 1 > max_depth) return true;
    for (const auto& child : *v) stack.emplace_back(&child, d + 1);
  }
  return false;
}

std::string plan_json_limit_error(const nlohmann::json& j) {
  if (json_deeper_than(j)) return fmt::format("the plan nests deeper than {} levels", kMaxJsonDepth);
  if (!j.is_object()) return "";
  const auto too_many = [](const char* field, std::size_t n) {
    return fmt::format("{}: the plan has {} {}; at most {} are accepted", field, n,
                       std::string(field) == "actions" ? "actions" : "steps", kMaxPlanActions);
  };
  if (const auto a = j.find("actions"); a != j.end() && a->is_array() && a->size() > kMaxPlanActions)
    return too_many("actions", a->size());
  if (const auto c = j.find("chain"); c != j.end() && c->is_array() && c->size() > kMaxPlanActions)
    return too_many("chain", c->size());
  if (const auto b = j.find("branches"); b != j.end() && b->is_array()) {
    std::size_t steps = b->size();
    for (const auto& br : *b) {
      if (!br.is_object()) continue;
      if (const auto o = br.find("options"); o != br.end() && o->is_array()) {
        steps += o->size();
        for (const auto& opt : *o) steps += opt.is_array() ? opt.size() : 0;
      }
    }
    if (steps > kMaxPlanActions) return too_many("branches", steps);
  }
  if (const auto t = j.find("tool_calls"); t != j.end() && t->is_array() && t->size() > kMaxPlanActions)
    return too_many("tool_calls", t->size());
  return "";
}

namespace {
/// Length of the well-formed UTF-8 sequence starting at text[i], or 0 when it is ill-formed.
std::size_t utf8_len(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) n = 3, lo = 0xA0;
  else if (c >= 0xE1 && c <= 0xEC) n = 3;
  else if (c == 0xED) n = 3, hi = 0x9F;
  else if (c >= 0xEE && c <= 0xEF) n = 3;
  else if (c == 0xF0) n = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else if (c == 0xF4) n = 4, hi = 0x8F;
  else return 0;
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  return n;
}
}  // namespace

std::size_t first_invalid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_len(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::string to_valid_utf8(std::string_view text) {
  if (valid_utf8(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_len(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string excerpt(std::string_view text, std::size_t max_chars) {
  std::string out;
  bool cut = false;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t n = utf8_len(text, i);
    std::string_view piece = n == 0 ? std::string_view("\xEF\xBF\xBD") : text.substr(i, n);
    std::string one(piece);
    if (one.size() == 1 && (static_cast<unsigned char>(one[0]) < 0x20 || one[0] == 0x7f)) one = " ";
    if (out.size() + one.size() > max_chars) {
      cut = true;
      break;
    }
    out += one;
    i += n == 0 ? 1 : n;
  }
  if (cut) out += "...";
  return out;
}

std::string json_excerpt(const nlohmann::json& j, std::size_t max_chars) {
  if (json_deeper_than(j)) return "(a value nested too deeply to show)";
  return excerpt(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), max_chars);
}

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// Four hex digits at text[i..i+4), or -1.
long hex4(std::string_view text, std::size_t i) {
  if (i + 4 > text.size()) return -1;
  long v = 0;
  for (std::size_t k = 0; k < 4; ++k) {
    const int d = hex_digit(text[i + k]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

void append_utf8(std::string& out, unsigned long cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

/// One level of JSON string escapes decoded wherever they stand (inside a string literal or not), with the
/// source range of every decoded byte: decoded byte k came from text[begin[k], end[k]).
struct Decoded {
  std::string text;
  std::vector<std::uint32_t> begin, end;  // texts over 4 GiB are not decoded
};

Decoded decode_escapes(std::string_view text) {
  Decoded d;
  d.text.reserve(text.size());
  d.begin.reserve(text.size());
  d.end.reserve(text.size());
  auto emit = [&](const std::string& bytes, std::size_t b, std::size_t e) {
    for (const char c : bytes) {
      d.text += c;
      d.begin.push_back(static_cast<std::uint32_t>(b));
      d.end.push_back(static_cast<std::uint32_t>(e));
    }
  };
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      const char c = text[i + 1];
      const char* simple = nullptr;
      switch (c) {
        case '"': simple = "\""; break;
        case '\\': simple = "\\"; break;
        case '/': simple = "/"; break;
        case 'b': simple = "\b"; break;
        case 'f': simple = "\f"; break;
        case 'n': simple = "\n"; break;
        case 'r': simple = "\r"; break;
        case 't': simple = "\t"; break;
        default: break;
      }
      if (simple) {
        emit(simple, i, i + 2);
        i += 2;
        continue;
      }
      if (c == 'u') {
        long cp = hex4(text, i + 2);
        std::size_t e = i + 6;
        if (cp >= 0xD800 && cp <= 0xDBFF && e + 1 < text.size() && text[e] == '\\' && text[e + 1] == 'u') {
          const long lo = hex4(text, e + 2);
          if (lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            e += 6;
          }
        }
        if (cp >= 0) {
          std::string bytes;
          append_utf8(bytes, static_cast<unsigned long>(cp));
          emit(bytes, i, e);
          i = e;
          continue;
        }
      }
    }
    emit(std::string(1, text[i]), i, i + 1);
    ++i;
  }
  return d;
}

}  // namespace

std::string redact(std::string text, std::string_view secret) {
  if (secret.empty()) return text;
  for (auto p = text.find(secret); p != std::string::npos; p = text.find(secret, p))
    text.replace(p, secret.size(), "[redacted]");
  // Only an escape that can spell a byte of the key needs the decoding pass: \uXXXX, an escaped backslash (a second
  // level), or a short escape (\" \/ \n ...) when the key holds the byte it stands for. A body with none costs a scan
  // (a JSON plan's \" and \n, beside a key of letters and digits, do not).
  const bool short_escapes = secret.find_first_of("\"\\/\b\f\n\r\t") != std::string_view::npos;
  const bool may_hide = text.find("\\u") != std::string::npos || text.find("\\\\") != std::string::npos ||
                        (short_escapes && text.find('\\') != std::string::npos);
  if (!may_hide || text.size() > 0xffffffffu) return text;
  // The secret may also stand JSON-escaped (\u0073\u006b..., or escaped twice or three times), which a parser
  // would decode into clear text: find it in each decoded level and redact the source bytes it came from.
  std::vector<std::pair<std::size_t, std::size_t>> ranges;  // in `text`
  std::string level = text;
  std::vector<std::uint32_t> lb(text.size()), le(text.size());  // level byte -> source range in `text`
  for (std::size_t k = 0; k < text.size(); ++k) {
    lb[k] = static_cast<std::uint32_t>(k);
    le[k] = static_cast<std::uint32_t>(k + 1);
  }
  for (int depth = 0; depth < 3 && level.find('\\') != std::string::npos; ++depth) {
    const Decoded d = decode_escapes(level);
    std::vector<std::uint32_t> nb(d.text.size()), ne(d.text.size());
    for (std::size_t k = 0; k < d.text.size(); ++k) {
      nb[k] = lb[d.begin[k]];
      ne[k] = le[d.end[k] - 1];
    }
    for (auto p = d.text.find(secret); p != std::string::npos; p = d.text.find(secret, p + 1))
      ranges.emplace_back(nb[p], ne[p + secret.size() - 1]);
    level = d.text;
    lb = std::move(nb);
    le = std::move(ne);
  }
  if (ranges.empty()) return text;
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<std::size_t, std::size_t>> merged;
  for (const auto& r : ranges) {
    if (!merged.empty() && r.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, r.second);
    else
      merged.push_back(r);
  }
  for (auto it = merged.rbegin(); it != merged.rend(); ++it)
    text.replace(it->first, it->second - it->first, "[redacted]");
  return text;
}

std::string safe_path_component(std::string_view value) {
  std::string out;
  for (const char c : value) {
    if (out.size() >= 64) break;
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    out += ok ? c : '_';
  }
  if (out.empty() || out.find_first_not_of('.') == std::string::npos) out = "_" + out;
  return out;
}

}  // namespace advplan::untrusted
