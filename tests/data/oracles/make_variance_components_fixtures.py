#!/usr/bin/python3
"""Oracle values for the nested variance components (tests/stats/variance_components_test.cpp, docs/METRICS.md
"Variance components"), computed once into tests/data/oracles/variance_components_fixtures.json. Re-run only to
add cases (needs Debian's r-base-core, r-cran-lme4 and r-cran-jsonlite):

    /usr/bin/python3 tests/data/oracles/make_variance_components_fixtures.py > tests/data/oracles/variance_components_fixtures.json

Sources:
- the expected-mean-square coefficients k1, k2, k3 by matrix algebra, independent of Searle's closed forms: each
  mean square is y'Ay/df with A the projection of its stratum, and E[y'Ay] = s2_t tr(A Z_t Z_t') +
  s2_s tr(A Z_s Z_s') + s2_w tr(A); the moment estimates then follow from the observed mean squares;
- R's lme4 (lmer(y ~ 1 + (1 | tmpl) + (1 | tmpl:scen), REML = TRUE)) on the balanced cases, where the REML
  estimates equal the ANOVA estimates when none is negative (asserted here to 1e-6), and on the unbalanced
  cases as a second reading (stored, compared in the test with a stated tolerance).
"""
import json
import subprocess

import numpy as np


def projections(t, s):
    n = len(t)
    Zt = np.eye(t.max() + 1)[t]
    Zs = np.eye(s.max() + 1)[s]
    P1 = np.ones((n, n)) / n
    Pt = Zt @ np.linalg.pinv(Zt.T @ Zt) @ Zt.T
    Ps = Zs @ np.linalg.pinv(Zs.T @ Zs) @ Zs.T
    return Zt, Zs, Pt - P1, Ps - Pt, np.eye(n) - Ps


def anova(y, t, s):
    Zt, Zs, At, As, Aw = projections(t, s)
    T, S, n = t.max() + 1, s.max() + 1, len(y)
    df = [T - 1, S - T, n - S]
    ms = [y @ A @ y / d for A, d in zip([At, As, Aw], df)]
    k = lambda A, Z, d: np.trace(A @ Z @ Z.T) / d
    k1 = k(As, Zs, df[1])
    k2, k3 = k(At, Zs, df[0]), k(At, Zt, df[0])
    s2w = ms[2]
    s2s = (ms[1] - s2w) / k1
    s2t = (ms[0] - s2w - k2 * s2s) / k3
    return {"ms": ms, "k1": k1, "k2": k2, "k3": k3, "s2_w": s2w, "s2_s": s2s, "s2_t": s2t}


def lme4(y, t, s):
    script = ("suppressMessages(library(lme4)); library(jsonlite); d <- fromJSON(file('stdin')); "
              "d$tmpl <- factor(d$t); d$scen <- factor(d$s); "
              "m <- lmer(y ~ 1 + (1 | tmpl) + (1 | tmpl:scen), data = d, REML = TRUE, "
              "control = lmerControl(optimizer = 'bobyqa', optCtrl = list(rhobeg = 0.2, rhoend = 1e-12))); "
              "v <- as.data.frame(VarCorr(m)); "
              "cat(toJSON(list(t = v$vcov[v$grp == 'tmpl'], s = v$vcov[v$grp == 'tmpl:scen'], "
              "w = v$vcov[v$grp == 'Residual']), digits = NA))")
    out = subprocess.run(["Rscript", "-e", script], input=json.dumps({"y": list(y), "t": list(map(int, t)),
                         "s": list(map(int, s))}), capture_output=True, text=True, check=True).stdout
    r = json.loads(out)
    return {"s2_t": r["t"][0], "s2_s": r["s"][0], "s2_w": r["w"][0]}


rng = np.random.default_rng(4949)
cases = []
for balanced, (T, S_per, K) in [(True, (5, 6, 3)), (True, (4, 10, 2)), (False, (5, 8, 3)), (False, (3, 12, 4))]:
    t, s, y = [], [], []
    scen = 0
    at = rng.normal(0, 0.3, T)
    for ti in range(T):
        n_s = S_per if balanced else int(rng.integers(3, S_per + 1))
        for _ in range(n_s):
            b = rng.normal(0, 0.2)
            k = K if balanced else int(rng.integers(2, K + 1))
            for _ in range(k):
                t.append(ti); s.append(scen); y.append(round(0.1 + at[ti] + b + rng.normal(0, 0.1), 6))
            scen += 1
    t, s, y = np.array(t), np.array(s), np.array(y)
    a, r = anova(y, t, s), lme4(y, t, s)
    if balanced and min(a["s2_s"], a["s2_t"]) > 0:
        assert all(abs(a[k] - r[k]) < 1e-6 for k in ("s2_t", "s2_s", "s2_w")), (a, r)
    cases.append({"y": list(y), "t": list(map(int, t)), "s": list(map(int, s)), "balanced": balanced,
                  "anova": a, "lme4": r})
print(json.dumps({"cases": cases}))
