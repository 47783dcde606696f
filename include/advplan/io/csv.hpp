#pragma once
// CSV tables for the traces (RFC 4180 quoting). Numbers are written with fixed precision so traces are
// byte-identical across runs and thread counts. Reading is strict: a missing file, a header that is not the
// expected one, a row with the wrong number of fields or a missing final newline (truncation) is a CsvError
// naming the file and line.
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace advplan::io {

/// Fixed 6-decimal form used for every real number in a trace ("0.123457"); "" for NaN (a missing value).
std::string fmt_real(double v);

/// Appends one CSV line (RFC 4180 quoting, '\n'), each cell made valid UTF-8 (U+FFFD for an ill-formed byte): the
/// one writer of trace rows, used by CsvTable and the streaming runner.
void append_csv_row(std::string& out, const std::vector<std::string>& row);
/// The same from views, for writers that build a large file row by row without a CsvTable.
void append_csv_row(std::string& out, std::initializer_list<std::string_view> row);

class CsvTable {
 public:
  CsvTable() = default;
  explicit CsvTable(std::vector<std::string> header) : header_(std::move(header)) { build_index(); }

  const std::vector<std::string>& header() const { return header_; }
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }
  std::size_t size() const { return rows_.size(); }
  /// Appends a row; throws std::invalid_argument when its size differs from the header's.
  void add(std::vector<std::string> row);
  /// Column index; throws CsvError naming `source()` when absent.
  std::size_t col(std::string_view name) const;
  bool has_col(std::string_view name) const;
  const std::string& at(std::size_t row, std::string_view column) const { return rows_[row][col(column)]; }
  /// The cell as a number; NaN for an empty cell; throws CsvError naming file, line and column when malformed.
  double real(std::size_t row, std::string_view column) const;
  /// The same by column index (col()), for loops that read one column in many rows.
  double real(std::size_t row, std::size_t column) const;
  const std::string& source() const { return source_; }
  /// Names the file in errors: a table filtered from a file's rows keeps the file's name (set_source(t.source())).
  void set_source(std::string source) { source_ = std::move(source); }

  std::string to_string() const;
  /// Writes atomically (temporary name, then rename).
  void write(const std::string& path) const;
  /// Parses CSV text; `source` names it in errors. When `expected` is non-empty the header must contain those
  /// columns in that order as its prefix... exactly: the header must equal `expected`.
  static CsvTable parse(const std::string& text, const std::string& source,
                        const std::vector<std::string>& expected = {});
  /// Reads a file; throws CsvError ("FILE: missing") when it does not exist.
  static CsvTable read(const std::string& path, const std::vector<std::string>& expected = {});

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::string source_;
  void build_index();
  std::map<std::string, std::size_t, std::less<>> index_;  ///< built eagerly: reads are thread-safe
};

}  // namespace advplan::io
