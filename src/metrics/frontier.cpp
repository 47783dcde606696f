#include "advplan/metrics/frontier.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "advplan/io/modules.hpp"

namespace advplan {

namespace {
int argmax(std::size_t n, auto&& score) {
  int best = -1;
  double best_v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = score(i);
    if (std::isnan(v)) continue;
    if (best < 0 || v > best_v) {
      best = static_cast<int>(i);
      best_v = v;
    }
  }
  return best;
}
}  // namespace

int select_quality_greedy(std::span<const double> q) {
  return argmax(q.size(), [&](std::size_t i) { return q[i]; });
}

int select_constraint_aware(std::span<const double> q, std::span<const double> D, double lambda) {
  return argmax(q.size(), [&](std::size_t i) { return lambda * q[i] + (1.0 - lambda) * D[i]; });
}

int select_highest_pressure(std::span<const double> pressure) {
  return argmax(pressure.size(), [&](std::size_t i) { return pressure[i]; });
}

std::vector<bool> pareto_front(std::span<const double> q, std::span<const double> D) {
  const std::size_t n = q.size();
  std::vector<bool> front(n, true);
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(q[i]) || std::isnan(D[i])) {
      front[i] = false;
      continue;
    }
    for (std::size_t j = 0; j < n && front[i]; ++j) {
      if (j == i || std::isnan(q[j]) || std::isnan(D[j])) continue;
      if (q[j] >= q[i] && D[j] >= D[i] && (q[j] > q[i] || D[j] > D[i])) front[i] = false;
    }
  }
  return front;
}

std::size_t pareto_count(std::span<const double> q, std::span<const double> D) {
  std::size_t n = 0;
  for (bool b : pareto_front(q, D)) n += b ? 1 : 0;
  return n;
}

double jaccard_distance(const CategorySet& a, const CategorySet& b) {
  std::size_t inter = 0, uni = 0;
  for (std::size_t i = 0; i < kNumCategories; ++i) {
    inter += (a[i] && b[i]) ? 1 : 0;
    uni += (a[i] || b[i]) ? 1 : 0;
  }
  return uni == 0 ? 0.0 : 1.0 - static_cast<double>(inter) / static_cast<double>(uni);
}

double action_type_diversity(std::span<const CategorySet> sets) {
  if (sets.size() < 2) return 0.0;
  double sum = 0;
  std::size_t pairs = 0;
  for (std::size_t i = 0; i < sets.size(); ++i)
    for (std::size_t j = i + 1; j < sets.size(); ++j) {
      sum += jaccard_distance(sets[i], sets[j]);
      ++pairs;
    }
  return sum / static_cast<double>(pairs);
}

double quality_spread(std::span<const double> q) {
  bool any = false;
  double lo = 0, hi = 0;
  for (double v : q) {
    if (std::isnan(v)) continue;  // a NaN score takes no part, wherever it stands
    lo = any ? std::min(lo, v) : v;
    hi = any ? std::max(hi, v) : v;
    any = true;
  }
  return any ? hi - lo : 0.0;
}


// ---- Multi-objective analysis -------------------------------------------------------------------------------

namespace {
bool finite_point(const PointSet& p, std::size_t i) {
  for (std::size_t j = 0; j < p.dim; ++j)
    if (std::isnan(p.at(i, j))) return false;
  return true;
}
}  // namespace

std::vector<int> nondominated_ranks_2d(const PointSet& p) {
  if (p.dim != 2) throw std::invalid_argument("nondominated_ranks_2d: the points must have two objectives");
  const std::size_t n = p.size();
  std::vector<int> rank(n, 0);
  struct Entry {
    double x, y;
    std::uint32_t i;
  };
  std::vector<Entry> e;
  e.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    if (finite_point(p, i)) e.push_back({p.at(i, 0), p.at(i, 1), static_cast<std::uint32_t>(i)});
  std::sort(e.begin(), e.end(), [](const Entry& a, const Entry& b) { return a.x < b.x || (a.x == b.x && a.y < b.y); });
  // In this order no later point dominates an earlier one, and every earlier point with y' <= y dominates the
  // current one unless it is equal to it. front_min[r-1] is the least y among the points of rank r seen so far;
  // it does not decrease with r, so the current point's rank is 1 + the number of fronts with front_min <= y.
  std::vector<double> front_min;
  for (std::size_t k = 0; k < e.size(); ++k) {
    int r;
    if (k > 0 && e[k].x == e[k - 1].x && e[k].y == e[k - 1].y) {
      r = rank[e[k - 1].i];  // an equal point shares its rank
    } else {
      const auto pos = std::upper_bound(front_min.begin(), front_min.end(), e[k].y) - front_min.begin();
      r = static_cast<int>(pos) + 1;
      if (static_cast<std::size_t>(pos) == front_min.size())
        front_min.push_back(e[k].y);
      else
        front_min[static_cast<std::size_t>(pos)] = e[k].y;
    }
    rank[e[k].i] = r;
  }
  return rank;
}

namespace {

/// pagmo2's routines, from libadvplan_pagmo.so beside libadvplan.so (src/pagmo_module), loaded on first use:
/// linking libpagmo would run its static initialisers (about 10 ms of CPU) in every process.
struct PagmoModule {
  int (*fronts)(const double*, std::size_t, std::size_t, unsigned long long*, char*, std::size_t) = nullptr;
  int (*hypervolume)(const double*, std::size_t, std::size_t, const double*, double*, char*, std::size_t) = nullptr;
};

const PagmoModule& pagmo_module() {
  static const PagmoModule m = [] {
    const std::string file = "libadvplan_pagmo.so";
    void* h = io::open_module(file, /*global=*/false, "pagmo2's routines");
    PagmoModule mod;
    mod.fronts = reinterpret_cast<decltype(mod.fronts)>(io::module_symbol(h, file, "advplan_pagmo_fronts"));
    mod.hypervolume =
        reinterpret_cast<decltype(mod.hypervolume)>(io::module_symbol(h, file, "advplan_pagmo_hypervolume"));
    return mod;
  }();
  return m;
}

}  // namespace

std::vector<int> nondominated_ranks_pagmo(const PointSet& p) {
  const std::size_t n = p.size();
  std::vector<int> rank(n, 0);
  std::vector<std::size_t> idx;
  std::vector<double> pts;
  for (std::size_t i = 0; i < n; ++i)
    if (finite_point(p, i)) {
      idx.push_back(i);
      pts.insert(pts.end(), p.v.begin() + static_cast<std::ptrdiff_t>(i * p.dim),
                 p.v.begin() + static_cast<std::ptrdiff_t>((i + 1) * p.dim));
    }
  if (idx.size() == 1) rank[idx[0]] = 1;  // pagmo needs two points
  if (idx.size() < 2) return rank;
  std::vector<unsigned long long> r(idx.size());  // 0-based rank of each point
  char err[256] = "";
  if (pagmo_module().fronts(pts.data(), idx.size(), p.dim, r.data(), err, sizeof err) != 0)
    throw std::invalid_argument(std::string("non-dominated sorting (pagmo2): ") + err);
  for (std::size_t k = 0; k < idx.size(); ++k) rank[idx[k]] = static_cast<int>(r[k]) + 1;
  return rank;
}

std::vector<int> nondominated_ranks(const PointSet& p) {
  return p.dim == 2 ? nondominated_ranks_2d(p) : nondominated_ranks_pagmo(p);
}

double hypervolume(const PointSet& p, std::span<const double> reference) {
  if (reference.size() != p.dim)
    throw std::invalid_argument("hypervolume: the reference point and the points have different dimensions");
  for (double r : reference)
    if (!std::isfinite(r)) throw std::invalid_argument("hypervolume: the reference point is not finite");
  std::vector<double> pts;
  std::size_t n = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    bool inside = true;
    for (std::size_t j = 0; j < p.dim && inside; ++j) inside = p.at(i, j) < reference[j];  // NaN: false
    if (inside) {
      pts.insert(pts.end(), p.v.begin() + static_cast<std::ptrdiff_t>(i * p.dim),
                 p.v.begin() + static_cast<std::ptrdiff_t>((i + 1) * p.dim));
      ++n;
    }
  }
  if (n == 0) return 0.0;
  double hv = 0;
  char err[256] = "";
  if (pagmo_module().hypervolume(pts.data(), n, p.dim, reference.data(), &hv, err, sizeof err) != 0)
    throw std::invalid_argument(std::string("hypervolume (pagmo2): ") + err);
  return hv;
}

std::size_t attainment_level(double t, std::size_t n) {
  const double l = std::ceil(t * static_cast<double>(n) - 1e-9);
  return std::max<std::size_t>(1, static_cast<std::size_t>(std::max(0.0, l)));
}

std::vector<Point2> attainment_surface(std::span<const PointSet> runs, std::size_t level) {
  const std::size_t n = runs.size();
  if (level == 0 || level > n) throw std::invalid_argument("attainment_surface: the level must lie in 1..runs");
  struct Entry {
    double x, y;
    std::size_t run;
  };
  std::vector<Entry> e;
  for (std::size_t r = 0; r < n; ++r) {
    if (runs[r].dim != 2) throw std::invalid_argument("attainment_surface: the points must have two objectives");
    for (std::size_t i = 0; i < runs[r].size(); ++i)
      if (finite_point(runs[r], i)) e.push_back({runs[r].at(i, 0), runs[r].at(i, 1), r});
  }
  std::sort(e.begin(), e.end(), [](const Entry& a, const Entry& b) { return a.x < b.x || (a.x == b.x && a.y < b.y); });
  // Sweeping x upwards, best[r] is run r's least y among its points with x' <= x. The level-l surface at x is the
  // l-th smallest best[r]; a vertex is where that value drops.
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> best(n, inf), work(n);
  std::vector<Point2> out;
  double prev = inf;
  for (std::size_t k = 0; k < e.size();) {
    const double x = e[k].x;
    for (; k < e.size() && e[k].x == x; ++k) best[e[k].run] = std::min(best[e[k].run], e[k].y);
    work = best;
    std::nth_element(work.begin(), work.begin() + static_cast<std::ptrdiff_t>(level - 1), work.end());
    const double y = work[level - 1];
    if (y < prev) {
      out.push_back({x, y});
      prev = y;
    }
  }
  return out;
}

std::vector<int> attainment_counts(std::span<const PointSet> runs, std::span<const double> xs,
                                   std::span<const double> ys) {
  const std::size_t nx = xs.size(), ny = ys.size();
  std::vector<int> counts(nx * ny, 0);
  std::vector<std::size_t> xorder(nx);
  for (std::size_t i = 0; i < nx; ++i) xorder[i] = i;
  std::sort(xorder.begin(), xorder.end(), [&](std::size_t a, std::size_t b) { return xs[a] < xs[b]; });
  std::vector<Point2> pts;
  for (const auto& run : runs) {
    if (run.dim != 2) throw std::invalid_argument("attainment_counts: the points must have two objectives");
    pts.clear();
    for (std::size_t i = 0; i < run.size(); ++i)
      if (finite_point(run, i)) pts.push_back({run.at(i, 0), run.at(i, 1)});
    std::sort(pts.begin(), pts.end());
    double best = std::numeric_limits<double>::infinity();
    std::size_t k = 0;
    for (std::size_t xi : xorder) {
      for (; k < pts.size() && pts[k][0] <= xs[xi]; ++k) best = std::min(best, pts[k][1]);
      for (std::size_t j = 0; j < ny; ++j) counts[xi * ny + j] += best <= ys[j] ? 1 : 0;
    }
  }
  return counts;
}

std::string format_category_set(const CategorySet& s) {
  std::string out;
  for (std::size_t i = 0; i < kNumCategories; ++i)
    if (s[i]) {
      if (!out.empty()) out += '|';
      out += to_string(static_cast<Category>(i));
    }
  return out.empty() ? "none" : out;
}

std::optional<CategorySet> parse_category_set(std::string_view text) {
  CategorySet s{};
  if (text == "none") return s;
  while (true) {
    const auto bar = text.find('|');
    const auto c = parse_category(text.substr(0, bar));
    if (!c) return std::nullopt;
    s[index(*c)] = true;
    if (bar == std::string_view::npos) return s;
    text.remove_prefix(bar + 1);
  }
}

}  // namespace advplan
