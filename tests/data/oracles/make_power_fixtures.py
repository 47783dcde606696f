#!/usr/bin/python3
"""Oracle values for the minimum detectable effect (tests/stats/power_test.cpp, docs/METRICS.md "Minimum
detectable effect"), computed once and stored in tests/data/oracles/power_fixtures.json. Re-run only to add cases:

    /usr/bin/python3 tests/data/oracles/make_power_fixtures.py > tests/data/oracles/power_fixtures.json

Source: Debian's python3-statsmodels, statsmodels.stats.power.TTestPower (the one-sample t-test, which is the
paired t-test on the differences): power(effect_size, nobs, alpha, alternative='two-sided') and
solve_power(effect_size=None, nobs, alpha, power). solve_power's root finder stops at its own tolerance, so the
effect sizes are refined here with scipy's brentq on the same power function to xtol 1e-14 and asserted equal to
solve_power's to 1e-6 relative. R's pwr computes the same power function (pwr.t.test(d, n, sig.level, type = "one.sample")
$power); three of its values, from R 4.2.2 with pwr 1.3-0, are asserted below to 1e-9. (pwr's solved d is not used:
its uniroot stops at a tolerance of about 1e-4.)
"""
import json

import numpy as np
from scipy.optimize import brentq
from statsmodels.stats.power import TTestPower

P = TTestPower()

POWER_CASES = [(0.3, 150, 0.05), (0.3, 150, 0.05 / 64), (0.1, 30, 0.05), (1.0, 2, 0.05), (0.0, 20, 0.05),
               (0.5, 5, 0.01), (0.05, 1000, 0.05 / 6), (2.5, 3, 0.2)]
MDE_CASES = [(150, 0.05, 0.8), (150, 0.05 / 64, 0.8), (30, 0.05, 0.8), (2, 0.05, 0.8), (5, 0.01, 0.9),
             (1000, 0.05 / 6, 0.8), (150, 0.05 / 64, 0.95), (10, 0.1, 0.5), (3, 0.05, 0.8)]


def effect(n, alpha, power):
    d_sm = P.solve_power(effect_size=None, nobs=n, alpha=alpha, power=power, alternative="two-sided")
    d = brentq(lambda e: P.power(e, n, alpha, alternative="two-sided") - power, 1e-9, 64, xtol=1e-14, rtol=1e-15)
    assert abs(d - float(d_sm)) < 1e-6 * max(1.0, d), (n, alpha, power, d, d_sm)
    return d


# R 4.2.2, pwr 1.3-0: pwr.t.test(d, n, sig.level, type = "one.sample")$power.
for d, n, a, r_power in [(0.2302, 150, 0.05, 0.799878136412), (0.3, 150, 0.05 / 64, 0.596908845718), (0.5, 5, 0.01, 0.034184098546)]:
    assert abs(P.power(d, n, a, alternative="two-sided") - r_power) < 1e-9, (d, n, a)

rng = np.random.default_rng(49)
diffs = [list(np.round(rng.normal(0.02, 0.1, size=n), 6)) for n in (150, 12)]
out = {
    "power": [{"d": d, "n": n, "alpha": a, "power": float(P.power(d, n, a, alternative="two-sided"))}
              for d, n, a in POWER_CASES],
    "effect_size": [{"n": n, "alpha": a, "power": pw, "d": effect(n, a, pw)} for n, a, pw in MDE_CASES],
    "mde": [{"diffs": x, "alpha": 0.05 / 64, "power": 0.8,
             "mde": effect(len(x), 0.05 / 64, 0.8) * float(np.std(x, ddof=1))} for x in diffs],
}
print(json.dumps(out, indent=1))
