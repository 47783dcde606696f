#!/usr/bin/python3
"""Oracle values for the paired-verdict statistics (tests/evaluation/verdict_test.cpp), computed once and pasted there.

Run with Debian's python3 (python3-scipy, python3-statsmodels):  /usr/bin/python3 tests/data/oracles/make_verdict_fixtures.py
- sign-flip p-values: scipy.stats.permutation_test with permutation_type='samples' (sign flips of one sample),
  statistic |mean|, alternative='greater', exact (n_resamples=inf) for n <= 16;
- Holm: statsmodels.stats.multitest.multipletests(method='holm').
"""
import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests

cases = {
    "mixed8": [0.12, -0.03, 0.07, 0.2, -0.01, 0.05, 0.09, 0.0],
    "small5": [1.0, 2.0, -0.5, 3.0, 0.25],
    "allpos12": [0.3, 0.1, 0.4, 0.15, 0.9, 0.2, 0.6, 0.5, 0.35, 0.05, 0.8, 0.25],
    "balanced6": [1.0, -1.0, 2.0, -2.0, 0.5, -0.5],
}
for name, d in cases.items():
    res = stats.permutation_test((np.array(d),), lambda x: abs(np.mean(x)), permutation_type="samples",
                                 alternative="greater", n_resamples=np.inf)
    print(f'{{"{name}", {{{", ".join(repr(x) for x in d)}}}, {res.pvalue!r}}},')

ps = [0.01, 0.04, 0.03, 0.005, 0.2, 0.04]
print("holm", list(multipletests(ps, method="holm")[1]))
ps2 = [0.5, 0.001, 0.02, 0.02, 1.0]
print("holm2", list(multipletests(ps2, method="holm")[1]))
