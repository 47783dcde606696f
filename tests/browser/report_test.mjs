// The report in a real browser (docs/REPORT.md): Debian's Chromium, headless, driven by playwright-core, with every
// request that is not a file of the site refused and counted. It opens a report of a small run against a second
// run, clicks from Table 3's greedy@8 advantage cell to a scenario, checks that the scenario page draws its BLUE
// plan's actions and as many RED candidates as candidates.csv holds, opens the comparison and checks that the first
// scenario listed is the one with the largest difference (computed here from the two per_scenario.csv files), and
// takes a screenshot. It measures the plan graphs of a geo run (plan_layout.mjs: no overlapping boxes, labels
// inside their boxes, edges entering from the left, every branch condition drawn). With SERVED (the address
// `advplan view` printed, http://127.0.0.1:PORT/TOKEN/) it also opens the served site, then plays a page of another origin (a second local server, node's http, at 127.0.0.1 and at
// evil.test, which --host-resolver-rules maps to 127.0.0.1): its scripts and fetches of the run's files, without
// the token, with a guessed one and with the right one, must read nothing (ADVPLAN_DATA never called, no body read);
// and DNS rebinding (http://evil.test:PORT/TOKEN/, the view's own port under another name) must get a 421.
// Usage: node report_test.mjs SITE_DIR RUN_A RUN_B SCREENSHOT.png [SERVED]   (NODE_PATH must reach playwright-core)
import { createRequire } from "node:module";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { checkPlanLayout } from "./plan_layout.mjs";

const require = createRequire(import.meta.url);
const { chromium } = require("playwright-core");
const [site, runA, runB, shot, served] = process.argv.slice(2);
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };

/// A CSV file as objects (RFC 4180 quoting).
function readCsv(file) {
  const text = fs.readFileSync(file, "utf8");
  const rows = [];
  let row = [], cell = "", quoted = false;
  for (let i = 0; i < text.length; ++i) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; ++i; }
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") { row.push(cell); cell = ""; }
    else if (c === "\n") { row.push(cell); rows.push(row); row = []; cell = ""; }
    else cell += c;
  }
  const [head, ...body] = rows;
  return body.map((r) => Object.fromEntries(head.map((h, i) => [h, r[i]])));
}

const perA = readCsv(path.join(runA, "per_scenario.csv")), perB = readCsv(path.join(runB, "per_scenario.csv"));
const candidates = readCsv(path.join(runA, "candidates.csv"));
// The expected first scenario of the comparison: the largest |advantage_A - advantage_B| for greedy@8.
const advB = new Map(perB.filter((r) => r.condition === "greedy@8" && r.status === "ok").map((r) => [r.scenario_id, Number(r.advantage)]));
let largest = null, largestDiff = -1;
for (const r of perA)
  if (r.condition === "greedy@8" && r.status === "ok" && advB.has(r.scenario_id)) {
    const d = Math.abs(Number(r.advantage) - advB.get(r.scenario_id));
    if (d > largestDiff) { largestDiff = d; largest = r.scenario_id; }
  }

/// The page of another origin: it defines ADVPLAN_DATA, then loads each of `paths` of the view as a script and
/// fetches it (CORS and no-cors), and records what it got in window.results; the title says when it is done.
function attackerPage(viewOrigin, paths) {
  return `<!doctype html><meta charset="utf-8"><title>attack</title><script>
window.calls = []; window.results = {};
window.ADVPLAN_DATA = (key) => window.calls.push(key);
const V = ${JSON.stringify(viewOrigin)}, paths = ${JSON.stringify(paths)};
(async () => {
  for (const p of paths) {
    await new Promise((done) => {
      const s = document.createElement("script");
      s.src = V + p;
      s.onload = () => { results["script " + p] = "loaded"; done(); };
      s.onerror = () => { results["script " + p] = "error"; done(); };
      document.head.appendChild(s);
    });
    try { const r = await fetch(V + p); results["cors " + p] = "read " + (await r.text()).length; }
    catch (e) { results["cors " + p] = "refused"; }
    try { const r = await fetch(V + p, { mode: "no-cors" }); results["no-cors " + p] = r.type + " " + (await r.text()).length; }
    catch (e) { results["no-cors " + p] = "refused"; }
  }
  document.title = "done";
})();
</script>`;
}

/// Another origin against the served run (docs/REPORT.md "Serving a large run"): it can read nothing, and a host
/// name rebound to 127.0.0.1 gets a 421.
async function attackTheServedRun(servedUrl) {
  const view = new URL(servedUrl), token = view.pathname.split("/")[1];
  const paths = ["/data/overview.js", "/data/s/0.js", "/index.html", `/${"0".repeat(32)}/data/overview.js`,
    `/${token.slice(0, 31)}0/data/overview.js`, `/${token}/data/overview.js`, `/${token}/data/s/0.js`, `/${token}/data/rows/0.js`];
  const server = http.createServer((req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(attackerPage(view.origin, paths));
  });
  await new Promise((done) => server.listen(0, "127.0.0.1", done));
  const port = server.address().port;
  allowed.push(`http://127.0.0.1:${port}/`, `http://evil.test:${port}/`);
  const attacker = await browser.newPage();
  // The requests the page made to the view (the browser hides their answers from the page, and blocked ones from
  // playwright's response events too: the statuses are checked in tests/report/view_test.cpp).
  const answers = [];
  attacker.on("request", (r) => { if (r.url().startsWith(view.origin + "/")) answers.push(r.url()); });
  try {
    // Same-site (another port of 127.0.0.1) and cross-site (evil.test).
    for (const origin of [`http://127.0.0.1:${port}`, `http://evil.test:${port}`]) {
      answers.length = 0;
      await attacker.goto(origin + "/attack.html");
      await attacker.waitForFunction(() => document.title === "done", null, { timeout: 20000 });
      const calls = await attacker.evaluate(() => window.calls);
      const results = await attacker.evaluate(() => window.results);
      check(calls.length === 0, `a page at ${origin} made the run's data call ADVPLAN_DATA (${calls.join(", ")})`);
      for (const [what, got] of Object.entries(results))
        check(got === "error" || got === "refused" || got === "opaque 0", `a page at ${origin} read ${what}: ${got}`);
      check(answers.some((a) => a.includes(`/${token}/data/`)), `the page at ${origin} asked for the run's files with the token (${answers.length} requests)`);
    }
    // DNS rebinding: the view's own port under a name that resolves to 127.0.0.1.
    const rebound = await attacker.goto(`http://evil.test:${view.port}/${token}/`);
    check(rebound.status() === 421, `a rebound host name gets a 421, not ${rebound.status()}`);
    check((await attacker.$('[data-testid="table3"]')) === null, "a rebound host name shows the run");
  } finally {
    await attacker.close();
    server.close();
  }
}

/// A scenario page that scales (docs/REPORT.md "The pages"), reached from greedy@8's cell whose scenarios are
/// `listed`: the cards of Table 3's conditions and of greedy@8 open, the rest collapsed and not drawn; the picker
/// opens and draws one; the model calls one click away; never wider than the window; previous and next move
/// through the cell's list.
async function checkScenarioPage(page, listed) {
  const main = new Set(perA.filter((r) => r.condition_group === "main").map((r) => r.condition));
  const cards = await page.$$eval("details[data-condition-card]", (ds) => ds.map((d) =>
    [d.getAttribute("data-condition-card"), d.open, d.querySelectorAll("svg").length]));
  check(cards.length > main.size, `the page has a card per condition (${cards.length})`);
  for (const [cond, open, svgs] of cards) {
    const want = main.has(cond) || cond === "greedy@8";
    check(open === want, `the card of ${cond} is ${want ? "open" : "collapsed"}`);
    if (!want) check(svgs === 0, `the collapsed card of ${cond} draws nothing until opened`);
  }
  const shut = cards.find(([cond]) => !main.has(cond) && cond !== "greedy@8");
  if (shut) {
    await page.selectOption('[data-testid="condition-picker"]', { label: shut[0] });
    await page.waitForSelector(`[data-testid="condition-${shut[0]}"] [data-testid="plan-BLUE"] [data-action]`);
  }
  check(shut !== undefined, "a condition outside Table 3 is collapsed and can be picked");
  await page.click('[data-testid="scenario-bar"] button:has-text("model calls")');
  const calls = await page.$eval('[data-testid="calls-section"]', (d) => [d.open, d.getBoundingClientRect().top, innerHeight]);
  check(calls[0] && calls[1] >= 0 && calls[1] < calls[2], `the model calls are one click away (${calls})`);
  const width = await page.evaluate(() => [document.documentElement.scrollWidth, innerWidth]);
  check(width[0] <= width[1], `the scenario page is no wider than the window (${width[0]} > ${width[1]})`);
  if (listed.length > 1) {
    await page.click('[data-testid="next-scenario"]');
    await page.waitForFunction((id) => document.querySelector("main h1") && document.querySelector("main h1").textContent === id, listed[1]);
    await page.click('[data-testid="prev-scenario"]');
    await page.waitForFunction((id) => document.querySelector("main h1") && document.querySelector("main h1").textContent === id, listed[0]);
  }
}

const profile = fs.mkdtempSync(path.join(os.tmpdir(), "advplan-chromium-"));
const browser = await chromium.launchPersistentContext(profile, {
  // offline blocks loopback too; with a served URL the route below is what keeps every other request off the network
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run", "--disable-dev-shm-usage",
    "--host-resolver-rules=MAP evil.test 127.0.0.1"],
  offline: !served,
  viewport: { width: 1400, height: 1000 },
});
let blocked = 0;
const blockedUrls = [];
// The origins the test itself serves: the view (any path of it, for the attacks) and, later, the attacker's server.
const allowed = served ? [new URL(served).origin + "/", `http://evil.test:${new URL(served).port}/`] : [];
await browser.route("**/*", (route) => {
  const url = route.request().url();
  if (url.startsWith("file://") || allowed.some((a) => url.startsWith(a))) return route.continue();
  ++blocked;
  blockedUrls.push(url);
  return route.abort();
});
const page = browser.pages()[0] || (await browser.newPage());
const errors = [];
page.on("pageerror", (e) => errors.push(String(e)));
page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
try {
  const index = "file://" + path.resolve(site, "index.html");
  await page.goto(index);
  await page.waitForSelector('[data-testid="table3"]', { timeout: 20000 });
  check((await page.textContent('[data-testid="run-card"]')).includes("files match the MANIFEST"), "the overview shows the MANIFEST status");
  check(!(await page.textContent("header")).includes("null"), "no stray \"null\" in the header");
  // Table 3's greedy@8 advantage cell, then its first scenario.
  await page.click('[data-testid="table3"] [data-testid="cell-greedy@8-advantage"]');
  await page.waitForSelector('[data-testid="cell-rows"]');
  check(!(await page.evaluate(() => [...document.querySelector("main").childNodes].some((n) => n.nodeType === 3 && n.textContent === "null"))),
    "no stray \"null\" above the cell's filters");
  const listed = await page.$$eval('[data-testid="scenario-link"]', (as) => as.map((a) => a.textContent));
  check(listed.length === new Set(perA.filter((r) => r.condition === "greedy@8").map((r) => r.scenario_id)).size,
    `the cell lists every scenario of greedy@8 (${listed.length})`);
  const scenario = listed[0];
  await page.click('[data-testid="scenario-link"] >> nth=0');
  const card = `[data-testid="condition-greedy@8"]`;
  await page.waitForSelector(card);
  const actions = await page.$$eval(`${card} [data-testid="plan-BLUE"] [data-action]`, (gs) => gs.map((g) => g.getAttribute("data-action")));
  check(actions.length > 0, "the scenario page draws the BLUE plan's actions");
  const texts = await page.$$eval(`${card} [data-testid="plan-BLUE"] text`, (ts) => ts.map((t) => t.textContent).join(" "));
  check(actions.every((id) => texts.includes(id)), "each action is labelled with its id");
  const expectedCandidates = candidates.filter((c) => c.scenario_id === scenario && c.condition === "greedy@8").length;
  const drawn = await page.$$eval(`${card} [data-testid="candidates-greedy@8"] circle.cand`, (cs) => cs.length);
  check(expectedCandidates > 0 && drawn === expectedCandidates, `the RED candidates are drawn (${drawn} of ${expectedCandidates})`);
  check((await page.$$(`${card} [data-testid="plan-RED"] [data-action]`)).length > 0, "the selected RED plan is drawn");
  await checkScenarioPage(page, listed);
  // The comparison: the first scenario listed has the largest difference.
  await page.goto(index + "#/compare/" + encodeURIComponent("greedy@8"));
  await page.waitForSelector('[data-testid="compare-scenarios"] [data-testid="compare-row"]');
  const first = await page.textContent('[data-testid="compare-scenarios"] [data-testid="compare-row"] >> nth=0 >> td >> nth=0');
  check(first === largest, `the comparison lists ${largest} first (largest difference ${largestDiff.toFixed(6)}), not ${first}`);
  await page.click('[data-testid="compare-scenarios"] [data-testid="compare-row"] >> nth=0 >> a');
  await page.waitForSelector('[data-testid="pair-a"] [data-testid="plan-BLUE"]');
  await page.waitForSelector('[data-testid="pair-b"] [data-testid="plan-BLUE"]');
  // Back to the scenario for the screenshot.
  await page.goto(index + "#/scenario/0");
  await page.waitForSelector('[data-testid="candidates-greedy@8"]');
  await page.locator('[data-testid="condition-greedy@8"]').scrollIntoViewIfNeeded();
  await page.evaluate(() => window.scrollBy(0, -60));
  await page.screenshot({ path: shot, fullPage: false });
  // A hostile run's map names are shown as text, never run (Leaflet takes a string tooltip as HTML).
  if (process.env.HOSTILE_SITE) {
    await page.goto("file://" + path.resolve(process.env.HOSTILE_SITE, "index.html") + "#/scenario/0");
    await page.waitForSelector('[data-testid="map"] .leaflet-interactive', { timeout: 20000 });
    // Every feature's tooltip opened, as hovering each would.
    await page.evaluate(() => (window.ADVPLAN_MAPS || []).forEach((m) => m.eachLayer((l) => { if (l.getTooltip && l.getTooltip()) l.openTooltip(); })));
    await page.waitForTimeout(300);
    check((await page.title()) !== "PWNED", "a map name from a hostile run ran as script");
    const tips = await page.$$eval(".leaflet-tooltip", (ts) => ts.map((t) => t.textContent));
    check(tips.some((t) => t.includes("<img")), `the hostile name is shown as text (${tips.length} tooltips)`);
  }
  // The plan graphs of a geo run, measured (plan_layout.mjs).
  if (process.env.LAYOUT_SITE) {
    // A report without --against (the site above has one, which fills the header's slot for the other run).
    await page.goto("file://" + path.resolve(process.env.LAYOUT_SITE, "index.html"));
    await page.waitForSelector('[data-testid="table3"]', { timeout: 20000 });
    check(!(await page.textContent("header")).includes("null"), "no stray \"null\" in the header of a report without --against");
    const seen = await checkPlanLayout(page, process.env.LAYOUT_SITE, process.env.LAYOUT_RUN, check);
    console.log(`plan layout: ${seen.graphs} graphs measured, ${seen.branched} with a branch, ${seen.long_options} with a two-action option`);
  }
  // The same pages served by `advplan view` (127.0.0.1 only): the cell's rows come page by page.
  if (served) {
    await page.goto(served + "#/cell/" + encodeURIComponent("greedy@8") + "/advantage");
    await page.waitForSelector('[data-testid="pager"]');
    await page.waitForSelector('[data-testid="cell-rows"]');
    const servedRows = await page.$$eval('[data-testid="scenario-link"]', (as) => as.map((a) => a.textContent));
    check(servedRows.length === listed.length, `the served cell lists the same scenarios (${servedRows.length})`);
    await page.click('[data-testid="scenario-link"] >> nth=0');
    await page.waitForSelector(`${card} [data-testid="plan-BLUE"] [data-action]`);
    await attackTheServedRun(served);
  }
} catch (e) {
  failures.push("the page did not behave: " + e.message);
} finally {
  await browser.close();
  fs.rmSync(profile, { recursive: true, force: true });
}
check(blocked === 0, `no request leaves the machine (${blocked} refused: ${blockedUrls.slice(0, 3).join(", ")})`);
check(errors.length === 0, "no script error: " + errors.slice(0, 3).join(" | "));
if (failures.length) {
  for (const f of failures) console.error("FAIL: " + f);
  process.exit(1);
}
console.log("report browser test: ok (" + largest + " first; screenshot " + shot + ")");
