"""Parameters of the Python API (issue 47, item 13 and "also noticed"): a string where a list of names is taken is
one name, never its characters; counts and numbers out of range are refused with one sentence naming the
parameter, before any work."""
import math
import os
import unittest

import advplan
from advplan import _advplan
from common import TempDir, small_config, read


class Names(unittest.TestCase):
    def test_a_string_is_one_condition(self):
        # conditions="greedy@8" iterated by character: "unknown RED policy 'g'"
        with TempDir() as d:
            one = advplan.run(small_config(), out=os.path.join(d, "one"), threads=1, conditions="greedy@4",
                              studies=False)
            listed = advplan.run(small_config(), out=os.path.join(d, "listed"), threads=1,
                                 conditions=["greedy@4"], studies=False)
            self.assertGreater(one.summary["rows"], 0)
            self.assertEqual(one.summary["failed_rows"], 0)
            self.assertEqual(read(os.path.join(one.path, "per_scenario.csv")),
                             read(os.path.join(listed.path, "per_scenario.csv")))
            as_dict = advplan.run(small_config(), out=os.path.join(d, "dict"), threads=1,
                                  conditions={"red": "greedy@4"}, studies=False)
            self.assertEqual(read(os.path.join(one.path, "per_scenario.csv")),
                             read(os.path.join(as_dict.path, "per_scenario.csv")))

    def test_a_condition_that_is_neither_a_string_nor_a_dict_is_a_sentence(self):
        with TempDir() as d:
            for bad, want in (([3], "condition 0 is a int"), ([{"red": 3}], "'red' is not a string"), (7, "expected")):
                with self.assertRaises(advplan.ConfigError) as e:
                    advplan.run(small_config(), out=os.path.join(d, "r"), threads=1, conditions=bad, studies=False)
                self.assertIn(want, str(e.exception))
                self.assertNotIn("\n", str(e.exception))

    def test_reds_and_references_take_one_name_or_a_list(self):
        self.assertEqual(advplan._names("greedy@8", "reds"), ["greedy@8"])
        self.assertEqual(advplan._names(("single", "greedy@8"), "reds"), ["single", "greedy@8"])
        with self.assertRaises(advplan.ConfigError):
            advplan._names(["single", 8], "reds")
        with TempDir() as d:
            run = advplan.evaluate("seed", config=small_config(), out=os.path.join(d, "e"), reds="single",
                                   references="seed", budget=2, threads=1, rerun=0)
            per = advplan.load_csv(os.path.join(run.path, "per_scenario.csv"), pandas=False)
            reds = set(str(c) for c in per["red_policy"])
            self.assertIn("single", reds)
            self.assertEqual([r for r in reds if len(r) == 1], [])


class Numbers(unittest.TestCase):
    def refused(self, call, want):
        with self.assertRaises((advplan.ConfigError, advplan.PolicyError)) as e:
            call()
        self.assertIn(want, str(e.exception))
        self.assertNotIn("\n", str(e.exception))

    def test_threads_out_of_range_are_refused(self):
        with TempDir() as d:
            out = os.path.join(d, "r")
            for threads in (-1, 1025, 10 ** 12, 1.5, "2", True):
                self.refused(lambda: advplan.run(small_config(), out=out, threads=threads, studies=False), "threads")
                self.refused(lambda: advplan.evaluate("seed", config=small_config(), out=out, threads=threads),
                             "threads")
            # the compiled part checks too (advplan.run is a thin wrapper)
            self.refused(lambda: _advplan._run(small_config(), out, -1, None, False, False), "run: threads: -1 is not in 0..1024")
            self.refused(lambda: advplan.evaluate("seed", config=small_config(), out=out, rerun=-1), "rerun")
            self.refused(lambda: advplan.evaluate("seed", config=small_config(), out=out, budget=[0]), "budget")
            self.assertFalse(os.path.exists(out))

    def test_numbers_of_the_model_functions_are_checked(self):
        self.refused(lambda: advplan.select_constraint_aware([0.5], [0.5], 2.0), "lam 2 is not in [0, 1]")
        self.refused(lambda: advplan.select_constraint_aware([0.5], [0.5], math.nan), "lam")
        self.refused(lambda: advplan.select_quality_greedy([0.1, math.nan]), "element 1")
        self.refused(lambda: advplan.pareto_front([0.1], [math.inf]), "pareto_front: D")
        self.refused(lambda: advplan.nash_gap(math.nan, 0.5), "nash_gap: q_blue")
        self.refused(lambda: advplan.advantage(0.5, math.inf), "advantage: q_red")
        self.assertEqual(advplan.select_constraint_aware([0.2, 0.9], [0.5, 0.5], 0.7), 1)

    def test_policy_parameters_need_a_finite_default_within_their_bounds(self):
        class P:
            def plan(self, scenario):
                return scenario["blue_seed_plans"][0]

        self.refused(lambda: advplan.register_blue("py_nan_param", P, False, "", {"x": (math.nan, 0, 1)}, False),
                     "parameter 'x'")
        self.refused(lambda: advplan.register_blue("py_out_param", P, False, "", {"x": (5, 0, 1)}, False),
                     "parameter 'x'")
        self.assertNotIn("py_nan_param", advplan.blue_policies())


if __name__ == "__main__":
    unittest.main()
