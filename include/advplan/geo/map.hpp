#pragma once
// A scenario's map (docs/GEO.md): places, assets' positions, boundaries, threat zones and obstacles as features,
// and a road or sea-lane network, generated deterministically from the scenario's own "geo" random stream.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "advplan/core/scenario.hpp"
#include "advplan/geo/geometry.hpp"
#include "advplan/geo/network.hpp"

namespace advplan::geo {

/// Feature kinds: place (point), asset (point), boundary (polygon), threat (polygon), obstacle (polygon).
struct Feature {
  std::string id;    ///< unique in the map, e.g. "place-1", "b-inf-1", "threat-red-2"
  std::string name;  ///< human-readable, e.g. "market district"
  std::string kind;
  std::string side;  ///< "BLUE", "RED" or "" (the side that owns an asset or poses a threat)
  std::optional<Point> point;
  std::optional<Polygon> polygon;
  int node = -1;  ///< network node a point feature is attached to (-1 for polygons)
  std::string domain;   ///< assets: land, sea, air, ...
  double mobility = 1;  ///< assets: the scenario's mobility in 0..1
  bool operator==(const Feature&) const = default;
};

/// How a template's scenarios are laid out (data: configs/geo/layouts.yaml, docs/GEO.md "Layout rules").
struct LayoutRule {
  std::string name;            ///< the rule's name in the file: land, sea, air, joint
  std::string network;         ///< "road" or "sea-lane"
  double extent_km = 60;       ///< the area of operations is a square of this side
  int grid = 8;                ///< grid x grid junctions before pruning
  double keep_edge = 0.8;      ///< probability of keeping a non-tree edge
  double diagonal = 0.15;      ///< probability of adding a diagonal
  double speed_kmh = 40;       ///< network speed of an asset of mobility 1
  int red_threats = 3, blue_threats = 2, obstacles = 2;
  double threat_radius_min = 0.07, threat_radius_max = 0.15;  ///< shares of the extent
  double time_window_h = 5;    ///< the order's time window
  std::vector<std::string> surface_domains;  ///< asset domains whose movements use the network
  double lon0 = 0, lat0 = 0;   ///< projection origin (the south-west corner of the area)
};

/// The layout rules file: named rules, the rule of each template, the default rule.
struct LayoutRules {
  std::vector<LayoutRule> rules;
  std::vector<std::pair<std::string, std::string>> templates;  ///< template id -> rule name
  std::string default_rule;
  /// The rule of a template: its entry, else the rule named like `domain`, else the default.
  const LayoutRule& for_template(std::string_view template_id, std::string_view domain) const;
};
/// Parses a layout rules file strictly; throws ConfigError (one sentence naming `file` and the key).
LayoutRules parse_layout_rules(const std::string& yaml_text, const std::string& file);
/// The built-in rules, configs/geo/layouts.yaml as compiled into the binary (parsed once).
const LayoutRules& layout_rules();

struct GeoMap {
  std::string scenario_id;
  LayoutRule rule;
  Projection proj;
  std::vector<Feature> features;
  RoadNetwork net;
  std::string blue_order;  ///< the BLUE objective text (an order document)
  std::string objective_place;  ///< id of the place the order names first

  const Feature* find(std::string_view id_or_name) const;
  std::vector<const Feature*> of_kind(std::string_view kind, std::string_view side = "") const;
  /// Polygons of the threat zones posed by `side` ("RED" threatens BLUE movements).
  std::vector<Polygon> threats_of(std::string_view side) const;
  /// A point for any feature: the point itself, or a polygon's centroid.
  Point anchor(const Feature& f) const;
};

/// The map of a scenario: a pure function of the scenario (its id, seed, template, places and assets), drawing
/// only from Rng::keyed(seed, template, "geo"), so generating it changes nothing else.
GeoMap generate_map(const Scenario& sc);

/// RFC 7946 GeoJSON: a FeatureCollection in lon/lat (WGS 84), polygon rings closed and counterclockwise, the
/// network edges as LineStrings (kind "road" or "sea-lane"). Coordinates rounded to 6 decimals.
std::string to_geojson(const GeoMap& m);
/// A scenario's layer over a shared map (docs/GEO.md "A run on the map"): a FeatureCollection with the members
/// `base` (`base_ref`, the shared map's file) and `hidden` (the ids of the base's features that `m` places anew or
/// drops), and only the features of `m` that the base does not hold as they are; no network (it is the base's).
std::string to_geojson_layer(const GeoMap& m, const GeoMap& base, const std::string& base_ref);
/// to_geojson with at most `max_positions` positions: the features, then the network's edges, in order, until one
/// does not fit; the number left out in the member `left_out`.
std::string to_geojson_bounded(const GeoMap& m, std::size_t max_positions);

}  // namespace advplan::geo
