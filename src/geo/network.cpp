#include "advplan/geo/network.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/astar_search.hpp>
#include <boost/graph/filtered_graph.hpp>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace advplan::geo {

PolygonIndex::PolygonIndex(std::span<const Polygon> polys) : polys_(polys) {
  if (polys_.empty()) return;
  all_ = {1e300, 1e300, -1e300, -1e300};
  for (const auto& p : polys_) {
    boxes_.push_back(bbox_of(p));
    const BBox& b = boxes_.back();
    all_ = {std::min(all_.x0, b.x0), std::min(all_.y0, b.y0), std::max(all_.x1, b.x1), std::max(all_.y1, b.y1)};
  }
  const int n = std::clamp(static_cast<int>(std::ceil(std::sqrt(static_cast<double>(polys_.size()) * 4))), 1, 64);
  nx_ = ny_ = n;
  cw_ = std::max(1e-9, (all_.x1 - all_.x0) / nx_);
  ch_ = std::max(1e-9, (all_.y1 - all_.y0) / ny_);
  cells_.resize(static_cast<std::size_t>(nx_ * ny_));
  for (std::size_t i = 0; i < boxes_.size(); ++i) {
    const BBox& b = boxes_[i];
    const int cx0 = std::clamp(static_cast<int>((b.x0 - all_.x0) / cw_), 0, nx_ - 1);
    const int cx1 = std::clamp(static_cast<int>((b.x1 - all_.x0) / cw_), 0, nx_ - 1);
    const int cy0 = std::clamp(static_cast<int>((b.y0 - all_.y0) / ch_), 0, ny_ - 1);
    const int cy1 = std::clamp(static_cast<int>((b.y1 - all_.y0) / ch_), 0, ny_ - 1);
    for (int y = cy0; y <= cy1; ++y)
      for (int x = cx0; x <= cx1; ++x) cells_[static_cast<std::size_t>(y * nx_ + x)].push_back(static_cast<int>(i));
  }
  stamp_.assign(polys_.size(), 0);
}

bool PolygonIndex::segment_hits(const Point& a, const Point& b) const {
  if (polys_.empty()) return false;
  const BBox sb = bbox_of(a, b);
  if (!sb.overlaps(all_)) return false;
  const int cx0 = std::clamp(static_cast<int>((sb.x0 - all_.x0) / cw_), 0, nx_ - 1);
  const int cx1 = std::clamp(static_cast<int>((sb.x1 - all_.x0) / cw_), 0, nx_ - 1);
  const int cy0 = std::clamp(static_cast<int>((sb.y0 - all_.y0) / ch_), 0, ny_ - 1);
  const int cy1 = std::clamp(static_cast<int>((sb.y1 - all_.y0) / ch_), 0, ny_ - 1);
  if (++tick_ == 0) {
    std::fill(stamp_.begin(), stamp_.end(), 0u);
    tick_ = 1;
  }
  for (int y = cy0; y <= cy1; ++y)
    for (int x = cx0; x <= cx1; ++x)
      for (int i : cells_[static_cast<std::size_t>(y * nx_ + x)]) {
        if (stamp_[static_cast<std::size_t>(i)] == tick_) continue;
        stamp_[static_cast<std::size_t>(i)] = tick_;
        if (boxes_[static_cast<std::size_t>(i)].overlaps(sb) && segment_intersects(polys_[static_cast<std::size_t>(i)], a, b))
          return true;
      }
  return false;
}

namespace {
using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS, boost::no_property,
                                    boost::property<boost::edge_weight_t, double, boost::property<boost::edge_index_t, int>>>;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;
using EdgeD = boost::graph_traits<Graph>::edge_descriptor;

struct FoundTarget {};

/// Keeps an edge unless it meets an avoided polygon; each edge is tested once per query (memo).
struct NotBlocked {
  const Graph* g = nullptr;
  const std::vector<Point>* pts = nullptr;
  const PolygonIndex* index = nullptr;
  std::vector<signed char>* memo = nullptr;
  bool operator()(const EdgeD& e) const {
    if (index == nullptr || index->empty()) return true;
    const int id = boost::get(boost::edge_index, *g, e);
    signed char& m = (*memo)[static_cast<std::size_t>(id)];
    if (m < 0) m = index->segment_hits((*pts)[boost::source(e, *g)], (*pts)[boost::target(e, *g)]) ? 1 : 0;
    return m == 0;
  }
};

struct StopAtTarget : boost::default_astar_visitor {
  Vertex target;
  explicit StopAtTarget(Vertex t) : target(t) {}
  template <class G>
  void examine_vertex(Vertex u, const G&) {
    if (u == target) throw FoundTarget{};
  }
};

struct Straight : boost::astar_heuristic<Graph, double> {
  const std::vector<Point>* pts = nullptr;
  Point goal;
  Straight(const std::vector<Point>* p, Point g) : pts(p), goal(g) {}
  double operator()(Vertex v) const { return distance((*pts)[v], goal); }
};
}  // namespace

struct RoadNetwork::Impl {
  Graph g;
  std::vector<Point> pts;
  std::vector<Edge> edges;
};

RoadNetwork::RoadNetwork() : impl_(std::make_unique<Impl>()) {}
RoadNetwork::~RoadNetwork() = default;
RoadNetwork::RoadNetwork(const RoadNetwork& o) : impl_(std::make_unique<Impl>(*o.impl_)) {}
RoadNetwork& RoadNetwork::operator=(const RoadNetwork& o) {
  if (this != &o) impl_ = std::make_unique<Impl>(*o.impl_);
  return *this;
}
RoadNetwork::RoadNetwork(RoadNetwork&&) noexcept = default;
RoadNetwork& RoadNetwork::operator=(RoadNetwork&&) noexcept = default;

int RoadNetwork::add_node(Point p) {
  impl_->pts.push_back(p);
  return static_cast<int>(boost::add_vertex(impl_->g));
}

void RoadNetwork::add_edge(int u, int v, double length) {
  const int n = static_cast<int>(impl_->pts.size());
  if (u < 0 || v < 0 || u >= n || v >= n) throw std::out_of_range("RoadNetwork::add_edge: no such node");
  const int id = static_cast<int>(impl_->edges.size());
  boost::add_edge(static_cast<Vertex>(u), static_cast<Vertex>(v),
                  Graph::edge_property_type(length, boost::property<boost::edge_index_t, int>(id)), impl_->g);
  impl_->edges.push_back({u, v, length});
}

std::size_t RoadNetwork::num_nodes() const { return impl_->pts.size(); }
std::size_t RoadNetwork::num_edges() const { return impl_->edges.size(); }
const Point& RoadNetwork::node(int i) const { return impl_->pts.at(static_cast<std::size_t>(i)); }
const std::vector<RoadNetwork::Edge>& RoadNetwork::edges() const { return impl_->edges; }

int RoadNetwork::nearest_node(const Point& p) const {
  int best = -1;
  double bd = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < impl_->pts.size(); ++i)
    if (const double d = distance(impl_->pts[i], p); d < bd) {
      bd = d;
      best = static_cast<int>(i);
    }
  return best;
}

std::vector<bool> RoadNetwork::blocked_edges(std::span<const Polygon> avoid) const {
  const PolygonIndex index(avoid);
  std::vector<bool> out(impl_->edges.size());
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = index.segment_hits(impl_->pts[static_cast<std::size_t>(impl_->edges[i].u)],
                                impl_->pts[static_cast<std::size_t>(impl_->edges[i].v)]);
  return out;
}

RoadNetwork::Route RoadNetwork::shortest_path(int from, int to, std::span<const Polygon> avoid) const {
  Route r;
  const int n = static_cast<int>(impl_->pts.size());
  if (from < 0 || to < 0 || from >= n || to >= n) return r;
  if (from == to) {
    r.found = true;
    r.nodes = {from};
    return r;
  }
  const PolygonIndex index(avoid);
  std::vector<signed char> memo(impl_->edges.size(), -1);
  NotBlocked keep{&impl_->g, &impl_->pts, &index, &memo};
  boost::filtered_graph<Graph, NotBlocked> fg(impl_->g, keep);
  const auto nv = static_cast<std::size_t>(n);
  std::vector<Vertex> pred(nv);
  std::vector<double> dist(nv, std::numeric_limits<double>::infinity()), cost(nv, std::numeric_limits<double>::infinity());
  std::vector<boost::default_color_type> color(nv);
  const auto vid = boost::get(boost::vertex_index, impl_->g);
  try {
    boost::astar_search(fg, static_cast<Vertex>(from), Straight(&impl_->pts, impl_->pts[static_cast<std::size_t>(to)]),
                        boost::visitor(StopAtTarget(static_cast<Vertex>(to)))
                            .predecessor_map(boost::make_iterator_property_map(pred.begin(), vid))
                            .distance_map(boost::make_iterator_property_map(dist.begin(), vid))
                            .rank_map(boost::make_iterator_property_map(cost.begin(), vid))
                            .color_map(boost::make_iterator_property_map(color.begin(), vid))
                            .weight_map(boost::get(boost::edge_weight, fg)));
  } catch (const FoundTarget&) {
  }
  const auto t = static_cast<std::size_t>(to);
  // astar_search initialises distances to numeric_limits<double>::max(): an unreached target keeps it.
  if (!(dist[t] < std::numeric_limits<double>::max())) return r;
  r.found = true;
  r.length = dist[t];
  for (Vertex v = static_cast<Vertex>(to);; v = pred[v]) {
    r.nodes.push_back(static_cast<int>(v));
    if (v == static_cast<Vertex>(from)) break;
  }
  std::reverse(r.nodes.begin(), r.nodes.end());
  return r;
}

}  // namespace advplan::geo
