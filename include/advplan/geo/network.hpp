#pragma once
// The road or sea-lane graph of a map (docs/GEO.md "Network"): nodes at planar points, undirected edges with
// lengths in km. The graph itself is a Boost.Graph adjacency_list kept in the .cpp (pimpl), so this header
// stays light. Routes exclude, at query time, every edge that meets an avoided polygon: the graph is never
// rebuilt.
#include <memory>
#include <span>
#include <vector>

#include "advplan/geo/geometry.hpp"

namespace advplan::geo {

class RoadNetwork {
 public:
  struct Edge {
    int u = 0, v = 0;
    double length = 0;  ///< km
  };
  struct Route {
    bool found = false;
    double length = 0;       ///< km
    std::vector<int> nodes;  ///< from .. to
  };

  RoadNetwork();
  ~RoadNetwork();
  /// A copy shares the graph (and its routing arrays) with `o` until either adds a node or an edge: a scenario put
  /// on a user's map of a million positions costs no copy of its network (docs/DECISIONS.md).
  RoadNetwork(const RoadNetwork& o);
  RoadNetwork& operator=(const RoadNetwork& o);
  RoadNetwork(RoadNetwork&&) noexcept;
  RoadNetwork& operator=(RoadNetwork&&) noexcept;

  int add_node(Point p);
  /// Undirected edge; length >= the straight-line distance keeps the A* heuristic admissible.
  void add_edge(int u, int v, double length);
  std::size_t num_nodes() const;
  std::size_t num_edges() const;
  const Point& node(int i) const;
  const std::vector<Edge>& edges() const;
  /// The node closest to p (-1 when the network is empty).
  int nearest_node(const Point& p) const;
  /// Edges meeting any of the polygons (a grid of polygon bounding boxes prefilters the exact test).
  std::vector<bool> blocked_edges(std::span<const Polygon> avoid) const;
  /// Shortest path (A* with the straight-line heuristic) skipping every edge that meets an avoided polygon.
  Route shortest_path(int from, int to, std::span<const Polygon> avoid = {}) const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
  Impl& own();  ///< the graph, copied first when another network shares it
};

/// Answers "does this edge meet one of the polygons?" fast: a uniform grid over the polygons' bounding boxes
/// picks the few candidates for the exact segment-polygon test.
class PolygonIndex {
 public:
  explicit PolygonIndex(std::span<const Polygon> polys);
  bool segment_hits(const Point& a, const Point& b) const;
  bool empty() const { return polys_.empty(); }

 private:
  std::span<const Polygon> polys_;
  std::vector<BBox> boxes_;
  BBox all_{};
  int nx_ = 1, ny_ = 1;
  double cw_ = 1, ch_ = 1;
  std::vector<std::vector<int>> cells_;
  mutable std::vector<unsigned> stamp_;
  mutable unsigned tick_ = 0;
};

}  // namespace advplan::geo
