"""A BLUE planning policy written in Python, run in-process by advplan (docs/PYTHON.md).

    import advplan, seed_policy           # registers "py_seed" and "py_cheapest"
    advplan.evaluate("py_cheapest", out="runs/cheapest", reds=["single", "greedy@8"], references=["seed"])

A policy is a class with plan(scenario) -> plan dict. `scenario` is the dict of `advplan scenarios` (assets,
roles, terrain, objectives, blue_seed_plans, ...) plus "rng_seed", an integer from the run's keyed stream for the
policy, to seed any randomness so runs stay reproducible. Raise to decline a scenario: the row records the
exception as its failure reason.
"""
import advplan


@advplan.blue_policy("py_seed", thread_safe=True)
class SeedPolicy:
    """the scenario's first seed plan (what the built-in `seed` does)"""

    def plan(self, scenario):
        return scenario["blue_seed_plans"][0]


@advplan.blue_policy("py_cheapest", params={"index_bias": (0.0, 0.0, 1.0)})
class CheapestSeedPolicy:
    """the seed plan with the fewest actions; not thread-safe (its calls are serialised)"""

    def __init__(self, index_bias=0.0):
        self.index_bias = index_bias  # set from the config's `policies.py_cheapest.index_bias`
        self.calls = 0

    def plan(self, scenario):
        self.calls += 1
        plans = scenario["blue_seed_plans"]
        if not plans:
            raise ValueError("scenario %s has no seed plan" % scenario["id"])
        return min(plans, key=lambda p: (len(p["actions"]), plans.index(p) * (1 - self.index_bias)))
