#pragma once
// Files are written to a temporary name beside the target and renamed when complete, so a crash or an error
// never leaves a truncated file that looks whole (docs/TRACES.md).
#include <fstream>
#include <string>

namespace advplan::io {

class AtomicWriter {
 public:
  /// Opens `path` + ".tmp-<pid>"; throws IoError naming `path` when it cannot be created.
  explicit AtomicWriter(std::string path);
  ~AtomicWriter();  ///< removes the temporary file unless commit() ran
  AtomicWriter(const AtomicWriter&) = delete;
  AtomicWriter& operator=(const AtomicWriter&) = delete;

  std::ostream& stream() { return out_; }
  /// Flushes, closes and renames onto the target; throws IoError on failure.
  void commit();

 private:
  std::string path_, tmp_;
  std::ofstream out_;
  bool committed_ = false;
};

/// Writes `content` to `path` atomically; throws IoError.
void write_file_atomic(const std::string& path, const std::string& content);
/// Reads a whole file; throws IoError naming `path`.
std::string read_text_file(const std::string& path);

}  // namespace advplan::io
