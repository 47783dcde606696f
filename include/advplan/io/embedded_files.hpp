#pragma once
// Files compiled into the binary: the built-in default experiment config and the five templates.
#include <optional>
#include <string_view>
#include <vector>

namespace advplan::io {
/// Path under the source tree, e.g. "configs/experiments/paper.yaml"; nullopt when not embedded.
std::optional<std::string_view> embedded_file(std::string_view path);
std::vector<std::string_view> embedded_paths();
}  // namespace advplan::io
