#pragma once
// Files compiled into the binary: the built-in default experiment config and every configs/templates/*.yaml
// (globbed by CMake, so the list of built-in templates is the data, never a hand-written list).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace advplan::io {
/// Path under the source tree, e.g. "configs/experiments/paper.yaml"; nullopt when not embedded.
std::optional<std::string_view> embedded_file(std::string_view path);
/// embedded_file, or an advplan::Error "PATH is not compiled into this binary" (a frozen prompt's loader).
std::string_view embedded_text(std::string_view path);
std::vector<std::string_view> embedded_paths();
/// Ids of the built-in templates (file names under configs/templates/ without ".yaml"), sorted.
std::vector<std::string> embedded_template_ids();
/// Embedded path of the built-in template `id`: "configs/templates/<id>.yaml".
std::string embedded_template_path(std::string_view id);
}  // namespace advplan::io
