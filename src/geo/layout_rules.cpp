// Layout rules per scenario domain, as data (docs/GEO.md "Layout rules"). A template's scenarios take the rule
// of their domain; a new domain falls back to "land".
#include <algorithm>

#include "advplan/geo/map.hpp"

namespace advplan::geo {

const std::vector<LayoutRule>& layout_rules() {
  // domain, network, extent, grid, keep, diagonal, speed, red/blue threats, obstacles, radius min/max,
  // window, surface domains, origin lon/lat
  static const std::vector<LayoutRule> rules{
      {"land", "road", 60, 8, 0.8, 0.15, 40, 3, 2, 2, 0.07, 0.15, 5, {"land"}, 23.50, 41.20},
      {"sea", "sea-lane", 240, 7, 0.85, 0.2, 30, 3, 2, 3, 0.06, 0.13, 14, {"sea"}, 55.40, 25.60},
      {"air", "road", 150, 8, 0.75, 0.15, 50, 4, 2, 2, 0.06, 0.13, 4.5, {"land"}, 44.10, 40.30},
      {"joint", "road", 120, 8, 0.8, 0.15, 45, 3, 2, 2, 0.06, 0.14, 4, {"land", "sea"}, 128.60, 34.70},
  };
  return rules;
}

const LayoutRule& layout_rule(std::string_view domain) {
  const auto& r = layout_rules();
  const auto it = std::find_if(r.begin(), r.end(), [&](const LayoutRule& x) { return x.domain == domain; });
  return it != r.end() ? *it : r.front();
}

}  // namespace advplan::geo
