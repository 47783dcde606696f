// The shared maps of a run on a user's map (docs/GEO.md "A run on the map"): each scenario's maps/<id>.geojson is a
// small layer naming `base`, a file of maps/_shared/; the site reads each base once, draws it within
// kMaxDrawnPositions, and puts it in the overview, where the page puts the layer on it.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "advplan/core/error.hpp"
#include "advplan/core/untrusted.hpp"
#include "advplan/geo/map.hpp"
#include "advplan/geo/user_map.hpp"
#include "advplan/io/atomic_file.hpp"
#include "report/site.hpp"

namespace advplan::report::site {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {
/// Whether `name` is "<64 lower-case hex digits>.geojson", the only name a shared map has.
bool shared_map_name(const std::string& name) {
  return name.size() == 64 + 8 && name.ends_with(".geojson") &&
         std::all_of(name.begin(), name.begin() + 64, [](unsigned char c) { return std::isdigit(c) || (c >= 'a' && c <= 'f'); });
}

/// The map in `path` read as a user's map and drawn within the bound, or null when it is not one.
json drawn(const fs::path& path) {
  try {
    const std::string text = io::read_text_file(path.string(), geo::kMaxUserMapBytes);
    const geo::GeoMap m = geo::parse_user_map(text, path.string());
    json g;
    if (untrusted::parse_json_bounded(geo::to_geojson_bounded(m, kMaxDrawnPositions), g).empty() && g.is_object())
      return g;
  } catch (const Error&) {
  }
  return nullptr;
}
}  // namespace

json map_bases(const fs::path& dir) {
  json out = json::object();
  std::error_code ec;
  const fs::path shared = dir / "maps" / "_shared";
  // Through real folders only, as every file the site reads.
  if (fs::is_symlink(fs::symlink_status(dir / "maps", ec)) || !fs::is_directory(fs::symlink_status(shared, ec)))
    return out;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(shared, ec)) {
    const std::string n = e.path().filename().string();
    if (shared_map_name(n) && fs::is_regular_file(e.symlink_status(ec))) names.push_back(n);
    if (names.size() > kMaxSharedMaps) break;
  }
  std::sort(names.begin(), names.end());
  if (names.size() > kMaxSharedMaps) names.resize(kMaxSharedMaps);
  for (const auto& n : names)
    if (json g = drawn(shared / n); !g.is_null()) out["_shared/" + n] = std::move(g);
  return out;
}

}  // namespace advplan::report::site
