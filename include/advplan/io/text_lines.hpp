#pragma once
// Splitting text held in memory (JSON lines, a MANIFEST) into its lines: the one splitter of the readers that hold
// the whole file (played plans, the MANIFEST's count in the report, MA-Bench's JSON-lines files).
#include <algorithm>
#include <cstddef>
#include <string_view>

namespace advplan::io {

/// Calls f(line, line number from first_line + 1) for each line of `text`: the bytes up to each '\n' (the newline
/// not included, a '\r' kept), and the bytes after the last newline when there are any. Empty lines are passed too;
/// a text that ends with a newline has no empty line after it.
template <class F>
void for_each_text_line(std::string_view text, F&& f, std::size_t first_line = 0) {
  std::size_t pos = 0, line_no = first_line;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    f(text.substr(pos, end - pos), ++line_no);
    pos = end + 1;
  }
}

}  // namespace advplan::io
