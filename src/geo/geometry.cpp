#include "advplan/geo/geometry.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include "core/det_math.hpp"

namespace advplan::geo {
namespace {
double cross(const Point& o, const Point& a, const Point& b) { return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x); }
bool on_segment(const Point& a, const Point& b, const Point& q) {
  return std::min(a.x, b.x) <= q.x && q.x <= std::max(a.x, b.x) && std::min(a.y, b.y) <= q.y && q.y <= std::max(a.y, b.y);
}
int sign(double v) { return v > 0 ? 1 : v < 0 ? -1 : 0; }
}  // namespace

double distance(const Point& a, const Point& b) { return det::hypot(a.x - b.x, a.y - b.y); }

BBox bbox_of(const Polygon& p) {
  BBox b{1e300, 1e300, -1e300, -1e300};
  for (const auto& v : p.ring) {
    b.x0 = std::min(b.x0, v.x);
    b.y0 = std::min(b.y0, v.y);
    b.x1 = std::max(b.x1, v.x);
    b.y1 = std::max(b.y1, v.y);
  }
  return b;
}

BBox bbox_of(const Point& a, const Point& b) {
  return {std::min(a.x, b.x), std::min(a.y, b.y), std::max(a.x, b.x), std::max(a.y, b.y)};
}

double signed_area(const Polygon& p) {
  double s = 0;
  const std::size_t n = p.ring.size();
  for (std::size_t i = 0; i < n; ++i) {
    const Point& a = p.ring[i];
    const Point& b = p.ring[(i + 1) % n];
    s += a.x * b.y - b.x * a.y;
  }
  return s / 2;
}

double area(const Polygon& p) { return std::abs(signed_area(p)); }

Point centroid(const Polygon& p) {
  const double a = signed_area(p);
  const std::size_t n = p.ring.size();
  if (n == 0) return {};
  if (std::abs(a) < 1e-12) {
    Point c;
    for (const auto& v : p.ring) c = {c.x + v.x / n, c.y + v.y / n};
    return c;
  }
  double cx = 0, cy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Point& u = p.ring[i];
    const Point& v = p.ring[(i + 1) % n];
    const double f = u.x * v.y - v.x * u.y;
    cx += (u.x + v.x) * f;
    cy += (u.y + v.y) * f;
  }
  return {cx / (6 * a), cy / (6 * a)};
}

bool contains(const Polygon& p, const Point& q) {
  bool in = false;
  const std::size_t n = p.ring.size();
  for (std::size_t i = 0, j = n - 1; i < n; j = i++) {
    const Point& a = p.ring[i];
    const Point& b = p.ring[j];
    if (cross(a, b, q) == 0 && on_segment(a, b, q)) return true;
    if ((a.y > q.y) != (b.y > q.y) && q.x < (b.x - a.x) * (q.y - a.y) / (b.y - a.y) + a.x) in = !in;
  }
  return in;
}

bool segments_intersect(const Point& a, const Point& b, const Point& c, const Point& d) {
  const int d1 = sign(cross(c, d, a)), d2 = sign(cross(c, d, b)), d3 = sign(cross(a, b, c)), d4 = sign(cross(a, b, d));
  if (d1 * d2 < 0 && d3 * d4 < 0) return true;
  if (d1 == 0 && on_segment(c, d, a)) return true;
  if (d2 == 0 && on_segment(c, d, b)) return true;
  if (d3 == 0 && on_segment(a, b, c)) return true;
  if (d4 == 0 && on_segment(a, b, d)) return true;
  return false;
}

bool segment_intersects(const Polygon& p, const Point& a, const Point& b) {
  if (contains(p, a) || contains(p, b)) return true;
  const std::size_t n = p.ring.size();
  for (std::size_t i = 0; i < n; ++i)
    if (segments_intersect(a, b, p.ring[i], p.ring[(i + 1) % n])) return true;
  return false;
}

double length_inside(const Polygon& p, const Point& a, const Point& b) {
  std::vector<double> ts{0.0, 1.0};
  const double dx = b.x - a.x, dy = b.y - a.y;
  const std::size_t n = p.ring.size();
  for (std::size_t i = 0; i < n; ++i) {
    const Point& c = p.ring[i];
    const Point& d = p.ring[(i + 1) % n];
    const double ex = d.x - c.x, ey = d.y - c.y;
    const double den = dx * ey - dy * ex;
    if (den == 0) continue;  // parallel: the sub-interval midpoints decide
    const double t = ((c.x - a.x) * ey - (c.y - a.y) * ex) / den;
    const double u = ((c.x - a.x) * dy - (c.y - a.y) * dx) / den;
    if (t > 0 && t < 1 && u >= 0 && u <= 1) ts.push_back(t);
  }
  std::sort(ts.begin(), ts.end());
  const double len = det::hypot(dx, dy);
  double in = 0;
  for (std::size_t i = 0; i + 1 < ts.size(); ++i) {
    const double m = (ts[i] + ts[i + 1]) / 2;
    if (ts[i + 1] > ts[i] && contains(p, {a.x + m * dx, a.y + m * dy})) in += (ts[i + 1] - ts[i]) * len;
  }
  return in;
}

std::pair<double, double> Projection::to_lonlat(const Point& p) const {
  constexpr double deg = 180.0 / std::numbers::pi;
  const double lat = lat0 + p.y / kEarthRadiusKm * deg;
  const double lon = lon0 + p.x / (kEarthRadiusKm * det::cos((std::isnan(lat_scale) ? lat0 : lat_scale) / deg)) * deg;
  return {lon, lat};
}

Point Projection::from_lonlat(double lon, double lat) const {
  constexpr double rad = std::numbers::pi / 180.0;
  return {(lon - lon0) * rad * kEarthRadiusKm * det::cos((std::isnan(lat_scale) ? lat0 : lat_scale) * rad),
          (lat - lat0) * rad * kEarthRadiusKm};
}

double haversine_km(double lon1, double lat1, double lon2, double lat2) {
  constexpr double rad = std::numbers::pi / 180.0;
  const double dlat = (lat2 - lat1) * rad, dlon = (lon2 - lon1) * rad;
  const double h = det::sin(dlat / 2) * det::sin(dlat / 2) +
                   det::cos(lat1 * rad) * det::cos(lat2 * rad) * det::sin(dlon / 2) * det::sin(dlon / 2);
  return 2 * kEarthRadiusKm * det::asin(std::min(1.0, std::sqrt(h)));
}

}  // namespace advplan::geo
