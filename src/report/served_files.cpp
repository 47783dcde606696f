// Pinning the files `advplan view` serves to the MANIFEST check (served_files.hpp).
#include "report/served_files.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <functional>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/report/report.hpp"

namespace advplan::report {
namespace fs = std::filesystem;

namespace {

std::uint64_t name_hash(std::string_view name) { return std::hash<std::string_view>{}(name); }

std::string map_file(const std::string& id) {
  return untrusted::safe_path_component(id) == id ? id + ".geojson" : std::string();
}

/// maps/<name> as the report reads it: a regular file through a real maps/ folder, or nothing.
FileIdentity map_identity(const fs::path& dir, const std::string& name) {
  std::error_code ec;
  if (fs::is_symlink(fs::symlink_status(dir / "maps", ec))) return {};
  struct stat st {};
  if (::lstat((dir / "maps" / name).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
  return identity_of(dir / "maps" / name);
}

std::vector<std::pair<std::string, FileIdentity>> identities(const fs::path& dir, const std::vector<std::string>& files) {
  std::vector<std::pair<std::string, FileIdentity>> out;
  for (const auto& f : files) out.emplace_back(f, identity_of(dir / f));
  return out;
}

}  // namespace

FileIdentity identity_of(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return FileIdentity{true, static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
                      static_cast<std::uint64_t>(st.st_size),
                      static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

ServedFiles::ServedFiles(const fs::path& dir, const std::vector<std::string>& read_at_start,
                         const std::vector<std::string>& served)
    : dir_(dir), start_(identities(dir, read_at_start)), served_(identities(dir, served)) {
  std::error_code ec;
  const fs::path maps = dir / "maps";
  if (fs::is_symlink(fs::symlink_status(maps, ec)) || !fs::is_directory(maps, ec)) return;
  for (const auto& e : fs::directory_iterator(maps, ec)) {
    if (listed_maps_.size() >= kMaxMapFiles)
      throw IoError(fmt::format("{}: more than {} files", maps.string(), kMaxMapFiles));
    listed_maps_.emplace_back(name_hash(e.path().filename().string()), map_identity(dir, e.path().filename().string()));
  }
  std::sort(listed_maps_.begin(), listed_maps_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
}

void ServedFiles::confirm(const std::vector<std::string>& ids) {
  for (const auto* group : {&start_, &served_})
    for (const auto& [file, was] : *group)
      if (identity_of(dir_ / file) != was)
        throw IoError(fmt::format("{}: changed while view was starting (during its MANIFEST check); start view again",
                                  (dir_ / file).string()));
  maps_.reserve(ids.size());
  for (const auto& id : ids) {
    const std::string name = map_file(id);
    if (name.empty()) {
      maps_.emplace_back();
      continue;
    }
    const auto [lo, hi] = std::equal_range(listed_maps_.begin(), listed_maps_.end(), std::pair{name_hash(name), FileIdentity{}},
                                           [](const auto& a, const auto& b) { return a.first < b.first; });
    maps_.push_back(lo == hi ? FileIdentity{} : lo->second);
    if (map_identity(dir_, name) != maps_.back())
      throw IoError(fmt::format("{}: changed while view was starting (during its MANIFEST check); start view again",
                                (dir_ / "maps" / name).string()));
  }
  listed_maps_ = {};
}

namespace {
[[noreturn]] void changed_since_start(const fs::path& p) {
  throw RunChanged(fmt::format("{}: changed since view started (its size, time or inode differs from the file the "
                               "MANIFEST check read); start view again to serve it",
                               p.string()));
}
}  // namespace

void ServedFiles::check() const {
  for (const auto& [file, was] : served_)
    if (identity_of(dir_ / file) != was) changed_since_start(dir_ / file);
}

void ServedFiles::check_map(std::size_t i, const std::string& id) const {
  const std::string name = map_file(id);
  if (i < maps_.size() && !name.empty() && map_identity(dir_, name) != maps_[i])
    changed_since_start(dir_ / "maps" / name);
}

}  // namespace advplan::report
