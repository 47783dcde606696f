#!/usr/bin/python3
"""R's lme4 fitted on the pilot of tests/evaluation/design_test.cpp, into
tests/data/oracles/design_pilot_fixture.json. Re-run when the pilot's bytes change (a simulator or policy change
moves per_scenario.csv; the test then fails on this fixture): needs a built advplan, numpy, Debian's r-base-core,
r-cran-lme4 and r-cran-jsonlite:

    /usr/bin/python3 tests/data/oracles/make_design_pilot_fixture.py build/advplan > tests/data/oracles/design_pilot_fixture.json

The config below is the test's pilot_config("2"); keep the two the same. For each designed pair (a, b) and metric,
the values d = metric(a) - metric(b) per (scenario, sample) are fitted with
lmer(d ~ 1 + (1 | tmpl) + (1 | tmpl:scen), REML = TRUE): s2_t, s2_s and the residual s2_w, which the design
splits into samples and replications (s2_w = var_samples + var_replications / R). `exact` says the design is
balanced and no ANOVA moment estimate is negative (matrix algebra here, as make_variance_components_fixtures.py
does), where REML equals the ANOVA estimates.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CONFIG = ("name: pilot\nseed: 4949\ncorpus: {templates: [urban, air-defense, maritime], seeds: [100, 109], "
          "template_dir: " + SOURCE + "/configs/templates}\n"
          "conditions: [single, greedy@4, {label: random_single, blue: random, red: single}]\nbudget_sweep: []\n"
          "samples: 2\nsimulator: {replications: 20}\nbootstrap: {resamples: 20}\n"
          "studies: {rubric: false, framing: false, components: false}\n")
PAIRS = [("single", "greedy@4"), ("single", "random_single")]


def anova_positive(y, t, s):
    n = len(y)
    Zt, Zs = np.eye(t.max() + 1)[t], np.eye(s.max() + 1)[s]
    P1 = np.ones((n, n)) / n
    Pt = Zt @ np.linalg.pinv(Zt.T @ Zt) @ Zt.T
    Ps = Zs @ np.linalg.pinv(Zs.T @ Zs) @ Zs.T
    A = [Pt - P1, Ps - Pt, np.eye(n) - Ps]
    df = [t.max(), s.max() + 1 - (t.max() + 1), n - (s.max() + 1)]
    ms = [y @ a @ y / d for a, d in zip(A, df)]
    k = lambda a, Z, d: np.trace(a @ Z @ Z.T) / d
    s2s = (ms[1] - ms[2]) / k(A[1], Zs, df[1])
    s2t = (ms[0] - ms[2] - k(A[0], Zs, df[0]) * s2s) / k(A[0], Zt, df[0])
    return s2s > 0 and s2t > 0


def lme4(y, t, s):
    script = ("suppressMessages(library(lme4)); library(jsonlite); d <- fromJSON(file('stdin')); "
              "d$tmpl <- factor(d$t); d$scen <- factor(d$s); "
              "m <- lmer(y ~ 1 + (1 | tmpl) + (1 | tmpl:scen), data = d, REML = TRUE, "
              "control = lmerControl(optimizer = 'bobyqa', optCtrl = list(rhobeg = 0.2, rhoend = 1e-12))); "
              "v <- as.data.frame(VarCorr(m)); "
              "cat(toJSON(list(t = v$vcov[v$grp == 'tmpl'], s = v$vcov[v$grp == 'tmpl:scen'], "
              "w = v$vcov[v$grp == 'Residual']), digits = NA))")
    out = subprocess.run(["Rscript", "-e", script], input=json.dumps({"y": list(map(float, y)),
                         "t": list(map(int, t)), "s": list(map(int, s))}), capture_output=True, text=True,
                         check=True).stdout
    r = json.loads(out)
    return {"s2_t": r["t"][0], "s2_s": r["s"][0], "s2_w": r["w"][0]}


def main():
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "pilot.yaml"), "w") as f:
            f.write(CONFIG)
        subprocess.run([sys.argv[1], "run", os.path.join(d, "pilot.yaml"), "--out", os.path.join(d, "run"),
                        "--threads", "2"], check=True, capture_output=True)
        with open(os.path.join(d, "run", "per_scenario.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
    cells, tmpl_of = {}, {}
    for r in rows:
        key = (r["scenario_id"], r["sample"])
        cells.setdefault(key, {})[r["condition"]] = r if r["status"] == "ok" else None
        tmpl_of[key] = r["template"]
    out = []
    for a, b in PAIRS:
        for metric in ("advantage", "blue_win_rate"):
            y, t, s, tm, sc = [], [], [], {}, {}
            for key in sorted(cells):
                ra, rb = cells[key].get(a), cells[key].get(b)
                if ra is None or rb is None:
                    continue
                y.append(float(ra[metric]) - float(rb[metric]))
                t.append(tm.setdefault(tmpl_of[key], len(tm)))
                s.append(sc.setdefault(key[0], len(sc)))
            y, t, s = map(np.array, (y, t, s))
            counts = np.bincount(s)
            balanced = len(set(counts)) == 1 and len(set(np.bincount(t))) == 1
            out.append({"a": a, "b": b, "metric": metric, "lme4": lme4(y, t, s),
                        "exact": bool(balanced and anova_positive(y, t, s))})
    print(json.dumps({"pairs": out}, indent=1))


main()
