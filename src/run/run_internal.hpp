#pragma once
// What the runner's files share (library internal): src/run/runner.cpp runs the flow; src/run/run_metadata.cpp writes
// run_metadata.json; src/run/journal.cpp keeps the work directory, its streams' files and its journal, and resumes.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "advplan/io/sha256.hpp"
#include "advplan/run/runner.hpp"

namespace advplan::run_detail {

/// run_metadata.json's text (docs/TRACES.md "run_metadata.json"): the program, config, settings, conditions,
/// policies, timings, usage, run key, shard, cache and observers' fields, and the MANIFEST's sha256.
std::string metadata_json(const RunPlan& plan, const RunOptions& opts, const RunSummary& s, int threads,
                          const std::string& manifest_sha, const std::vector<std::pair<std::string, std::string>>& key);

inline constexpr const char* kWork = ".advplan-work";  ///< the work directory, in the run directory
inline constexpr const char* kJournal = "journal";
inline constexpr const char* kKey = "run_key";

/// What identifies a run for --resume, field by field.
using RunKey = std::vector<std::pair<std::string, std::string>>;

/// One trace file streamed into the work directory: rows are buffered and appended in scenario order.
struct Stream {
  std::string name;     ///< final path relative to the run directory
  std::string work;     ///< path in the work directory
  std::vector<std::string> header;
  int fd = -1;
  std::uint64_t size = 0;  ///< bytes on disk after the last flush
  std::uint64_t header_bytes = 0;
  bool jsonl = false;     ///< candidate_plans.jsonl: JSON lines, no header
  bool optional = false;  ///< not written when it has no rows (extra trace files, observers' traces)
  bool shard_only = false;  ///< an observer's trace: kept under its name by a shard, handed to finish() otherwise
  std::uint64_t rows = 0;  ///< rows on disk after the last flush
  io::Sha256 sha;          ///< of the bytes on disk, header included (each journal entry records it)
  std::string buf;
  std::uint64_t buf_rows = 0;
};

/// Writes all of `data` to `fd` (retrying short writes and EINTR); IoError naming `path`.
void write_all(int fd, const std::string& data, const std::string& path);

/// A stream's header as it is written: its CSV header row (nothing for JSON lines).
std::string header_text(const Stream& st);

/// The run key as the work directory records it: "name=value" lines.
std::string key_text(const RunKey& key);

/// One journal entry: "<done> <rows> <failed> <with_plan>", then "<bytes> <rows> <sha256>" per stream (the
/// sha256 of the file's first <bytes> bytes).
struct JournalEntry {
  std::size_t done = 0, rows = 0, failed = 0, with_plan = 0;
  struct File {
    std::uint64_t bytes = 0, rows = 0;
    std::string sha256;
  };
  std::vector<File> files;  ///< per stream
  std::size_t end = 0;      ///< offset just past the entry's line in the journal
};


/// The journal of the work directory: one line per checkpoint, written after the rows it counts.
struct Journal {
  std::string path;
  int fd = -1;

  /// "done rows failed with_plan" and each stream's "bytes rows sha256".
  static std::string line(std::size_t done, const RunSummary& summary, const std::vector<Stream>& streams);
  /// Writes the streams' buffered rows, syncs them, then appends and syncs the journal line that counts them.
  void flush(std::vector<Stream>& streams, std::size_t done, const RunSummary& summary) const;
  /// Closes the journal and the streams' files; a failed close of a stream is a failed write.
  void close(std::vector<Stream>& streams);
};

/// The summary of the complete run in `dir` when it is this run (its recorded key compared field by field), or
/// nullopt when `dir` holds no complete run.
std::optional<RunSummary> complete_run(const std::filesystem::path& dir, const std::filesystem::path& work,
                                       const RunKey& key, std::size_t count);

/// Refuses an interrupted run whose recorded key differs from this run's in any field.
void check_interrupted_key(const std::filesystem::path& work, const RunKey& key);

/// The latest journal entry that the files bear out: each file's first bytes hash to what the entry recorded, and
/// the scenario and row counts agree with the rows (a power loss can leave a file shorter than its journal, or
/// zero-filled; a forged "all done" line does not match the rows). The journal is cut back to it.
JournalEntry verified_journal_entry(const std::filesystem::path& dir, const std::string& journal_path,
                                    const std::vector<Stream>& streams, std::size_t count);

/// Removes temporary files an interrupted atomic write left behind (".<name>.tmp-XXXXXX").
void remove_stale_temporaries(const std::string& dir);

/// Reopens each stream's work file cut back to `entry`, with its running digest over the bytes kept.
void reopen_streams(std::vector<Stream>& streams, const JournalEntry& entry, bool all_done);

/// Creates the work directory under a fresh random name (mkdtemp) with the key, the headers and journal entry 0,
/// then renames it into place, so .advplan-work is always resumable. Returns the journal's descriptor.
int create_work_directory(const std::filesystem::path& dir, const std::filesystem::path& work, const RunKey& key,
                          std::vector<Stream>& streams, const std::string& journal_path, const RunSummary& summary);

}  // namespace advplan::run_detail
