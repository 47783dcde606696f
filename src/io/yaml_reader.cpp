#include "advplan/io/yaml_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <set>
#include <vector>

#include "advplan/core/untrusted.hpp"

namespace advplan::io {

namespace {
/// A mapping that names one key twice is refused: yaml-cpp keeps both pairs and a lookup finds the first, so a
/// second `simulator:` block would be ignored without a word. An explicit stack, not recursion: the depth of a
/// hostile file costs memory, not the call stack.
void refuse_duplicate_keys(const YAML::Node& root, const std::string& file) {
  std::vector<YAML::Node> todo{root};
  while (!todo.empty()) {
    const YAML::Node n = todo.back();
    todo.pop_back();
    if (n.IsMap()) {
      std::set<std::string> seen;
      for (const auto& kv : n) {
        if (kv.first.IsScalar() && !seen.insert(kv.first.Scalar()).second)
          throw ConfigError(fmt::format("{}: line {}, column {}: key '{}' appears twice in one mapping (the second "
                                        "would be ignored); keep one",
                                        file, kv.first.Mark().line + 1, kv.first.Mark().column + 1,
                                        untrusted::excerpt(kv.first.Scalar(), 80)));
        todo.push_back(kv.second);
      }
    } else if (n.IsSequence()) {
      for (const auto& c : n) todo.push_back(c);
    }
  }
}
}  // namespace

YAML::Node parse_yaml(const std::string& text, const std::string& file) {
  if (const auto bad = untrusted::first_invalid_utf8(text); bad != std::string::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad), '\n');
    const auto line_start = text.rfind('\n', bad == 0 ? 0 : bad - 1);
    const auto column = bad - (line_start == std::string::npos || bad == 0 ? 0 : line_start + 1) + 1;
    throw ConfigError(fmt::format("{}: line {}, column {}: the file is not UTF-8 text (byte 0x{:02X}); save it as "
                                  "UTF-8",
                                  file, line, bad == 0 ? 1 : column, static_cast<unsigned char>(text[bad])));
  }
  try {
    YAML::Node root = YAML::Load(text);
    refuse_duplicate_keys(root, file);
    return root;
  } catch (const YAML::Exception& e) {
    throw ConfigError(fmt::format("{}: YAML syntax error at line {}, column {}: {}", file, e.mark.line + 1,
                                  e.mark.column + 1, e.msg));
  }
}

YamlReader::YamlReader(YAML::Node node, std::string file, std::string path)
    : node_(std::move(node)), file_(std::move(file)), path_(std::move(path)) {}

void YamlReader::fail(const std::string& message) const {
  if (path_.empty()) throw ConfigError(fmt::format("{}: {}", file_, message));
  throw ConfigError(fmt::format("{}: key '{}': {}", file_, path_, message));
}

bool YamlReader::has(const std::string& key) const { return node_.IsMap() && node_[key].IsDefined(); }

YamlReader YamlReader::at(const std::string& key) const {
  require_map();
  YAML::Node child = node_[key];
  const std::string p = path_.empty() ? key : path_ + "." + key;
  if (!child.IsDefined() || child.IsNull()) throw ConfigError(fmt::format("{}: missing required key '{}'", file_, p));
  return YamlReader(child, file_, p);
}

YamlReader YamlReader::at(std::size_t i) const {
  require_sequence();
  return YamlReader(node_[i], file_, fmt::format("{}[{}]", path_, i));
}

std::size_t YamlReader::size() const { return node_.size(); }

void YamlReader::require_map() const {
  if (!node_.IsMap()) fail("expected a mapping");
}
void YamlReader::require_sequence() const {
  if (!node_.IsSequence()) fail("expected a list");
}

std::vector<std::string> YamlReader::keys() const {
  require_map();
  std::vector<std::string> out;
  for (const auto& kv : node_) {
    if (!kv.first.IsScalar())
      throw ConfigError(fmt::format("{}: line {}: {}a key must be plain text, not a list or a mapping", file_,
                                    kv.first.Mark().line + 1, path_.empty() ? "" : "under '" + path_ + "': "));
    out.push_back(kv.first.Scalar());
  }
  return out;
}

void YamlReader::require_only(std::initializer_list<const char*> allowed) const {
  require_map();
  for (const auto& k : keys()) {
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return k == a; })) {
      std::string valid;
      for (const char* a : allowed) valid += (valid.empty() ? "" : ", ") + std::string(a);
      const std::string p = path_.empty() ? k : path_ + "." + k;
      throw ConfigError(fmt::format("{}: unknown key '{}' (valid keys here: {})", file_, p, valid));
    }
  }
}

std::string YamlReader::as_string() const {
  if (!node_.IsScalar()) fail("expected a text value");
  return node_.Scalar();
}

double YamlReader::as_double() const {
  if (!node_.IsScalar()) fail("expected a number");
  const std::string& s = node_.Scalar();
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || !(v == v))
    fail(fmt::format("expected a number, got '{}'", s));
  return v;
}

double YamlReader::as_double_in(double lo, double hi) const {
  const double v = as_double();
  if (v < lo || v > hi) fail(fmt::format("must be in [{}, {}], while a value of {} was given", lo, hi, v));
  return v;
}

long long YamlReader::as_int() const {
  if (!node_.IsScalar()) fail("expected an integer");
  const std::string& s = node_.Scalar();
  long long v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) fail(fmt::format("expected an integer, got '{}'", s));
  return v;
}

long long YamlReader::as_int_in(long long lo, long long hi) const {
  const long long v = as_int();
  if (v < lo || v > hi) fail(fmt::format("must be in [{}, {}], while a value of {} was given", lo, hi, v));
  return v;
}

bool YamlReader::as_bool() const {
  if (!node_.IsScalar()) fail("expected true or false");
  const std::string& s = node_.Scalar();
  if (s == "true") return true;
  if (s == "false") return false;
  fail(fmt::format("expected true or false, got '{}'", s));
}

std::vector<std::string> YamlReader::as_strings() const {
  require_sequence();
  std::vector<std::string> out;
  for (std::size_t i = 0; i < size(); ++i) out.push_back(at(i).as_string());
  return out;
}

}  // namespace advplan::io
