// What a page of `advplan report` and `advplan view` shows of the model calls and verdicts (site.hpp): one place
// for the caps, and the streamed reading of a JSON-lines file, so neither the site nor a served page holds more
// than one line of a trace and the bounded calls it shows.
#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <vector>

#include "advplan/core/error.hpp"
#include "report/site.hpp"

namespace advplan::report::site {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {
/// The length of `s` cut to at most `max` bytes without splitting a UTF-8 character.
std::size_t utf8_cut(const std::string& s, std::size_t max) {
  std::size_t n = std::min(max, s.size());
  while (n > 0 && n < s.size() && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return n;
}
}  // namespace

std::size_t cut_long_strings(json& v) {
  std::size_t kept = 0;
  if (v.is_string()) return v.get_ref<const std::string&>().size();
  if (v.is_array()) {
    for (auto& x : v) kept += cut_long_strings(x);
    return kept;
  }
  if (!v.is_object()) return 0;
  std::size_t cut = 0;
  for (auto& [k, x] : v.items()) {
    kept += k.size();
    if (!x.is_string()) {
      kept += cut_long_strings(x);
      continue;
    }
    std::string& s = x.get_ref<std::string&>();
    if (s.size() > kMaxShownText) {
      const std::size_t n = utf8_cut(s, kMaxShownText);
      cut += s.size() - n;
      s.resize(n);
    }
    kept += s.size();
  }
  if (cut > 0) {
    const std::size_t before = v.contains("cut_bytes") && v["cut_bytes"].is_number_unsigned() ? v["cut_bytes"].get<std::size_t>() : 0;
    v["cut_bytes"] = before + cut;
  }
  return kept;
}

void CallList::add(json call, std::size_t line_bytes) {
  if (left_calls_ == 0) {
    const std::size_t n = cut_long_strings(call);
    const bool fits = shown_.size() < kMaxPageCalls && bytes_ + n <= kMaxPageCallBytes && (!budget_ || n <= *budget_);
    if (fits) {
      bytes_ += n;
      if (budget_) *budget_ -= n;
      shown_.push_back(std::move(call));
      return;
    }
  }
  ++left_calls_;  // once one is left out, so are the ones after it: a page shows the first calls
  left_bytes_ += line_bytes;
}

void CallList::finish(json& page, const std::string& key) {
  page[key] = std::move(shown_);
  shown_ = json::array();
  if (left_calls_ > 0) page[key + "_left_out"] = {{"calls", left_calls_}, {"bytes", left_bytes_}};
}

void for_each_line(const fs::path& path, std::uint64_t begin, std::uint64_t end,
                   const std::function<void(std::string_view, std::size_t)>& f) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(fmt::format("{}: cannot be read", path.string()));
  in.seekg(static_cast<std::streamoff>(begin));
  std::vector<char> buf(1 << 20);
  std::string line;
  std::uint64_t at = begin, line_start = begin;
  std::size_t n = 0;
  while (in && (end == 0 || at < end)) {
    const std::uint64_t want = end == 0 ? buf.size() : std::min<std::uint64_t>(buf.size(), end - at);
    in.read(buf.data(), static_cast<std::streamsize>(want));
    const std::size_t got = static_cast<std::size_t>(in.gcount());
    if (got == 0) break;
    for (std::size_t i = 0; i < got;) {
      const char* nl = static_cast<const char*>(std::memchr(buf.data() + i, '\n', got - i));
      const std::size_t stop = nl ? static_cast<std::size_t>(nl - buf.data()) : got;
      if (line.size() + (stop - i) > kMaxCallLineBytes)
        throw CsvError(fmt::format("{}: the line at byte {} is longer than {} MiB", path.string(), line_start,
                                   kMaxCallLineBytes >> 20));
      line.append(buf.data() + i, stop - i);
      i = stop;
      if (nl) {
        f(line, ++n);
        line.clear();
        line_start = at + ++i;
      }
    }
    at += got;
  }
  if (end != 0 && at < end)
    throw IoError(fmt::format("{}: changed while it was read (cut at byte {})", path.string(), at));
  if (!line.empty()) f(line, ++n);
}

}  // namespace advplan::report::site
