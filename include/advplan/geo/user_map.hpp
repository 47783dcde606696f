#pragma once
// A user's map (docs/GEO.md "Bring your own map"): a GeoJSON FeatureCollection of places and assets (Points), roads
// or sea lanes (LineStrings), threat zones, sectors, obstacles and the area of operations (Polygons), and an order
// (a Feature without geometry), read as untrusted input into a GeoMap; and scenarios put on it.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "advplan/core/scenario.hpp"
#include "advplan/geo/map.hpp"

namespace advplan::geo {

/// Bounds on a user's GeoJSON.
inline constexpr std::size_t kMaxUserMapBytes = 64u << 20;
inline constexpr std::size_t kMaxUserFeatures = 100'000;
inline constexpr std::size_t kMaxUserVertices = 1'000'000;  ///< over the whole file
inline constexpr std::size_t kMaxRingVertices = 10'000;
inline constexpr std::size_t kMaxOrderBytes = 64u << 10;
/// Counted in the text before it is parsed (a parsed value costs tens of bytes, however short its text).
inline constexpr std::size_t kMaxUserArrays = 2'500'000, kMaxUserObjects = 500'000, kMaxUserValues = 6'000'000;
/// A planar map stops short of the poles.
inline constexpr double kMaxAbsLatitude = 85;

/// Parses the map; throws ConfigError with one sentence naming `source`, the feature index and the property. The
/// projection's origin is the south-west corner of every coordinate (lon0, lat0 the minima), so the map's planar
/// kilometres are non-negative; the layout rule is the built-in rule of the network's domain (road: land,
/// sea-lane: sea) with the order's speed_kmh and time_window_h when given, and extent_km the larger side of the
/// bounding box. A road's vertices are the network's nodes (equal coordinates are one node), its segments the edges
/// (planar length). Points attach to their nearest node.
GeoMap parse_user_map(const std::string& text, const std::string& source);
/// Reads and parses the file; `sha256`, when given, receives the lower-case hex SHA-256 of the bytes parsed.
GeoMap read_user_map(const std::string& path, std::string* sha256 = nullptr);

/// nearest_node of each point (the lowest index among equally near nodes; -1 without nodes), through a uniform
/// grid over `box`, which must hold every node and point: the same answers as the scan, in about O(1) per point.
std::vector<int> nearest_nodes(const RoadNetwork& net, std::span<const Point> points, const BBox& box);

/// `sc` on the user's map `base`: the map's network, zones, sectors, obstacles and area; each scenario place that
/// the map names (a place feature whose name is the place) where the map has it, the others on nodes drawn as
/// generate_map draws them (the forward band, from the scenario's own "geo" stream); each scenario asset with the
/// id of a map asset where the map has it, the others drawn in their side's band; the scenario's objective as the
/// order. The map's other places and assets stay on the map. A pure function of (sc, base).
GeoMap overlay_scenario(const Scenario& sc, const GeoMap& base);

}  // namespace advplan::geo
