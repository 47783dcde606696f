#include "advplan/io/atomic_dir.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "advplan/core/error.hpp"
#include "advplan/io/atomic_file.hpp"
#include "advplan/io/run_store.hpp"
#include "advplan/io/sha256.hpp"

namespace advplan::io {
namespace fs = std::filesystem;

namespace detail {
std::function<void(std::size_t)> output_dir_step;
}

namespace {

/// The folder as written: absolute, normal, without a trailing separator.
fs::path target_of(const std::string& dir) {
  std::error_code ec;
  fs::path d = fs::absolute(dir, ec).lexically_normal();
  if (d.filename().empty()) d = d.parent_path();
  if (d.filename().empty() || d == d.root_path())
    throw IoError(fmt::format("{}: not a folder advplan can write as a whole (the root)", dir));
  return d;
}

void step(std::size_t& k) {
  if (detail::output_dir_step) detail::output_dir_step(k);
  ++k;
}

/// An exclusive, non-blocking flock on an open folder; -1 when another process holds it or it cannot be opened.
int lock_folder(const fs::path& d) {
  const int fd = ::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

/// Whether the existing `target` may be replaced by `files`; throws IoError naming what stands in the way.
/// The command a whole-written folder's list names ("" when the first line names none).
std::string command_of(const fs::path& list) {
  const std::string text = read_text_file(list.string(), kMaxDocumentBytes);
  const std::string head = "# advplan ";
  if (text.rfind(head, 0) != 0) return "";
  return text.substr(head.size(), std::min(text.find('\n'), text.size()) - head.size());
}

void check_replaceable(const fs::path& target, const std::set<std::string>& files, const std::string& command) {
  std::error_code ec;
  const auto st = fs::symlink_status(target, ec);
  if (!fs::exists(st)) return;
  if (fs::is_symlink(st))
    throw IoError(fmt::format("{}: is a symbolic link; advplan replaces only a real folder it wrote (name the folder "
                              "it points to, or another --out)", target.string()));
  if (!fs::is_directory(st))
    throw IoError(fmt::format("{}: exists and is not a folder, so advplan does not replace it", target.string()));
  if (fs::is_regular_file(fs::symlink_status(target / kOutputListFile, ec))) {
    if (const std::string was = command_of(target / kOutputListFile); was != command)
      throw IoError(fmt::format("{}: holds the output of advplan {}, not of advplan {}, so it is not replaced (choose "
                                "another --out)", target.string(), was.empty() ? "(unnamed)" : was, command));
    return;
  }
  // No list: an older advplan's output is replaced only when it holds nothing the new content does not (a bounded
  // walk: a folder of more entries than the new content holds something else).
  std::size_t seen = 0;
  for (auto it = fs::recursive_directory_iterator(target, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const auto s = it->symlink_status(ec);
    const std::string rel = it->path().lexically_relative(target).generic_string();
    if (++seen > 2 * files.size() + 64)
      throw IoError(fmt::format("{}: holds more than this command writes, so advplan does not replace it (remove it, "
                                "or choose another --out)", target.string()));
    if (fs::is_directory(s)) continue;
    if (!fs::is_regular_file(s))
      throw IoError(fmt::format("{}: exists and is not a regular file (a link, FIFO or device); advplan replaces only "
                                "regular files in a folder it writes", it->path().string()));
    if (!files.contains(rel))
      throw IoError(fmt::format("{}: was not written by this command, so advplan does not replace its folder (remove "
                                "it, or choose another --out)", it->path().string()));
  }
  if (ec) throw IoError(fmt::format("{}: cannot be read ({})", target.string(), ec.message()));
}

/// The files, then the list of their sha256, into the fresh folder `tmp`.
void fill(const fs::path& tmp, const std::vector<std::pair<std::string, std::string>>& files,
          const std::string& command, std::size_t& k) {
  std::string list = "# advplan " + command + "\n";
  std::map<std::string, std::string> sums;
  for (const auto& [name, content] : files) {
    const fs::path rel = fs::path(name).lexically_normal();
    if (rel.empty() || rel.is_absolute() || *rel.begin() == ".." || rel.filename() == kOutputListFile)
      throw IoError(fmt::format("{}: not a file name inside the output folder", name));
    fs::create_directories(tmp / rel.parent_path());
    write_file_atomic((tmp / rel).string(), content);
    sums[rel.generic_string()] = sha256_hex(content);
    step(k);
  }
  for (const auto& [rel, sum] : sums) list += sum + "  " + rel + "\n";
  write_file_atomic((tmp / kOutputListFile).string(), list);
  step(k);
}

/// Puts `tmp` at `target`: exchanged with the folder there (then at `tmp`), or renamed when nothing is there.
/// Returns whether an old folder now stands at `tmp`.
bool switch_in(const fs::path& tmp, const fs::path& target) {
  std::error_code ec;
  const bool exists = fs::exists(fs::symlink_status(target, ec));
  if (exists && (fs::is_symlink(fs::symlink_status(target, ec)) || !fs::is_directory(fs::symlink_status(target, ec))))
    throw IoError(fmt::format("{}: changed into something that is not a folder while advplan wrote it; left as it is",
                              target.string()));
  const unsigned flags = exists ? RENAME_EXCHANGE : RENAME_NOREPLACE;
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, target.c_str(), flags) == 0) return exists;
  const int err = errno;
  if (err != EINVAL && err != ENOSYS)
    throw IoError(fmt::format("{}: cannot switch the new folder in ({})", target.string(), std::strerror(err)));
  // A file system without renameat2's flags: the old folder aside first (a kill between the two renames leaves it
  // there, under a temporary name, and no folder at `target`).
  fs::path aside = tmp;
  aside += ".old";
  if (exists && std::rename(target.c_str(), aside.c_str()) != 0)
    throw IoError(fmt::format("{}: cannot move the old folder aside ({})", target.string(), std::strerror(errno)));
  if (std::rename(tmp.c_str(), target.c_str()) != 0)
    throw IoError(fmt::format("{}: cannot switch the new folder in ({})", target.string(), std::strerror(errno)));
  if (exists) fs::rename(aside, tmp, ec);
  return exists;
}

}  // namespace

bool is_temporary_name(std::string_view name) {
  const std::size_t at = name.rfind(".tmp-");
  if (name.empty() || name[0] != '.' || at == std::string_view::npos || at == 0) return false;
  const std::string_view tail = name.substr(at + 5);
  const std::string_view x = tail.substr(0, std::min<std::size_t>(tail.size(), 6));
  return x.size() == 6 && std::all_of(x.begin(), x.end(), [](unsigned char c) { return std::isalnum(c); }) &&
         (tail.size() == 6 || tail.substr(6) == ".old");
}

std::size_t remove_stale_output_temporaries(const std::string& dir) {
  const fs::path target = target_of(dir);
  std::string prefix = ".";  // (appended, not "." + name: GCC 12 warns falsely on the latter)
  prefix += target.filename().string();
  prefix += ".tmp-";
  std::error_code ec;
  std::size_t removed = 0;
  for (const auto& e : fs::directory_iterator(target.parent_path(), ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(prefix, 0) != 0 || !is_temporary_name(n) || !fs::is_directory(e.symlink_status(ec))) continue;
    const int fd = lock_folder(e.path());
    if (fd < 0) continue;  // a writer still holds it
    fs::remove_all(e.path(), ec);  // never follows a link inside
    ::close(fd);
    removed += ec ? 0 : 1;
  }
  return removed;
}

void write_output_dir(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& files,
                      const std::string& command) {
  const fs::path target = target_of(dir);
  std::set<std::string> names;
  for (const auto& f : files) names.insert(fs::path(f.first).lexically_normal().generic_string());
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  if (ec) throw IoError(fmt::format("{}: cannot create directory ({})", target.parent_path().string(), ec.message()));
  check_replaceable(target, names, command);
  remove_stale_output_temporaries(dir);
  std::string base = ".";
  base += target.filename().string();
  base += ".tmp-XXXXXX";
  std::string tmpl = (target.parent_path() / base).string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    throw IoError(fmt::format("{}: cannot create a temporary folder beside it ({})", target.string(), std::strerror(errno)));
  const fs::path tmp(tmpl);
  const int lock = lock_folder(tmp);  // held while the folder is written: no other write removes it as stale
  std::size_t k = 0;
  bool old_at_tmp = false;
  try {
    fill(tmp, files, command, k);
    const mode_t mask = ::umask(0);
    ::umask(mask);
    fs::permissions(tmp, static_cast<fs::perms>(0777 & ~mask), ec);
    old_at_tmp = switch_in(tmp, target);
  } catch (...) {
    fs::remove_all(tmp, ec);
    if (lock >= 0) ::close(lock);
    throw;
  }
  if (lock >= 0) ::close(lock);
  step(k);
  if (old_at_tmp) fs::remove_all(tmp, ec);  // the old folder; a leftover is removed by the next write
}

void verify_output_dir(const std::string& dir) {
  const fs::path d(dir);
  const std::string list_path = (d / kOutputListFile).string();
  std::istringstream in(read_text_file(list_path, kMaxDocumentBytes));
  std::map<std::string, std::string> want;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    if (++line_no == 1 && line.rfind("# advplan ", 0) == 0) continue;
    if (line.size() < 67 || line[64] != ' ' || line[65] != ' ' || line.find_first_not_of("0123456789abcdef") < 64)
      throw CsvError(fmt::format("{}: line {}: expected '<sha256>  <file>'", list_path, line_no));
    want.emplace(line.substr(66), line.substr(0, 64));
  }
  for (const auto& [rel, sum] : want) {
    const fs::path p = d / rel;
    std::error_code ec;
    if (!fs::is_regular_file(fs::symlink_status(p, ec)))
      throw CsvError(fmt::format("{}: listed in {} but missing, so the folder is not one complete write", p.string(),
                                 kOutputListFile));
    if (sha256_file(p.string()) != sum)
      throw CsvError(fmt::format("{}: does not match its sha256 in {}, so the folder is mixed from two writes",
                                 p.string(), kOutputListFile));
  }
  for (auto it = fs::recursive_directory_iterator(d); it != fs::recursive_directory_iterator(); ++it) {
    const std::string rel = it->path().lexically_relative(d).generic_string();
    if (it->is_directory() && !it->is_symlink()) continue;
    if (rel != kOutputListFile && !want.contains(rel))
      throw CsvError(fmt::format("{}: not listed in {}, so the folder is mixed from two writes", it->path().string(),
                                 kOutputListFile));
  }
}

}  // namespace advplan::io
