#include "advplan/metrics/frontier.hpp"

#include <cmath>

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

}  // namespace advplan
