"""In-process Python policies inside advplan.run and advplan.evaluate."""
import os
import unittest

import advplan
from common import SMALL_YAML, TempDir, cli, column, csv_files, read, small_config


@advplan.blue_policy("py_seed", thread_safe=True)
class PySeed:
    """the scenario's first seed plan, from Python"""

    def plan(self, scenario):
        return scenario["blue_seed_plans"][0]


@advplan.blue_policy("py_seed_serial")
class PySeedSerial:
    """a seed plan chosen by the run's keyed stream (scenario["rng_seed"]), declared not thread-safe"""

    def __init__(self):
        self.calls = 0
        self.inside = False

    def plan(self, scenario):
        assert not self.inside, "called concurrently although declared not thread-safe"
        self.inside = True
        self.calls += 1
        plans = scenario["blue_seed_plans"]
        p = plans[scenario["rng_seed"] % len(plans)]
        self.inside = False
        return p


@advplan.blue_policy("py_raises")
class PyRaises:
    def plan(self, scenario):
        if scenario["id"].endswith("1"):
            raise ValueError("no plan for %s" % scenario["id"])
        if scenario["id"].endswith("2"):
            return {"plan_id": "broken"}
        return scenario["blue_seed_plans"][0]


@advplan.red_policy("py_greedy4", thread_safe=True)
class PyGreedy4:
    """RED: greedy over the first 4 candidates of the baseline stream, through the Python API"""

    def __init__(self):
        self.cfg = small_config()

    def respond(self, scenario, plan):
        cands = self.cfg.red_candidates(plan, scenario["id"], 4)
        return cands[advplan.select_quality_greedy([c["q"] for c in cands])]["plan"]


advplan.register_red("py_greedy4_serial", PyGreedy4, False, "py_greedy4, declared not thread-safe")


@advplan.blue_policy("py_replanner", thread_safe=True)
class PyReplanner:
    """the seed plan; at a decision point (docs/POLICIES.md "6. Replanning") the branch's first option, then the
    remaining steps"""

    def __init__(self):
        self.requests = []

    def plan(self, scenario):
        return scenario["blue_seed_plans"][0]

    def replan(self, request):
        self.requests.append(request)
        plan = request["plan"]
        actions = {a["id"]: a for a in plan["actions"]}
        chain = list(dict.fromkeys(request["branch"]["options"][0] + [i for i in request["remaining"] if i in actions]))
        return {"plan_id": plan["plan_id"] + "/replan", "side": plan["side"], "objective": plan["objective"],
                "domain": plan.get("domain", ""), "actions": [actions[i] for i in chain], "chain": chain,
                "branches": []}


REPLAN_YAML = SMALL_YAML.replace("simulator: {replications: 20}", "simulator: {model: engagement, replications: 20}") + \
    "policies: {py_replanner: {replans: true}}\n"


def normalised(path, old, new):
    return read(path).decode().replace(old, new)


class Policies(unittest.TestCase):
    def test_a_duplicate_name_is_refused_unless_overridden(self):
        # The built-in seed would be silently replaced, its rows still saying blue_policy=seed.
        with self.assertRaisesRegex(advplan.PolicyError, "BLUE policy 'seed' is already registered"):
            advplan.register_blue("seed", PySeed)
        with self.assertRaisesRegex(advplan.PolicyError, "RED policy 'greedy' is already registered"):
            advplan.register_red("greedy", PyGreedy4)

        @advplan.blue_policy("py_twice")
        class Once(PySeed):
            pass
        with self.assertRaisesRegex(advplan.PolicyError, "pass override=True"):
            advplan.register_blue("py_twice", PySeed)
        advplan.register_blue("py_twice", PySeed, override=True)  # asked for: allowed

    def test_python_seed_policy_is_byte_identical_to_seed_on_the_paper_run(self):
        cfg = advplan.Config()
        conds = cfg.conditions()
        py = [dict(c, blue="py_seed" if c["blue"] == "seed" else c["blue"]) for c in conds]
        self.assertNotEqual(py, conds)
        with TempDir() as d:
            a = advplan.run(cfg, out=os.path.join(d, "seed"), conditions=conds, studies=False, threads=2)
            b = advplan.run(cfg, out=os.path.join(d, "py"), conditions=py, studies=False, threads=2)
            self.assertEqual(b.summary["failed_rows"], a.summary["failed_rows"])
            files = csv_files(a.path)
            self.assertEqual(files, csv_files(b.path))
            self.assertIn("per_scenario.csv", files)
            for f in files:
                self.assertEqual(normalised(os.path.join(b.path, f), "py_seed", "seed"),
                                 read(os.path.join(a.path, f)).decode(), f)
            self.assertIn("py_seed", set(column(os.path.join(b.path, "per_scenario.csv"), "blue_policy")))

    def test_a_raising_policy_gives_failure_rows_and_the_run_completes(self):
        cfg = small_config()
        with TempDir() as d:
            r = advplan.run(cfg, out=d, conditions=[{"blue": "py_raises", "red": "greedy@4", "label": "raises"}])
            per = r.trace("per_scenario", pandas=False)
            self.assertEqual(len(per), 6)
            status = dict(zip(per["scenario_id"], per["status"]))
            reason = dict(zip(per["scenario_id"], per["failure_reason"]))
            self.assertEqual(status["urban-100"], "ok")
            self.assertNotEqual(status["urban-101"], "ok")
            self.assertIn("py_raises: ValueError: no plan for urban-101", reason["urban-101"])
            self.assertIn("py_raises returned an invalid plan", reason["urban-102"])
            self.assertEqual(r.summary["failed_rows"], 4)
            self.assertTrue(os.path.exists(os.path.join(d, "tables", "table3_policy_comparison.md")))

    def test_a_python_policy_replans_in_the_engagement_wargame(self):
        cfg = advplan.Config.from_yaml(REPLAN_YAML, "python-replan.yaml")
        with TempDir() as d:
            r = advplan.run(cfg, out=d, conditions=[{"blue": "py_replanner", "red": "greedy@4", "label": "replan"}])
            self.assertEqual(r.summary["failed_rows"], 0)
            rows = read(os.path.join(d, "replans.csv")).decode().splitlines()
            self.assertGreater(len(rows), 1)
            header = rows[0].split(",")
            self.assertEqual(header[:8], ["scenario_id", "condition", "side", "policy", "replication", "step", "at",
                                          "status"])
            statuses = {line.split(",")[7] for line in rows[1:]}
            self.assertIn("ok", statuses)
            self.assertLessEqual(statuses, {"ok", "reused", "budget"})

    def test_threads_two_is_deterministic(self):
        cfg = small_config()
        conds = [{"blue": "py_seed", "red": "greedy@4", "label": "a"},
                 {"blue": "py_seed_serial", "red": "py_greedy4", "label": "b"},
                 {"blue": "py_seed_serial", "red": "single", "label": "c"},
                 # a serialised policy whose callback starts parallel work (red_candidates) under the runner's lock
                 {"blue": "py_seed_serial", "red": "py_greedy4_serial", "label": "d"}]
        with TempDir() as d:
            one = advplan.run(cfg, out=os.path.join(d, "1"), conditions=conds, threads=1)
            two = advplan.run(cfg, out=os.path.join(d, "2"), conditions=conds, threads=2)
            self.assertEqual(one.summary["failed_rows"], 0)
            for f in csv_files(one.path):
                self.assertEqual(read(os.path.join(one.path, f)), read(os.path.join(two.path, f)), f)

    def test_python_red_policy_matches_greedy(self):
        cfg = small_config()
        with TempDir() as d:
            r = advplan.run(cfg, out=d, conditions=["greedy@4", "py_greedy4", "py_greedy4_serial"], threads=2)
            per = r.trace("per_scenario", pandas=False)
            g = per[per["red_policy"] == "greedy@4"]
            p = per[per["red_policy"] == "py_greedy4"]
            ps = per[per["red_policy"] == "py_greedy4_serial"]
            self.assertEqual(len(g), 6)
            for col in ("red_plan_id", "red_quality", "red_coherence", "advantage", "blue_win_rate"):
                self.assertEqual(list(g[col]), list(p[col]), col)
                self.assertEqual(list(g[col]), list(ps[col]), col)

    def test_evaluate_a_python_policy(self):
        cfg = small_config()
        with TempDir() as d:
            r = advplan.evaluate("py_seed", cfg, out=d, reds=["single", "greedy@2"], references=["seed"],
                                 budget=[1, 2], threads=2, rerun=2)
            per = r.trace("per_scenario", pandas=False)
            self.assertIn("py_seed", set(per["blue_policy"]))
            self.assertTrue(os.path.exists(os.path.join(d, "summary.json")))
            verdicts = r.trace("evaluation/verdicts", pandas=False)
            self.assertGreater(len(verdicts), 0)
            # py_seed plays the seed plan: every verdict against seed finds no difference
            self.assertEqual(set(verdicts["verdict"]), {"no detectable difference"})
            # The report is part of the run: written before the MANIFEST, so the run checks out.
            self.assertEqual(cli("check", d, check=False).returncode, 0)


if __name__ == "__main__":
    unittest.main()
