"""The metrics from Python equal `advplan validate --json` on every seed plan; bad input raises the library's
typed error with its sentence."""
import json
import os
import unittest

import advplan
from common import TempDir, cli


class Metrics(unittest.TestCase):
    def test_every_seed_plan_matches_validate_json(self):
        cfg = advplan.Config()
        checked = 0
        with TempDir() as d:
            for sc in cfg.scenarios():
                for i, plan in enumerate(cfg.seed_plans(sc["id"])):
                    path = os.path.join(d, "plan.json")
                    with open(path, "w") as f:
                        json.dump(plan, f)
                    want = json.loads(cli("validate", path, "--scenario", sc["id"], "--json").stdout)
                    got = cfg.metrics(plan, sc["id"])
                    want.pop("plan")
                    self.assertEqual(got, want, "%s seed plan %d" % (sc["id"], i))
                    checked += 1
        self.assertGreaterEqual(checked, 150)

    def test_plan_errors_are_python_exceptions_with_the_sentence(self):
        cfg = advplan.Config()
        plan = cfg.seed_plans("urban-100")[0]
        plan["chain"] = ["no-such-action"]
        with self.assertRaises(advplan.PlanError) as e:
            cfg.parse_plan(plan, "urban-100")
        self.assertIn("invalid plan for scenario urban-100", str(e.exception))
        self.assertIn("chain", str(e.exception))
        self.assertTrue(cfg.violations(plan, "urban-100"))
        self.assertIsInstance(e.exception, advplan.Error)
        with self.assertRaises(advplan.IoError) as e:
            advplan.Config.load("/no/such/config.yaml")
        self.assertIn("/no/such/config.yaml", str(e.exception))
        with self.assertRaises(advplan.ConfigError):
            advplan.Config.from_yaml("name: x\nnot_a_key: 1\n", "bad.yaml")
        with self.assertRaises(advplan.PolicyError):
            advplan.run(advplan.Config(), out="/tmp/never-written", conditions=["no_such_policy"])

    def test_candidates_selectors_and_simulation(self):
        cfg = advplan.Config()
        blue = cfg.seed_plans("maritime-105")[0]
        cands = cfg.red_candidates(blue, "maritime-105", 8)
        self.assertEqual([c["index"] for c in cands], list(range(8)))
        # greedy@4's candidates are the first 4 of greedy@8's (one keyed stream)
        self.assertEqual([c["q"] for c in cfg.red_candidates(blue, "maritime-105", 4)], [c["q"] for c in cands[:4]])
        q = [c["q"] for c in cands]
        D = [c["D"] for c in cands]
        self.assertEqual(advplan.select_quality_greedy(q), q.index(max(q)))
        self.assertEqual(advplan.select_constraint_aware(q, D, 1.0), q.index(max(q)))
        front = advplan.pareto_front(q, D)
        self.assertTrue(front[q.index(max(q))])
        red = cands[advplan.select_quality_greedy(q)]["plan"]
        self.assertEqual(cfg.metrics(red, "maritime-105")["q"], max(q))
        s = cfg.simulate(blue, red, "maritime-105")
        self.assertTrue(0 <= s["blue_win_rate"] <= 1)
        self.assertEqual(s, cfg.simulate(blue, red, "maritime-105"))  # common random numbers
        self.assertAlmostEqual(s["advantage"], (1 + cfg.metrics(blue, "maritime-105")["q"] - max(q)) / 2)


if __name__ == "__main__":
    unittest.main()
