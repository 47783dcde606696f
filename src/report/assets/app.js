// advplan report (docs/REPORT.md): a page that reads the run's data files (data/overview.js, data/s/<i>.js) through
// <script> tags, so that it works from file:// with nothing fetched from the network. Every text from the run is
// set with textContent, never parsed as HTML.
"use strict";

const DATA = {};
const waiting = {};
function ADVPLAN_DATA(key, value) {
  DATA[key] = value;
  (waiting[key] || []).forEach((f) => f(value));
  delete waiting[key];
}
window.ADVPLAN_DATA = ADVPLAN_DATA;

/// The data file of `key` ("s/3", "b/s/3"), loaded once.
function load(key) {
  if (DATA[key] !== undefined) return Promise.resolve(DATA[key]);
  return new Promise((resolve, reject) => {
    const first = !waiting[key];
    (waiting[key] = waiting[key] || []).push(resolve);
    if (!first) return;
    const s = document.createElement("script");
    s.src = "data/" + key + ".js";
    s.onerror = () => reject(new Error("cannot load data/" + key + ".js"));
    document.body.appendChild(s);
  });
}

/// An element: h("td", {class: "num"}, "0.5", child, ...); strings become text nodes.
function h(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "onclick") e.addEventListener("click", v);
    else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null) continue;
    e.appendChild(as_node(c));
  }
  return e;
}
/// A child as a node: a node as it is, anything else as text (an object from a hostile file as its JSON).
function as_node(c) {
  if (c instanceof Node) return c;
  return document.createTextNode(typeof c === "object" ? JSON.stringify(c) : String(c));
}
const SVG = "http://www.w3.org/2000/svg";
function s(tag, attrs, ...children) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) e.setAttribute(k, v);
  for (const c of children.flat()) {
    if (c === undefined || c === null) continue;
    e.appendChild(as_node(c));
  }
  return e;
}

function fmt(v, digits = 3) {
  if (v === null || v === undefined || v === "") return "";
  return typeof v === "number" ? v.toFixed(digits) : String(v);
}
/// Replaces `el`'s children with `parts` (arrays flattened), leaving out null and undefined: replaceChildren
/// would show them as the text "null".
function put(el, parts) { el.replaceChildren(...[parts].flat(Infinity).filter((c) => c !== null && c !== undefined).map(as_node)); }
function link(href, text, attrs) { return h("a", Object.assign({ href }, attrs || {}), text); }
const enc = encodeURIComponent;

const tooltip = () => document.getElementById("tooltip");
function tip(event, text) {
  const t = tooltip();
  t.textContent = text;
  t.hidden = false;
  t.style.left = event.clientX + 12 + "px";
  t.style.top = event.clientY + 12 + "px";
}
function untip() { tooltip().hidden = true; }

/// A sortable table: columns [{key, label, num, render(row) -> node|string}], rows of objects; on_order(rows) is
/// told each order it shows.
function sortable(columns, rows, attrs, on_order) {
  let key = null, dir = 1;
  const tbody = h("tbody");
  const draw = () => {
    const sorted = rows.slice();
    if (key !== null)
      sorted.sort((a, b) => {
        const x = a[key], y = b[key];
        if (x === y) return 0;
        if (x === null || x === undefined) return 1;
        if (y === null || y === undefined) return -1;
        return (x < y ? -1 : 1) * dir;
      });
    if (on_order) on_order(sorted);
    tbody.replaceChildren(...sorted.map((r) =>
      h("tr", {}, columns.map((c) => h("td", { class: c.num ? "num" : null }, c.render ? c.render(r) : fmt(r[c.key]))))));
  };
  const head = h("tr", {}, columns.map((c) => h("th", {
    class: "sortable", onclick: () => { dir = key === c.key ? -dir : 1; key = c.key; draw(); },
  }, c.label)));
  draw();
  return h("table", attrs || {}, h("thead", {}, head), tbody);
}

// ---------------------------------------------------------------------------------------------------------
// Overview.

const TABLE3 = ["advantage", "blue_win_rate", "red_quality", "blue_quality", "nash_gap", "diversity", "pareto_count"];

function conditions(o) {
  const seen = new Set();
  const out = [];
  for (const c of o.conditions || []) if (!seen.has(c.label)) { seen.add(c.label); out.push(c); }
  for (const label of Object.keys(o.summary || {}))
    if (!seen.has(label)) { seen.add(label); out.push({ label, group: "" }); }
  return out;
}

function interval_cell(o, cond, metric) {
  const v = ((o.summary || {})[cond] || {})[metric];
  if (!v) return h("td", { class: "muted" }, "–");
  return h("td", { class: "num" }, link("#/cell/" + enc(cond) + "/" + enc(metric), fmt(v[1]),
    { "data-testid": "cell-" + cond + "-" + metric, title: "n = " + v[0] }), " ",
    h("span", { class: "ci" }, "[" + fmt(v[2]) + ", " + fmt(v[3]) + "]"));
}

/// Conditions against metrics, in a box of its own that scrolls with its header row and condition column kept
/// in view (sticky).
function summary_table(o, conds, metrics, testid) {
  return h("div", { class: "sticky-table" }, h("table", { "data-testid": testid },
    h("thead", {}, h("tr", {}, h("th", {}, "condition"), metrics.map((m) => h("th", {}, m)))),
    h("tbody", {}, conds.map((c) => h("tr", {}, h("th", { scope: "row" }, c.label), metrics.map((m) => interval_cell(o, c.label, m)))))));
}

function rows_of(o) {
  const cols = o.rows.columns;
  return o.rows.data.map((r) => { const x = {}; cols.forEach((c, i) => { x[c] = r[i]; }); return x; });
}

function failures_by_cause(rows) {
  const by = new Map();
  for (const r of rows) if (r.status !== "ok") by.set(r.failure_reason || "(no reason)", (by.get(r.failure_reason || "(no reason)") || 0) + 1);
  if (by.size === 0) return h("p", { class: "muted" }, "No failed rows.");
  return h("table", { "data-testid": "failures" }, h("thead", {}, h("tr", {}, h("th", {}, "failed rows"), h("th", {}, "cause"))),
    h("tbody", {}, [...by.entries()].sort((a, b) => b[1] - a[1]).map(([cause, n]) => h("tr", { class: "failed" }, h("td", { class: "num" }, n), h("td", {}, cause)))));
}

function line_chart(points, xlabel, ylabel) {
  // points: [{x, y, lo, hi}]; hover shows the value, the wheel zooms the x axis.
  const W = 560, H = 260, m = { l: 48, r: 12, t: 10, b: 36 };
  const svg = d3.select(document.createElementNS(SVG, "svg")).attr("width", W).attr("height", H).attr("class", "chart");
  const x = d3.scale.log().base(2).domain(d3.extent(points, (p) => p.x)).range([m.l, W - m.r]);
  const y = d3.scale.linear().domain([d3.min(points, (p) => p.lo), d3.max(points, (p) => p.hi)]).nice().range([H - m.b, m.t]);
  const xAxis = d3.svg.axis().scale(x).orient("bottom").tickFormat(d3.format("d"));
  const gx = svg.append("g").attr("class", "axis").attr("transform", "translate(0," + (H - m.b) + ")").call(xAxis);
  svg.append("g").attr("class", "axis").attr("transform", "translate(" + m.l + ",0)").call(d3.svg.axis().scale(y).orient("left"));
  svg.append("text").attr("x", W / 2).attr("y", H - 4).attr("text-anchor", "middle").text(xlabel);
  svg.append("text").attr("x", 12).attr("y", m.t + 8).text(ylabel);
  const band = svg.append("path").attr("fill", "#c9d9f3");
  const line = svg.append("path").attr("fill", "none").attr("stroke", "#1f5fbf").attr("stroke-width", 2);
  const dots = svg.selectAll("circle.pt").data(points).enter().append("circle").attr("class", "pt").attr("r", 4).attr("fill", "#1f5fbf")
    .on("mousemove", (p) => tip(d3.event, "k = " + p.x + ": " + fmt(p.y) + " [" + fmt(p.lo) + ", " + fmt(p.hi) + "]"))
    .on("mouseout", untip);
  const draw = () => {
    band.attr("d", d3.svg.area().x((p) => x(p.x)).y0((p) => y(p.lo)).y1((p) => y(p.hi))(points));
    line.attr("d", d3.svg.line().x((p) => x(p.x)).y((p) => y(p.y))(points));
    dots.attr("cx", (p) => x(p.x)).attr("cy", (p) => y(p.y));
    gx.call(xAxis);
  };
  svg.call(d3.behavior.zoom().x(x).scaleExtent([1, 16]).on("zoom", draw));
  draw();
  return svg.node();
}

function overview(o) {
  const r = o.run;
  const conds = conditions(o);
  const main = conds.filter((c) => c.group === "main");
  const parts = [
    h("h1", {}, "Run " + (r.name || r.dir)),
    h("div", { class: "card", "data-testid": "run-card" },
      h("div", {}, "Directory: ", r.dir, " · command: ", r.command, " · config: ", r.config_source),
      h("div", {}, "Seed: ", String(r.seed), " · version ", r.version, " · commit ", r.commit),
      h("div", {}, "MANIFEST: ", r.manifest),
      h("div", {}, r.scenarios + " scenarios, " + r.rows + " rows" + (r.samples > 1 ? ", " + r.samples + " samples each" : "") +
        (r.summary_method ? " · summaries: " + r.summary_method : "")),
      h("details", {}, h("summary", {}, "config"), h("pre", {}, r.config_text))),
  ];
  if (o.against) parts.push(h("p", {}, link("#/compare", "Comparison with " + o.against.run.dir, { "data-testid": "compare-link" })));
  parts.push(h("h2", {}, "Table 3: the main conditions (mean [95% interval], scope all)"),
    main.length ? summary_table(o, main, TABLE3, "table3") : h("p", { class: "muted" }, "This run has no condition of group main."),
    h("h2", {}, "Every condition"), summary_table(o, conds, o.metrics, "all-conditions"));
  if (o.budget_curve && o.budget_curve.length > 1) {
    const pts = o.budget_curve.map((b) => ({ x: b.k, y: b.advantage, lo: b.advantage_lo, hi: b.advantage_hi }));
    parts.push(h("h2", {}, "Response budget: BLUE advantage against greedy@k (Table 4)"), line_chart(pts, "k", "advantage"));
  }
  if (o.evaluation) {
    const ev = o.evaluation;
    parts.push(h("h2", {}, "Evaluation: verdicts against the references"), objects_table(ev.verdicts || [], "eval-verdicts"),
      h("h2", {}, "Scorecard"), objects_table(ev.scorecard || [], "eval-scorecard"));
    const byPolicy = new Map();
    for (const r of ev.robustness || []) (byPolicy.get(r.blue_policy) || byPolicy.set(r.blue_policy, []).get(r.blue_policy)).push(r);
    if (byPolicy.size) parts.push(h("h2", {}, "Robustness: BLUE advantage as RED's budget k grows"));
    for (const [policy, rows] of byPolicy)
      if (rows.length > 1)
        parts.push(h("h3", {}, String(policy)), line_chart(rows.map((r) => ({ x: r.k, y: r.advantage, lo: r.advantage_lo, hi: r.advantage_hi })), "k", "advantage"));
  }
  parts.push(h("h2", {}, "Failed rows by cause"), o.paged
    ? h("p", { class: "muted" }, "Served page by page (advplan view): open a condition's cell for the failed rows of each page.")
    : failures_by_cause(rows_of(o)));
  return parts;
}

// ---------------------------------------------------------------------------------------------------------
// A table cell's scenarios.

/// A cell's rows: all of them in a bundled report; page by page (kViewPage scenarios each) when served.
function cell_view(o, cond, metric) {
  if (!o.paged) return cell_rows_view(o, cond, metric, rows_of(o).filter((r) => r.condition === cond), null);
  const box = h("div", {}, h("p", {}, "Loading ..."));
  let page = 0;
  const show = async () => {
    const d = await load("rows/" + page);
    const cols = d.columns;
    const rows = d.data.map((r) => { const x = {}; cols.forEach((c, i) => { x[c] = r[i]; }); return x; }).filter((r) => r.condition === cond);
    const pager = h("div", { "data-testid": "pager" },
      h("button", { onclick: () => { if (page > 0) { --page; show(); } }, disabled: page === 0 ? "disabled" : null }, "← previous"),
      " page " + (page + 1) + " of " + o.paged.pages + " (scenarios " + (page * o.paged.page_size + 1) + "–" +
        Math.min((page + 1) * o.paged.page_size, o.run.scenarios) + ") ",
      h("button", { onclick: () => { if (page + 1 < o.paged.pages) { ++page; show(); } }, disabled: page + 1 >= o.paged.pages ? "disabled" : null }, "next →"));
    put(box, cell_rows_view(o, cond, metric, rows, pager));
  };
  show();
  return [box];
}

function cell_rows_view(o, cond, metric, all, pager) {
  const templates = [...new Set(all.map((r) => r.template))], terrains = [...new Set(all.map((r) => r.terrain_family))];
  const list = h("div");
  const sel = (name, values) => h("select", { name }, h("option", { value: "" }, "all " + name + "s"), values.map((v) => h("option", { value: v }, v)));
  const ft = sel("template", templates), fr = sel("terrain", terrains);
  const fs = h("select", { name: "status" }, h("option", { value: "" }, "any status"), h("option", { value: "ok" }, "ok"), h("option", { value: "failed" }, "failed"));
  const draw = () => {
    const rows = all.filter((r) => (!ft.value || r.template === ft.value) && (!fr.value || r.terrain_family === fr.value) &&
      (!fs.value || (fs.value === "ok") === (r.status === "ok")))
      .map((r) => ({ scenario: r.scenario, scenario_id: r.scenario_id, template: r.template, terrain: r.terrain_family, status: r.status,
        sample: r.sample, value: r[metric], failure_reason: r.failure_reason }));
    const cols = [
      { key: "scenario_id", label: "scenario", render: (r) => link("#/scenario/" + r.scenario + "/from/" + enc(cond) + "/" + enc(metric), r.scenario_id, { "data-testid": "scenario-link" }) },
      { key: "template", label: "template" }, { key: "terrain", label: "terrain" },
      { key: "status", label: "status", render: (r) => h("span", { class: r.status === "ok" ? null : "failed" }, r.status) },
      { key: "value", label: metric, num: true, render: (r) => fmt(r.value) }];
    if (o.run.samples > 1) cols.splice(1, 0, { key: "sample", label: "sample", num: true, render: (r) => String(r.sample) });
    const order = (sorted) => { NAV_LIST = { key: cond + "/" + metric, list: [...new Set(sorted.map((r) => r.scenario))] }; };
    list.replaceChildren(sortable(cols, rows, { "data-testid": "cell-rows" }, order), h("h3", {}, "Failed rows by cause"), failures_by_cause(rows));
  };
  [ft, fr, fs].forEach((e) => e.addEventListener("change", draw));
  draw();
  return [h("h1", {}, cond + " · " + metric), h("p", {}, link("#/", "← overview")), pager, h("div", {}, "Filter: ", ft, fr, fs), list];
}

// ---------------------------------------------------------------------------------------------------------
// One scenario.

// The action graph's boxes (kBox, in px) and how many characters of monospace text fit in one (the rest of a label
// is cut with "…" and shown in full on hover).
const kBox = { w: 164, h: 50, fork_h: 28, chars: 23 };
function cut(text, n) {
  text = String(text === undefined || text === null ? "" : text);
  return text.length <= n ? text : text.slice(0, n - 1) + "…";
}

/// The plan as a layered graph (dagre, left to right): the chain's steps in rank order; each branch a fork node
/// after its step that carries the condition, then each option's actions in order, rejoining the next step.
function plan_graph(plan) {
  const g = new dagre.graphlib.Graph({ multigraph: false });
  g.setGraph({ rankdir: "LR", nodesep: 14, ranksep: 30, edgesep: 8, marginx: 6, marginy: 6 });
  g.setDefaultEdgeLabel(() => ({}));
  const box = (id) => { if (!g.hasNode("a:" + id)) g.setNode("a:" + id, { width: kBox.w, height: kBox.h, action: id }); return "a:" + id; };
  const edge = (v, w, weight) => { if (v !== w) g.setEdge(v, w, { weight: weight || 1 }); };
  const chain = (plan.chain || []).map(String);
  // A step with a branch goes on through one of its options (docs/DECISIONS.md "Branches by a default rule
  // only"), so its chain edge is drawn through the fork, not past it.
  const forked = new Set((plan.branches || []).filter((b) => (b.options || []).some((o) => (o || []).length)).map((b) => String(b.at)));
  chain.forEach((id, i) => { box(id); if (i > 0 && !forked.has(chain[i - 1])) edge(box(chain[i - 1]), box(id), 8); });
  (plan.branches || []).forEach((b, k) => {
    const at = box(String(b.at)), next = chain[chain.indexOf(String(b.at)) + 1];
    const fork = "f:" + k;
    g.setNode(fork, { width: kBox.w, height: kBox.fork_h, fork: b });
    edge(at, fork, 2);
    for (const opt of b.options || []) {
      let prev = fork;
      for (const id of opt || []) { edge(prev, box(String(id))); prev = box(String(id)); }
      if (next !== undefined) edge(prev, box(next));
    }
  });
  for (const a of plan.actions || []) box(String(a.id));  // an action on no step or option still gets its box
  dagre.layout(g);
  fit_bounds(g);
  return g;
}

/// Moves the layout so that every box and every bend of an edge lies inside (dagre can leave a long edge's bends
/// outside the graph's width and height), and sets the graph's size to match.
function fit_bounds(g) {
  let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
  const add = (x, y, w, h) => { x0 = Math.min(x0, x - w / 2); y0 = Math.min(y0, y - h / 2); x1 = Math.max(x1, x + w / 2); y1 = Math.max(y1, y + h / 2); };
  for (const v of g.nodes()) { const n = g.node(v); add(n.x, n.y, n.width, n.height); }
  for (const e of g.edges()) for (const p of g.edge(e).points || []) add(p.x, p.y, 0, 0);
  if (!isFinite(x0)) { g.graph().width = g.graph().height = 0; return; }
  const m = 6, dx = m - x0, dy = m - y0;
  for (const v of g.nodes()) { const n = g.node(v); n.x += dx; n.y += dy; }
  for (const e of g.edges()) for (const p of g.edge(e).points || []) { p.x += dx; p.y += dy; }
  g.graph().width = x1 - x0 + 2 * m;
  g.graph().height = y1 - y0 + 2 * m;
}

/// An edge from the tail's right side to the head's left side, through dagre's bends, each piece a curve that
/// leaves and enters horizontally, so that every edge enters its head from the left.
function edge_path(g, e) {
  const t = g.node(e.v), hd = g.node(e.w);
  const start = { x: t.x + t.width / 2, y: t.y }, end = { x: hd.x - hd.width / 2, y: hd.y };
  const bends = (g.edge(e).points || []).slice(1, -1).filter((p) => p.x > start.x && p.x < end.x);
  const pts = [start, ...bends, end];
  let d = `M${start.x},${start.y}`;
  for (let i = 1; i < pts.length; ++i) {
    const p = pts[i - 1], q = pts[i], dx = Math.max(12, (q.x - p.x) / 2);
    d += ` C${p.x + dx},${p.y} ${q.x - dx},${q.y} ${q.x},${q.y}`;
  }
  return d;
}

/// One action's box: three lines (id and category, verb and target, asset and role), each cut to fit.
function action_node(n, a, roles, side) {
  const id = n.action;
  const lines = [id + " · " + (a.category || ""), (a.verb || "") + (a.target ? " → " + a.target : ""),
    (a.asset || "") + (roles[a.asset] ? " (" + roles[a.asset] + ")" : "")];
  const x = n.x - n.width / 2, y = n.y - n.height / 2;
  const g = s("g", { class: "node" + (side === "RED" ? " red" : ""), transform: `translate(${x},${y})`, "data-action": id, "data-node": "a:" + id },
    s("rect", { width: n.width, height: n.height, rx: 4 }),
    lines.map((l, i) => s("text", { x: 6, y: 14 + 14 * i }, cut(l, kBox.chars))));
  const full = `${id}: ${a.category || ""} ${a.verb || ""} by ${a.asset || ""}, priority ${a.priority === undefined ? "" : a.priority}` +
    (a.target ? `, target ${a.target}` : "") + (roles[a.asset] ? `, role ${roles[a.asset]}` : "");
  g.addEventListener("mousemove", (e) => tip(e, full));
  g.addEventListener("mouseout", untip);
  return g;
}

/// A branch's fork: its condition (cut to fit; in full on hover and in data-condition).
function fork_node(n) {
  const b = n.fork, cond = String(b.condition || "");
  const g = s("g", { class: "fork", transform: `translate(${n.x - n.width / 2},${n.y - n.height / 2})`, "data-condition": cond, "data-node": n.id },
    s("rect", { width: n.width, height: n.height, rx: n.height / 2 }),
    s("text", { x: 10, y: n.height / 2 + 4 }, cut(cond ? "if " + cond : "branch", kBox.chars - 1)));
  g.addEventListener("mousemove", (e) => tip(e, `branch after ${b.at} (${(b.options || []).length} options): ${cond || "no condition given"}`));
  g.addEventListener("mouseout", untip);
  return g;
}

/// The plan's action graph as SVG, laid out by dagre and scaled down to fit its pane (viewBox, max-width 100%).
function plan_svg(plan, side) {
  const byId = {};
  for (const a of plan.actions || []) byId[a.id] = a;
  const g = plan_graph(plan);
  const W = Math.ceil(g.graph().width || 0), H = Math.ceil(g.graph().height || 0);
  const svg = s("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, class: "plangraph", "data-testid": "plan-" + side, "data-plan": plan.plan_id },
    s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto" },
      s("path", { d: "M0,0 L10,5 L0,10 z", fill: "#8a94a6" }))));
  for (const e of g.edges())
    svg.appendChild(s("path", { class: "edge", d: edge_path(g, e), "data-head": e.w, "data-tail": e.v }));
  for (const v of g.nodes()) {
    const n = Object.assign({ id: v }, g.node(v));
    svg.appendChild(n.fork ? fork_node(n) : action_node(n, byId[n.action] || {}, plan.roles || {}, side));
  }
  return svg;
}

function plan_block(label, p, side) {
  if (!p) return h("div", { class: "muted" }, label + ": not recorded (plans.jsonl has no such plan, and a run with an external policy's plans cannot be made again: docs/REPORT.md \"Plans made again\")");
  if (!p.plan) return h("div", { class: "failed" }, label + ": no plan (" + (p.failure || "no reason") + ")");
  return h("div", { class: "plan" }, h("div", {}, label + ": ", p.plan.plan_id, " · objective: ", p.plan.objective || ""), plan_svg(p.plan, side));
}

/// The RED candidate cloud in (q, D): the Pareto front filled, the greedy and constraint-aware picks and the
/// selected candidate marked; the wheel zooms.
function candidate_cloud(cands, testid) {
  const W = 420, H = 300, m = { l: 44, r: 10, t: 10, b: 34 };
  const svg = d3.select(document.createElementNS(SVG, "svg")).attr("width", W).attr("height", H).attr("class", "chart").attr("data-testid", testid);
  const x = d3.scale.linear().domain(d3.extent(cands, (c) => c.quality)).nice().range([m.l, W - m.r]);
  const y = d3.scale.linear().domain(d3.extent(cands, (c) => c.coherence)).nice().range([H - m.b, m.t]);
  const ax = d3.svg.axis().scale(x).orient("bottom").ticks(6), ay = d3.svg.axis().scale(y).orient("left").ticks(6);
  const gx = svg.append("g").attr("class", "axis").attr("transform", "translate(0," + (H - m.b) + ")").call(ax);
  const gy = svg.append("g").attr("class", "axis").attr("transform", "translate(" + m.l + ",0)").call(ay);
  svg.append("text").attr("x", W / 2).attr("y", H - 4).attr("text-anchor", "middle").text("quality q");
  svg.append("text").attr("x", 4).attr("y", m.t + 8).text("D");
  const pts = svg.selectAll("circle.cand").data(cands).enter().append("circle").attr("class", "cand").attr("r", (c) => c.selected ? 7 : 4.5)
    .attr("fill", (c) => c.on_frontier ? "#b42318" : "#f4b4ad").attr("stroke", (c) => c.selected ? "#1d2330" : "none").attr("stroke-width", 2)
    .on("mousemove", (c) => tip(d3.event, `candidate ${c.index}: q ${fmt(c.quality)}, D ${fmt(c.coherence)}` +
      (c.on_frontier ? ", on the front" : "") + (c.selected_greedy ? ", greedy pick" : "") + (c.selected_constraint ? ", constraint pick" : "") + (c.selected ? ", selected" : "")))
    .on("mouseout", untip);
  const marks = svg.selectAll("text.pick").data(cands.filter((c) => c.selected_greedy || c.selected_constraint)).enter().append("text")
    .attr("class", "pick").attr("font-size", 11).text((c) => (c.selected_greedy ? "G" : "") + (c.selected_constraint ? "C" : ""));
  const draw = () => {
    pts.attr("cx", (c) => x(c.quality)).attr("cy", (c) => y(c.coherence));
    marks.attr("x", (c) => x(c.quality) + 7).attr("y", (c) => y(c.coherence) - 7);
    gx.call(ax); gy.call(ay);
  };
  svg.call(d3.behavior.zoom().x(x).y(y).scaleExtent([1, 20]).on("zoom", draw));
  draw();
  return svg.node();
}

function win_bars(rows) {
  const ok = rows.filter((r) => r.status === "ok");
  if (!ok.length) return h("p", { class: "muted" }, "No condition was played to the end.");
  const W = 420, bh = 18, H = ok.length * (bh + 6) + 30, L = 170;
  const svg = s("svg", { width: W, height: H, class: "chart", "data-testid": "outcomes" });
  ok.forEach((r, i) => {
    const y = 8 + i * (bh + 6), w = (W - L - 40) * (r.blue_win_rate || 0);
    svg.appendChild(s("text", { x: 4, y: y + 13, "font-size": 11 }, r.condition + (r.sample !== undefined && r.sample !== null ? " #" + r.sample : "")));
    const bar = s("rect", { x: L, y, width: Math.max(1, w), height: bh, fill: "#1f5fbf" });
    bar.addEventListener("mousemove", (e) => tip(e, `${r.condition}: BLUE wins ${fmt(r.blue_win_rate)} of the replications; final strengths BLUE ${fmt(r.blue_final_strength)}, RED ${fmt(r.red_final_strength)}`));
    bar.addEventListener("mouseout", untip);
    svg.appendChild(bar);
    svg.appendChild(s("text", { x: L + w + 4, y: y + 13, "font-size": 11 }, fmt(r.blue_win_rate)));
  });
  return svg;
}

function objects_table(list, testid, keys) {
  if (!list.length) return h("p", { class: "muted" }, "None recorded.");
  keys = keys || Object.keys(list[0]).filter((k) => typeof list[0][k] !== "object" || list[0][k] === null);
  return h("table", { "data-testid": testid }, h("thead", {}, h("tr", {}, keys.map((k) => h("th", {}, k)))),
    h("tbody", {}, list.map((o) => h("tr", {}, keys.map((k) => {
      const v = o[k];
      return h("td", { class: typeof v === "number" ? "num" : null }, Array.isArray(v) ? v.map((x) => typeof x === "object" ? JSON.stringify(x) : String(x)).join(", ") : fmt(v));
    })))));
}

function leaflet_map(geojson) {
  const div = h("div", { class: "map", "data-testid": "map" });
  setTimeout(() => {
    const map = L.map(div, { crs: L.CRS.Simple, minZoom: -5, attributionControl: false });
    (window.ADVPLAN_MAPS = window.ADVPLAN_MAPS || []).push(map);  // for the browser test
    try {
      const layer = L.geoJSON(geojson, {
        // A tooltip given as a string is HTML to Leaflet: the name goes in as a text node.
        onEachFeature: (f, l) => {
          const p = f.properties || {};
          l.bindTooltip(h("span", {}, String(p.name || p.id || p.kind || "")));
        },
        pointToLayer: (f, latlng) => L.circleMarker(latlng, { radius: 5 }),
      }).addTo(map);
      const b = layer.getBounds();
      if (b.isValid()) map.fitBounds(b); else map.setView([0, 0], 0);
    } catch (e) {
      div.replaceChildren(h("p", { class: "failed" }, "The map cannot be drawn: " + e.message));
    }
  }, 0);
  return div;
}

// A scenario's map on a user's map: its layer (`base`, `hidden`) on the shared map the overview holds once.
function with_base(map, bases) {
  if (!map || !map.base) return map;
  const base = (bases || {})[map.base];
  if (!base) return map;
  const hidden = new Set(map.hidden || []);
  return { type: "FeatureCollection", name: map.name, left_out: base.left_out,
    features: (base.features || []).filter((f) => !hidden.has(f.id)).concat(map.features || []) };
}

/// The scenarios of the list the reader came from (a cell's rows, as last sorted and filtered), for previous and
/// next; set by the cell view.
let NAV_LIST = null;

/// The scenario list of `from` (condition and metric of a cell), as the cell showed it or else in run order.
function nav_list(o, from) {
  if (!from) return null;
  const key = from.join("/");
  if (NAV_LIST && NAV_LIST.key === key) return NAV_LIST.list;
  if (o.paged) return null;
  return [...new Set(rows_of(o).filter((r) => r.condition === from[0]).map((r) => r.scenario))];
}

/// The bar at the top of a scenario page: where it came from, previous and next within that list (or the run),
/// the condition picker, and the model calls and verdicts one click away.
function scenario_bar(o, i, from, d, cards) {
  const list = nav_list(o, from) || [...Array(o.run.scenarios).keys()];
  const at = list.indexOf(i);
  const suffix = from ? "/from/" + from.map(enc).join("/") : "";
  const step = (k, text, testid) => k >= 0 && k < list.length
    ? link("#/scenario/" + list[k] + suffix, text, { "data-testid": testid, class: "button" })
    : h("span", { class: "button disabled" }, text);
  const picker = h("select", { "data-testid": "condition-picker" }, h("option", { value: "" }, "go to a condition (" + cards.length + ") …"),
    cards.map((c, k) => h("option", { value: String(k) }, c.title)));
  picker.addEventListener("change", () => {
    const c = cards[Number(picker.value)];
    picker.value = "";
    if (!c) return;
    c.el.open = true;
    c.el.scrollIntoView({ block: "start" });
  });
  const jump = (sel, text) => h("button", { onclick: () => { const e = document.querySelector(sel); if (e) { e.open = true; e.scrollIntoView({ block: "start" }); } } }, text);
  const all = (open) => () => cards.forEach((c) => { c.el.open = open; });
  return h("div", { class: "scenario-bar", "data-testid": "scenario-bar" },
    from ? link("#/cell/" + from.map(enc).join("/"), "← " + from.join(" · "), { class: "button" }) : link("#/", "← overview", { class: "button" }),
    step(at - 1, "← previous", "prev-scenario"),
    h("span", { class: "muted" }, at >= 0 ? `${at + 1} of ${list.length}` : ""),
    step(at < 0 ? -1 : at + 1, "next →", "next-scenario"), picker,
    h("button", { onclick: all(true) }, "open all"), h("button", { onclick: all(false) }, "close all"),
    jump('[data-testid="calls-section"]', "model calls (" + d.transcripts.length + ")"),
    jump('[data-testid="verdicts-section"]', "rubric verdicts (" + d.verdicts.length + ")"));
}

/// One condition's card, collapsed unless `open`: its numbers, both plans and the RED candidate cloud, drawn when
/// the card is first opened.
function condition_card(d, o, r, open) {
  const sample = r.sample === undefined || r.sample === null ? 0 : r.sample;
  const title = r.condition + (o.run.samples > 1 ? " · sample " + sample : "");
  const summary = r.status === "ok" ? ` · advantage ${fmt(r.advantage)} · BLUE wins ${fmt(r.blue_win_rate)}` : " · failed";
  const el = h("details", { class: "card", "data-condition-card": r.condition, "data-testid": "condition-" + r.condition },
    h("summary", {}, h("b", {}, title), " — BLUE " + r.blue_policy + " against RED " + r.red_policy,
      h("span", { class: r.status === "ok" ? "muted" : "failed" }, summary)));
  let drawn = false;
  const draw = () => {
    if (drawn || !el.open) return;
    drawn = true;
    const blue = d.plans.find((p) => p.side === "BLUE" && p.condition === "" && p.policy === r.blue_policy && p.sample === sample);
    const red = d.plans.find((p) => p.side === "RED" && p.condition === r.condition && p.sample === sample);
    const cands = d.candidates.filter((c) => c.condition === r.condition && (c.sample === undefined || c.sample === sample));
    el.append(r.status === "ok"
      ? h("div", {}, "advantage ", fmt(r.advantage), " · BLUE win rate ", fmt(r.blue_win_rate), " · q_B ", fmt(r.blue_quality), " · q_R ", fmt(r.red_quality), " · D_B ", fmt(r.blue_coherence), " · D_R ", fmt(r.red_coherence))
      : h("div", { class: "failed" }, "failed: ", r.failure_reason),
      plan_block("BLUE plan", blue, "BLUE"), plan_block("selected RED plan", red, "RED"),
      cands.length ? h("div", {}, h("div", {}, cands.length + " RED candidates (front filled; G greedy pick, C constraint pick, ringed: selected)"), candidate_cloud(cands, "candidates-" + r.condition)) : null);
  };
  el.addEventListener("toggle", draw);
  if (open) { el.open = true; draw(); }
  return { el, title };
}

function verdicts_section(d) {
  return h("details", { class: "section", "data-testid": "verdicts-section", open: d.verdicts.length ? "open" : null },
    h("summary", {}, h("h2", {}, "Rubric verdicts (" + d.verdicts.length + ")")),
    d.verdicts.length ? h("div", { class: "scroll" }, h("table", { "data-testid": "verdicts" },
      h("thead", {}, h("tr", {}, ["judge", "policy", "failed items", "error", "evidence"].map((k) => h("th", {}, k)))),
      h("tbody", {}, d.verdicts.map((v) => h("tr", {}, h("td", {}, v.judge), h("td", {}, v.model), h("td", {}, (v.failed_items || []).join(", ")),
        h("td", { class: v.error ? "failed" : null }, v.error ? (v.reason || "error") : ""),
        h("td", {}, (v.failures || []).length ? h("details", {}, h("summary", {}, (v.failures || []).length + " items"),
          (v.failures || []).map((f) => h("div", {}, h("b", {}, f.item_id + ": "), f.evidence + " — " + f.rationale))) : "")))))) : h("p", { class: "muted" }, "No rubric verdicts for this scenario."));
}

function calls_section(d) {
  const call = (t) => h("details", {}, h("summary", {}, `${t.role} ${t.policy}${t.graded ? " grading " + t.graded : ""}${t.condition ? " · " + t.condition : ""} · attempt ${t.attempt} · ${t.ok ? "ok" : "failed"} · tokens ${t.prompt_tokens}/${t.completion_tokens}` + (t.cache_key ? " · cached key " + String(t.cache_key).slice(0, 12) : "") + (t.accepted ? " · accepted" : "")),
    (t.messages || []).map((m) => h("div", {}, h("b", {}, m.role), h("pre", {}, m.content), cut_note(m))),
    h("div", {}, h("b", {}, "reply"), h("pre", {}, t.reply || t.error || ""), cut_note(t)));
  return h("details", { class: "section", "data-testid": "calls-section", open: d.transcripts.length ? "open" : null },
    h("summary", {}, h("h2", {}, "Model calls (" + d.transcripts.length + ")")),
    d.transcripts.length ? h("div", { "data-testid": "transcripts" }, d.transcripts.map(call))
      : h("p", { class: "muted" }, "No transcripts: the run has no external policy or live judge (or traces.transcripts is none)."));
}

/// A scenario's page. `nav` ({i, from}) adds the bar with previous and next (not in the side-by-side view);
/// the cards of Table 3's conditions and of the condition the reader came from are open, the rest collapsed.
function scenario_view(container, d, o, prefix, nav) {
  const sc = d.scenario || {};
  const row = d.row || {};
  const main = new Set(conditions(o).filter((c) => c.group === "main").map((c) => c.label));
  const from = nav && nav.from ? nav.from[0] : null;
  const cards = d.rows.map((r) => condition_card(d, o, r, main.has(r.condition) || r.condition === from));
  const parts = [];
  if (nav) parts.push(scenario_bar(o, nav.i, nav.from, d, cards));
  parts.push(h("h1", {}, row.scenario_id || "scenario"),
    h("div", { class: "card" }, "Template ", row.template, " · terrain ", row.terrain_family, " · framing ", row.framing,
      " · BLUE objective: ", row.blue_objective || sc.objectives && sc.objectives.BLUE || ""));
  if (sc.assets) parts.push(h("details", { class: "section" }, h("summary", {}, h("h2", {}, "Assets and roles (" + sc.assets.length + ")")), h("div", { class: "scroll" }, objects_table(sc.assets, "assets"))));
  if (sc.terrain) parts.push(h("div", { class: "muted" }, "Terrain: " + JSON.stringify(sc.terrain)));
  const map = with_base(d.map, prefix ? (o.against || {}).map_bases : o.map_bases);
  if (map) parts.push(h("h2", {}, "Map"), leaflet_map(map));
  if (map && map.left_out) parts.push(h("p", { class: "muted" }, `${map.left_out} features of the shared map are not drawn: a page draws at most 20,000 of its positions (docs/REPORT.md).`));
  parts.push(h("h2", {}, "Outcome per condition (BLUE win rate)"), win_bars(d.rows));
  if (d.plans_made_again) parts.push(h("p", { class: "muted", "data-testid": "plans-made-again" }, "The plans below were made again from the run's config and streams when this report was made: the run kept no plans.jsonl, and its policies are all built in, so they answer as they did in the run."));
  parts.push(h("h2", {}, "Conditions (" + cards.length + "; Table 3's open)"), ...cards.map((c) => c.el));
  if (d.council.length) parts.push(h("h2", {}, "Council"), h("div", { class: "scroll" }, objects_table(d.council, "council")));
  parts.push(verdicts_section(d), calls_section(d));
  for (const [k, what] of [["transcripts_left_out", "model calls"], ["verdicts_left_out", "verdicts"]])
    if (d[k]) parts.push(h("p", { class: "muted", "data-testid": k }, `${d[k].calls} more ${what} (${d[k].bytes} bytes) are not shown: a page shows the first ${what} within its bounds (docs/REPORT.md "Model calls on a page").`));
  put(container, parts);
  return container;
}

// ---------------------------------------------------------------------------------------------------------
// The comparison (--against).

// What a page leaves out of a long text (its cut_bytes: docs/REPORT.md "Model calls on a page").
function cut_note(x) {
  return x && x.cut_bytes ? h("div", { class: "muted" }, `… ${x.cut_bytes} more bytes not shown`) : null;
}

function compare_view(o, cond) {
  const a = o.against;
  if (!a) return [h("p", {}, "This report has no second run (advplan report RUN --against RUN_B).")];
  const parts = [h("h1", {}, "Paired differences: " + o.run.dir + " − " + a.run.dir), h("p", {}, link("#/", "← overview"))];
  parts.push(h("table", { "data-testid": "compare-conditions" }, h("thead", {}, h("tr", {}, ["condition", "n", "Δ advantage [95%]", "Δ BLUE win rate [95%]"].map((k) => h("th", {}, k)))),
    h("tbody", {}, a.conditions.map((c) => h("tr", {}, h("td", {}, link("#/compare/" + enc(c.condition), c.condition, { "data-testid": "compare-condition" })), h("td", { class: "num" }, c.n),
      h("td", { class: "num" }, fmt(c.advantage[0]), " ", h("span", { class: "ci" }, "[" + fmt(c.advantage[1]) + ", " + fmt(c.advantage[2]) + "]")),
      h("td", { class: "num" }, fmt(c.blue_win_rate[0]), " ", h("span", { class: "ci" }, "[" + fmt(c.blue_win_rate[1]) + ", " + fmt(c.blue_win_rate[2]) + "]")))))));
  const chosen = a.conditions.find((c) => c.condition === cond) || a.conditions[0];
  if (chosen) {
    const flipped = chosen.scenarios.filter((x) => x.flipped);
    const row = (x) => h("tr", { "data-testid": "compare-row" }, h("td", {}, link("#/pair/" + x.a + "/" + x.b, x.scenario_id)), h("td", { class: "num" }, fmt(x.diff)),
      h("td", { class: "num" }, fmt(x.advantage_a)), h("td", { class: "num" }, fmt(x.advantage_b)), h("td", {}, x.flipped ? "flipped" : ""));
    const head = h("thead", {}, h("tr", {}, ["scenario", "Δ advantage", "advantage A", "advantage B", ""].map((k) => h("th", {}, k))));
    parts.push(h("h2", {}, chosen.condition + ": scenarios by the size of the difference"),
      h("table", { "data-testid": "compare-scenarios" }, head, h("tbody", {}, chosen.scenarios.map(row))),
      h("h3", {}, "Flipped (BLUE ahead in one run, behind in the other): " + flipped.length),
      h("table", {}, head.cloneNode(true), h("tbody", {}, flipped.map(row))));
  }
  return parts;
}

// ---------------------------------------------------------------------------------------------------------
// Routing.

async function route() {
  const main = document.getElementById("main");
  const o = DATA.overview;
  if (!o) return;
  document.getElementById("runname").textContent = o.run.dir;
  const nav = document.getElementById("nav");
  put(nav, [link("#/", "overview"), o.against ? link("#/compare", "comparison") : null]);
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  untip();
  try {
    if (parts[0] === "cell") put(main, cell_view(o, parts[1], parts[2]));
    else if (parts[0] === "scenario" || (parts[0] === "b" && parts[1] === "scenario")) {
      const b = parts[0] === "b";
      const i = Number(b ? parts[2] : parts[1]);
      const d = await load((b ? "b/" : "") + "s/" + i);
      const from = !b && parts[2] === "from" && parts.length >= 5 ? [parts[3], parts[4]] : null;
      scenario_view(main, d, o, b ? "b/" : "", b ? null : { i, from });
    } else if (parts[0] === "compare") put(main, compare_view(o, parts[1]));
    else if (parts[0] === "pair") {
      const [da, db] = await Promise.all([load("s/" + Number(parts[1])), load("b/s/" + Number(parts[2]))]);
      const left = h("div", { class: "pane", "data-testid": "pair-a" }), right = h("div", { class: "pane", "data-testid": "pair-b" });
      scenario_view(left, da, o, "");
      scenario_view(right, db, o, "b/");
      main.replaceChildren(h("p", {}, link("#/compare", "← comparison")), h("div", { class: "grid" },
        h("div", {}, h("h2", {}, o.run.dir), left), h("div", {}, h("h2", {}, o.against.run.dir), right)));
    } else put(main, overview(o));
  } catch (e) {
    main.replaceChildren(h("p", { class: "failed" }, "This page cannot be shown: " + e.message));
  }
  document.body.setAttribute("data-ready", location.hash || "#/");
}

window.addEventListener("hashchange", route);
const ready = setInterval(() => { if (DATA.overview) { clearInterval(ready); route(); } }, 10);
