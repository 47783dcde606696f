#!/usr/bin/env python3
"""A greedy advplan RED policy that answers the BLUE plan from the scenario (docs/POLICIES.md "RED from a program").

Run by advplan as a condition's RED policy, `red: "exec:python3 examples/policies/greedy_red.py"`. Standard library
only. Each request carries the scenario and the BLUE plan; the answer is one RED plan.

The plan: for each of the BLUE plan's chain steps (at most six), the RED pool's asset that can counter it best
acts against the same target: fires against movement, protection and sustainment; cyber against command and
information; public information against civil action; information otherwise. An asset already used counts as
less capable, so the plan spreads over the pool. The chain is the actions in that order. Nothing is random:
the same request gets the same plan. A request the program cannot answer gets an "error" reply, which advplan
records as that scenario's failure.
"""
import json
import sys

COUNTER = {
    "movement": ("fires", "deception"),
    "protection": ("fires", "cyber"),
    "sustainment": ("fires", "cyber"),
    "command": ("cyber", "information"),
    "information": ("cyber", "deception"),
    "civil": ("public_information", "information"),
    "public_information": ("public_information", "cyber"),
    "fires": ("protection", "deception"),
    "cyber": ("cyber", "information"),
    "deception": ("information", "fires"),
}
MAX_STEPS = 6


def plan_for(scenario, blue):
    pool = set(scenario["red_pool"])
    assets = [a for a in scenario["assets"] if a["side"] == "RED" and a["id"] in pool]
    if not assets:
        raise ValueError("the scenario has no RED asset in its pool")
    blue_actions = {a["id"]: a for a in blue["actions"]}
    used = {}
    actions, chain, roles = [], [], {}
    for step in blue["chain"][:MAX_STEPS]:
        b = blue_actions.get(step)
        if b is None:
            continue
        best = None
        for category in COUNTER.get(b["category"], ("information",)):
            verbs = scenario["verbs"].get(category)
            if not verbs:
                continue
            for a in assets:
                if category not in a["categories"]:
                    continue
                score = a["capability"] / (1 + used.get(a["id"], 0))
                if best is None or score > best[0]:
                    best = (score, a, category, verbs[0])
            if best is not None:
                break
        if best is None:
            continue
        _, asset, category, verb = best
        used[asset["id"]] = used.get(asset["id"], 0) + 1
        aid = "a%d" % (len(actions) + 1)
        actions.append({"id": aid, "asset": asset["id"], "verb": verb, "category": category, "target": b["target"],
                        "priority": min(5, len(actions) + 1)})
        chain.append(aid)
        roles[asset["id"]] = asset["role"]
    if not actions:
        raise ValueError("no RED asset can act against the BLUE plan")
    return {"plan_id": scenario["id"] + "/red/greedy_red", "side": "RED", "domain": scenario["domain"],
            "objective": scenario["objectives"]["RED"], "actions": actions, "chain": chain, "branches": [],
            "roles": roles, "tool_calls": []}


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            reply = {"request_id": request["request_id"], "plan": plan_for(request["scenario"], request["blue_plan"])}
        except (KeyError, ValueError, TypeError) as e:
            reply = {"request_id": request.get("request_id"), "error": "%s: %s" % (type(e).__name__, e)}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
