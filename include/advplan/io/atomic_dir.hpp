#pragma once
// An output folder written as one unit (docs/DECISIONS.md "Output folders switch in whole"): `advplan report` and
// the `rubric` commands build the whole folder in a temporary sibling `.NAME.tmp-XXXXXX`, write `.advplan-output`
// (the sha256 and path of every file, the format of `sha256sum`) last, and switch it in with one
// renameat2(RENAME_EXCHANGE) (RENAME_NOREPLACE when nothing stood there), then remove the old folder. A kill at any
// point leaves the old complete folder or the new complete one, plus at most a temporary sibling named as above,
// which the next write of the same folder removes and `advplan check` names.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace advplan::io {

/// The list a whole-written folder holds: a first line "# advplan COMMAND", then "<sha256>  <path>" per file, sorted
/// by path, itself not listed (`sha256sum -c` reads it, with a warning for the first line).
inline constexpr const char* kOutputListFile = ".advplan-output";

/// Writes `files` (relative path, content) as the complete content of folder `dir`, as described above. An existing
/// `dir` is replaced only when it is a real folder (not a symbolic link) whose `.advplan-output` names the same
/// `command` (e.g. "report", "rubric regrade"), or, without that file, whose every entry is a real folder or a
/// regular file at a path the new content also has (an older advplan's output); anything else is refused with an
/// IoError naming it, so one command's output never replaces another's or a folder of the user's. Leftover temporaries of `dir` whose writer is gone are removed first.
/// `dir`'s parent is created when missing. Throws IoError naming the folder or file.
void write_output_dir(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files,
                      const std::string& command);

/// Removes `dir`'s leftover temporary siblings (`.NAME.tmp-XXXXXX` folders no live writer holds locked); returns
/// how many were removed.
std::size_t remove_stale_output_temporaries(const std::string& dir);

/// Whether a file or folder name is an advplan temporary: `.NAME.tmp-XXXXXX` (an atomic file's or folder's).
bool is_temporary_name(std::string_view name);

/// Checks a folder that holds `.advplan-output` against it: every listed file present with its sha256, nothing else
/// there. Throws CsvError naming the first file that differs ("mixed from two writes").
void verify_output_dir(const std::string& dir);

namespace detail {
/// Test seam: called with 0, 1, 2, ... at each step of write_output_dir (after each file, after the list, after the
/// switch), so a test can end the process there (as kill -9 would). Empty outside tests.
extern std::function<void(std::size_t)> output_dir_step;
}  // namespace detail

}  // namespace advplan::io
