#include "advplan/stats/tail_fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>
#include <stdexcept>

#include "core/det_math.hpp"

namespace advplan {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kGridShapes = 241;    // shapes on [kGpdXiMin, kGpdXiMax], 0.0125 apart
constexpr int kBisections = 64;     // the shape range's upper end in theta (fit_gpd)
constexpr int kBracketSteps = 200;  // its lower end
constexpr int kNewtonSteps = 100;   // cap of the safeguarded Newton iteration
constexpr double kNewtonTol = 0x1p-50;  // a step of at most 2^-50 |x| ends it
constexpr int kBrentSteps = 100;        // cap of Brent's search
constexpr double kBrentRel = 0x1p-26;   // its tolerance: 2^-26 |x| + 1e-12
constexpr double kBrentAbs = 1e-12;
constexpr int kSimpsonPanels = 512;  // even: the GPD part of E[max]

/// The root of an increasing concave g (g(x) = target) in the bracket [a, b], g(a) < target <= g(b), by Newton
/// steps from x0 in [a, b], safeguarded: a step that leaves the bracket is replaced by the bracket's midpoint, and
/// each evaluation narrows the bracket. Ends when g(x) == target, when a step is at most kNewtonTol |x|, or after
/// kNewtonSteps; every test is on IEEE arithmetic, so the same bits come out on every CPU. `g` returns (g, g').
template <class G>
double newton_root(G g, double target, double a, double b, double x) {
  for (int i = 0; i < kNewtonSteps; ++i) {
    const auto [v, d] = g(x);
    if (v == target) break;
    if (v < target)
      a = x;
    else
      b = x;
    double next = x + (target - v) / d;
    if (!(next > a && next < b)) next = a + (b - a) / 2;
    if (!std::isfinite(next) || std::fabs(next - x) <= kNewtonTol * std::fabs(x)) {
      if (std::isfinite(next)) x = next;
      break;
    }
    x = next;
  }
  return x;
}

/// Brent's minimisation without derivatives (Brent 1973, "localmin"), turned to maximise f on [a, b]: golden-section
/// and parabolic steps; ends when the bracket is within 2 (kBrentRel |x| + kBrentAbs) of x, or after kBrentSteps.
/// Returns (x, f(x)), the best point seen.
template <class F>
std::pair<double, double> brent_max(F f, double a, double b) {
  const double c = (3 - std::sqrt(5.0)) / 2;
  double x = a + c * (b - a), w = x, v = x, e = 0, d = 0;
  double fx = -f(x), fw = fx, fv = fx;
  for (int i = 0; i < kBrentSteps; ++i) {
    const double xm = a + (b - a) / 2, tol1 = kBrentRel * std::fabs(x) + kBrentAbs, tol2 = 2 * tol1;
    if (std::fabs(x - xm) <= tol2 - (b - a) / 2) break;
    bool golden = true;
    if (std::fabs(e) > tol1) {  // a parabola through x, w, v
      const double r = (x - w) * (fx - fv);
      double q = (x - v) * (fx - fw), p = (x - v) * q - (x - w) * r;
      q = 2 * (q - r);
      if (q > 0) p = -p;
      q = std::fabs(q);
      const double e_prev = e;
      e = d;
      if (std::fabs(p) < std::fabs(q * e_prev / 2) && p > q * (a - x) && p < q * (b - x)) {
        d = p / q;
        if ((x + d) - a < tol2 || b - (x + d) < tol2) d = xm >= x ? tol1 : -tol1;
        golden = false;
      }
    }
    if (golden) {
      e = (x >= xm ? a : b) - x;
      d = c * e;
    }
    const double u = x + (std::fabs(d) >= tol1 ? d : (d > 0 ? tol1 : -tol1));
    const double fu = -f(u);
    if (fu <= fx) {
      (u >= x ? a : b) = x;
      v = w, fv = fw, w = x, fw = fx, x = u, fx = fu;
    } else {
      (u < x ? a : b) = u;
      if (fu <= fw || w == x) {
        v = w, fv = fw, w = u, fw = fu;
      } else if (fu <= fv || v == x || v == w) {
        v = u, fv = fu;
      }
    }
  }
  return {x, -fx};
}

/// sum log(1 + theta y_i), the profile's one pass over the data.
double sum_log1p(std::span<const double> y, double theta) {
  double s = 0;
  for (double v : y) s += det::log1p(theta * v);
  return s;
}

/// xi(theta) = mean log(1 + theta y_i).
double xi_of(std::span<const double> y, double theta) { return sum_log1p(y, theta) / static_cast<double>(y.size()); }

/// Grimshaw's profile log-likelihood l*(theta) = -m (log(xi / theta) + 1 + xi), xi = xi(theta); at theta = 0 the
/// exponential's -m (log mean(y) + 1).
double profile(std::span<const double> y, double theta, double mean_y) {
  const double m = static_cast<double>(y.size());
  if (theta == 0) return -m * (det::log(mean_y) + 1);
  const double xi = xi_of(y, theta);
  const double ratio = xi / theta;
  if (!(ratio > 0)) return -kInf;
  return -m * (det::log(ratio) + 1 + xi);
}

/// xi(theta) and its derivative mean(y_i / (1 + theta y_i)): xi is increasing and concave in theta.
std::pair<double, double> xi_and_slope(std::span<const double> y, double theta) {
  double s = 0, ds = 0;
  for (double v : y) {
    s += det::log1p(theta * v);
    ds += v / (1 + theta * v);
  }
  const double m = static_cast<double>(y.size());
  return {s / m, ds / m};
}

/// The theta in [a, b] at which xi(theta) = target (xi(a) <= target <= xi(b)), by the safeguarded Newton iteration
/// from x0.
double theta_at(std::span<const double> y, double target, double a, double b, double x0) {
  return newton_root([&](double t) { return xi_and_slope(y, t); }, target, a, b, x0);
}

/// GPD survival S(z) for z >= 0: (1 + xi z / sigma)^(-1/xi), exp(-z / sigma) at xi = 0; 0 past the endpoint.
double gpd_survival(double z, double xi, double sigma) {
  if (z <= 0) return 1;
  const double w = xi * z / sigma;
  if (xi == 0) return det::exp(-z / sigma);
  if (w <= -1) return 0;
  return det::exp(-det::log1p(w) / xi);
}

}  // namespace

double gpd_loglik(std::span<const double> y, double xi, double sigma) {
  if (!(sigma > 0) || y.empty()) return -kInf;
  const double m = static_cast<double>(y.size());
  double s = 0;
  if (xi == 0) {
    for (double v : y) s += v;
    return -m * det::log(sigma) - s / sigma;
  }
  for (double v : y) {
    const double w = xi * v / sigma;
    if (!(w > -1)) return -kInf;
    s += det::log1p(w);
  }
  return -m * det::log(sigma) - (1 + 1 / xi) * s;
}

namespace {

/// The exceedances' largest value and mean, or nullopt when they cannot be fitted (fewer than two; one negative or
/// not finite; all zero).
std::optional<std::pair<double, double>> fit_inputs(std::span<const double> y) {
  if (y.size() < 2) return std::nullopt;
  double y_max = 0, sum = 0;
  for (double v : y) {
    if (!std::isfinite(v) || v < 0) return std::nullopt;
    y_max = std::max(y_max, v);
    sum += v;
  }
  if (!(y_max > 0)) return std::nullopt;
  return std::make_pair(y_max, sum / static_cast<double>(y.size()));
}

/// The shape range's ends in theta: xi(theta_lo) = kGpdXiMin on (-1/y_max, 0) by kBracketSteps halvings, and
/// xi(theta_hi) = kGpdXiMax by doubling from 1/y_max then kBisections halvings; each the end with xi >= target.
std::pair<double, double> theta_range(std::span<const double> y, double y_max) {
  double a = -1 / y_max, b = 0;  // xi(a) = -inf, xi(b) = 0
  for (int i = 0; i < kBracketSteps; ++i) {
    const double mid = a + (b - a) / 2;
    if (mid <= a || mid >= b) break;
    (xi_of(y, mid) < kGpdXiMin ? a : b) = mid;
  }
  const double theta_lo = b;
  double lo = 0, hi = 1 / y_max;
  for (int steps = 0; xi_of(y, hi) < kGpdXiMax && steps < 1000; ++steps) {
    lo = hi;
    hi *= 2;
  }
  for (int i = 0; i < kBisections; ++i) {
    const double mid = lo + (hi - lo) / 2;
    (xi_of(y, mid) < kGpdXiMax ? lo : hi) = mid;
  }
  return {theta_lo, hi};
}

/// The largest local maximum of `f` refined from the grid (xs, ls): each interior grid point no lower than its
/// neighbours (and finite) is refined by brent_max between them, keeping the grid point if the search found less;
/// with no interior maximum, the higher end of the grid, or nullopt when that is not finite.
template <class F, std::size_t N>
std::optional<double> best_local_max(F f, const std::array<double, N>& xs, const std::array<double, N>& ls) {
  double best_x = 0, best_l = -kInf;
  for (std::size_t j = 1; j + 1 < N; ++j) {
    if (!(ls[j] >= ls[j - 1] && ls[j] >= ls[j + 1]) || !std::isfinite(ls[j])) continue;
    auto [x, l] = brent_max(f, xs[j - 1], xs[j + 1]);
    if (!(l >= ls[j])) x = xs[j], l = ls[j];
    if (l > best_l) best_x = x, best_l = l;
  }
  if (std::isfinite(best_l)) return best_x;
  const std::size_t j = ls[0] >= ls[N - 1] ? 0 : N - 1;
  if (!std::isfinite(ls[j])) return std::nullopt;
  return xs[j];
}

}  // namespace

GpdFit fit_gpd(std::span<const double> y) {
  GpdFit out;
  const auto inputs = fit_inputs(y);
  if (!inputs) return out;
  // Plain variables, not a structured binding: clang 14 (the fuzz build) cannot capture a binding in a lambda.
  const double y_max = inputs->first, mean_y = inputs->second;
  const auto [theta_lo, theta_hi] = theta_range(y, y_max);
  // The grid: shape j's theta (Newton from the previous shape's theta, which lies below it) and profile value.
  std::array<double, kGridShapes> thetas{}, ls{};
  thetas[0] = theta_lo;
  thetas[kGridShapes - 1] = theta_hi;
  for (int j = 1; j + 1 < kGridShapes; ++j) {
    const double target = kGpdXiMin + (kGpdXiMax - kGpdXiMin) * j / (kGridShapes - 1);
    const double prev = thetas[j - 1];
    if (target == 0)
      thetas[j] = 0;
    else if (target < 0)
      thetas[j] = theta_at(y, target, theta_lo, 0, prev);
    else
      thetas[j] = theta_at(y, target, 0, theta_hi, std::max(prev, 0.0));
  }
  for (int j = 0; j < kGridShapes; ++j) ls[j] = profile(y, thetas[j], mean_y);
  // The largest interior local maximum of the profile (a stationary point, as Grimshaw's algorithm finds): close to
  // xi = -1 the likelihood is dominated by the largest exceedance and rises without bound below it, so an end of
  // the range is taken only when the profile has no interior maximum.
  const auto theta = best_local_max([&](double t) { return profile(y, t, mean_y); }, thetas, ls);
  if (!theta) return out;
  out.xi = *theta == 0 ? 0.0 : xi_of(y, *theta);
  out.sigma = *theta == 0 ? mean_y : out.xi / *theta;
  out.loglik = gpd_loglik(y, out.xi, out.sigma);
  out.ok = std::isfinite(out.loglik) && out.sigma > 0;
  return out;
}

namespace {

/// h(theta) = mean(theta y_i / (1 + theta y_i)) and its derivative mean(y_i / (1 + theta y_i)^2): h is increasing
/// and concave on theta > -1/y_max.
std::pair<double, double> score_and_slope(std::span<const double> y, double theta) {
  double s = 0, ds = 0;
  for (double v : y) {
    const double w = 1 / (1 + theta * v);
    s += theta * v * w;
    ds += v * w * w;
  }
  const double m = static_cast<double>(y.size());
  return {s / m, ds / m};
}

/// For a fixed shape xi != 0, theta = xi / sigma at the scale that maximises l(xi, .): the score in sigma vanishes
/// where h(theta) = xi / (1 + xi); h increases with theta, so the root is unique, on (-1/y_max, 0) for xi < 0 and on
/// (0, inf) for xi > 0. The safeguarded Newton iteration from x0 (a theta of a smaller shape, which lies below the
/// root, or the bracket's end 0) finds it.
double theta_for_shape(std::span<const double> y, double xi, double y_max, double x0) {
  const double target = xi / (1 + xi);
  const double a = xi < 0 ? -1 / y_max : 0, b = xi < 0 ? 0 : kInf;
  const double start = x0 > a && x0 < b ? x0 : 0.0;
  return newton_root([&](double t) { return score_and_slope(y, t); }, target, a, b, start);
}

/// The penalised profile at xi with its scale's theta: l(xi, xi / theta) minus lambda (1 / (1 + xi) - 1) when
/// xi < 0; l(0, mean_y) at xi = 0.
double penalised_at(std::span<const double> y, double xi, double theta, double lambda, double mean_y) {
  const double l = gpd_loglik(y, xi, xi == 0 ? mean_y : xi / theta);
  return xi < 0 ? l - lambda * (1 / (1 + xi) - 1) : l;
}

}  // namespace

GpdFit fit_gpd_penalised(std::span<const double> y, double lambda) {
  GpdFit out;
  if (!(lambda >= 0)) return out;
  const auto inputs = fit_inputs(y);
  if (!inputs) return out;
  const double y_max = inputs->first, mean_y = inputs->second;  // not a binding: captured below (clang 14)
  // Shapes xi_j = -1 + 0.0125 j, j = 1 .. 240 (xi = -1 itself has no finite penalty); each theta by Newton from the
  // previous shape's.
  constexpr int kShapes = kGridShapes - 1;
  std::array<double, kShapes> xis{}, thetas{}, ls{};
  double prev = -kInf;
  for (int j = 0; j < kShapes; ++j) {
    xis[j] = kGpdXiMin + (kGpdXiMax - kGpdXiMin) * (j + 1) / (kGridShapes - 1);
    thetas[j] = xis[j] == 0 ? 0.0 : theta_for_shape(y, xis[j], y_max, prev);
    prev = thetas[j];
    ls[j] = penalised_at(y, xis[j], thetas[j], lambda, mean_y);
  }
  // Between grid neighbours (and at the end) the Newton iteration starts from the lower neighbour's theta.
  auto theta_of = [&](double xi) {
    const double at = (xi - kGpdXiMin) / (kGpdXiMax - kGpdXiMin) * (kGridShapes - 1) - 1;
    const auto j = static_cast<std::size_t>(std::clamp(at, 0.0, static_cast<double>(kShapes - 1)));
    return xi == 0 ? 0.0 : theta_for_shape(y, xi, y_max, thetas[j]);
  };
  auto f = [&](double xi) { return penalised_at(y, xi, theta_of(xi), lambda, mean_y); };
  const auto best = best_local_max(f, xis, ls);
  if (!best) return out;
  out.xi = *best;
  out.sigma = out.xi == 0 ? mean_y : out.xi / theta_of(out.xi);
  out.loglik = gpd_loglik(y, out.xi, out.sigma);
  out.ok = std::isfinite(out.loglik) && out.sigma > 0;
  return out;
}

std::size_t tail_exceedances(std::size_t n, const TailRule& rule) {
  if (n < rule.min_draws || n < 2) return 0;
  const auto root = static_cast<std::size_t>(std::ceil(2 * std::sqrt(static_cast<double>(n))));
  return std::min(n - 1, std::max(rule.min_exceedances, root));
}

TailModel fit_tail(std::span<const double> draws, std::size_t drawn, double lo, double hi, const TailRule& rule) {
  if (draws.empty()) throw std::invalid_argument("fit_tail: no valid draw");
  if (drawn < draws.size()) throw std::invalid_argument("fit_tail: fewer draws than valid draws");
  if (!(lo < hi)) throw std::invalid_argument("fit_tail: the support's bounds are not ordered");
  TailModel t;
  t.sorted.assign(draws.begin(), draws.end());
  for (double v : t.sorted)
    if (!std::isfinite(v) || v < lo || v > hi) throw std::invalid_argument("fit_tail: a draw is outside the support");
  std::sort(t.sorted.begin(), t.sorted.end());
  t.drawn = drawn;
  t.lo = lo;
  t.hi = hi;
  const std::size_t n = t.sorted.size();
  const std::size_t m = tail_exceedances(n, rule);
  t.threshold = t.sorted.back();
  if (m > 0) {
    const double u = t.sorted[n - m - 1];
    std::vector<double> y(m);
    for (std::size_t i = 0; i < m; ++i) y[i] = t.sorted[n - m + i] - u;
    const GpdFit f = rule.penalty > 0 ? fit_gpd_penalised(y, rule.penalty) : fit_gpd(y);
    if (f.ok) {
      t.method = TailMethod::gpd;
      t.exceedances = m;
      t.threshold = u;
      t.gpd = f;
    }
  }
  return t;
}

double TailModel::endpoint() const {
  if (method == TailMethod::empirical) return sorted.back();
  if (gpd.xi < 0) return std::min(hi, threshold - gpd.sigma / gpd.xi);
  return hi;
}

double TailModel::cdf(double x) const {
  const std::size_t n = sorted.size();
  const double nd = static_cast<double>(n);
  const double p0 = static_cast<double>(drawn - n) / static_cast<double>(drawn);
  if (x >= hi) return 1;
  double fv;
  if (method == TailMethod::gpd && x >= threshold) {
    fv = 1 - static_cast<double>(exceedances) / nd * gpd_survival(x - threshold, gpd.xi, gpd.sigma);
  } else {
    const auto c = static_cast<double>(std::upper_bound(sorted.begin(), sorted.end(), x) - sorted.begin());
    fv = c / nd;
  }
  return p0 + (1 - p0) * fv;
}

ExpectedMaxCurve::ExpectedMaxCurve(const TailModel& model) {
  const auto& sorted = model.sorted;
  const std::size_t n = sorted.size();
  const double nd = static_cast<double>(n);
  const double q0 = static_cast<double>(n) / static_cast<double>(model.drawn);  // 1 - p0
  const double p0 = 1 - q0;
  has_p0_ = p0 > 0;
  if (has_p0_) log_p0_ = det::log(p0);
  auto term = [](double t, double scale) {
    Term out;
    out.scale = scale;
    out.kind = t <= 0 ? -1 : t >= 1 ? 1 : 0;
    if (out.kind == 0) out.log1m_t = det::log1p(-t);
    return out;
  };
  first_ = sorted.front();
  const bool gpd = model.method == TailMethod::gpd;
  const std::size_t body = gpd ? n - model.exceedances : n;
  for (std::size_t i = 1; i < body; ++i) {
    const double width = sorted[i] - sorted[i - 1];
    if (width <= 0) continue;
    steps_.push_back(term(q0 * static_cast<double>(n - i) / nd, width));  // 1 - F on [sorted[i-1], sorted[i])
  }
  if (!gpd) return;
  const double end = model.endpoint();
  len_ = end - model.threshold;
  if (!(len_ > 0)) return;
  const double zeta = q0 * static_cast<double>(model.exceedances) / nd;
  const double step = 1.0 / kSimpsonPanels;
  nodes_.reserve(kSimpsonPanels + 1);
  for (int i = 0; i <= kSimpsonPanels; ++i) {
    const double r = i == kSimpsonPanels ? 1.0 : i * step;
    const double x = end - len_ * r * r;
    nodes_.push_back(term(zeta * gpd_survival(x - model.threshold, model.gpd.xi, model.gpd.sigma), r));
  }
}

double ExpectedMaxCurve::one_minus_pow(const Term& term, double k) const {
  if (term.kind != 0) return term.kind < 0 ? 0.0 : 1.0;
  return -det::expm1(k * term.log1m_t);
}

double ExpectedMaxCurve::operator()(double k) const {
  const double denom = has_p0_ ? -det::expm1(k * log_p0_) : 1.0;  // 1 - p0^k
  double e = first_;
  for (const Term& s : steps_) e += s.scale * one_minus_pow(s, k) / denom;
  if (nodes_.empty()) return e;
  // Composite Simpson in r of (1 - G_k(x)) dx/dr, x = end - len r^2: weights 1, 4, 2, ..., 4, 1 over 3 * 512.
  auto h = [&](const Term& node) { return one_minus_pow(node, k) / denom * 2 * len_ * node.scale; };
  double s = h(nodes_.front()) + h(nodes_.back());
  for (int i = 1; i < kSimpsonPanels; ++i) s += (i % 2 == 1 ? 4 : 2) * h(nodes_[static_cast<std::size_t>(i)]);
  return e + s * (1.0 / kSimpsonPanels) / 3;
}

double TailModel::expected_max(double k) const { return ExpectedMaxCurve(*this)(k); }

double TailModel::max_quantile(double k, double p) const {
  const std::size_t n = sorted.size();
  const double nd = static_cast<double>(n);
  const double q0 = static_cast<double>(n) / static_cast<double>(drawn);
  const double p0 = 1 - q0;
  const double p0k = p0 > 0 ? det::exp(k * det::log(p0)) : 0.0;
  // F(x)^k = p0^k + p (1 - p0^k): t = 1 - F(x), then t_v = t / (1 - p0) = 1 - F_v(x).
  const double t = -det::expm1(det::log(p0k + p * (1 - p0k)) / k);
  const double tv = std::min(1.0, t / q0);
  const double zeta = static_cast<double>(exceedances) / nd;
  if (method == TailMethod::gpd && tv < zeta) {
    const double s = tv / zeta;
    const double xi = gpd.xi;
    const double y = xi == 0 ? -gpd.sigma * det::log(s) : gpd.sigma * det::expm1(-xi * det::log(s)) / xi;
    return std::min(endpoint(), threshold + y);
  }
  // The empirical part: the smallest draw x_(i) (1-based) with i / n >= 1 - t_v.
  const auto above = static_cast<std::size_t>(std::floor(tv * nd + 1e-9));
  const std::size_t i = n - std::min(n - 1, above);
  return sorted[i - 1];
}

}  // namespace advplan
