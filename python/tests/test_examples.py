"""examples/python: the policy classes register and run, and table4.py reproduces Table 4's means from a run."""
import os
import re
import subprocess
import sys
import unittest

import advplan
from common import SOURCE_DIR, TempDir, small_config

sys.path.insert(0, os.path.join(SOURCE_DIR, "examples", "python"))
import seed_policy  # noqa: E402,F401


class Examples(unittest.TestCase):
    def test_table4_script_reproduces_the_table_means(self):
        with TempDir() as d:
            run = advplan.run(small_config(), out=d, threads=2)
            env = dict(os.environ)
            out = subprocess.run([sys.executable, os.path.join(SOURCE_DIR, "examples", "python", "table4.py"), d],
                                 check=True, capture_output=True, text=True, env=env).stdout
            table = run.table("table4_response_budget")
            # each table row's point estimates, without the bracketed bootstrap intervals
            want = [re.sub(r" \[[^\]]*\]", "", line) for line in table.splitlines() if re.match(r"\| \d", line)]
            got = [line for line in out.splitlines() if re.match(r"\| \d", line)]
            self.assertEqual(len(want), 3)
            self.assertEqual(got, want)

    def test_example_policies_run(self):
        with TempDir() as d:
            r = advplan.run(small_config(), out=d, threads=2,
                            conditions=[{"blue": "py_seed", "red": "greedy@4"}, {"blue": "py_cheapest", "red": "single"}])
            self.assertEqual(r.summary["failed_rows"], 0)
            self.assertIn("py_cheapest", advplan.blue_policies())


if __name__ == "__main__":
    unittest.main()
