#!/usr/bin/env python3
"""Hostile BLUE planning policies for the sandbox tests (tests/io/sandbox_test.cpp). On its first request the
program tries what the first argument names, and answers with a valid plan only when the attempt succeeded; a
refused attempt raises, so the program exits with status 1 and its traceback's last line names the cause.

  socket PORT     connects to 127.0.0.1:PORT (the test listens there)
  write PATH      writes the file PATH (outside the program's folder)
  key NAME        reads the environment variable NAME (a secret in advplan's environment)
  parent NAME     reads NAME=... from its parent's environment (/proc/PPID/environ)
  forks N         starts N children that sleep 3 s each (a bounded fork bomb); exits 1 when a fork fails
  proc1           reads /proc/1/environ (in the sandbox: bubblewrap's own process) and fails unless it holds the
                  variable ADVPLAN_TEST_SECRET

Standard library only; every child ends within 3 s by itself.
"""
import json
import os
import socket
import sys
import time


def environ_of(pid):
    with open("/proc/%s/environ" % pid, "rb") as f:
        return f.read().decode("utf-8", "replace").split("\0")


def attempt(mode, arg):
    if mode == "socket":
        socket.create_connection(("127.0.0.1", int(arg)), timeout=2).close()
    elif mode == "write":
        with open(arg, "w") as f:
            f.write("written by a sandboxed program\n")
    elif mode == "key":
        if not os.environ.get(arg):
            raise KeyError("%s is not in the environment" % arg)
    elif mode == "parent":
        if not [e for e in environ_of(os.getppid()) if e.startswith(arg + "=") and len(e) > len(arg) + 1]:
            raise LookupError("%s is not in the parent's environment" % arg)
    elif mode == "forks":
        for _ in range(int(arg)):
            if os.fork() == 0:
                time.sleep(3)
                os._exit(0)
    elif mode == "proc1":
        if not [e for e in environ_of(1) if e.startswith("ADVPLAN_TEST_SECRET=")]:
            raise LookupError("/proc/1/environ holds no ADVPLAN_TEST_SECRET")


def main():
    mode, arg = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ""
    done = False
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if not done:
            attempt(mode, arg)
            done = True
        plan = request["scenario"]["blue_seed_plans"][0]
        sys.stdout.write(json.dumps({"request_id": request["request_id"], "plan": plan}) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
