#pragma once
// The run directory as one run (docs/TRACES.md "Run directory and MANIFEST"): a run writes into a fresh
// directory; when it is complete, MANIFEST lists every file of the run with its sha256 (the format of
// `sha256sum`, so `sha256sum -c MANIFEST` checks it too), and readers refuse a directory whose MANIFEST is
// missing or whose trace files do not match it. Files under tables/ and figures/ are derived: they are listed
// when the run wrote them, but may be deleted and rebuilt.
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

namespace advplan::io {

inline constexpr const char* kManifestFile = "MANIFEST";
inline constexpr const char* kMetadataFile = "run_metadata.json";

/// How a run treats its output directory.
enum class DirMode {
  fresh,   ///< the directory must be missing or empty; otherwise IoError naming --force and --resume
  force,   ///< an existing directory is cleared first (its contents removed, symlinks not followed)
  resume,  ///< an existing directory is kept (the runner continues an interrupted run in it)
};

/// An exclusive flock(2) on a directory, held until it is destroyed: one run or merge at a time writes into a
/// run directory. The lock belongs to the open directory, so it ends with the process however the process ends.
class DirectoryLock {
 public:
  DirectoryLock() = default;
  /// Throws IoError naming `dir` when it cannot be opened, or when another process (or another lock in this
  /// one) holds it: "another advplan run or merge is writing into it".
  explicit DirectoryLock(const std::string& dir);
  ~DirectoryLock();
  DirectoryLock(DirectoryLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  DirectoryLock& operator=(DirectoryLock&& o) noexcept;
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

/// A run directory made ready by prepare_run_directory, locked for as long as this lives.
struct PreparedDirectory {
  bool had_files = false;  ///< the directory already held files (only possible with DirMode::resume)
  DirectoryLock lock;
};

/// Creates `dir` (and its parents) per `mode` and locks it (DirectoryLock) before looking inside; throws IoError
/// naming the directory. DirMode::force clears a non-empty directory only when it holds a run (a MANIFEST or a work
/// directory), and never one that is the root or the home directory, or that holds the current directory or one
/// of `inputs` (the command's config, a merge's shards).
PreparedDirectory prepare_run_directory(const std::string& dir, DirMode mode,
                                        const std::vector<std::string>& inputs = {});

/// The type of `path`, following symbolic links (std::filesystem::file_type::not_found when it is missing). Throws
/// IoError naming the path, in one sentence, when the filesystem cannot resolve it (a symbolic link loop, a name too
/// long, a folder that may not be entered): every run directory, and every path from the user that is read, is
/// looked at through this (or with an error_code) rather than through a std::filesystem call that throws.
std::filesystem::file_type path_type(const std::string& path);

/// SHA-256 of a file's bytes, read in blocks; throws IoError naming the file.
std::string sha256_file(const std::string& path);

/// Whether a path relative to the run directory is derived: it lies in a top-level folder named tables, figures,
/// frontier, metagame or regrade, or whose name starts with one of these and '-' (frontier-4d/..., regrade-gpt/...).
bool is_derived_path(const std::string& relative);

/// Checks the output folder `dest` of an analysis (tables, frontier, metagame). When it lies directly inside a run
/// directory (its parent holds a MANIFEST), it must be a derived folder (is_derived_path) so that the run still
/// checks out, and it must not be a symbolic link (a hostile run could point tables/ anywhere). Throws IoError
/// naming the folder and what to use instead.
void check_analysis_output_dir(const std::string& dest);

/// (relative path, sha256) of every regular file under `dir`, sorted by path, except MANIFEST,
/// run_metadata.json and the run's work directory (.advplan-work/).
std::vector<std::pair<std::string, std::string>> list_run_files(const std::string& dir);

/// DIR/run_metadata.json.
std::string run_metadata_path(const std::string& dir);
/// DIR/run_metadata.json as one JSON object, read bounded (at most kMaxDocumentBytes, the bounded JSON parser of
/// core/untrusted): the one reader of a run's metadata for the commands that read a finished run (merge, regrade,
/// report, view, the run's config). Throws IoError "PATH: missing, so DIR is not a run" when it is not a regular
/// file, IoError naming the file and the limit when it is larger, CsvError "PATH: WHY" when it is not JSON within
/// the bounds or not an object. The file is outside the MANIFEST: callers check each field they use.
nlohmann::json read_run_metadata(const std::string& dir);
/// The same, its members in the file's order (for a merge that writes them out again).
nlohmann::ordered_json read_run_metadata_ordered(const std::string& dir);

/// Writes DIR/MANIFEST atomically from list_run_files; returns its text.
std::string write_manifest(const std::string& dir);

/// Reads DIR/MANIFEST. Throws CsvError naming the file on a missing or malformed manifest.
std::vector<std::pair<std::string, std::string>> read_manifest(const std::string& dir);

/// Checks that DIR is one complete run: MANIFEST present; every file it lists outside tables/ and figures/
/// exists with that sha256; and no file outside tables/ and figures/ is present that it does not list (a
/// leftover of another run, or a temporary file of an interrupted one). Throws CsvError naming the file.
void verify_run_directory(const std::string& dir);

/// What `advplan check` adds to verify_run_directory, for the folders the MANIFEST leaves aside: no temporary file
/// or folder of an interrupted write anywhere in the run (`.NAME.tmp-XXXXXX`), and every derived folder that holds
/// `.advplan-output` (a report, a regrade) matching it, so one mixed from two writes is refused. Throws CsvError
/// naming the file.
void verify_derived_folders(const std::string& dir);

}  // namespace advplan::io
