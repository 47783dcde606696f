#!/usr/bin/env python3
"""A BLUE planning policy that misbehaves on purpose, for tests/policy/exec_policy_test.cpp.

What it does depends on the scenario's seed (scenario ids are <template>-<seed>):
  100 garbage text instead of JSON       101 a plan that violates the schema (unknown asset)
  102 the wrong request_id               103 sleeps 30 s (a timeout)
  104 exits with status 3                105 kills itself with SIGSEGV
  106 a response of 2 MB                 107 a response without a "plan" field
  109 two response lines at once (the second would answer the next request)
  110 and above: after 0.2 s, the first seed plan with plan_id "<scenario id>/pid-<process id>" (which process
      served the request, for the worker-pool test)
  any other seed: the scenario's first BLUE seed plan (valid).
Standard library only.
"""
import json
import os
import signal
import sys
import time


def respond(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        rid = request["request_id"]
        scenario = request["scenario"]
        seed = int(scenario["seed"])
        plan = scenario["blue_seed_plans"][0]
        if seed == 100:
            sys.stdout.write("this is not JSON\n")
            sys.stdout.flush()
        elif seed == 101:
            bad = json.loads(json.dumps(plan))
            bad["actions"][0]["asset"] = "b-tank-9"
            respond({"request_id": rid, "plan": bad})
        elif seed == 102:
            respond({"request_id": rid + 1000, "plan": plan})
        elif seed == 103:
            time.sleep(30)
            respond({"request_id": rid, "plan": plan})
        elif seed == 104:
            sys.exit(3)
        elif seed == 105:
            os.kill(os.getpid(), signal.SIGSEGV)
        elif seed == 106:
            respond({"request_id": rid, "plan": plan, "padding": "x" * (2 << 20)})
        elif seed == 107:
            respond({"request_id": rid})
        elif seed == 109:
            sys.stdout.write(json.dumps({"request_id": rid, "plan": plan}) + "\n" +
                             json.dumps({"request_id": rid + 1, "plan": plan}) + "\n")
            sys.stdout.flush()
        elif seed >= 110:
            time.sleep(0.2)
            tagged = dict(plan, plan_id="{}/pid-{}".format(scenario["id"], os.getpid()))
            respond({"request_id": rid, "plan": tagged})
        else:
            respond({"request_id": rid, "plan": plan})
    return 0


if __name__ == "__main__":
    sys.exit(main())
