// advplan play's page in a real browser (docs/PLAY.md "Browser test"): Debian's Chromium, headless, driven by
// playwright-core, with every request outside the sitting's address refused and counted. Three scenarios as BLUE:
// the first made from an empty plan in the editor (two actions, a category, verb and priority chosen, a row moved up,
// a duplicate id typed and the validator's message seen, then undone), the second the seed plan with two chain
// steps swapped, the third the seed plan with a branch over two actions taken off the chain. Then the page says
// the sitting is done. A request without the token is a 403.
// Usage: node play_test.mjs URL SCREENSHOT.png   (NODE_PATH must reach playwright-core)
import { createRequire } from "node:module";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const require = createRequire(import.meta.url);
const { chromium } = require("playwright-core");
const [url, shot] = process.argv.slice(2);
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };

async function messages(page) {
  return page.$$eval("#messages li", (items) => items.map((li) => li.textContent));
}

/// Waits until the validator has answered for the editor's current plan and says it is valid.
async function waitValid(page, what) {
  try {
    await page.waitForFunction(() => !document.getElementById("submit").disabled, null, { timeout: 10000 });
  } catch (e) {
    throw new Error(`${what}: the plan never became valid: ${(await messages(page)).join(" | ")}`);
  }
}

async function submitAndWait(page, nextTitle) {
  await page.click("#submit");
  await page.waitForFunction((t) => document.getElementById("scenario-title").textContent.includes(t) ||
    document.getElementById("status").className === "done", nextTitle, { timeout: 10000 });
}

async function row(page, i) { return (await page.$$("#actions tbody tr"))[i]; }
/// The control `cls` of action row i (rows are drawn anew on a change of category or order).
async function cell(page, i, cls) { return (await row(page, i)).$(cls); }

async function firstScenario(page) {
  await page.click("#clear");
  await page.waitForFunction(() => document.querySelectorAll("#messages li").length > 0 &&
    document.getElementById("messages").className !== "ok", null, { timeout: 10000 });
  check((await messages(page)).length > 0, "an empty plan has validator messages");
  await page.click("#add-action");
  await page.click("#add-action");
  const second = await row(page, 1);
  const category = await second.$eval(".a-category", (s) => s.value);
  const asset = await second.$eval(".a-asset", (s) => s.value);
  const cats = await page.$eval("#assets tbody", (b, id) => [...b.rows].find((r) => r.cells[0].textContent === id)
    .cells[4].textContent.split(" "), asset);
  const other = cats.find((c) => c !== category) || category;
  await second.$eval(".a-category", (s, v) => { s.value = v; s.dispatchEvent(new Event("change")); }, other);
  const verbs = await (await row(page, 1)).$$eval(".a-verb option", (os) => os.map((o) => o.value));
  await (await cell(page, 1, ".a-verb")).selectOption(verbs[verbs.length - 1]);
  await (await cell(page, 1, ".a-priority")).fill("1");
  await (await cell(page, 0, ".a-id")).fill("a2");  // a duplicate id: the validator must say so
  await page.waitForFunction(() => [...document.querySelectorAll("#messages li")]
    .some((li) => li.textContent.includes("a2")), null, { timeout: 10000 });
  check((await messages(page)).some((m) => m.includes("a2")), "a duplicate id gets the validator's message");
  await (await cell(page, 0, ".a-id")).fill("a1");
  await (await cell(page, 1, ".a-up")).click();
  await waitValid(page, "scenario 1");
  await submitAndWait(page, "Scenario 2 of 3");
}

async function secondScenario(page) {
  check((await page.textContent("#status")).includes("1 played"), "the status counts the played scenario");
  await page.click("#seed");
  await (await cell(page, 0, ".a-down")).click();
  await waitValid(page, "scenario 2");
  await submitAndWait(page, "Scenario 3 of 3");
}

async function thirdScenario(page) {
  await page.click("#seed");
  const before = (await page.$$("#actions tbody tr")).length;
  await page.click("#add-action");
  await page.click("#add-action");
  const ids = [];
  for (const i of [before, before + 1]) {
    await (await cell(page, i, ".a-chain")).uncheck();
    ids.push(await (await cell(page, i, ".a-id")).inputValue());
  }
  await page.click("#add-branch");
  const mine = (await page.$$(".branch")).pop();  // the seed plan may have branches of its own
  await (await mine.$(".b-condition")).fill("the bridge is down");
  const options = await mine.$$(".b-option");
  await options[0].fill(ids[0]);
  await options[1].fill(ids[1]);
  await waitValid(page, "scenario 3");
  await submitAndWait(page, "done");
  check((await page.textContent("#status")).includes("All 3 scenarios are played"), "the page says the sitting is done");
}

const profile = fs.mkdtempSync(path.join(os.tmpdir(), "advplan-chromium-"));
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run", "--disable-dev-shm-usage"],
  viewport: { width: 1400, height: 1000 },
});
const blocked = [];
await browser.route("**/*", (route) => {
  const u = route.request().url();
  if (u.startsWith(new URL(url).origin + "/")) return route.continue();  // the sitting's server, token or not
  blocked.push(u);
  return route.abort();
});
try {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(url);
  await page.waitForSelector("#assets tbody tr");
  check((await page.textContent("#scenario-title")).includes("Scenario 1 of 3"), "the first scenario is shown");
  const noToken = await page.evaluate(async (o) => (await fetch(o + "/state")).status, new URL(url).origin);
  check(noToken === 403, `a request without the token is refused (got ${noToken})`);
  await firstScenario(page);
  await secondScenario(page);
  await page.screenshot({ path: shot, fullPage: true });
  await thirdScenario(page);
  check(errors.length === 0, `no script errors (${errors.join("; ")})`);
} catch (e) {
  failures.push(String(e && e.stack ? e.stack : e));
} finally {
  await browser.close();
  fs.rmSync(profile, { recursive: true, force: true });
}
check(blocked.length === 0, `nothing outside the sitting was requested (${blocked.join(", ")})`);
if (failures.length > 0) {
  console.error("play browser test failed:\n  " + failures.join("\n  "));
  process.exit(1);
}
console.log("play browser test: three scenarios played in Chromium");
