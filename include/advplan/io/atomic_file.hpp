#pragma once
// Files are written to a temporary file beside the target and renamed when complete, so a crash or an error
// never leaves a truncated file that looks whole (docs/TRACES.md). The temporary file is created exclusively
// (mkstemp: O_CREAT | O_EXCL, a random name, mode 0600 until commit), so a file or symlink planted at a
// predictable name is never followed or overwritten.
#include <fstream>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>
#include <utility>
#include <vector>

namespace advplan::io {

/// A buffered std::streambuf over a POSIX file descriptor (it does not own the descriptor).
class FdStreambuf : public std::streambuf {
 public:
  explicit FdStreambuf(int fd);
  ~FdStreambuf() override;
  bool failed() const { return failed_; }

 protected:
  int_type overflow(int_type ch) override;
  int sync() override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;

 private:
  bool flush_buffer();
  int fd_;
  bool failed_ = false;
  std::unique_ptr<char[]> buf_;
};

class AtomicWriter {
 public:
  /// Creates a temporary file ".<name>.tmp-XXXXXX" in `path`'s directory with mkstemp; throws IoError naming
  /// `path` when it cannot be created. A `path` that is a FIFO or a character device (/dev/null, /dev/stdout), or a
  /// symbolic link to one, is written through instead (a FIFO nobody reads is an IoError, not a hang); one that is
  /// any other kind of non-regular file, a symbolic link to a regular file included, is refused with an IoError
  /// naming it: a rename never replaces what is not a regular file.
  explicit AtomicWriter(std::string path);
  ~AtomicWriter();  ///< removes the temporary file unless commit() ran
  AtomicWriter(const AtomicWriter&) = delete;
  AtomicWriter& operator=(const AtomicWriter&) = delete;

  std::ostream& stream() { return out_; }
  const std::string& temp_path() const { return tmp_; }
  /// Flushes, closes and renames onto the target (or, written through, just closes); throws IoError on failure.
  void commit();

 private:
  std::string path_, tmp_;
  int fd_ = -1;
  std::unique_ptr<FdStreambuf> buf_;
  std::ostream out_;
  bool committed_ = false;
};

/// Writes `content` to `path` atomically; throws IoError.
void write_file_atomic(const std::string& path, const std::string& content);
/// Reads a whole file; throws IoError naming `path`. For trace files, whose size the run itself bounds.
std::string read_text_file(const std::string& path);
/// A descriptor open for reading `path` (the caller closes it): never blocks on a FIFO; a FIFO, a socket or a
/// directory is refused with IoError naming the file.
int open_readable(const std::string& path);
/// The same, refusing a file of more than `max_bytes` (IoError naming it and the limit) after reading at most one
/// byte past the limit, so a device or FIFO without end (/dev/zero) is refused, not read forever.
std::string read_text_file(const std::string& path, std::size_t max_bytes);
/// The limits for files a user or a hostile directory hands in: configs, templates, plans, run metadata and
/// other single documents; and lists (a MANIFEST, a journal, a questions file).
inline constexpr std::size_t kMaxDocumentBytes = std::size_t{64} << 20;
inline constexpr std::size_t kMaxListBytes = std::size_t{512} << 20;

/// Writes each (relative path, content) into `dir` (created when missing, with the files' subfolders), each
/// atomically, in the given order; throws IoError naming the directory or file. A subfolder below `dir` that is a
/// symbolic link is refused, never written through (`dir` itself is the caller's choice: see
/// run_store.hpp's analysis_output_dir for a folder inside a run).
void write_files(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files);

}  // namespace advplan::io
