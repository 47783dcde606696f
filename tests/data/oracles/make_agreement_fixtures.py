#!/usr/bin/python3
"""Oracle values for the agreement statistics (tests/stats/agreement_test.cpp), computed once and stored in
tests/data/oracles/agreement_fixtures.json (data and expected values together). Re-run only to add cases:

    /usr/bin/python3 tests/data/oracles/make_agreement_fixtures.py > tests/data/oracles/agreement_fixtures.json

Sources of each value (Debian's python3-statsmodels and python3-scipy):
- Cohen's kappa and its standard errors: statsmodels.stats.inter_rater.cohens_kappa(table, wt=None|'linear'|
  'quadratic'): kappa, std_kappa, std_kappa0;
- Fleiss' kappa: statsmodels.stats.inter_rater.fleiss_kappa(aggregate_raters(labels)[0], method='fleiss');
- Spearman: scipy.stats.spearmanr;
- Kendall's W: from scipy.stats.friedmanchisquare (tie-corrected), W = chi2 / (m (n - 1)) for m raters ranking
  n subjects;
- ICC(2,1), ICC(3,1): Shrout and Fleiss (1979) formulas on the two-way ANOVA mean squares, the mean squares taken
  from statsmodels' OLS anova_lm (C(subject) + C(rater)); cross-checked here against a second, independent
  formulation (mean squares from explicit numpy sums of squares) to 1e-12, and the assertion fails otherwise;
- Krippendorff's alpha: no package is installed, so a direct numpy implementation of the coincidence-matrix
  definition, asserted here to reproduce Krippendorff's published values on his two reliability-data examples
  (4 coders x 12 units: nominal 0.743, ordinal 0.815, interval 0.849; 3 coders x 15 units: nominal 0.691358,
  interval 0.810845) before any other value is written.
"""
import json
import math

import numpy as np
import pandas as pd
from scipy import stats
import statsmodels.formula.api as smf
from statsmodels.stats.anova import anova_lm
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

rng = np.random.default_rng(20261130)
out = {"cohen": [], "fleiss": [], "spearman": [], "kendall_w": [], "icc": [], "krippendorff": []}

# ---- Cohen's kappa ------------------------------------------------------------------------------------------------
def kappa_case(name, a, b, k):
    table = np.zeros((k, k))
    for x, y in zip(a, b):
        table[x, y] += 1
    for wt in (None, "linear", "quadratic"):
        r = cohens_kappa(table, wt=wt)
        out["cohen"].append({"name": name, "a": list(map(int, a)), "b": list(map(int, b)), "categories": k,
                             "weights": wt or "none", "kappa": float(r.kappa), "se": float(r.std_kappa),
                             "se0": float(r.std_kappa0)})

a = [0, 1, 2, 3, 3, 2, 1, 0, 2, 2, 3, 1, 0, 1, 2, 3, 3, 3, 2, 1, 0, 0, 2, 1, 3]
b = [0, 1, 2, 2, 3, 2, 0, 0, 2, 3, 3, 1, 1, 1, 2, 3, 2, 3, 2, 2, 0, 1, 2, 1, 3]
kappa_case("ordinal4", a, b, 4)
a = rng.integers(0, 2, 60)
b = np.where(rng.random(60) < 0.8, a, 1 - a)
kappa_case("binary60", a, b, 2)
a = rng.integers(0, 5, 40)
b = np.clip(a + rng.integers(-1, 2, 40), 0, 4)
kappa_case("ordinal5", a, b, 5)

# ---- Fleiss' kappa ------------------------------------------------------------------------------------------------
def fleiss_case(name, labels, k):
    counts, cats = aggregate_raters(np.asarray(labels), n_cat=k)
    out["fleiss"].append({"name": name, "labels": [list(map(int, r)) for r in labels], "categories": k,
                          "kappa": float(fleiss_kappa(counts, method="fleiss"))})

truth = rng.integers(0, 3, 30)
labels = [[int(t) if rng.random() < 0.7 else int(rng.integers(0, 3)) for _ in range(4)] for t in truth]
fleiss_case("four_raters_three_cats", labels, 3)
truth = rng.integers(0, 2, 50)
labels = [[int(t) if rng.random() < 0.85 else 1 - int(t) for _ in range(3)] for t in truth]
fleiss_case("three_raters_binary", labels, 2)

# ---- Spearman -----------------------------------------------------------------------------------------------------
x = [0.729, 0.652, 0.641, 0.7, 0.65, 0.8, 0.3, 0.45, 0.65, 0.9]
y = [0.71, 0.66, 0.60, 0.69, 0.62, 0.85, 0.35, 0.4, 0.66, 0.88]
out["spearman"].append({"name": "ties", "x": x, "y": y, "rho": float(stats.spearmanr(x, y).statistic)})
x = rng.normal(size=25).tolist()
y = (np.asarray(x) * 0.5 + rng.normal(size=25)).tolist()
out["spearman"].append({"name": "normal25", "x": x, "y": y, "rho": float(stats.spearmanr(x, y).statistic)})

# ---- Kendall's W --------------------------------------------------------------------------------------------------
def kendall_case(name, x):
    x = np.asarray(x, float)  # x[subject][rater]
    n, m = x.shape
    chi2 = stats.friedmanchisquare(*[x[i, :] for i in range(n)]).statistic
    out["kendall_w"].append({"name": name, "x": x.tolist(), "w": float(chi2 / (m * (n - 1)))})

base = rng.normal(size=12)
kendall_case("continuous", np.stack([base + 0.5 * rng.normal(size=12) for _ in range(4)], axis=1))
kendall_case("ties", np.round(np.stack([base + 0.7 * rng.normal(size=12) for _ in range(3)], axis=1)))

# ---- ICC ------------------------------------------------------------------------------------------------------------
def icc_case(name, x):
    x = np.asarray(x, float)
    n, k = x.shape
    df = pd.DataFrame([(i, j, x[i, j]) for i in range(n) for j in range(k)], columns=["s", "r", "y"])
    aov = anova_lm(smf.ols("y ~ C(s) + C(r)", data=df).fit())
    msr, msc, mse = aov["mean_sq"]["C(s)"], aov["mean_sq"]["C(r)"], aov["mean_sq"]["Residual"]
    # Second formulation: explicit sums of squares.
    g = x.mean()
    ssr = k * ((x.mean(axis=1) - g) ** 2).sum()
    ssc = n * ((x.mean(axis=0) - g) ** 2).sum()
    sse = ((x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + g) ** 2).sum()
    msr2, msc2, mse2 = ssr / (n - 1), ssc / (k - 1), sse / ((n - 1) * (k - 1))
    for u, v in ((msr, msr2), (msc, msc2), (mse, mse2)):
        assert abs(u - v) <= 1e-12 * max(1.0, abs(u)), (name, u, v)
    icc2 = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
    icc3 = (msr - mse) / (msr + (k - 1) * mse)
    out["icc"].append({"name": name, "x": x.tolist(), "icc2_1": float(icc2), "icc3_1": float(icc3),
                       "ms_rows": float(msr), "ms_cols": float(msc), "ms_error": float(mse)})

# Shrout and Fleiss (1979), Table 2: 6 targets x 4 judges; published ICC(2,1) = .29, ICC(3,1) = .71.
sf = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]]
icc_case("shrout_fleiss", sf)
assert round(out["icc"][-1]["icc2_1"], 2) == 0.29 and round(out["icc"][-1]["icc3_1"], 2) == 0.71
icc_case("levels", np.stack([base + off + 0.4 * rng.normal(size=12) for off in (0.0, 0.3, -0.2)], axis=1))

# ---- Krippendorff's alpha -------------------------------------------------------------------------------------------
def kalpha(data, level):
    data = np.asarray(data, float)  # [coder][unit]
    values = np.unique(data[~np.isnan(data)])
    idx = {v: i for i, v in enumerate(values)}
    k = len(values)
    o = np.zeros((k, k))
    for u in range(data.shape[1]):
        vals = [idx[v] for v in data[:, u] if not math.isnan(v)]
        m = len(vals)
        if m < 2:
            continue
        for i in range(m):
            for j in range(m):
                if i != j:
                    o[vals[i], vals[j]] += 1.0 / (m - 1)
    nc = o.sum(axis=1)
    n = nc.sum()
    d = np.zeros((k, k))
    for c in range(k):
        for e in range(k):
            if level == "nominal":
                d[c, e] = float(c != e)
            elif level == "interval":
                d[c, e] = (values[c] - values[e]) ** 2
            else:
                lo, hi = min(c, e), max(c, e)
                d[c, e] = (nc[lo:hi + 1].sum() - (nc[c] + nc[e]) / 2) ** 2
    return 1 - (n - 1) * (o * d).sum() / (np.outer(nc, nc) * d).sum()

nan = float("nan")
k2011 = [[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
         [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
         [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
         [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]
assert round(kalpha(k2011, "nominal"), 3) == 0.743
assert round(kalpha(k2011, "ordinal"), 3) == 0.815
assert round(kalpha(k2011, "interval"), 3) == 0.849
k15 = [[nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
       [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
       [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4]]
assert round(kalpha(k15, "nominal"), 6) == 0.691358
assert round(kalpha(k15, "interval"), 6) == 0.810845

def alpha_case(name, data):
    out["krippendorff"].append({"name": name, "data": [[None if math.isnan(v) else v for v in r] for r in data],
                                **{lvl: float(kalpha(data, lvl)) for lvl in ("nominal", "ordinal", "interval")}})

alpha_case("krippendorff2011_4x12", k2011)
alpha_case("reliability_3x15", k15)
sparse = np.round(np.stack([base + 0.6 * rng.normal(size=12) for _ in range(4)]) * 2)
sparse[rng.random(sparse.shape) < 0.25] = nan
alpha_case("sparse_4x12", sparse.tolist())

print(json.dumps(out, indent=1))
