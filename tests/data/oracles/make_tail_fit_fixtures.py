#!/usr/bin/python3
"""Oracle values for the extreme-value tail fits (tests/stats/tail_fit_test.cpp), computed once and stored in
tests/data/oracles/tail_fit_fixtures.json (data and expected values together). Re-run only to add cases:

    /usr/bin/python3 tests/data/oracles/make_tail_fit_fixtures.py > tests/data/oracles/tail_fit_fixtures.json

Sources of each value (Debian's python3-scipy 1.10):
- the GPD maximum-likelihood fit: scipy.stats.genpareto.fit(y, floc=0) (y the exceedances over the threshold, so
  the location is fixed at the threshold), its Nelder-Mead optimizer run to xtol = ftol = 1e-13 from scipy's own
  default fit, then polished once more from that optimum; the log-likelihood is sum(genpareto.logpdf(y, c, 0,
  scale)). Only fits whose shape lies inside (-0.95, 2) are kept (the C++ search range is [-1, 2]: below -1 the
  likelihood is unbounded, so scipy's unconstrained optimum there is not a maximum-likelihood estimate);
- the tail model's GPD: Coles and Dixon's penalised likelihood (lambda = 1), the log-likelihood above minus
  (1 / (1 + c) - 1) for c < 0, minimised by scipy.optimize.fmin from three starts to 1e-14;
- the tail model's expected maximum of k draws and its quantiles: the documented model (empirical distribution
  below the threshold u, u + GPD above it with weight m / n, invalid draws as an atom below everything, clamped at
  1) evaluated from scipy's fit: E = x_(1) + sum over the empirical steps + scipy.integrate.quad of 1 - G_k over
  [u, min(1, endpoint)] (epsabs 1e-13), and the quantiles by inverting G_k with genpareto.ppf.
"""
import json
import math

import numpy as np
from scipy import integrate, optimize, stats


def tight_fit(y):
    c0, _, s0 = stats.genpareto.fit(y, floc=0)

    def nll(p):
        c, s = p
        if s <= 0:
            return np.inf
        v = -np.sum(stats.genpareto.logpdf(y, c, 0, s))
        return v if np.isfinite(v) else np.inf

    best = optimize.fmin(nll, [c0, s0], xtol=1e-13, ftol=1e-13, maxiter=20000, maxfun=40000, disp=0)
    best = optimize.fmin(nll, best, xtol=1e-14, ftol=1e-14, maxiter=20000, maxfun=40000, disp=0)
    # scipy's own genpareto.fit with this optimizer must agree (the oracle named in the issue).
    c1, _, s1 = stats.genpareto.fit(
        y, floc=0, optimizer=lambda f, x0, args=(), disp=0: optimize.fmin(
            f, best, args=args, xtol=1e-14, ftol=1e-14, maxiter=20000, maxfun=40000, disp=0))
    assert abs(c1 - best[0]) < 1e-6 and abs(s1 - best[1]) < 1e-6 * best[1], (c1, s1, best)
    return float(best[0]), float(best[1]), float(-nll(best))


def tight_fit_penalised(y, lam=1.0):
    """Coles and Dixon's penalised MLE: scipy's genpareto log-likelihood minus lam (1 / (1 + c) - 1) for c < 0,
    minimised by Nelder-Mead from three starts (scipy's default fit with c clipped to -0.9, the exponential, and
    c = -0.5), each run to 1e-14; the best is kept."""
    def nll(p):
        c, s = p
        if s <= 0 or c <= -1:
            return np.inf
        v = -np.sum(stats.genpareto.logpdf(y, c, 0, s))
        if c < 0:
            v += lam * (1 / (1 + c) - 1)
        return v if np.isfinite(v) else np.inf

    c0, _, s0 = stats.genpareto.fit(y, floc=0)
    starts = [[max(c0, -0.9), s0 if max(c0, -0.9) == c0 else max(y) * 0.9], [0.0, float(np.mean(y))],
              [-0.5, float(max(y)) * 0.6]]
    best = None
    for x0 in starts:
        r = optimize.fmin(nll, x0, xtol=1e-14, ftol=1e-14, maxiter=20000, maxfun=40000, disp=0)
        r = optimize.fmin(nll, r, xtol=1e-14, ftol=1e-14, maxiter=20000, maxfun=40000, disp=0)
        if best is None or nll(r) < nll(best):
            best = r
    return float(best[0]), float(best[1]), float(np.sum(stats.genpareto.logpdf(y, best[0], 0, best[1])))


def m_of(n):
    if n < 10:
        return 0
    return min(n - 1, max(8, math.ceil(2 * math.sqrt(n))))


def model(draws, drawn):
    x = np.sort(np.asarray(draws, dtype=float))
    n = len(x)
    m = m_of(n)
    u = x[n - m - 1]
    y = x[n - m:] - u
    xi, sigma, ll = tight_fit_penalised(y)
    return x, n, m, u, y, xi, sigma, ll


def expected_max(x, n, m, u, xi, sigma, drawn, k):
    q0 = n / drawn
    p0 = 1 - q0
    denom = 1 - p0 ** k
    e = x[0]
    for i in range(1, n - m):
        t = q0 * (n - i) / n
        e += (x[i] - x[i - 1]) * (1 - (1 - t) ** k) / denom
    end = min(1.0, u - sigma / xi) if xi < 0 else 1.0
    zeta = q0 * m / n

    def g(v):
        s = stats.genpareto.sf(v - u, xi, 0, sigma)
        return -math.expm1(k * math.log1p(-zeta * s)) / denom

    val, _ = integrate.quad(g, u, end, epsabs=1e-13, epsrel=1e-12, limit=500)
    return e + val


def max_quantile(x, n, m, u, xi, sigma, drawn, k, p):
    q0 = n / drawn
    p0 = 1 - q0
    p0k = p0 ** k
    t = -math.expm1(math.log(p0k + p * (1 - p0k)) / k)
    tv = min(1.0, t / q0)
    zeta = m / n
    end = min(1.0, u - sigma / xi) if xi < 0 else 1.0
    if tv < zeta:
        return min(end, u + stats.genpareto.isf(tv / zeta, xi, 0, sigma))
    above = math.floor(tv * n + 1e-9)
    i = n - min(n - 1, above)
    return float(x[i - 1])


def main():
    rng = np.random.RandomState(20240601)
    gpd_cases = []
    for name, c, s, m in [("gpd xi=-0.3", -0.3, 0.1, 50), ("gpd xi=0.2", 0.2, 0.05, 30), ("gpd xi=-0.6", -0.6, 0.2, 25),
                          ("exponential", 0.0, 0.07, 40), ("gpd xi=0.5", 0.5, 0.02, 60), ("gpd xi=-0.1 small", -0.1, 0.1, 12)]:
        y = stats.genpareto.rvs(c, 0, s, size=m, random_state=rng)
        xi, sigma, ll = tight_fit(y)
        if not (-0.95 < xi < 2):
            continue
        gpd_cases.append({"name": name, "y": [float(v) for v in y], "xi": xi, "sigma": sigma, "loglik": ll})

    model_cases = []
    for name, a, b, n, drawn in [("beta(2,5) n=16", 2, 5, 16, 16), ("beta(5,2) n=16", 5, 2, 16, 16),
                                 ("beta(2,2) n=40 drawn=44", 2, 2, 40, 44), ("beta(3,8) n=64", 3, 8, 64, 64),
                                 ("beta(4,4) n=16 seed2", 4, 4, 16, 16), ("beta(2,9) n=30 drawn=32", 2, 9, 30, 32)]:
        for _ in range(20):
            draws = np.round(stats.beta.rvs(a, b, size=n, random_state=rng), 6)
            x, nn, m, u, y, xi, sigma, ll = model(draws, drawn)
            if -0.95 < xi < 2:
                break
        else:
            raise SystemExit(f"{name}: no interior fit")
        ks = [1, 2, 8, 16, 32, 64, 256, 4096]
        ps = [0.05, 0.5, 0.95]
        model_cases.append({
            "name": name, "draws": [float(v) for v in draws], "drawn": drawn, "exceedances": m, "threshold": float(u),
            "xi": xi, "sigma": sigma, "loglik": ll,
            "endpoint": (min(1.0, u - sigma / xi) if xi < 0 else 1.0),
            "expected_max": [{"k": k, "value": expected_max(x, nn, m, u, xi, sigma, drawn, k)} for k in ks],
            "max_quantile": [{"k": k, "p": p, "value": max_quantile(x, nn, m, u, xi, sigma, drawn, k, p)}
                             for k in ks for p in ps],
        })
    print(json.dumps({"gpd": gpd_cases, "model": model_cases}, indent=1))


if __name__ == "__main__":
    main()
