// The output paths a command writes, checked before its work starts (issue 48): a quiz or a live judge that runs for
// minutes must not find out at the end that its --out cannot be written.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "output_paths.hpp"

namespace advplan::cli {
namespace fs = std::filesystem;

namespace {
/// The folder a new file or folder at `p` goes into ("." for a bare name).
fs::path folder_of(const fs::path& p) {
  const fs::path parent = p.parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

/// Throws unless `folder` is an existing folder this process may write into.
void require_writable_folder(const fs::path& folder, const std::string& path, const std::string& flag) {
  std::error_code ec;
  const auto st = fs::status(folder, ec);
  if (!fs::exists(st))
    throw IoError(fmt::format("{} {}: the folder {} does not exist; create it first or name another path", flag,
                              untrusted::excerpt(path, 200), untrusted::excerpt(folder.string(), 200)));
  if (!fs::is_directory(st))
    throw IoError(fmt::format("{} {}: {} is not a folder", flag, untrusted::excerpt(path, 200),
                              untrusted::excerpt(folder.string(), 200)));
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    throw IoError(fmt::format("{} {}: the folder {} is not writable", flag, untrusted::excerpt(path, 200),
                              untrusted::excerpt(folder.string(), 200)));
}
}  // namespace

void check_output_file(const std::string& path, const std::string& flag) {
  if (path.empty() || path == "-") return;
  std::error_code ec;
  const auto st = fs::status(path, ec);  // followed: a link to /dev/stdout is written through
  if (fs::exists(st)) {
    if (fs::is_regular_file(st) || fs::is_character_file(st) || fs::is_fifo(st)) return;
    throw IoError(fmt::format("{} {}: exists and is not a regular file", flag, untrusted::excerpt(path, 200)));
  }
  require_writable_folder(folder_of(path), path, flag);
}

void check_output_folder(const std::string& path, const std::string& flag) {
  if (path.empty()) return;
  std::error_code ec;
  fs::path p = fs::absolute(path, ec).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  const auto st = fs::status(p, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st))
      throw IoError(fmt::format("{} {}: exists and is not a folder", flag, untrusted::excerpt(path, 200)));
    require_writable_folder(p, path, flag);
    return;
  }
  // The nearest folder above that exists is where the missing ones are created.
  fs::path above = p.parent_path();
  while (!above.empty() && above != above.parent_path() && !fs::exists(fs::status(above, ec)))
    above = above.parent_path();
  require_writable_folder(above.empty() ? fs::path("/") : above, path, flag);
}

}  // namespace advplan::cli
