#include "advplan/geo/network.hpp"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
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

/// The router's flat view of the Boost graph (compressed sparse rows: each vertex's arcs contiguous), built
/// once from the graph's out-edges on the first route; an undirected adjacency_list keeps edge properties in a
/// shared list that a search would chase through memory.
struct Arcs {
  std::vector<std::uint32_t> first;  ///< n + 1 offsets
  std::vector<std::uint32_t> head;
  std::vector<double> length;
  std::vector<std::uint32_t> edge;   ///< edge index, for the exclusion memo
};

Arcs compile(const Graph& g) {
  Arcs a;
  const auto n = boost::num_vertices(g);
  a.first.reserve(n + 1);
  const auto weight = boost::get(boost::edge_weight, g);
  const auto index = boost::get(boost::edge_index, g);
  for (Vertex u = 0; u < n; ++u) {
    a.first.push_back(static_cast<std::uint32_t>(a.head.size()));
    for (auto [e, end] = boost::out_edges(u, g); e != end; ++e) {
      a.head.push_back(static_cast<std::uint32_t>(boost::target(*e, g)));
      a.length.push_back(weight[*e]);
      a.edge.push_back(static_cast<std::uint32_t>(index[*e]));
    }
  }
  a.first.push_back(static_cast<std::uint32_t>(a.head.size()));
  return a;
}
}  // namespace

struct RoadNetwork::Impl {
  Graph g;
  std::vector<Point> pts;
  std::vector<Edge> edges;
  mutable std::once_flag compiled;
  mutable Arcs arcs;

  Impl() = default;
  Impl(const Impl& o) : pts(o.pts), edges(o.edges) {
    for (std::size_t i = 0; i < pts.size(); ++i) boost::add_vertex(g);
    for (std::size_t i = 0; i < edges.size(); ++i)
      boost::add_edge(static_cast<Vertex>(edges[i].u), static_cast<Vertex>(edges[i].v),
                      Graph::edge_property_type(edges[i].length, boost::property<boost::edge_index_t, int>(static_cast<int>(i))), g);
  }
  const Arcs& routing() const {
    std::call_once(compiled, [this] { arcs = compile(g); });
    return arcs;
  }
};

RoadNetwork::RoadNetwork() : impl_(std::make_shared<Impl>()) {}
RoadNetwork::~RoadNetwork() = default;
RoadNetwork::RoadNetwork(const RoadNetwork& o) = default;
RoadNetwork& RoadNetwork::operator=(const RoadNetwork& o) = default;
// Only a network nobody else holds is changed in place: one that is shared (use_count > 1) is copied first. A
// network that is its only owner's cannot be read by another thread at the same time without a data race anyway.
RoadNetwork::Impl& RoadNetwork::own() {
  if (!impl_) impl_ = std::make_shared<Impl>();
  else if (impl_.use_count() > 1) impl_ = std::make_shared<Impl>(*impl_);
  return *impl_;
}
RoadNetwork::RoadNetwork(RoadNetwork&&) noexcept = default;
RoadNetwork& RoadNetwork::operator=(RoadNetwork&&) noexcept = default;

int RoadNetwork::add_node(Point p) {
  Impl& m = own();
  m.pts.push_back(p);
  return static_cast<int>(boost::add_vertex(m.g));
}

void RoadNetwork::add_edge(int u, int v, double length) {
  Impl& m = own();
  const int n = static_cast<int>(m.pts.size());
  if (u < 0 || v < 0 || u >= n || v >= n) throw std::out_of_range("RoadNetwork::add_edge: no such node");
  const int id = static_cast<int>(m.edges.size());
  boost::add_edge(static_cast<Vertex>(u), static_cast<Vertex>(v),
                  Graph::edge_property_type(length, boost::property<boost::edge_index_t, int>(id)), m.g);
  m.edges.push_back({u, v, length});
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
  // A* with a binary heap (lazy deletion); the straight-line heuristic is admissible and consistent because no
  // edge is shorter than the straight line between its ends. Each edge is tested against the avoided polygons
  // at most once per query, when first relaxed: the graph is never rebuilt.
  const Arcs& A = impl_->routing();
  const PolygonIndex index(avoid);
  std::vector<signed char> memo(avoid.empty() ? 0 : impl_->edges.size(), -1);
  const auto nv = static_cast<std::size_t>(n);
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> g(nv, kInf);
  std::vector<int> pred(nv, -1);
  std::vector<char> closed(nv, 0);
  const std::vector<Point>& pts = impl_->pts;
  const Point goal = pts[static_cast<std::size_t>(to)];
  using Item = std::pair<double, int>;
  std::vector<Item> heap;
  heap.reserve(1024);
  auto cmp = [](const Item& a, const Item& b) { return a.first > b.first; };
  g[static_cast<std::size_t>(from)] = 0;
  heap.push_back({distance(pts[static_cast<std::size_t>(from)], goal), from});
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), cmp);
    const int u = heap.back().second;
    heap.pop_back();
    const auto uu = static_cast<std::size_t>(u);
    if (closed[uu]) continue;
    closed[uu] = 1;
    if (u == to) break;
    for (std::uint32_t k = A.first[uu]; k < A.first[uu + 1]; ++k) {
      const std::size_t v = A.head[k];
      if (closed[v]) continue;
      const double nd = g[uu] + A.length[k];
      if (nd >= g[v]) continue;
      if (!memo.empty()) {
        signed char& m = memo[A.edge[k]];
        if (m < 0) m = index.segment_hits(pts[uu], pts[v]) ? 1 : 0;
        if (m) continue;
      }
      g[v] = nd;
      pred[v] = u;
      heap.push_back({nd + distance(pts[v], goal), static_cast<int>(v)});
      std::push_heap(heap.begin(), heap.end(), cmp);
    }
  }
  const auto t = static_cast<std::size_t>(to);
  if (!closed[t]) return r;
  r.found = true;
  r.length = g[t];
  for (int v = to;; v = pred[static_cast<std::size_t>(v)]) {
    r.nodes.push_back(v);
    if (v == from) break;
  }
  std::reverse(r.nodes.begin(), r.nodes.end());
  return r;
}

}  // namespace advplan::geo
