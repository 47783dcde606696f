#pragma once
#include <cmath>
#include <limits>
// Planar geometry of the geospatial layer (docs/GEO.md "Geometry"). Coordinates are kilometres on a local
// projection (x east, y north); every measure here is planar and exact on that plane.
#include <string>
#include <vector>

namespace advplan::geo {

struct Point {
  double x = 0, y = 0;  ///< km east, km north of the map origin
  bool operator==(const Point&) const = default;
};

struct BBox {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  bool overlaps(const BBox& o) const { return x0 <= o.x1 && o.x0 <= x1 && y0 <= o.y1 && o.y0 <= y1; }
  bool contains(const Point& p) const { return p.x >= x0 && p.x <= x1 && p.y >= y0 && p.y <= y1; }
};

/// A simple polygon: its vertices counterclockwise, without the closing repeat of the first vertex.
struct Polygon {
  std::vector<Point> ring;
  bool operator==(const Polygon&) const = default;
};

double distance(const Point& a, const Point& b);
BBox bbox_of(const Polygon& p);
BBox bbox_of(const Point& a, const Point& b);
/// Shoelace formula: positive for a counterclockwise ring (km^2).
double signed_area(const Polygon& p);
double area(const Polygon& p);
/// Area-weighted centroid (the vertex mean for a degenerate ring).
Point centroid(const Polygon& p);
/// Even-odd rule; a point on the boundary counts as inside.
bool contains(const Polygon& p, const Point& q);
/// True when segments [a,b] and [c,d] share a point (touching included).
bool segments_intersect(const Point& a, const Point& b, const Point& c, const Point& d);
/// True when the segment [a,b] meets the polygon: it crosses or touches its boundary, or lies inside it.
bool segment_intersects(const Polygon& p, const Point& a, const Point& b);
/// Length (km) of the part of [a,b] that lies inside the polygon.
double length_inside(const Polygon& p, const Point& a, const Point& b);

/// The local projection (docs/GEO.md "Projection"): equirectangular about (lon0, lat0), Earth radius
/// 6371.0088 km (the IUGG mean radius).
struct Projection {
  double lon0 = 0, lat0 = 0;
  /// The latitude whose cosine scales longitude: lat0 when NaN (generated maps); a user's map sets the middle of
  /// its latitudes, so east-west distances are right across the map rather than at its southern edge.
  double lat_scale = std::numeric_limits<double>::quiet_NaN();
  /// [lon, lat] in degrees.
  std::pair<double, double> to_lonlat(const Point& p) const;
  Point from_lonlat(double lon, double lat) const;
};
inline constexpr double kEarthRadiusKm = 6371.0088;
/// Great-circle distance (km) between two lon/lat points (haversine), for comparison with the planar measure.
double haversine_km(double lon1, double lat1, double lon2, double lat2);

}  // namespace advplan::geo
