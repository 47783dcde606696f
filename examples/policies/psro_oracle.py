#!/usr/bin/env python3
"""An advplan PSRO oracle from a program (docs/METRICS.md "PSRO", docs/POLICIES.md "5. PSRO oracles").

Run as `advplan psro CONFIG --blue-oracle "exec:python3 examples/policies/psro_oracle.py"` (or --red-oracle).
Standard library only. Each request carries the scenario and the opponent mixture: a list of {policy,
probability, probability_exact}, and for RED's oracle each BLUE support policy's plan in the scenario too.

As BLUE it answers the scenario's first seed plan. As RED it answers the most probable BLUE support plan with
greedy_red.py's counter-plan (the first such plan on ties). Nothing is random: the same request gets the same plan.
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from greedy_red import plan_for  # noqa: E402


def answer(request):
    scenario = request["scenario"]
    if request["side"] == "BLUE":
        return scenario["blue_seed_plans"][0]
    best = None
    for entry in request["opponent_mixture"]:
        if entry.get("plan") is not None and (best is None or entry["probability"] > best["probability"]):
            best = entry
    if best is None:
        raise ValueError("no BLUE plan in the opponent mixture")
    return plan_for(scenario, best["plan"])


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            reply = {"request_id": request["request_id"], "plan": answer(request)}
        except (KeyError, ValueError, TypeError, IndexError) as e:
            reply = {"request_id": request.get("request_id"), "error": "%s: %s" % (type(e).__name__, e)}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
