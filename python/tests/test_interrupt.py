"""Ctrl-C during advplan.run stops the run at once and leaves it resumable (the hardening issue, item 10).

Python's SIGINT handler runs only when the main thread runs Python code, which it does not while a run holds no
GIL; once a Ctrl-C became a slow policy's failure row and the run went on to the end. The run is a child process
here, so that the signal reaches only it."""
import os
import signal
import subprocess
import sys
import threading
import time
import unittest

from common import TempDir, read

# An exec: policy answering each request after 50 ms: no Python code of the run's process runs while it works.
EXEC_POLICY = r'''
import json, sys, time
for line in sys.stdin:
    if not line.strip():
        continue
    r = json.loads(line)
    time.sleep(0.05)
    sys.stdout.write(json.dumps({"request_id": r["request_id"], "plan": r["scenario"]["blue_seed_plans"][0]}) + "\n")
    sys.stdout.flush()
'''

SCRIPT = r'''
import sys, time
import advplan

@advplan.blue_policy("py_slow", thread_safe=True)
class Slow:
    def plan(self, scenario):
        time.sleep(0.05)
        return scenario["blue_seed_plans"][0]

cfg = advplan.Config.from_yaml("""name: interrupt
seed: 3
corpus: {templates: [urban, maritime], seeds: [100, 139]}
conditions: [single]
simulator: {replications: 10}
bootstrap: {resamples: 20}
studies: {rubric: false, framing: false, components: false}
""", "interrupt.yaml")
blue = "py_slow" if sys.argv[3] == "python" else "exec:" + sys.executable + " " + sys.argv[4]
advplan.run(cfg, out=sys.argv[1], threads=2, conditions=[{"blue": blue, "red": "single"}], studies=False,
            resume=sys.argv[2] == "resume")
print("finished")
'''


# Issue 47, item 14: a policy busy in plan() never heard Ctrl-C (a 600 s sleep went on to its end). "sleep": one
# 600 s time.sleep; "spin": a pure-Python loop on every thread at once (two threads: one of them is not Python's
# main thread, which hears the signal; the other gets an asynchronous KeyboardInterrupt).
BUSY = r'''
import sys, time
import advplan

@advplan.blue_policy("py_busy", thread_safe=True)
class Busy:
    def plan(self, scenario):
        sys.stdout.write("planning\n")  # one write: two threads' lines never interleave
        sys.stdout.flush()
        if sys.argv[2] == "sleep":
            time.sleep(600)
        else:
            while True:
                pass
        return scenario["blue_seed_plans"][0]

cfg = advplan.Config.from_yaml("""name: busy
seed: 3
corpus: {templates: [urban], seeds: [100, 103]}
conditions: [single]
studies: {rubric: false, framing: false, components: false}
""", "busy.yaml")
advplan.run(cfg, out=sys.argv[1], threads=int(sys.argv[3]), conditions=[{"blue": "py_busy", "red": "single"}],
            studies=False)
print("finished")
'''


def start(out, mode, policy, policy_file):
    return subprocess.Popen([sys.executable, "-c", SCRIPT, out, mode, policy, policy_file], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


class Interrupt(unittest.TestCase):
    def test_ctrl_c_during_a_python_policy(self):
        self.check("python")

    def test_ctrl_c_while_no_python_code_runs(self):
        # an exec: policy: Python's own handler would run only after the whole run
        self.check("exec")

    def test_ctrl_c_reaches_a_policy_sleeping_in_plan(self):
        self.check_busy("sleep", 1)

    def test_ctrl_c_reaches_policies_computing_in_plan_on_every_thread(self):
        self.check_busy("spin", 2)

    def check_busy(self, mode, threads):
        with TempDir() as d:
            run = os.path.join(d, "run")
            p = subprocess.Popen([sys.executable, "-c", BUSY, run, mode, str(threads)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            guard = threading.Timer(120, p.kill)  # bounded even if the run never reaches plan()
            guard.start()
            try:
                self.assertEqual(p.stdout.readline(), "planning\n")  # the policy is in plan()
                time.sleep(0.2)
                p.send_signal(signal.SIGINT)
                out, err = p.communicate(timeout=20)
            finally:
                guard.cancel()
                if p.poll() is None:  # bounded: a run that does not stop is killed, and the test fails
                    p.kill()
                    p.communicate()
                    self.fail("the run did not stop within 20 s of Ctrl-C")
            self.assertIn(p.returncode, (-signal.SIGINT, 130), err)  # Python's exit on KeyboardInterrupt
            self.assertNotIn("finished", out)
            self.assertIn("KeyboardInterrupt", err)
            self.assertIn("interrupted after 0 of", err)
            self.assertTrue(os.path.exists(os.path.join(run, ".advplan-work", "journal")), "not resumable")

    def check(self, policy):
        with TempDir() as d:
            policy_file = os.path.join(d, "slow_policy.py")
            with open(policy_file, "w") as f:
                f.write(EXEC_POLICY)
            ref = os.path.join(d, "ref")
            p = start(ref, "fresh", policy, policy_file)
            out, err = p.communicate(timeout=300)
            self.assertEqual(p.returncode, 0, err)

            run = os.path.join(d, "run")
            p = start(run, "fresh", policy, policy_file)
            journal = os.path.join(run, ".advplan-work", "journal")
            for _ in range(3000):  # the run has started writing
                if os.path.exists(journal):
                    break
                time.sleep(0.01)
            time.sleep(0.5)  # 80 scenarios of 50 ms on two threads take about 2 s
            p.send_signal(signal.SIGINT)
            t0 = time.monotonic()
            out, err = p.communicate(timeout=60)
            stopped = time.monotonic() - t0
            self.assertNotEqual(p.returncode, 0, out + err)
            self.assertNotIn("finished", out)
            self.assertIn("KeyboardInterrupt", err)
            self.assertIn("interrupted after", err)
            self.assertIn("resume=True", err)
            self.assertLess(stopped, 1.5, "the run went on after Ctrl-C")
            self.assertTrue(os.path.exists(journal), "the interrupted run is not resumable")
            self.assertFalse(os.path.exists(os.path.join(run, "MANIFEST")))

            p = start(run, "resume", policy, policy_file)
            out, err = p.communicate(timeout=300)
            self.assertEqual(p.returncode, 0, err)
            for f in ("scenarios.csv", "per_scenario.csv", "candidates.csv", "bootstrap_summary.csv"):
                self.assertEqual(read(os.path.join(ref, f)), read(os.path.join(run, f)), f)


if __name__ == "__main__":
    unittest.main()
