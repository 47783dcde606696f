"""Cost of a BLUE policy written in Python, in-process, against the built-in `seed` and against the same policy
over exec: (docs/RESULTS.md "Python policies in-process").

    PYTHONPATH=build/python /usr/bin/python3 bench/python_policy_bench.py [--repeats 5] [--threads 2]

Each variant runs the paper config's conditions (studies off) with every `seed` BLUE policy replaced by the
variant: `seed` (built in), `py_seed` (examples/python/seed_policy.py, in-process) and
exec:'/usr/bin/python3 examples/policies/trivial_blue.py' (the same plan over JSON lines). All three return the
same plans, so the runs do the same RED and simulator work; the difference is the cost of the BLUE call. Prints
the median wall time per run and per scenario, and the ratio to `seed`. --single runs one condition, BLUE
against `single`, so that the BLUE call is a larger share of the work.
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "python"))

import advplan  # noqa: E402
import seed_policy  # noqa: E402,F401  (registers py_seed)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--single", action="store_true",
                    help="one condition, BLUE against `single` (the cheapest RED), so the BLUE call weighs most")
    args = ap.parse_args()
    cfg = advplan.Config()
    base = [{"label": "single", "blue": "seed", "red": "single", "group": "main"}] if args.single else cfg.conditions()
    exec_spec = "exec:/usr/bin/python3 %s" % os.path.join(HERE, "..", "examples", "policies", "trivial_blue.py")
    variants = [("seed", "seed"), ("python in-process (py_seed)", "py_seed"), ("exec: (trivial_blue.py)", exec_spec)]
    n = len(cfg.scenario_ids())
    times = {}
    tmp = tempfile.mkdtemp(prefix="advplan-bench-")
    try:
        for r in range(args.repeats):
            for label, blue in variants:  # interleaved, so load on the machine hits every variant alike
                conds = [dict(c, blue=blue if c["blue"] == "seed" else c["blue"]) for c in base]
                out = os.path.join(tmp, "%d-%s" % (r, blue.split(":")[0]))
                t0 = time.perf_counter()
                s = advplan.run(cfg, out=out, conditions=conds, studies=False, threads=args.threads).summary
                times.setdefault(label, []).append(time.perf_counter() - t0)
                if s["failed_rows"]:
                    raise SystemExit("%s: %d failed rows" % (label, s["failed_rows"]))
                shutil.rmtree(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    seed = statistics.median(times["seed"])
    print("paper corpus, %d scenarios, %d conditions, threads=%d, median of %d runs" %
          (n, len(base), args.threads, args.repeats))
    print("| BLUE policy | run (s) | per scenario (ms) | vs seed |")
    print("|---|---:|---:|---:|")
    for label, _ in variants:
        m = statistics.median(times[label])
        print("| %s | %.2f | %.1f | %.2fx |" % (label, m, 1000 * m / n, m / seed))


if __name__ == "__main__":
    main()
