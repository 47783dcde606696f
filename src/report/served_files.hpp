#pragma once
// The files `advplan view` reads on request, pinned to what the MANIFEST check saw (docs/REPORT.md "Serving a large
// run"): each file's identity (device, inode, size, modification time in ns) is recorded before the check and
// compared after it and the index, and again around every page served, so that an edit made after the start, even
// one that keeps the size, is refused rather than served.
#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace advplan::report {

struct FileIdentity {
  bool exists = false;
  std::uint64_t dev = 0, ino = 0, size = 0;
  std::int64_t mtime_ns = 0;
  bool operator==(const FileIdentity&) const = default;
};
/// stat(2) of `path` (following links); exists false when there is nothing there.
FileIdentity identity_of(const std::filesystem::path& path);

inline constexpr std::size_t kMaxMapFiles = std::size_t{1} << 21;  ///< entries of maps/ recorded at the start

class ServedFiles {
 public:
  /// Before the MANIFEST check: `read_at_start` (read while the site starts) and `served` (read on request),
  /// paths relative to `dir`, and every entry of maps/ (a real folder; more than kMaxMapFiles is refused).
  ServedFiles(const std::filesystem::path& dir, const std::vector<std::string>& read_at_start,
              const std::vector<std::string>& served);
  /// After the check and the index: throws IoError naming a file that changed meanwhile. Keeps, of the maps,
  /// maps/<id>.geojson of each scenario id (the map a scenario's page shows).
  void confirm(const std::vector<std::string>& ids);
  /// Throws RunChanged naming the first served file that is not as it was at the start.
  void check() const;
  /// Likewise for scenario `i`'s map (`id`: its id, as given to confirm).
  void check_map(std::size_t i, const std::string& id) const;

 private:
  std::filesystem::path dir_;
  std::vector<std::pair<std::string, FileIdentity>> start_, served_;
  std::vector<std::pair<std::uint64_t, FileIdentity>> listed_maps_;  ///< (hash of the name, identity), sorted
  std::vector<FileIdentity> maps_;  ///< per scenario, its map's (exists false: none, or an id that names no file)
};

}  // namespace advplan::report
