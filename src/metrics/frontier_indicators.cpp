#include "advplan/metrics/frontier_indicators.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>

namespace advplan {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool finite_point(const PointSet& p, std::size_t i) {
  for (std::size_t j = 0; j < p.dim; ++j)
    if (std::isnan(p.at(i, j))) return false;
  return true;
}

/// Finite and strictly better than the reference in every objective: the points that add volume.
bool inside(const PointSet& p, std::size_t i, std::span<const double> ref) {
  for (std::size_t j = 0; j < p.dim; ++j)
    if (!(p.at(i, j) < ref[j])) return false;  // NaN: false
  return true;
}

void check_reference(const PointSet& p, std::span<const double> ref, const char* who) {
  if (ref.size() != p.dim)
    throw std::invalid_argument(std::string(who) + ": the reference point and the points have different dimensions");
  for (double r : ref)
    if (!std::isfinite(r)) throw std::invalid_argument(std::string(who) + ": the reference point is not finite");
}

/// The area the points (all inside the box) weakly dominate within [., bx) x [., by): sorted by (x, y), then summed
/// strip by strip. Both 2-D routes call it on the same multiset of points, so they get the same bits.
double staircase_area(std::vector<Point2> pts, double bx, double by) {
  std::sort(pts.begin(), pts.end());
  double area = 0, prev = by;
  for (const auto& p : pts)
    if (p[1] < prev) {
      area += (bx - p[0]) * (prev - p[1]);
      prev = p[1];
    }
  return area;
}

double slab_contribution(const Point2& p, double bx, double by, std::vector<Point2> in_slab) {
  return (bx - p[0]) * (by - p[1]) - staircase_area(std::move(in_slab), bx, by);
}

}  // namespace

std::vector<double> hypervolume_contributions_2d(const PointSet& p, std::span<const double> ref) {
  if (p.dim != 2) throw std::invalid_argument("hypervolume_contributions_2d: the points must have two objectives");
  check_reference(p, ref, "hypervolume contributions");
  const std::size_t n = p.size();
  std::vector<double> out(n, 0.0);
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < n; ++i)
    if (inside(p, i, ref)) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return p.at(a, 0) < p.at(b, 0) || (p.at(a, 0) == p.at(b, 0) && p.at(a, 1) < p.at(b, 1));
  });
  // The front: x strictly ascending, y strictly descending; the first of equal points is on it, the others are in
  // its slab (and make its contribution 0).
  std::vector<std::size_t> front;
  std::vector<double> fx;
  std::vector<std::size_t> rest;
  double best = kInf;
  for (std::size_t i : order) {
    if (p.at(i, 1) < best) {
      front.push_back(i);
      fx.push_back(p.at(i, 0));
      best = p.at(i, 1);
    } else {
      rest.push_back(i);
    }
  }
  // Slab of front point k: [x_k, x_{k+1}) x [y_k, y_{k-1}), with x_{m} = r_x and y_{-1} = r_y. The slabs are
  // disjoint; a dominated point lies in at most one, that of the last front point with x_k <= x_j, if below y_{k-1}.
  std::vector<std::vector<Point2>> slab(front.size());
  for (std::size_t j : rest) {
    const auto k = static_cast<std::size_t>(std::upper_bound(fx.begin(), fx.end(), p.at(j, 0)) - fx.begin()) - 1;
    const double top = k == 0 ? ref[1] : p.at(front[k - 1], 1);
    if (p.at(j, 1) < top) slab[k].push_back({p.at(j, 0), p.at(j, 1)});
  }
  for (std::size_t k = 0; k < front.size(); ++k) {
    const double bx = k + 1 == front.size() ? ref[0] : p.at(front[k + 1], 0);
    const double by = k == 0 ? ref[1] : p.at(front[k - 1], 1);
    out[front[k]] = slab_contribution({p.at(front[k], 0), p.at(front[k], 1)}, bx, by, std::move(slab[k]));
  }
  return out;
}

std::vector<double> hypervolume_contributions_2d_plain(const PointSet& p, std::span<const double> ref) {
  if (p.dim != 2) throw std::invalid_argument("hypervolume_contributions_2d: the points must have two objectives");
  check_reference(p, ref, "hypervolume contributions");
  const std::size_t n = p.size();
  std::vector<double> out(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    if (!inside(p, i, ref)) continue;
    const double x = p.at(i, 0), y = p.at(i, 1);
    bool dominated = false;
    double bx = ref[0], by = ref[1];
    for (std::size_t j = 0; j < n && !dominated; ++j) {
      if (j == i || !inside(p, j, ref)) continue;
      dominated = p.at(j, 0) <= x && p.at(j, 1) <= y;
      if (p.at(j, 1) < y) bx = std::min(bx, p.at(j, 0));
      if (p.at(j, 0) < x) by = std::min(by, p.at(j, 1));
    }
    if (dominated) continue;  // weakly dominated (or equal to another point): removing it loses nothing
    std::vector<Point2> in_slab;
    for (std::size_t j = 0; j < n; ++j)
      if (j != i && inside(p, j, ref) && p.at(j, 0) >= x && p.at(j, 0) < bx && p.at(j, 1) >= y && p.at(j, 1) < by)
        in_slab.push_back({p.at(j, 0), p.at(j, 1)});
    out[i] = slab_contribution({x, y}, bx, by, std::move(in_slab));
  }
  return out;
}

std::vector<double> hypervolume_contributions(const PointSet& p, std::span<const double> ref) {
  if (p.dim == 2) return hypervolume_contributions_2d(p, ref);
  if (p.dim < 2) throw std::invalid_argument("hypervolume contributions: give at least two objectives");
  check_reference(p, ref, "hypervolume contributions");
  const std::size_t n = p.size(), m = p.dim;
  std::vector<double> out(n, 0.0);
  std::vector<std::size_t> in;
  for (std::size_t i = 0; i < n; ++i)
    if (inside(p, i, ref)) in.push_back(i);
  PointSet q;
  q.dim = m;
  std::vector<double> c(m);
  for (std::size_t i : in) {
    bool dominated = false;
    for (std::size_t j : in) {
      if (j == i) continue;
      bool weak = true;
      for (std::size_t d = 0; d < m && weak; ++d) weak = p.at(j, d) <= p.at(i, d);
      if (weak) {
        dominated = true;
        break;
      }
    }
    if (dominated) continue;
    // The part of [p_i, r] that another point also dominates is the union of the boxes [max(p_i, p_j), r].
    double box = 1;
    for (std::size_t d = 0; d < m; ++d) box *= ref[d] - p.at(i, d);
    q.v.clear();
    for (std::size_t j : in) {
      if (j == i) continue;
      for (std::size_t d = 0; d < m; ++d) c[d] = std::max(p.at(i, d), p.at(j, d));
      q.add(c);
    }
    out[i] = box - hypervolume(q, ref);
  }
  return out;
}

namespace {
void check_same_dim(const PointSet& a, const PointSet& r, const char* who) {
  if (a.dim != r.dim) throw std::invalid_argument(std::string(who) + ": the sets have different dimensions");
}
}  // namespace

double epsilon_additive(const PointSet& a, const PointSet& r) {
  check_same_dim(a, r, "epsilon indicator");
  double worst = -kInf;
  bool any_r = false, any_a = false;
  for (std::size_t k = 0; k < r.size(); ++k) {
    if (!finite_point(r, k)) continue;
    any_r = true;
    double least = kInf;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!finite_point(a, i)) continue;
      any_a = true;
      double e = -kInf;
      for (std::size_t d = 0; d < a.dim; ++d) e = std::max(e, a.at(i, d) - r.at(k, d));
      least = std::min(least, e);
    }
    worst = std::max(worst, least);
  }
  return any_r && any_a ? worst : kNaN;
}

double igd_plus(const PointSet& a, const PointSet& r) {
  check_same_dim(a, r, "IGD+");
  double sum = 0;
  std::size_t nr = 0;
  bool any_a = false;
  for (std::size_t k = 0; k < r.size(); ++k) {
    if (!finite_point(r, k)) continue;
    ++nr;
    double least = kInf;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!finite_point(a, i)) continue;
      any_a = true;
      double s = 0;
      for (std::size_t d = 0; d < a.dim; ++d) {
        const double g = std::max(a.at(i, d) - r.at(k, d), 0.0);
        s += g * g;
      }
      least = std::min(least, std::sqrt(s));
    }
    sum += least;
  }
  return nr > 0 && any_a ? sum / static_cast<double>(nr) : kNaN;
}

PointSet nondominated_points(const PointSet& p) {
  const std::vector<int> rank = nondominated_ranks(p);
  PointSet out;
  out.dim = p.dim;
  std::vector<double> row(p.dim);
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (rank[i] != 1) continue;
    for (std::size_t d = 0; d < p.dim; ++d) row[d] = p.at(i, d);
    bool repeat = false;
    for (std::size_t k = 0; k < out.size() && !repeat; ++k)
      repeat = std::equal(row.begin(), row.end(), out.v.begin() + static_cast<std::ptrdiff_t>(k * p.dim));
    if (!repeat) out.add(row);
  }
  return out;
}

std::vector<Point2> attainment_staircase(std::span<const PointSet> runs, std::size_t level, double xmax, double ymax) {
  const std::vector<Point2> c = attainment_surface(runs, level);
  std::vector<Point2> out;
  if (c.empty()) return out;
  out.push_back({c[0][0], ymax});
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (i > 0) out.push_back({c[i][0], c[i - 1][1]});
    out.push_back(c[i]);
  }
  out.push_back({xmax, c.back()[1]});
  return out;
}

std::vector<EafRegion> eaf_difference_regions(std::span<const PointSet> a, std::span<const PointSet> b, double xmax,
                                              double ymax) {
  struct Entry {
    double x, y;
    std::size_t run;  // A's runs first, then B's
  };
  const std::size_t na = a.size(), nb = b.size();
  std::vector<Entry> e;
  for (std::size_t side = 0; side < 2; ++side) {
    const auto runs = side == 0 ? a : b;
    for (std::size_t r = 0; r < runs.size(); ++r) {
      if (runs[r].dim != 2) throw std::invalid_argument("EAF difference: the points must have two objectives");
      for (std::size_t i = 0; i < runs[r].size(); ++i)
        if (finite_point(runs[r], i) && runs[r].at(i, 0) < xmax)
          e.push_back({runs[r].at(i, 0), runs[r].at(i, 1), side == 0 ? r : na + r});
    }
  }
  std::sort(e.begin(), e.end(), [](const Entry& p, const Entry& q) { return p.x < q.x || (p.x == q.x && p.y < q.y); });
  // The share of A attaining z differs from B's when count_a * |B| != count_b * |A| (as in the gridded difference,
  // an empty side counts as one run attaining nothing).
  const long long da = static_cast<long long>(std::max<std::size_t>(1, na));
  const long long db = static_cast<long long>(std::max<std::size_t>(1, nb));
  std::vector<double> best(na + nb, kInf);
  using Key = std::tuple<double, double, int, int>;  // y_lo, y_hi, count_a, count_b
  std::map<Key, double> open;                         // -> x_lo
  std::vector<EafRegion> out;
  std::vector<std::pair<double, bool>> steps;  // (best y below ymax, run of A)
  for (std::size_t k = 0; k < e.size();) {
    const double x = e[k].x;
    for (; k < e.size() && e[k].x == x; ++k) best[e[k].run] = std::min(best[e[k].run], e[k].y);
    steps.clear();
    for (std::size_t r = 0; r < na + nb; ++r)
      if (best[r] < ymax) steps.emplace_back(best[r], r < na);
    std::sort(steps.begin(), steps.end());
    std::map<Key, double> now;
    int ca = 0, cb = 0;
    for (std::size_t s = 0; s < steps.size();) {
      const double y = steps[s].first;
      for (; s < steps.size() && steps[s].first == y; ++s) (steps[s].second ? ca : cb) += 1;
      const double y_hi = s < steps.size() ? steps[s].first : ymax;
      if (static_cast<long long>(ca) * db == static_cast<long long>(cb) * da) continue;
      const Key key{y, y_hi, ca, cb};
      const auto it = open.find(key);
      now.emplace(key, it == open.end() ? x : it->second);
    }
    for (const auto& [key, x_lo] : open)
      if (!now.contains(key))
        out.push_back({x_lo, x, std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key)});
    open = std::move(now);
  }
  for (const auto& [key, x_lo] : open)
    out.push_back({x_lo, xmax, std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key)});
  std::sort(out.begin(), out.end(), [](const EafRegion& p, const EafRegion& q) {
    return p.x_lo < q.x_lo || (p.x_lo == q.x_lo && p.y_lo < q.y_lo);
  });
  return out;
}

}  // namespace advplan
