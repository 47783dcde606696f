#!/usr/bin/env python3
"""Summarises the constrained-against-free study (scripts/constrained_study.sh, docs/RESULTS.md).

Usage: constrained_study.py SCHEMA_RUN FREE_RUN
For each arm: the BLUE llm: rows' contract outcomes (parsed, repaired, failed; Wilson 95% intervals on the shares),
the share of model replies that are JSON objects (transcripts.jsonl), and the failure causes. For the scenarios where
both arms made a valid plan: the paired mean difference (schema - free) of blue_quality, blue_coherence and advantage
with a percentile bootstrap interval (10,000 resamples of the scenarios, seed 7); "n/a" when no scenario has both.
"""
import csv
import json
import math
import sys
from collections import Counter

import numpy as np


def wilson(k, n, z=1.959963984540054):
    if n == 0:
        return "n/a"
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return f"{k}/{n} = {p:.2f} [{max(0.0, c - h):.2f}, {min(1.0, c + h):.2f}]"


def rows(run):
    with open(f"{run}/per_scenario.csv") as f:
        return [r for r in csv.DictReader(f) if r["blue_policy"].startswith("llm:")]


def json_replies(run):
    k = n = 0
    try:
        for line in open(f"{run}/transcripts.jsonl"):
            c = json.loads(line)
            n += 1
            try:
                k += isinstance(json.loads(c["reply"]), dict)
            except (ValueError, TypeError):
                pass
    except FileNotFoundError:
        pass
    return k, n


def cause(reason):
    """A failure reason without its side and its quoted details: "invalid plan: chain[0]: dangling reference"."""
    reason = reason.removeprefix("blue: ").removeprefix("red: ")
    return reason.split(" to undefined")[0].split(" \"")[0][:80]


def finish_reasons(run):
    c = Counter()
    try:
        for line in open(f"{run}/transcripts.jsonl"):
            c[json.loads(line).get("finish_reason") or "none"] += 1
    except FileNotFoundError:
        pass
    return c


def arm(name, run):
    rs = rows(run)
    n = len(rs)
    s = lambda col: sum(int(r[col] or 0) for r in rs)
    k, calls = json_replies(run)
    causes = Counter(cause(r["failure_reason"]) for r in rs if r["status"] != "ok")
    print(f"| {name} | {n} | {wilson(sum(r['status'] == 'ok' for r in rs), n)} | {wilson(s('contract_parsed'), n)} | "
          f"{wilson(s('contract_repaired'), n)} | {wilson(s('contract_failed'), n)} | {wilson(k, calls)} |")
    return {r["scenario_id"]: r for r in rs}, causes


def main(schema_run, free_run):
    print("| arm | scenarios | valid plan | parsed as-is | repaired | failed | replies that are JSON objects |")
    print("|---|---:|---|---|---|---|---|")
    a, ca = arm("json_schema (per-scenario schema)", schema_run)
    b, cb = arm("free (no structured output)", free_run)
    print()
    for name, c, run in (("json_schema", ca, schema_run), ("free", cb, free_run)):
        print(f"- failure causes, {name}: " + ("; ".join(f"{v} x {k}" for k, v in c.most_common(4)) or "none") +
              "; finish reasons of its calls: " + ", ".join(f"{k} {v}" for k, v in sorted(finish_reasons(run).items())))
    both = [i for i in a if i in b and a[i]["status"] == "ok" and b[i]["status"] == "ok"]
    print()
    rng = np.random.default_rng(7)
    for col in ("blue_quality", "blue_coherence", "advantage"):
        if not both:
            print(f"- paired {col} (schema - free): n/a (no scenario where both arms made a valid plan)")
            continue
        d = np.array([float(a[i][col]) - float(b[i][col]) for i in both])
        boot = d[rng.integers(0, len(d), size=(10000, len(d)))].mean(axis=1)
        lo, hi = np.percentile(boot, [2.5, 97.5])
        print(f"- paired {col} (schema - free), n = {len(d)}: {d.mean():.4f} [{lo:.4f}, {hi:.4f}]")


if __name__ == "__main__":
    main(*sys.argv[1:3])
