#!/usr/bin/python3
"""Oracle values for the four-level variance components of the study design (tests/stats/study_design_test.cpp,
docs/METRICS.md "Study design"), computed once into tests/data/oracles/study_design_fixtures.json. Re-run only to
add cases (needs numpy, Debian's r-base-core, r-cran-lme4 and r-cran-jsonlite):

    /usr/bin/python3 tests/data/oracles/make_study_design_fixtures.py > tests/data/oracles/study_design_fixtures.json

Each case is a pilot in its replications: z (one value per replication), t (template), s (scenario, numbered
across templates), k (sample, numbered across scenarios), R replications per sample. Sources:
- the four-level ANOVA by matrix algebra on the replications themselves (independent of the C++ reduction to
  sample means): each mean square y'Ay/df with A the projection of its stratum, E[y'Ay] = sum over the components
  of s2 tr(A Z Z') + s2_r tr(A); the moment equations solved top-down from the replication level;
- R's lme4, lmer(z ~ 1 + (1 | tmpl) + (1 | tmpl:scen) + (1 | tmpl:scen:samp), REML = TRUE): equal to the ANOVA
  estimates on balanced cases when none is negative (asserted here to 1e-6), a second reading on unbalanced ones;
- for the win-rate cases (z = X_A - X_B, two independent Bernoulli replications), the counts rule the traces
  allow: each sample's variance of one replication's difference taken as (p_A(1-p_A) + p_B(1-p_B)) R/(R-1) from
  its two win rates alone (stored as p_a, p_b per sample).
"""
import json
import subprocess

import numpy as np


def proj(Z):
    return Z @ np.linalg.pinv(Z.T @ Z) @ Z.T


def anova4(z, t, s, k):
    n = len(z)
    Z = [np.eye(v.max() + 1)[v] for v in (t, s, k)]
    P = [np.ones((n, n)) / n] + [proj(x) for x in Z] + [np.eye(n)]
    A = [P[i + 1] - P[i] for i in range(4)]  # templates, scenarios, samples, replications
    df = [t.max(), s.max() + 1 - (t.max() + 1), k.max() + 1 - (s.max() + 1), n - (k.max() + 1)]
    ms = [z @ a @ z / d for a, d in zip(A, df)]
    # E[MS_i] = sum_j c[i][j] s2_j (j over templates, scenarios, samples) + s2_r
    c = [[np.trace(a @ x @ x.T) / d for x in Z] for a, d in zip(A, df)]
    s2r = ms[3]
    s2k = (ms[2] - s2r) / c[2][2]
    s2s = (ms[1] - s2r - c[1][2] * s2k) / c[1][1]
    s2t = (ms[0] - s2r - c[0][2] * s2k - c[0][1] * s2s) / c[0][0]
    return {"s2_t": s2t, "s2_s": s2s, "s2_k": s2k, "s2_r": s2r}


def lme4(z, t, s, k):
    script = ("suppressMessages(library(lme4)); library(jsonlite); d <- fromJSON(file('stdin')); "
              "d$tmpl <- factor(d$t); d$scen <- factor(d$s); d$samp <- factor(d$k); "
              "m <- lmer(z ~ 1 + (1 | tmpl) + (1 | tmpl:scen) + (1 | tmpl:scen:samp), data = d, REML = TRUE, "
              "control = lmerControl(optimizer = 'bobyqa', optCtrl = list(rhobeg = 0.2, rhoend = 1e-12))); "
              "v <- as.data.frame(VarCorr(m)); "
              "cat(toJSON(list(t = v$vcov[v$grp == 'tmpl'], s = v$vcov[v$grp == 'tmpl:scen'], "
              "k = v$vcov[v$grp == 'tmpl:scen:samp'], r = v$vcov[v$grp == 'Residual']), digits = NA))")
    out = subprocess.run(["Rscript", "-e", script], input=json.dumps({"z": list(map(float, z)),
                         "t": list(map(int, t)), "s": list(map(int, s)), "k": list(map(int, k))}),
                         capture_output=True, text=True, check=True).stdout
    r = json.loads(out)
    return {"s2_t": r["t"][0], "s2_s": r["s"][0], "s2_k": r["k"][0], "s2_r": r["r"][0]}


def case(rng, T, S, K, R, balanced, wins):
    t, s, k, z, pa, pb = [], [], [], [], [], []
    scen = samp = 0
    at = rng.normal(0, 0.3, T)
    for ti in range(T):
        for _ in range(S if balanced else int(rng.integers(2, S + 1))):
            b = rng.normal(0, 0.2)
            for _ in range(K if balanced else int(rng.integers(1, K + 1))):
                c = rng.normal(0, 1.0 if wins else 0.15)
                if wins:  # two conditions' Bernoulli replications, independent given the sample's probabilities
                    qa = 1 / (1 + np.exp(-(0.3 + at[ti] + b + c)))
                    qb = 1 / (1 + np.exp(-(0.3 - at[ti] - b)))
                    xa, xb = rng.random(R) < qa, rng.random(R) < qb
                    vals = xa.astype(float) - xb.astype(float)
                    pa.append(float(xa.mean())); pb.append(float(xb.mean()))
                else:
                    vals = np.round(0.1 + at[ti] + b + c + rng.normal(0, 0.3, R), 6)
                for v in vals:
                    t.append(ti); s.append(scen); k.append(samp); z.append(float(v))
                samp += 1
            scen += 1
    t, s, k, z = map(np.array, (t, s, k, z))
    a, r = anova4(z, t, s, k), lme4(z, t, s, k)
    if balanced and min(a.values()) > 0:
        assert all(abs(a[x] - r[x]) < 1e-6 for x in a), (a, r)
    out = {"z": list(map(float, z)), "t": list(map(int, t)), "s": list(map(int, s)), "k": list(map(int, k)),
           "R": R, "balanced": balanced, "wins": wins, "anova": a, "lme4": r}
    if wins:
        out["p_a"], out["p_b"] = pa, pb
    return out


rng = np.random.default_rng(4950)
cases = [case(rng, 5, 6, 2, 8, True, False), case(rng, 4, 5, 3, 6, True, False),
         case(rng, 5, 6, 3, 5, False, False), case(rng, 3, 8, 3, 10, False, False),
         case(rng, 5, 6, 2, 40, True, True), case(rng, 5, 8, 3, 30, False, True)]
print(json.dumps({"cases": cases}))
