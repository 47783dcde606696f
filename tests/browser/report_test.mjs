// The report in a real browser (docs/REPORT.md): Debian's Chromium, headless, driven by playwright-core, with every
// request that is not a file of the site refused and counted. It opens a report of a small run against a second
// run, clicks from Table 3's greedy@8 advantage cell to a scenario, checks that the scenario page draws its BLUE
// plan's actions and as many RED candidates as candidates.csv holds, opens the comparison and checks that the first
// scenario listed is the one with the largest difference (computed here from the two per_scenario.csv files), and
// takes a screenshot.
// Usage: node report_test.mjs SITE_DIR RUN_A RUN_B SCREENSHOT.png   (NODE_PATH must reach playwright-core)
import { createRequire } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

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

const profile = fs.mkdtempSync(path.join(os.tmpdir(), "advplan-chromium-"));
const browser = await chromium.launchPersistentContext(profile, {
  // offline blocks loopback too; with a served URL the route below is what keeps every other request off the network
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run", "--disable-dev-shm-usage"],
  offline: !served,
  viewport: { width: 1400, height: 1000 },
});
let blocked = 0;
const blockedUrls = [];
await browser.route("**/*", (route) => {
  const url = route.request().url();
  if (url.startsWith("file://") || (served && url.startsWith(served))) return route.continue();
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
  // Table 3's greedy@8 advantage cell, then its first scenario.
  await page.click('[data-testid="table3"] [data-testid="cell-greedy@8-advantage"]');
  await page.waitForSelector('[data-testid="cell-rows"]');
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
  // The same pages served by `advplan view` (127.0.0.1 only): the cell's rows come page by page.
  if (served) {
    await page.goto(served + "#/cell/" + encodeURIComponent("greedy@8") + "/advantage");
    await page.waitForSelector('[data-testid="pager"]');
    await page.waitForSelector('[data-testid="cell-rows"]');
    const servedRows = await page.$$eval('[data-testid="scenario-link"]', (as) => as.map((a) => a.textContent));
    check(servedRows.length === listed.length, `the served cell lists the same scenarios (${servedRows.length})`);
    await page.click('[data-testid="scenario-link"] >> nth=0');
    await page.waitForSelector(`${card} [data-testid="plan-BLUE"] [data-action]`);
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
