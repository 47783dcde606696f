#!/usr/bin/python3
"""Oracle values for `advplan rubric validate` (tests/rubric/judge_validation_test.cpp), computed once and stored in
tests/data/oracles/validation_fixtures.json (the study, the verdicts and the expected values together). Re-run only
to add cases:

    /usr/bin/python3 tests/data/oracles/make_validation_fixtures.py > tests/data/oracles/validation_fixtures.json

Sources (Debian's python3-statsmodels):
- Cohen's kappa of a judge against the expert majority (ties excluded), its standard error and asymptotic 95%
  interval: statsmodels.stats.inter_rater.cohens_kappa(table): kappa, std_kappa, kappa_low, kappa_upp;
- Fleiss' kappa of the panel, with and without the judge: statsmodels.stats.inter_rater.fleiss_kappa(
  aggregate_raters(labels)[0], method='fleiss');
- the mean pairwise Cohen's kappa between experts: statsmodels' cohens_kappa on each pair's 2x2 table;
- agreement, precision, recall and F1 on the fail class: counted here directly from the verdicts.
The first case is the hand-worked study in tests/data/mabench/expert_study/, the second a random one.
"""
import itertools
import json
import os

import numpy as np
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa

HERE = os.path.dirname(os.path.abspath(__file__))
SEV = ["CI", "I", "SI", "D", "CD"]
NEG = {"D", "CD"}


def stats_of(lines, judge):
    """Statistics of `judge` (a dict (brief, item) -> fail) over the lines it graded."""
    mine = [l for l in lines if (l["brief"], l["item_id"]) in judge]
    out = {}
    groups = {"all": mine}
    for t in (1, 2, 3):
        groups[f"tier {t}"] = [l for l in mine if l["tier"] == t]
    for s in SEV:
        groups[f"severity {s}"] = [l for l in mine if l["severity"] == s]
    for name, ls in groups.items():
        if not ls:
            continue
        nontie = [l for l in ls if l["majority"] != "tie"]
        jf = [judge[(l["brief"], l["item_id"])] for l in nontie]
        mf = [l["majority"] == "Fail" for l in nontie]
        tp = sum(a and b for a, b in zip(jf, mf)); fp = sum(a and not b for a, b in zip(jf, mf))
        fn = sum(b and not a for a, b in zip(jf, mf)); tn = sum(not a and not b for a, b in zip(jf, mf))
        row = {"items": len(nontie), "tp": tp, "fp": fp, "fn": fn, "tn": tn,
               "agreement": (tp + tn) / len(nontie) if nontie else None,
               "f1_fail": 2 * tp / (2 * tp + fp + fn) if (2 * tp + fp + fn) else None,
               "precision_fail": tp / (tp + fp) if tp + fp else None,
               "recall_fail": tp / (tp + fn) if tp + fn else None}
        if nontie:
            r = cohens_kappa(np.array([[tp, fp], [fn, tn]], dtype=float))
            row.update(kappa=float(r.kappa), kappa_se=float(r.std_kappa), kappa_lo=float(r.kappa_low),
                       kappa_hi=float(r.kappa_upp))
        ties = [l for l in ls if l["majority"] == "tie"]
        agree = tp + tn
        row["agreement_ties_pass"] = (agree + sum(not judge[(l["brief"], l["item_id"])] for l in ties)) / len(ls)
        row["agreement_ties_fail"] = (agree + sum(judge[(l["brief"], l["item_id"])] for l in ties)) / len(ls)
        out[name] = row
    experts = sorted(k for k in mine[0] if k.startswith("expert_"))
    panel = np.array([[l[e] == "Fail" for e in experts] for l in mine], dtype=int)
    withj = np.column_stack([panel, [int(judge[(l["brief"], l["item_id"])]) for l in mine]])
    pk = []
    for a, b in itertools.combinations(range(len(experts)), 2):
        t = np.zeros((2, 2))
        for x, y in zip(panel[:, a], panel[:, b]):
            t[x, y] += 1
        pk.append(float(cohens_kappa(t).kappa))
    out["panel"] = {"items": len(mine), "fleiss_panel": float(fleiss_kappa(aggregate_raters(panel, n_cat=2)[0])),
                    "fleiss_with_judge": float(fleiss_kappa(aggregate_raters(withj, n_cat=2)[0])),
                    "mean_pairwise_expert_kappa": float(np.nanmean(pk))}
    return out


def judges_of(lines, verdicts):
    prod = {(l["brief"], l["item_id"]): l["judge_verdict"] == "Fail" for l in lines if "judge_verdict" in l}
    js = {"judge": prod}
    by_brief = {}
    for l in lines:
        by_brief.setdefault(l["brief"], []).append(l)
    for v in verdicts:
        if v["brief_id"] not in by_brief:
            continue
        d = js.setdefault(v["judge"], {})
        for l in by_brief[v["brief_id"]]:
            d[(l["brief"], l["item_id"])] = l["item_id"] in v["failed_items"]
    return js


def case(name, study_text, verdicts_text):
    lines = [json.loads(x) for x in study_text.splitlines() if x.strip()]
    verdicts = [json.loads(x) for x in verdicts_text.splitlines() if x.strip()]
    return {"name": name, "study": study_text, "verdicts": verdicts_text,
            "expected": {j: stats_of(lines, d) for j, d in judges_of(lines, verdicts).items()}}


cases = []
d = os.path.join(HERE, "..", "mabench", "expert_study")
cases.append(case("hand", open(os.path.join(d, "study.jsonl")).read(), open(os.path.join(d, "other_verdicts.jsonl")).read()))

rng = np.random.default_rng(20261203)
study, verdicts = [], []
for s in range(8):
    for b in range(int(rng.integers(2, 4))):
        brief = f"s{s}-b{b}"
        model = ["gpt-4o", "claude-3", "gemini-2"][int(rng.integers(0, 3))]
        failed = {"judge-a": [], "judge-b": []}
        for i in range(int(rng.integers(4, 7))):
            truth = rng.random() < 0.45
            ex = [bool(truth) if rng.random() < 0.75 else not truth for _ in range(4)]
            f = sum(ex)
            maj = "Fail" if f > 2 else "Pass" if f < 2 else "tie"
            sev = SEV[int(rng.integers(0, 5))]
            item = f"item{i}"
            row = {"brief": brief, "scenario": f"s{s}", "model": model, "item_id": item, "step": int(rng.integers(1, 13)),
                   "tier": int(rng.integers(1, 4)), "severity": sev}
            for k, e in enumerate(ex):
                row[f"expert_{k + 1}"] = "Fail" if e else "Pass"
            row["majority"] = maj
            row["judge_verdict"] = "Fail" if (truth if rng.random() < 0.8 else not truth) else "Pass"
            study.append(json.dumps(row))
            for j, acc in (("judge-a", 0.9), ("judge-b", 0.6)):
                if (truth if rng.random() < acc else not truth):
                    failed[j].append(item)
        for j in ("judge-a", "judge-b"):
            if not (j == "judge-b" and s == 7):  # judge-b did not grade scenario 7
                verdicts.append(json.dumps({"brief_id": brief, "judge": j, "case_id": f"s{s}", "failed_items": failed[j]}))
cases.append(case("random", "\n".join(study) + "\n", "\n".join(verdicts) + "\n"))
def no_nan(x):
    """NaN (an undefined statistic, e.g. a subgroup with one category) is written as null, which JSON has."""
    if isinstance(x, float) and x != x:
        return None
    if isinstance(x, dict):
        return {k: no_nan(v) for k, v in x.items()}
    if isinstance(x, list):
        return [no_nan(v) for v in x]
    return x


print(json.dumps(no_nan({"cases": cases}), indent=1))
