#!/usr/bin/env python3
"""Validates plans against advplan's JSON Schemas with a third-party validator (python3-jsonschema, draft 2020-12).

Usage: validate_plans.py MODE SCHEMA_DIR FILE
  MODE run:       FILE is a plans.jsonl; every line's `plan` against SCHEMA_DIR/plan.json and its side's
                  SCHEMA_DIR/{blue,red}_plan.json
  MODE scenario:  FILE is `advplan scenarios` output; each scenario's seed plans against the per-scenario schema
                  SCHEMA_DIR/<scenario id>.json (the fields that schema leaves out removed first)
Prints "N valid" and exits 0, or prints the first failures and exits 1.
"""
import json
import os
import sys

from jsonschema import Draft202012Validator

LEFT_OUT = ("domain", "tool_calls")  # the per-scenario schema has no such fields (docs/LLM.md)


def validator(path):
    with open(path) as f:
        schema = json.load(f)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def per_scenario_form(plan):
    plan = {k: v for k, v in plan.items() if k not in LEFT_OUT}
    plan["actions"] = [{k: v for k, v in a.items() if k != "metadata"} for a in plan["actions"]]
    if not plan.get("branches"):
        plan.pop("branches", None)
    return plan


def main(mode, schema_dir, path):
    failures, n = [], 0
    if mode == "run":
        generic = validator(os.path.join(schema_dir, "plan.json"))
        sides = {s: validator(os.path.join(schema_dir, s.lower() + "_plan.json")) for s in ("BLUE", "RED")}
        for line in open(path):
            plan = json.loads(line)["plan"]
            for v in (generic, sides[plan["side"]]):
                failures += [f"{plan['plan_id']}: {e.message}" for e in v.iter_errors(plan)]
            n += 1
    else:
        for line in open(path):
            sc = json.loads(line)
            v = validator(os.path.join(schema_dir, sc["id"] + ".json"))
            for plan in sc["blue_seed_plans"]:
                failures += [f"{sc['id']}/{plan['plan_id']}: {e.message}" for e in v.iter_errors(per_scenario_form(plan))]
                n += 1
    if failures:
        print("\n".join(failures[:10]))
        return 1
    print(f"{n} valid")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
