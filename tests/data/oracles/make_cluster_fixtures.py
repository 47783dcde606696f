#!/usr/bin/python3
"""Oracle values for the template-clustered intervals (tests/stats/cluster_test.cpp, docs/METRICS.md
"Template-clustered intervals"), computed once and stored in tests/data/oracles/cluster_fixtures.json. Re-run
only to add cases (needs Debian's r-base-core, r-cran-clubsandwich and r-cran-jsonlite):

    /usr/bin/python3 tests/data/oracles/make_cluster_fixtures.py > tests/data/oracles/cluster_fixtures.json

Sources:
- the CR2 standard error and Satterthwaite degrees of freedom: R's clubSandwich,
  coef_test(lm(y ~ 1), vcov = "CR2", cluster = g, test = "Satterthwaite"), columns SE and df_Satt;
- the same two from a general matrix formulation in numpy (A_g = (I - H_gg)^(-1/2) by eigendecomposition, the
  Satterthwaite df from the p_g vectors of Bell and McCaffrey), asserted equal to clubSandwich's to 1e-10;
- the wild cluster bootstrap-t interval (Webb's six-point weights) by enumerating all 6^G weight vectors with the
  matrix formulation, refitting the mean and the CR2 standard error on each y* = mean + w_g e: no package is
  installed for it, so this is an independent brute-force implementation of the definition.
"""
import json
import math
import subprocess

import numpy as np

WEBB = [-math.sqrt(1.5), -1.0, -math.sqrt(0.5), math.sqrt(0.5), 1.0, math.sqrt(1.5)]


def cr2(y, g):
    n = len(y)
    X = np.ones((n, 1))
    H = X @ np.linalg.inv(X.T @ X) @ X.T
    e = y - H @ y
    bread = np.linalg.inv(X.T @ X)
    meat, ps = 0.0, []
    M = np.eye(n) - H
    for k in sorted(set(g)):
        idx = np.where(g == k)[0]
        Hgg = H[np.ix_(idx, idx)]
        vals, vecs = np.linalg.eigh(np.eye(len(idx)) - Hgg)
        A = vecs @ np.diag(vals ** -0.5) @ vecs.T
        u = A @ X[idx] @ bread  # n_g x 1
        meat += float((u[:, 0] @ e[idx]) ** 2)
        full = np.zeros(n)
        full[idx] = u[:, 0]
        ps.append(M.T @ full)
    P = np.array(ps)
    G = P @ P.T
    df = np.trace(G) ** 2 / np.sum(G * G)
    return math.sqrt(meat), df


def wild(y, g):
    mean = y.mean()
    se = cr2(y, g)[0]
    e = y - mean
    ks = sorted(set(g))
    ts = []
    for code in range(6 ** len(ks)):
        w, rest = {}, code
        for k in ks:
            w[k] = WEBB[rest % 6]
            rest //= 6
        ystar = mean + np.array([w[k] for k in g]) * e
        s = cr2(ystar, g)[0]
        if s > 0:
            ts.append((ystar.mean() - mean) / s)
    ts = sorted(ts)
    b = len(ts)
    lo, hi = ts[math.floor(0.025 * b)], ts[math.ceil(0.975 * b) - 1]
    return mean - hi * se, mean - lo * se


def club(y, g):
    script = ("library(jsonlite); library(clubSandwich); d <- fromJSON(file('stdin')); "
              "ct <- coef_test(lm(y ~ 1, data = d), vcov = 'CR2', cluster = d$g, test = 'Satterthwaite'); "
              "cat(toJSON(list(se = ct$SE, df = ct$df_Satt), digits = NA))")
    out = subprocess.run(["Rscript", "-e", script], input=json.dumps({"y": list(y), "g": list(map(int, g))}),
                         capture_output=True, text=True, check=True).stdout
    r = json.loads(out)
    return r["se"][0], r["df"][0]


rng = np.random.default_rng(52)
cases = []
for sizes in [(3, 2, 4), (30, 30, 30, 30, 30), (12, 5, 40, 8, 25), (2, 3, 2), (6, 9, 4, 7, 5, 11)]:
    g = np.concatenate([np.full(s, k) for k, s in enumerate(sizes)])
    y = np.round(rng.normal(0.1, 0.3, size=len(g)) + np.repeat(rng.normal(0, 0.2, len(sizes)), sizes), 6)
    se_r, df_r = club(y, g)
    se_m, df_m = cr2(y, g)
    assert abs(se_r - se_m) < 1e-10 and abs(df_r - df_m) < 1e-8, (sizes, se_r, se_m, df_r, df_m)
    lo, hi = wild(y, g)
    cases.append({"y": list(y), "g": list(map(int, g)), "se": se_r, "df": df_r, "wild_lo": lo, "wild_hi": hi})
print(json.dumps({"cases": cases}, indent=1))
