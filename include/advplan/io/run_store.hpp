#pragma once
// The run directory as one run (docs/TRACES.md "Run directory and MANIFEST"): a run writes into a fresh
// directory; when it is complete, MANIFEST lists every file of the run with its sha256 (the format of
// `sha256sum`, so `sha256sum -c MANIFEST` checks it too), and readers refuse a directory whose MANIFEST is
// missing or whose trace files do not match it. Files under tables/ and figures/ are derived: they are listed
// when the run wrote them, but may be deleted and rebuilt.
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

/// Creates `dir` (and its parents) per `mode`; throws IoError naming the directory. Returns true when the
/// directory already held files (only possible with DirMode::resume). DirMode::force clears a non-empty directory
/// only when it holds a run (a MANIFEST or a work directory), and never one that is the root or the home
/// directory, or that holds the current directory or one of `inputs` (the command's config, a merge's shards).
bool prepare_run_directory(const std::string& dir, DirMode mode, const std::vector<std::string>& inputs = {});

/// SHA-256 of a file's bytes, read in blocks; throws IoError naming the file.
std::string sha256_file(const std::string& path);

/// Whether a path relative to the run directory is derived (tables/..., figures/...).
bool is_derived_path(const std::string& relative);

/// (relative path, sha256) of every regular file under `dir`, sorted by path, except MANIFEST,
/// run_metadata.json and the run's work directory (.advplan-work/).
std::vector<std::pair<std::string, std::string>> list_run_files(const std::string& dir);

/// Writes DIR/MANIFEST atomically from list_run_files; returns its text.
std::string write_manifest(const std::string& dir);

/// Reads DIR/MANIFEST. Throws CsvError naming the file on a missing or malformed manifest.
std::vector<std::pair<std::string, std::string>> read_manifest(const std::string& dir);

/// Checks that DIR is one complete run: MANIFEST present; every file it lists outside tables/ and figures/
/// exists with that sha256; and no file outside tables/ and figures/ is present that it does not list (a
/// leftover of another run, or a temporary file of an interrupted one). Throws CsvError naming the file.
void verify_run_directory(const std::string& dir);

}  // namespace advplan::io
