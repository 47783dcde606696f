#pragma once
// The validity of a polygon ring read from a user's map (docs/GEO.md "Bring your own map"): the OGC simple feature
// rules, checked by Boost.Geometry's is_valid (its headers are slow to compile, so they stay in ring_check.cpp).
#include <string>

#include "advplan/geo/geometry.hpp"

namespace advplan::geo {

/// Why `p` (its vertices in either orientation, without the closing repeat) is not a valid simple polygon ring, as
/// a phrase ("the ring crosses or touches itself"), or "" when it is valid. Invalid: fewer than three distinct
/// positions, a self-intersection or self-touching point, a spike (an edge that doubles back on the one before), a
/// non-finite coordinate. Repeated consecutive positions are allowed (OGC allows them). The orientation is not
/// judged (RFC 7946: readers must not refuse a clockwise ring).
std::string ring_problem(const Polygon& p);

}  // namespace advplan::geo
