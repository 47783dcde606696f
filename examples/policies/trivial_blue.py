#!/usr/bin/env python3
"""The smallest useful advplan BLUE planning policy (docs/POLICIES.md).

Run by advplan as `--blue exec:'python3 examples/policies/trivial_blue.py'`. It reads one JSON request per line
on stdin and answers each with the scenario's first BLUE seed plan, which is what the built-in `seed` policy
does, so its results must match that policy's. Standard library only.
"""
import json
import sys


def main() -> int:
    for line in sys.stdin:  # one request per line; the loop ends at end of input, which means "shut down"
        if not line.strip():
            continue
        request = json.loads(line)
        scenario = request["scenario"]
        response = {"request_id": request["request_id"], "plan": scenario["blue_seed_plans"][0]}
        sys.stdout.write(json.dumps(response) + "\n")
        sys.stdout.flush()  # advplan waits for the newline; an unflushed answer is a timeout
    return 0


if __name__ == "__main__":
    sys.exit(main())
