#!/usr/bin/env python3
"""Hostile BLUE planning policies for tests/io/hardening_test.cpp. The first argument picks the behaviour:

  deep        answers with a plan whose first action's metadata nests 40,000 arrays (about 80 KB)
  deep-id     answers with a request_id nested 40,000 levels deep
  deep-error  answers with an "error" nested 40,000 levels deep
  escape PIDFILE   starts a detached grandchild (setsid, a double fork) that keeps our stdout and stderr
              open and sleeps 60 s, writes its pid to PIDFILE, then answers every request validly
  exit-holding PIDFILE  on the first request starts such a grandchild, then exits with status 4
  one-in-five garbage on every scenario whose seed is a multiple of 5, a valid plan otherwise
  latin1      answers with an "error" holding Latin-1 bytes (not UTF-8)
  busy PIDFILE  writes its pid to PIDFILE, then takes 60 s over every request (a busy policy)
  deaf PIDFILE  starts a detached grandchild (its pid in PIDFILE.grand), writes its own pid to PIDFILE, then
              sleeps 60 s without reading its stdin

Standard library only; every loop ends with its input.
"""
import json
import os
import sys
import time


def respond(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def detach(pidfile):
    """A grandchild in its own session, holding our stdout and stderr, that outlives us."""
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            with open(pidfile + ".tmp", "w") as f:
                f.write(str(os.getpid()))
            os.rename(pidfile + ".tmp", pidfile)
            time.sleep(60)
        os._exit(0)
    os.waitpid(pid, 0)
    for _ in range(500):  # the pid file is there before we go on
        if os.path.exists(pidfile):
            break
        time.sleep(0.01)


def nested(depth, leaf):
    return "[" * depth + leaf + "]" * depth


def main():
    mode = sys.argv[1]
    if mode == "escape":
        detach(sys.argv[2])
    if mode == "deaf":
        detach(sys.argv[2] + ".grand")
        with open(sys.argv[2] + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.rename(sys.argv[2] + ".tmp", sys.argv[2])
        time.sleep(60)
        return 0
    if mode == "busy":
        with open(sys.argv[2] + ".tmp", "w") as f:
            f.write(str(os.getpid()))
        os.rename(sys.argv[2] + ".tmp", sys.argv[2])
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        rid = request["request_id"]
        scenario = request["scenario"]
        plan = scenario["blue_seed_plans"][0]
        seed = int(scenario["seed"])
        if mode == "deep":
            deep = json.loads(json.dumps(plan))
            deep["actions"][0]["metadata"] = {"deep": "PLACEHOLDER"}
            text = json.dumps({"request_id": rid, "plan": deep}).replace('"PLACEHOLDER"', nested(40000, "1"))
            sys.stdout.write(text + "\n")
            sys.stdout.flush()
        elif mode == "deep-id":
            sys.stdout.write('{"request_id": ' + nested(40000, str(rid)) + "}\n")
            sys.stdout.flush()
        elif mode == "deep-error":
            sys.stdout.write('{"request_id": %d, "error": %s}\n' % (rid, nested(40000, '"x"')))
            sys.stdout.flush()
        elif mode == "exit-holding":
            detach(sys.argv[2])
            sys.exit(4)
        elif mode == "one-in-five" and seed % 5 == 0:
            sys.stdout.write("garbage, not JSON\n")
            sys.stdout.flush()
        elif mode == "latin1":
            sys.stdout.buffer.write(b'{"request_id": %d, "error": "caf\xe9 cr\xe8me"}\n' % rid)
            sys.stdout.flush()
        elif mode == "busy":
            time.sleep(60)
        else:
            respond({"request_id": rid, "plan": plan})
    return 0


if __name__ == "__main__":
    sys.exit(main())
