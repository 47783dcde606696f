"""Reproduces Table 4 (response-budget sweep) from a run's per_scenario.csv in a few lines of pandas/NumPy.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/table4.py [RUN_DIR]

RUN_DIR defaults to runs/python-paper, relative to the directory it is run from; when it holds no run yet, the
built-in paper config is run into it first (so a second call reads the same run). The means equal the run's
tables/table4_response_budget.md and budget_curve.csv (the bracketed intervals there are the bootstrap's).
"""
import os
import sys

import numpy as np

import advplan

target = sys.argv[1] if len(sys.argv) > 1 else "runs/python-paper"
run = advplan.Run(target) if os.path.exists(os.path.join(target, "MANIFEST")) else advplan.run(out=target)
per = run.trace("per_scenario", pandas=False)
sweep = per[(per["condition_group"] == "sweep") | np.char.startswith(per["red_policy"], "greedy@")]
sweep = sweep[(sweep["status"] == "ok") & (sweep["blue_policy"] == "seed")]
print("| k | n | BLUE advantage | RED quality | Pareto count | Diversity | BLUE win rate |")
for k in sorted(set(sweep["k"])):
    s = sweep[sweep["k"] == k]
    print("| %d | %d | %.3f | %.3f | %.3f | %.3f | %.3f |" % (k, len(s), s["advantage"].mean(), s["red_quality"].mean(),
          s["pareto_count"].mean(), s["diversity"].mean(), s["blue_win_rate"].mean()))
