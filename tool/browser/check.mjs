// check.mjs — drives the demo page in headless Chromium (Debian's, through
// playwright-core) as a person would, twice with the same browser profile:
// the page's self-test (#selftest: semantic answers, a filter, recall
// against a brute force), a typed query with a category chosen in the form,
// and persistence across the reload (the visit count grows, the table is
// read back from IndexedDB, not loaded again).
// Usage: node check.mjs URL PROFILE_DIR CHROMIUM
import { chromium } from "playwright-core";

const [url, profile, executablePath] = process.argv.slice(2);
let failed = 0;
function check(ok, name, detail) {
  console.log(`${ok ? "ok" : "FAIL"} ${name}${ok ? "" : `: ${detail}`}`);
  if (!ok) failed++;
}

// One visit: the self-test's result and the answer to a typed query.
async function visit() {
  const ctx = await chromium.launchPersistentContext(profile, {
    executablePath, headless: true, args: ["--no-sandbox"],
  });
  try {
    const page = await ctx.newPage();
    page.on("pageerror", (e) => console.log(`page error: ${e.message}`));
    await page.goto(`${url}?selftest`);
    await page.waitForFunction(() => document.title === "selftest done", null,
      { timeout: 180000 });
    const result = JSON.parse(await page.textContent("#selftest"));
    await page.fill("#q", "warm winter parka");
    await page.selectOption("#cat", "outerwear");
    await page.click("button");
    await page.waitForSelector("#results li");
    const typed = await page.$$eval("#results li", (li) => li.map((x) => x.textContent));
    return { result, typed };
  } finally {
    await ctx.close();
  }
}

const first = await visit();
console.log(`first visit: ${JSON.stringify(first.result)}`);
check(first.result.ok === true, "self-test (first visit)", JSON.stringify(first.result));
check(first.result.rows === 3000, "3000 products", first.result.rows);
check(first.result.persistent === true, "kept in IndexedDB", first.result.persistent);
check(first.typed.length === 10 && first.typed.every((t) => t.includes("outerwear")),
  "typed query with a category", JSON.stringify(first.typed));
const second = await visit();
console.log(`second visit: ${JSON.stringify(second.result)}`);
check(second.result.ok === true, "self-test (after a reload)", JSON.stringify(second.result));
check(second.result.visits === first.result.visits + 1, "the visit count persisted",
  `${first.result.visits} then ${second.result.visits}`);
check(second.result.rows === 3000, "the table persisted", second.result.rows);
console.log(`${failed ? "FAIL" : "PASS"}: ${failed} of 7 checks failed`);
process.exit(failed ? 1 : 0);
