#!/usr/bin/python3
"""Oracle values for the anytime-valid confidence sequence (tests/stats/confidence_sequence_test.cpp,
docs/METRICS.md "Anytime-valid stopping"), computed once and stored in
tests/data/oracles/confidence_sequence_fixtures.json. Re-run only to add cases:

    /usr/bin/python3 tests/data/oracles/make_confidence_sequence_fixtures.py > tests/data/oracles/confidence_sequence_fixtures.json

Sources: Waudby-Smith and Ramdas (2023), "Estimating means of bounded random variables by betting", Theorem 2
(the predictable plug-in empirical-Bernstein confidence sequence), written here directly from the paper's
formulas with the bets tuned to a fixed level, in vectorised numpy (an implementation independent of the C++
one's running sums); and statsmodels' multipletests(method="holm") for the step-down rejections.
"""
import json

import numpy as np
from statsmodels.stats.multitest import multipletests


def prpl_eb(x, alpha_tune, alphas, null):
    t = np.arange(1, len(x) + 1)
    mu = (0.5 + np.cumsum(x)) / (t + 1)
    var = (0.25 + np.cumsum((x - mu) ** 2)) / (t + 1)
    mu_prev = np.concatenate([[0.5], mu[:-1]])
    var_prev = np.concatenate([[0.25], var[:-1]])
    lam = np.minimum(np.sqrt(2 * np.log(2 / alpha_tune) / (var_prev * t * np.log(1 + t))), 0.5)
    v = 4 * (x - mu_prev) ** 2
    psi = (-np.log(1 - lam) - lam) / 4
    L, LX, PEN = np.cumsum(lam), np.cumsum(lam * x), np.cumsum(v * psi)
    p = np.minimum.accumulate(np.minimum(1, 2 * np.exp(PEN - np.abs(LX - null * L))))
    out = {"p": list(p)}
    for a in alphas:
        lo = np.maximum.accumulate(LX / L - (np.log(2 / a) + PEN) / L)
        hi = np.minimum.accumulate(LX / L + (np.log(2 / a) + PEN) / L)
        out[f"lo_{a}"], out[f"hi_{a}"] = list(np.maximum(lo, 0)), list(np.minimum(hi, 1))
    return out


rng = np.random.default_rng(49)
cases = []
for n, shift in [(150, 0.0), (150, 0.08), (40, -0.2), (300, 0.02)]:
    x = np.clip(rng.beta(2, 2, size=n) + shift, 0, 1).round(6)
    res = prpl_eb(x, 0.05 / 8, [0.05, 0.05 / 8], 0.5)
    cases.append({"x": list(x), "alpha_tune": 0.05 / 8, **res})
holm = []
for _ in range(6):
    p = list(np.round(rng.uniform(0, 0.03, size=8) ** rng.uniform(0.5, 2), 6))
    holm.append({"p": p, "alpha": 0.05, "reject": [bool(r) for r in multipletests(p, 0.05, method="holm")[0]]})
print(json.dumps({"cases": cases, "holm": holm}))
