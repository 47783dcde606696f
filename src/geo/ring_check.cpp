#include "advplan/geo/ring_check.hpp"

// Boost 1.74's geometry headers include a header Boost itself marks deprecated; the message is Boost's, not ours.
#define BOOST_ALLOW_DEPRECATED_HEADERS
#include <algorithm>
#include <boost/geometry/algorithms/is_valid.hpp>
#include <boost/geometry/algorithms/validity_failure_type.hpp>
#include <boost/geometry/geometries/point_xy.hpp>
#include <boost/geometry/geometries/polygon.hpp>

namespace advplan::geo {
namespace {

namespace bg = boost::geometry;
using BgPoint = bg::model::d2::point_xy<double>;
/// Counterclockwise and closed: the ring is given to is_valid in the orientation its own area says it has.
using BgPolygon = bg::model::polygon<BgPoint, false, true>;

std::string phrase(bg::validity_failure_type f) {
  switch (f) {
    case bg::failure_few_points:
      return "the ring has fewer than three distinct positions";
    case bg::failure_spikes:
      return "the ring has a spike (an edge that runs back along the one before it)";
    case bg::failure_self_intersections:
      return "the ring crosses or touches itself (a bow-tie or a figure eight is two polygons: give each its "
             "own "
             "feature)";
    case bg::failure_invalid_coordinate:
      return "the ring has a coordinate that is not a finite number";
    case bg::failure_wrong_topological_dimension:
    case bg::failure_wrong_orientation:  // after the reversal above, only a ring of no area
      return "the ring has no area (its positions lie on one line)";
    default:
      return "the ring is not a valid simple polygon (OGC simple feature rules)";
  }
}

}  // namespace

std::string ring_problem(const Polygon& p) {
  BgPolygon poly;
  for (const Point& q : p.ring) poly.outer().emplace_back(q.x, q.y);
  if (!poly.outer().empty()) poly.outer().push_back(poly.outer().front());
  // The orientation is the reader's to fix, not a fault: a clockwise ring is checked reversed.
  if (signed_area(p) < 0) std::reverse(poly.outer().begin(), poly.outer().end());
  bg::validity_failure_type failure = bg::no_failure;
  if (bg::is_valid(poly, failure)) return "";
  return phrase(failure);
}

}  // namespace advplan::geo
