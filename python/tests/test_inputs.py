"""Hostile input to the Python API (the hardening issue, item 23): load_csv on bytes that are not UTF-8, not CSV, or
carry a byte-order mark, and a Python policy returning a plan far larger than the limit."""
import os
import time
import unittest

import advplan
from common import TempDir, small_config


@advplan.blue_policy("py_huge", thread_safe=True)
class Huge:
    """returns a plan of 1.2 million actions"""

    _plan = None  # built once: building it is the slow part, and not what is tested

    def plan(self, scenario):
        if Huge._plan is None:
            a = scenario["blue_seed_plans"][0]["actions"][0]
            Huge._plan = {"objective": "x", "actions": [dict(a, id="a%d" % i) for i in range(1200000)],
                          "chain": ["a0"], "branches": []}
        return Huge._plan


class LoadCsv(unittest.TestCase):
    def write(self, d, name, data):
        p = os.path.join(d, name)
        with open(p, "wb") as f:
            f.write(data)
        return p

    def test_bad_bytes_are_a_csv_error_naming_the_file(self):
        with TempDir() as d:
            latin1 = self.write(d, "latin1.csv", b"a,b\ncaf\xe9,1\n")
            for pandas in (False, None):
                with self.assertRaisesRegex(advplan.CsvError, "latin1.csv: not UTF-8 text"):
                    advplan.load_csv(latin1, pandas=pandas)
            nul = self.write(d, "nul.csv", b"a,b\n\"x\x00,1\n")
            with self.assertRaisesRegex(advplan.CsvError, "nul.csv"):
                advplan.load_csv(nul, pandas=False)

    def test_a_byte_order_mark_is_not_kept_in_the_first_column(self):
        with TempDir() as d:
            p = self.write(d, "bom.csv", b"\xef\xbb\xbfscenario_id,k\nurban-1,4\n")
            t = advplan.load_csv(p, pandas=False)
            self.assertEqual(t.dtype.names, ("scenario_id", "k"))


class HugePlan(unittest.TestCase):
    def test_a_plan_past_the_action_limit_is_refused_before_it_is_converted(self):
        with TempDir() as d:
            t0 = time.monotonic()
            run = advplan.run(small_config(), out=os.path.join(d, "r"), threads=1,
                              conditions=[{"blue": "py_huge", "red": "single"}], studies=False)
            took = time.monotonic() - t0
            self.assertEqual(run.summary["failed_rows"], run.summary["rows"])
            per = advplan.load_csv(os.path.join(d, "r", "per_scenario.csv"), pandas=False)
            self.assertIn("the plan has 1200000 actions, more than the limit of 1000", str(per["failure_reason"][0]))
            # building the 1.2M-action lists in Python is most of it; converting them took 24 s per plan before
            self.assertLess(took, 60)


if __name__ == "__main__":
    unittest.main()
