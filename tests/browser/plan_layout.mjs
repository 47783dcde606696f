// The plan graphs' layout, measured in the browser (docs/REPORT.md "Browser test"): on every scenario page of a
// run, every plan drawn must have no two boxes overlapping, no label leaving its box, every edge entering its head
// from the left, every branch condition drawn on its fork (compared with the run's plans.jsonl), and the graph no
// wider than its pane.
import fs from "node:fs";
import path from "node:path";

/// The geometry of every plan graph on the page, in screen pixels, and what is wrong with it.
function measure() {
  const inside = (a, b, tol) => a.left >= b.left - tol && a.right <= b.right + tol && a.top >= b.top - tol && a.bottom <= b.bottom + tol;
  const out = [];
  for (const svg of document.querySelectorAll('svg[data-testid^="plan-"]')) {
    const problems = [];
    const boxes = [...svg.querySelectorAll("g[data-action], g.fork")].map((g) => ({
      g, node: g.getAttribute("data-node"), name: g.getAttribute("data-action") || g.getAttribute("data-condition"),
      r: g.querySelector("rect").getBoundingClientRect() }));
    for (let i = 0; i < boxes.length; ++i)
      for (let j = i + 1; j < boxes.length; ++j) {
        const a = boxes[i].r, b = boxes[j].r;
        if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
          problems.push(`boxes ${boxes[i].name} and ${boxes[j].name} overlap`);
      }
    for (const b of boxes)
      for (const t of b.g.querySelectorAll("text"))
        if (!inside(t.getBoundingClientRect(), b.r, 0.5)) problems.push(`the label "${t.textContent}" leaves its box ${b.name}`);
    const byNode = new Map(boxes.map((b) => [b.node, b]));
    for (const e of svg.querySelectorAll("path.edge")) {
      const head = byNode.get(e.getAttribute("data-head"));
      if (!head) { problems.push("an edge has no head box"); continue; }
      const len = e.getTotalLength(), m = e.getScreenCTM();
      const at = (l) => { const p = e.getPointAtLength(l); return new DOMPoint(p.x, p.y).matrixTransform(m); };
      const end = at(len), before = at(Math.max(0, len - 2));
      const ok = Math.abs(end.x - head.r.left) < 1 && end.y > head.r.top && end.y < head.r.bottom && before.x < end.x - 0.1;
      if (!ok) problems.push(`the edge into ${head.name} does not enter it from the left`);
    }
    const pane = svg.parentElement.getBoundingClientRect(), own = svg.getBoundingClientRect();
    if (own.width > pane.width + 1) problems.push(`the graph is ${own.width} px wide in a ${pane.width} px pane`);
    const forks = [...svg.querySelectorAll("g.fork")].map((g) => ({ condition: g.getAttribute("data-condition"),
      text: [...g.querySelectorAll("text")].map((t) => t.textContent).join(" ") }));
    out.push({ plan: svg.getAttribute("data-plan"), actions: boxes.filter((b) => b.g.hasAttribute("data-action")).length, forks, problems });
  }
  return out;
}

/// The plans of a run by scenario and plan id (the branch conditions each must draw).
function plansOf(run) {
  const by = new Map();
  for (const line of fs.readFileSync(path.join(run, "plans.jsonl"), "utf8").split("\n")) {
    if (!line) continue;
    const r = JSON.parse(line);
    if (r.plan) by.set(r.scenario_id + "|" + r.plan.plan_id, r.plan);
  }
  return by;
}

/// Opens every scenario page of the site at `site` (the report of `run`) and checks its plan graphs; returns the
/// number of plan graphs measured, the number with a branch, and the number with an option of two or more actions.
export async function checkPlanLayout(page, site, run, check) {
  const plans = plansOf(run);
  const ids = fs.readFileSync(path.join(run, "scenarios.csv"), "utf8").split("\n").slice(1).filter(Boolean).map((l) => l.split(",")[0]);
  const seen = { graphs: 0, branched: 0, long_options: 0 };
  const index = "file://" + path.resolve(site, "index.html");
  for (let i = 0; i < ids.length; ++i) {
    await page.goto(index + "#/scenario/" + i);
    await page.waitForSelector(`body[data-ready="#/scenario/${i}"]`);
    await page.evaluate(() => document.querySelectorAll("details[data-condition-card]").forEach((d) => { d.open = true; }));
    await page.waitForTimeout(50);
    for (const g of await page.evaluate(measure)) {
      ++seen.graphs;
      const plan = plans.get(ids[i] + "|" + g.plan);
      check(plan !== undefined, `scenario ${ids[i]}: the drawn plan ${g.plan} is in plans.jsonl`);
      for (const p of g.problems) check(false, `scenario ${ids[i]}, plan ${g.plan}: ${p}`);
      if (!plan) continue;
      const branches = plan.branches || [];
      if (branches.length) ++seen.branched;
      if (branches.some((b) => (b.options || []).some((o) => o.length > 1))) ++seen.long_options;
      check(g.forks.length === branches.length, `scenario ${ids[i]}, plan ${g.plan}: ${g.forks.length} forks drawn for ${branches.length} branches`);
      for (const b of branches) {
        const f = g.forks.find((x) => x.condition === b.condition);
        const shown = f ? f.text.replace(/…$/, "") : "";
        check(f !== undefined && ("if " + b.condition).startsWith(shown) && shown.length > 3,
          `scenario ${ids[i]}, plan ${g.plan}: the branch condition "${b.condition}" is drawn (${f ? f.text : "no fork"})`);
      }
    }
  }
  check(seen.long_options > 0, `the run has plans with two-action options to measure (${JSON.stringify(seen)})`);
  return seen;
}
