#!/usr/bin/env python3
"""A BLUE planning policy that replans in the engagement wargame (docs/POLICIES.md "6. Replanning").

Run by advplan as `blue: "exec:python3 examples/policies/replanning_blue.py"` with
`policies: {exec: {replans: true}}` and `simulator: {model: engagement}`. A planning request gets the scenario's
first BLUE seed plan (as trivial_blue.py). A replan request (`"type": "replan"`) comes when a branch's step has
ended; the answer is a revised plan whose chain is what runs from then on:

- weaker than RED (own_strength < other_strength): the branch's last option, then the remaining support steps
  (everything but fires and movement) before the remaining contact steps: protect and regroup first;
- otherwise: the branch's first option, then the remaining steps as they were: press on.

The revised plan holds only the actions it runs (the ones already started are in "done"). Standard library only.
With `--bad` every replan answer names an asset that does not exist, so each replan is a recorded failure and the
default rule decides (the tests use it).
"""
import json
import sys

CONTACT = {"fires", "movement"}


def replan(request: dict, bad: bool) -> dict:
    plan = request["plan"]
    actions = {a["id"]: a for a in plan["actions"]}
    observed = request["observed"]
    options = request["branch"]["options"]
    weaker = observed["own_strength"] < observed["other_strength"]
    option = options[-1] if weaker else options[0]
    remaining = [i for i in request["remaining"] if i in actions and i not in option]
    if weaker:
        support = [i for i in remaining if actions[i]["category"] not in CONTACT]
        contact = [i for i in remaining if actions[i]["category"] in CONTACT]
        remaining = support + contact
    chain = list(dict.fromkeys(option + remaining))  # each once, in order
    revised = {
        "plan_id": plan["plan_id"] + "/replan",
        "side": plan["side"],
        "objective": plan["objective"],
        "domain": plan.get("domain", ""),
        "actions": [dict(actions[i]) for i in chain],
        "chain": chain,
        "branches": [],
    }
    if bad:
        revised["actions"][0]["asset"] = "no-such-asset"
    return revised


def main() -> int:
    bad = "--bad" in sys.argv[1:]
    for line in sys.stdin:  # one request per line; end of input means "shut down"
        if not line.strip():
            continue
        request = json.loads(line)
        if request.get("type") == "replan":
            response = {"request_id": request["request_id"], "plan": replan(request, bad)}
        else:
            response = {"request_id": request["request_id"], "plan": request["scenario"]["blue_seed_plans"][0]}
        sys.stdout.write(json.dumps(response) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
