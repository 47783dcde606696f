#!/usr/bin/env python3
"""An example `exec:` agent for `advplan quiz` (docs/GEO.md "Quiz").

It reads one JSON request per line on stdin and writes one JSON reply per line on stdout. A request carries the
question, the tool list and every step so far (each tool call with its observation); the reply is either
{"tool_call": {"id", "name", "arguments"}} or {"answer": "... \\boxed{ANSWER}"}. The protocol is stateless, so
this agent replays its own reasoning over the recorded observations on every request.

The reasoning is a handful of rules keyed on the wording of advplan's question kinds: a stand-in for a model,
useful to check the protocol end to end. It has no access to the reference answers.

    advplan questions --out q.jsonl
    advplan quiz --questions q.jsonl --agent "exec:python3 experiments/geo_agent.py"
"""
import json
import re
import sys


class Done(Exception):
    def __init__(self, answer):
        super().__init__(answer)
        self.answer = answer


def solve(question):
    """A generator: yields (tool, arguments), receives the observation's result; returns the answer text."""
    q = question
    m = re.search(r"In which sector.*? is .*?\(([^)]+)\)\?", q)
    if m:
        r = yield ("within", {"point": m.group(1), "area": "blue-sector"})
        return "blue sector" if r["within"] else "red sector"
    m = re.search(r"What is the area, in square kilometres, of .*?\(([^)]+)\)\?", q)
    if m:
        r = yield ("area", {"id": m.group(1)})
        return f"{r['km2']:.3f}"
    m = re.search(r"straight-line distance, in km, between (.+) and (.+)\?$", q)
    if m:
        r = yield ("distance", {"from": m.group(1), "to": m.group(2)})
        return f"{r['km']:.3f}"
    m = re.search(r"Which place is closest, in straight-line distance, to (\S+)\?", q)
    if m:
        places = (yield ("list_features", {"kind": "place"}))["features"]
        best = None
        for p in places:
            d = (yield ("distance", {"from": m.group(1), "to": p["id"]}))["km"]
            if best is None or d < best[0]:
                best = (d, p["name"])
        return best[1]
    m = re.search(r"line of sight from (.+) to (.+), with no", q)
    if m:
        r = yield ("line_of_sight", {"from": m.group(1), "to": m.group(2)})
        return "yes" if r["clear"] else "no"
    m = re.search(r"Which RED threat zone has its centre nearest to (.+)\? Options: (.+)\. Answer", q)
    if m:
        best = None
        for z in re.findall(r"\([A-Z]\) (\S+?)(?:,|$)", m.group(2)):
            d = (yield ("distance", {"from": m.group(1), "to": z}))["km"]
            if best is None or d < best[0]:
                best = (d, z)
        return best[1]
    if "How many of the map's places lie inside" in q:
        places = (yield ("list_features", {"kind": "place"}))["features"]
        n = 0
        for p in places:
            if (yield ("within", {"point": p["id"], "area": "RED"}))["within"]:
                n += 1
        return str(n)
    m = re.search(r"shortest \S+ route from (\S+) to (.+) that avoids every RED", q)
    if m:
        r = yield ("route", {"from": m.group(1), "to": m.group(2), "avoid": ["RED"]})
        return f"{r['length_km']:.3f}" if r["feasible"] else "unsolvable"
    m = re.search(r"Read the BLUE order\. Can (\S+) reach", q)
    if m:
        order = yield ("order", {})
        r = yield ("travel_time", {"from": m.group(1), "to": order["objective_place"], "avoid": ["RED"]})
        if r["feasible"] and r["hours"] <= order["time_window_h"]:
            return f"{r['hours']:.3f}"
        return "unsolvable"
    m = re.search(r"Which BLUE (.+?) asset reaches (.+) first along", q)
    if m:
        domains = set(m.group(1).split(" or "))
        assets = [a for a in (yield ("list_features", {"kind": "asset"}))["features"]
                  if a.get("side") == "BLUE" and a.get("domain") in domains]
        best = None
        for a in assets:
            r = yield ("travel_time", {"from": a["id"], "to": m.group(2), "avoid": ["RED"]})
            if r["feasible"] and (best is None or r["hours"] < best[0]):
                best = (r["hours"], a["id"])
        return best[1] if best else "unsolvable"
    m = re.search(r"confirmed that (\S+) will be at (.+?) within ([0-9.]+) hours", q)
    if m:
        r = yield ("travel_time", {"from": m.group(1), "to": m.group(2), "avoid": ["RED"]})
        if r["feasible"] and r["hours"] <= float(m.group(3)):
            return f"{r['hours']:.3f}"
        return "unsolvable"
    return "unsolvable"


def reply(request):
    steps = request["steps"]
    gen = solve(request["question"])
    try:
        call = next(gen)
        for i, step in enumerate(steps):
            obs = step["observation"]
            if not obs.get("ok"):
                raise Done("unsolvable")
            call = gen.send(obs["result"])
        # A call not made yet: make it, unless the budget is spent (then answer with what we have).
        if request["steps_left"] <= 0:
            return {"answer": "\\boxed{unsolvable}"}
        return {"tool_call": {"id": f"c{len(steps) + 1}", "name": call[0], "arguments": call[1]}}
    except StopIteration as stop:
        return {"answer": f"Final answer: \\boxed{{{stop.value}}}"}
    except Done as d:
        return {"answer": f"\\boxed{{{d.answer}}}"}


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            out = reply(json.loads(line))
        except Exception as e:  # noqa: BLE001 - an agent must always answer its line
            out = {"answer": f"error {e}: \\boxed{{unsolvable}}"}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
