#include "advplan/io/csv.hpp"
#include "advplan/io/csv_stream.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <fmt/format.h>

#include <charconv>
#include <optional>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "advplan/core/error.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/core/untrusted.hpp"

namespace advplan::io {

namespace {

/// v to 6 decimals when that can be decided from the double product y = v * 10^6 alone: y is within half an ulp
/// of the exact v * 10^6, so when y is more than two ulps away from a half-integer (half an ulp would do), both
/// round to the same integer.
/// Otherwise (near a tie, or |y| >= 2^52) nullopt, and the caller uses the exact conversion.
std::optional<std::string> fmt_real_fast(double v) {
  const double y = v * 1e6;
  if (!(std::abs(y) < 0x1p52)) return std::nullopt;
  const double r = std::nearbyint(y);  // round half to even, the default mode
  const double frac = std::abs(y - r);  // exact: both are below 2^52
  const double ulp = std::nextafter(std::abs(y), INFINITY) - std::abs(y);
  if (!(0.5 - frac > 2 * ulp)) return std::nullopt;
  auto n = static_cast<long long>(std::abs(r));
  if (n == 0) return std::string("0.000000");
  char buf[32];
  char* end = buf + sizeof buf;
  char* p = end;
  for (int d = 0; d < 6; ++d, n /= 10) *--p = static_cast<char>('0' + n % 10);
  *--p = '.';
  do *--p = static_cast<char>('0' + n % 10); while ((n /= 10) > 0);
  if (r < 0) *--p = '-';
  return std::string(p, end);
}

}  // namespace

std::string fmt_real(double v) {
  if (std::isnan(v)) return "";
  if (v == 0) v = 0;  // no "-0.000000"
  if (auto fast = fmt_real_fast(v)) return *fast;
  // std::to_chars with a precision is correctly rounded, as fmt's "{:.6f}" is, so the text is the same (a test
  // compares the two), at a fraction of the cost: a run formats every number of its traces here.
  char buf[400];  // the longest fixed form of a double with 6 decimals is 309 + 1 + 6 characters and a sign
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, 6);
  std::string s = r.ec == std::errc() ? std::string(buf, r.ptr) : fmt::format("{:.6f}", v);
  if (s == "-0.000000") s = "0.000000";
  return s;
}

void CsvTable::add(std::vector<std::string> row) {
  if (row.size() != header_.size())
    throw std::invalid_argument(fmt::format("CsvTable::add: row has {} fields, header has {}", row.size(), header_.size()));
  rows_.push_back(std::move(row));
}

void CsvTable::build_index() {
  index_.clear();
  for (std::size_t i = 0; i < header_.size(); ++i) index_.emplace(header_[i], i);
}

bool CsvTable::has_col(std::string_view name) const { return index_.find(name) != index_.end();
}

std::size_t CsvTable::col(std::string_view name) const {
  if (!has_col(name)) throw CsvError(fmt::format("{}: no column '{}'", source_.empty() ? "CSV" : source_, name));
  return index_.find(name)->second;
}

double CsvTable::real(std::size_t row, std::string_view column) const { return real(row, col(column)); }

double CsvTable::real(std::size_t row, std::size_t column) const {
  const std::string& s = rows_[row][column];
  if (s.empty()) return std::nan("");
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size())
    throw CsvError(fmt::format("{}: line {}: column '{}' is not a number: '{}'", source_, row + 2, header_[column], s));
  return v;
}

namespace {
/// No byte of the cell is non-ASCII, a comma, a quote or a line break. Sixteen bytes at a time (SSE2, every x86-64
/// CPU); the rest one by one.
bool plain_cell(std::string_view raw) {
  std::size_t i = 0;
#if defined(__SSE2__)
  const __m128i comma = _mm_set1_epi8(','), quote = _mm_set1_epi8('"'), lf = _mm_set1_epi8('\n'),
                cr = _mm_set1_epi8('\r');
  for (; i + 16 <= raw.size(); i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(raw.data() + i));
    const __m128i special = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, comma), _mm_cmpeq_epi8(v, quote)),
                                         _mm_or_si128(_mm_cmpeq_epi8(v, lf), _mm_cmpeq_epi8(v, cr)));
    // movemask takes each byte's top bit: set for a special byte (0xff) and for a non-ASCII one.
    if (_mm_movemask_epi8(_mm_or_si128(special, v)) != 0) return false;
  }
#endif
  for (; i < raw.size(); ++i) {
    const char c = raw[i];
    if (static_cast<unsigned char>(c) >= 0x80 || c == ',' || c == '"' || c == '\n' || c == '\r') return false;
  }
  return true;
}

void put_field(std::string& out, std::string_view raw) {
  // Traces are UTF-8: a cell that is not (bytes from a policy or server that slipped past every other check)
  // is written with U+FFFD in place of each ill-formed byte. Valid cells are written as they are.
  // Most cells are plain ASCII needing no quotes (numbers, ids): one scan, then appended as they are.
  if (plain_cell(raw)) {
    out += raw;
    return;
  }
  const std::string f = untrusted::to_valid_utf8(raw);
  if (f.find_first_of(",\"\n\r") == std::string::npos) {
    out += f;
    return;
  }
  out += '"';
  for (char c : f) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}
}  // namespace

void append_csv_row(std::string& out, const std::vector<std::string>& row) {
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (i) out += ',';
    put_field(out, row[i]);
  }
  out += '\n';
}

void append_csv_row(std::string& out, std::initializer_list<std::string_view> row) {
  bool first = true;
  for (const std::string_view cell : row) {
    if (!first) out += ',';
    first = false;
    put_field(out, cell);
  }
  out += '\n';
}

std::string CsvTable::to_string() const {
  std::string out;
  append_csv_row(out, header_);
  for (const auto& r : rows_) append_csv_row(out, r);
  return out;
}

void CsvTable::write(const std::string& path) const { write_file_atomic(path, to_string()); }

CsvTable CsvTable::parse(const std::string& text, const std::string& source, const std::vector<std::string>& expected) {
  CsvTable t;
  t.source_ = source;
  if (text.empty()) throw CsvError(fmt::format("{}: empty file (truncated or never written)", source));
  if (text.back() != '\n') throw CsvError(fmt::format("{}: truncated: the last line has no newline", source));
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, field_started = false;
  std::size_t line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"' && !field_started) {
      quoted = true;
      field_started = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
      field_started = false;
    } else if (c == '\n') {
      row.push_back(std::move(field));
      field.clear();
      field_started = false;
      records.push_back(std::move(row));
      row.clear();
      row.reserve(records.back().size());  // the last row's width: the next row's fields without regrowing
      ++line;
    } else if (c != '\r') {
      // The rest of an unquoted field at once, up to a separator, the end of the line or a '\r' (which is
      // dropped); a '"' after a field's first character is data.
      std::size_t j = i + 1;
      while (j < text.size() && text[j] != ',' && text[j] != '\n' && text[j] != '\r') ++j;
      field.append(text, i, j - i);
      field_started = true;
      i = j - 1;
    }
  }
  if (quoted) throw CsvError(fmt::format("{}: truncated: a quoted field is never closed", source));
  if (records.empty()) throw CsvError(fmt::format("{}: no header line", source));
  t.header_ = std::move(records.front());
  t.build_index();
  if (!expected.empty() && t.header_ != expected) {
    std::string got, want;
    for (const auto& h : t.header_) got += (got.empty() ? "" : ",") + h;
    for (const auto& h : expected) want += (want.empty() ? "" : ",") + h;
    throw CsvError(fmt::format("{}: unexpected columns: expected '{}', found '{}'", source, want, got));
  }
  t.rows_.reserve(records.size() - 1);
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != t.header_.size())
      throw CsvError(fmt::format("{}: line {}: {} fields where the header has {}", source, r + 1, records[r].size(),
                                 t.header_.size()));
    t.rows_.push_back(std::move(records[r]));
  }
  return t;
}

CsvTable CsvTable::read(const std::string& path, const std::vector<std::string>& expected) {
  if (!std::filesystem::exists(path)) throw CsvError(fmt::format("{}: missing", path));
  std::string text;
  try {
    text = read_text_file(path);
  } catch (const IoError& e) {
    throw CsvError(e.what());
  }
  return parse(text, path, expected);
}

void for_each_record(const std::string& path, RecordFormat format, std::size_t max_record_bytes,
                     const std::function<void(std::uint64_t, const std::string&)>& f) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError(fmt::format("{}: cannot be read", path));
  const bool csv = format == RecordFormat::csv;
  std::vector<char> buf(1 << 20);
  std::string rec;
  std::uint64_t offset = 0, begin = 0;
  bool quoted = false;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::size_t got = static_cast<std::size_t>(in.gcount());
    for (std::size_t i = 0; i < got; ++i) {
      const char c = buf[i];
      rec += c;
      ++offset;
      if (csv && c == '"') quoted = !quoted;
      if (c == '\n' && !quoted) {
        f(begin, rec);
        rec.clear();
        begin = offset;
      } else if (rec.size() > max_record_bytes) {
        throw CsvError(fmt::format("{}: a record at byte {} is longer than {} MiB", path, begin,
                                   max_record_bytes >> 20));
      }
    }
  }
  if (!rec.empty()) f(begin, rec);
}

std::string csv_first_field(std::string_view rec) {
  if (rec.empty() || rec[0] != '"') return std::string(rec.substr(0, rec.find_first_of(",\r\n")));
  std::string out;
  for (std::size_t i = 1; i < rec.size(); ++i) {
    if (rec[i] == '"') {
      if (i + 1 < rec.size() && rec[i + 1] == '"') {
        out += '"';
        ++i;
      } else {
        break;
      }
    } else {
      out += rec[i];
    }
  }
  return out;
}

}  // namespace advplan::io
