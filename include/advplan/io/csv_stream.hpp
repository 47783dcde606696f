#pragma once
// io/csv's streaming side (defined in src/io/csv.cpp): a file read record by record with each record's byte offset,
// for readers that index a file too large to hold (advplan view), with CsvTable's quote rules.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace advplan::io {

/// Where a streamed file's records end: CSV records at a newline outside double quotes (each '"' toggles, so a
/// doubled quote inside a quoted field toggles twice, as CsvTable reads it); JSON lines at every newline.
enum class RecordFormat { csv, json_lines };

/// Streams `path` record by record in 1 MiB reads, calling f(byte offset of the record's first byte, the record
/// with its newline); a last record without a newline is passed as it is. Throws IoError naming the file when it
/// cannot be opened, and CsvError "PATH: a record at byte N is longer than M MiB" when a record runs past
/// `max_record_bytes` before its end.
void for_each_record(const std::string& path, RecordFormat format, std::size_t max_record_bytes,
                     const std::function<void(std::uint64_t, const std::string&)>& f);

/// The first field of a CSV record, unquoted (a doubled quote read as one; an unquoted field ends at ',', '\r' or
/// '\n').
std::string csv_first_field(std::string_view record);

}  // namespace advplan::io
