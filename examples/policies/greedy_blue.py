#!/usr/bin/env python3
"""A greedy advplan BLUE planning policy that builds its own plan from the scenario (docs/POLICIES.md).

Run by advplan as `--blue exec:'python3 examples/policies/greedy_blue.py'`. Standard library only.

The plan, in chain order:
  1. preparation: an information action (scan / recon / assess when the template lists one), then a command
     action when one is required;
  2. execution: the remaining categories in order of the scenario's BLUE requirement weight, each performed by
     the most capable BLUE asset able to do it, spread over assets (an asset already used counts as less
     capable); a protection action goes right before the first exposed action (exposure >= .5) and a
     sustainment action after every three execution steps; actions stop when the budget share is spent;
  3. consolidation: an end-state action (hold / withdraw / return / support when listed);
plus one branch at the first exposed step when a second movement option exists. Nothing here is random, so
the same scenario always gives the same plan. If anything goes wrong the answer is the scenario's first seed
plan, so the response is always a valid plan.
"""
import json
import sys

INFO_VERBS = ("scan", "recon", "assess")
START_VERBS = {"transit", "deploy", "marshal", "prepare", "assess", "scan", "recon"}
END_VERBS = {"return", "withdraw", "hold", "evade", "relocate", "continue", "support", "mitigate"}
END_PREFERENCE = (("protection", "hold"), ("movement", "withdraw"), ("movement", "return"),
                  ("sustainment", "support"), ("protection", "mitigate"))
BUDGET_SHARE = 0.8  # keep spending below this share of the BLUE budget (cost weighs .3 in quality)
EXPOSED = 0.5       # an action is exposed at or above this exposure (the coherence rubric's threshold)


class Builder:
    def __init__(self, scenario):
        self.sc = scenario
        self.assets = [a for a in scenario["assets"] if a["side"] == "BLUE"]
        self.verbs = scenario["verbs"]
        self.weights = scenario["requirements"]["BLUE"]["weights"]
        self.budget = float(scenario["requirements"]["BLUE"]["budget"])
        terrain = float(scenario["terrain"]["exposure"])
        self.exposure = {c: min(1.0, float(x) * terrain) for c, x in scenario["exposure"].items()}
        self.targets = self.ordered_places()
        self.actions, self.chain, self.branches = [], [], []
        self.uses, self.spent = {}, 0.0

    def ordered_places(self):
        """Places the objective names first (so the objective names a target), then the others."""
        objective = self.sc["objectives"]["BLUE"].lower()
        places = list(self.sc["places"]) or ["area of operations"]
        named = [p for p in places if p.lower() in objective]
        return named + [p for p in places if p not in named]

    def able(self, category):
        return [a for a in self.assets if category in a["categories"]]

    def pick_asset(self, category):
        """Most capable asset for the category, discounted by the actions it already has (ties: id)."""
        cands = self.able(category)
        if not cands:
            return None
        return min(cands, key=lambda a: (-(a["capability"] - 0.15 * self.uses.get(a["id"], 0)), a["id"]))

    def pick_verb(self, category, prefer=(), phase=1):
        verbs = self.verbs.get(category) or []
        for v in prefer:
            if v in verbs:
                return v
        # A mid-chain step should be neither a start-state nor an end-state verb, so the chain's tempo holds.
        middle = [v for v in verbs if v not in START_VERBS and v not in END_VERBS]
        if phase == 1 and middle:
            return middle[0]
        return verbs[0] if verbs else None

    def affordable(self, asset):
        return self.spent + asset["cost"] <= BUDGET_SHARE * self.budget

    def make(self, category, target, priority, prefer=(), phase=1, asset=None, in_chain=True, force=False):
        """Adds one action; returns its id, or None when no asset, verb or budget allows it."""
        asset = asset or self.pick_asset(category)
        verb = self.pick_verb(category, prefer, phase)
        if asset is None or verb is None or (not force and not self.affordable(asset)):
            return None
        aid = "a{}".format(len(self.actions) + 1)
        self.actions.append({"id": aid, "asset": asset["id"], "verb": verb, "category": category,
                             "target": target, "priority": priority, "metadata": {"phase": str(phase)}})
        if in_chain:
            self.chain.append(aid)
        self.uses[asset["id"]] = self.uses.get(asset["id"], 0) + 1
        self.spent += asset["cost"]
        return aid

    def build(self):
        main = self.targets[0]
        ranked = sorted(self.weights, key=lambda c: (-self.weights[c], c))
        # 1. Preparation: information first (forced, so every plan has at least one action), then command.
        if not self.make("information", main, 4, INFO_VERBS, phase=0, force=True):
            for c in ranked:  # a template without information assets: any action the budget ignores
                if self.make(c, main, 4, force=True):
                    break
        if self.weights.get("command", 0) > 0:
            self.make("command", main, 3, ("prepare", "coordinate"), phase=0)
        # 2. Execution, highest requirement weight first.
        protected, since_sustain, first_exposed = False, 0, None
        todo = [c for c in ranked if self.weights[c] > 0 and c not in ("information", "command", "sustainment")]
        for i, c in enumerate(todo):
            # Exposed work and its protection share the main target, so the protection covers it closely.
            close = c in ("fires", "movement", "protection")
            target = main if close else self.targets[(i + 1) % len(self.targets)]
            exposed = self.exposure.get(c, 0) >= EXPOSED
            if exposed and not protected and c != "protection" and self.able(c):
                protected = bool(self.make("protection", main, 4, ("harden", "screen", "escort")))
            priority = 5 if self.weights[c] >= 0.12 else 4 if self.weights[c] >= 0.06 else 3
            aid = self.make(c, target, priority)
            if aid is None:
                continue
            protected = protected or c == "protection"
            if exposed and first_exposed is None:
                first_exposed = aid
            since_sustain += 1
            if since_sustain == 3:
                if self.make("sustainment", main, 4, ("resupply", "reroute-supply")):
                    since_sustain = 0
        if not any(a["category"] == "sustainment" for a in self.actions):
            self.make("sustainment", main, 4, ("resupply", "reroute-supply"), force=True)
        # 3. Consolidation: one end-state action.
        for c, v in END_PREFERENCE:
            if v in (self.verbs.get(c) or []) and self.make(c, main, 3, (v,), phase=2, force=True):
                break
        self.add_branch(first_exposed, main)
        return self.plan()

    def add_branch(self, at, target):
        """At the first exposed step: press on (one movement) or fall back (another movement)."""
        movers = self.able("movement")
        verbs = [v for v in ("advance", "continue", "relocate", "evade", "withdraw")
                 if v in (self.verbs.get("movement") or [])]
        if at is None or not movers or len(verbs) < 2:
            return
        first = self.make("movement", target, 3, (verbs[0],), asset=self.pick_asset("movement"), in_chain=False,
                          force=True)
        second = self.make("movement", target, 3, (verbs[-1],), asset=self.pick_asset("movement"),
                           in_chain=False, force=True)
        if first and second:
            self.branches.append({"at": at, "condition": "threat level acceptable", "options": [[first], [second]]})

    def plan(self):
        used = sorted({a["asset"] for a in self.actions})
        by_id = {a["id"]: a for a in self.assets}
        return {
            "plan_id": "{}/blue/greedy".format(self.sc["id"]),
            "side": "BLUE",
            "objective": self.sc["objectives"]["BLUE"],
            "domain": self.sc.get("domain", ""),
            "roles": {a: by_id[a].get("role") or "support" for a in used},
            "actions": self.actions,
            "chain": self.chain,
            "branches": self.branches,
            "tool_calls": [],
        }


def looks_valid(plan, scenario):
    """The checks most likely to fail for a hand-built plan: ids unique, BLUE assets, known verbs."""
    blue = {a["id"] for a in scenario["assets"] if a["side"] == "BLUE"}
    ids = [a["id"] for a in plan["actions"]]
    return (plan["chain"] and len(ids) == len(set(ids))
            and all(a["asset"] in blue and a["verb"] in scenario["verbs"].get(a["category"], [])
                    and 1 <= a["priority"] <= 5 for a in plan["actions"]))


def answer(scenario):
    try:
        plan = Builder(scenario).build()
        if looks_valid(plan, scenario):
            return plan
    except (KeyError, ValueError, TypeError, IndexError) as e:
        print("greedy_blue: {}: falling back to the seed plan ({!r})".format(scenario.get("id"), e), file=sys.stderr)
    return scenario["blue_seed_plans"][0]


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        response = {"request_id": request["request_id"], "plan": answer(request["scenario"])}
        sys.stdout.write(json.dumps(response) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
