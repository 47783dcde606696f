#pragma once
// Strict reading of YAML config and template files: every error is one sentence naming the file and the key
// path ("configs/templates/urban.yaml: key 'assets.BLUE[2].capability': expected a number, got 'high'").
// Unknown keys are errors, so a typo never silently falls back to a default.
#include <yaml-cpp/yaml.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "advplan/core/error.hpp"

namespace advplan::io {

/// Parse YAML text; throws ConfigError naming `file` and the line on a syntax error.
YAML::Node parse_yaml(const std::string& text, const std::string& file);

/// A cursor over one YAML node with the file name and key path used in error messages.
class YamlReader {
 public:
  YamlReader(YAML::Node node, std::string file, std::string path = "");

  const YAML::Node& node() const { return node_; }
  const std::string& path() const { return path_; }
  const std::string& file() const { return file_; }
  bool has(const std::string& key) const;
  /// Child by key; throws ConfigError when missing.
  YamlReader at(const std::string& key) const;
  YamlReader at(std::size_t i) const;
  std::size_t size() const;
  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }
  /// Keys of a map, in file order; throws when not a map.
  std::vector<std::string> keys() const;
  /// Throws ConfigError when the map has a key outside `allowed`, naming the valid keys.
  void require_only(std::initializer_list<const char*> allowed) const;
  void require_map() const;
  void require_sequence() const;

  double as_double() const;
  /// Number in [lo, hi]; the error names the range.
  double as_double_in(double lo, double hi) const;
  long long as_int() const;
  long long as_int_in(long long lo, long long hi) const;
  bool as_bool() const;
  std::string as_string() const;
  std::vector<std::string> as_strings() const;

  double get_double(const std::string& key, double dflt) const { return has(key) ? at(key).as_double() : dflt; }
  long long get_int(const std::string& key, long long dflt) const { return has(key) ? at(key).as_int() : dflt; }
  std::string get_string(const std::string& key, const std::string& dflt) const {
    return has(key) ? at(key).as_string() : dflt;
  }
  bool get_bool(const std::string& key, bool dflt) const { return has(key) ? at(key).as_bool() : dflt; }

  /// "FILE: key 'PATH': MESSAGE"
  [[noreturn]] void fail(const std::string& message) const;

 private:
  YAML::Node node_;
  std::string file_;
  std::string path_;
};

}  // namespace advplan::io
