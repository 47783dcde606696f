#include "advplan/stats/text_table.hpp"

#include <fmt/format.h>

namespace advplan {

std::string interval_cell(const Interval& i) {
  if (i.n == 0) return "n/a";
  return fmt::format("{:.3f} [{:.3f}, {:.3f}]", i.mean, i.lo, i.hi);
}

std::string TextTable::markdown() const {
  std::string out = "**" + caption + "**\n\n|";
  for (const auto& h : header) out += " " + h + " |";
  out += "\n|";
  for (std::size_t i = 0; i < header.size(); ++i) out += i == 0 ? "---|" : "---:|";
  out += "\n";
  for (const auto& r : rows) {
    out += "|";
    for (const auto& c : r) out += " " + c + " |";
    out += "\n";
  }
  return out;
}

namespace {
std::string tex_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '_': out += "\\_"; break;
      case '%': out += "\\%"; break;
      case '&': out += "\\&"; break;
      case '#': out += "\\#"; break;
      case '$': out += "\\$"; break;
      case '{': out += "\\{"; break;
      case '}': out += "\\}"; break;
      case '~': out += "\\textasciitilde{}"; break;
      case '^': out += "\\textasciicircum{}"; break;
      case '\\': out += "\\textbackslash{}"; break;
      default: out += c;
    }
  }
  return out;
}
}  // namespace

std::string TextTable::latex() const {
  std::string cols = "l";
  for (std::size_t i = 1; i < header.size(); ++i) cols += "r";
  std::string out = fmt::format("% {}\n\\begin{{table}}[t]\n\\centering\n\\caption{{{}}}\n\\begin{{tabular}}{{{}}}\n\\toprule\n",
                                name, tex_escape(caption), cols);
  for (std::size_t i = 0; i < header.size(); ++i) out += (i ? " & " : "") + tex_escape(header[i]);
  out += " \\\\\n\\midrule\n";
  for (const auto& r : rows) {
    for (std::size_t i = 0; i < r.size(); ++i) out += (i ? " & " : "") + tex_escape(r[i]);
    out += " \\\\\n";
  }
  out += "\\bottomrule\n\\end{tabular}\n\\end{table}\n";
  return out;
}

}  // namespace advplan
