// The person of the scripted desk session, in a real browser (Debian's Chromium driven by
// playwright-core): the cockpit opened from the link `serve` printed decides every write the
// agent asks for, by clicks. The first question is approved with the session's other writes
// for 15 minutes ("Approve + this session's writes for 15 min"); any later one is approved
// alone. It counts the questions, keeps screenshots (the first question with its diff, the
// desk after the session with its grant and activity) and stops when the file DONE exists.
// Prints one JSON line: {"questions": N, "asked": [capability, ...]}.
// Usage: node person.mjs BASE SECRET SHOTS_DIR DONE
import { existsSync } from "node:fs";
import { chromium } from "playwright-core";

const [base, secret, shots, done] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const asked = [];
const decided = new Set();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
  await page.goto(base + "/#desk=" + secret);
  await page.waitForFunction(() => document.querySelector("#desk-status")?.textContent !== "", null, { timeout: 15000 });
  const bound = Date.now() + 15 * 60 * 1000;
  while (!existsSync(done)) {
    if (Date.now() > bound) throw new Error("the session did not end within 15 minutes");
    const card = await page.$("#desk li");
    const id = card && await card.getAttribute("data-id");
    if (!card || decided.has(id)) { await page.waitForTimeout(200); continue; }
    decided.add(id);
    const capability = await card.$eval("strong", (s) => s.textContent);
    const text = await card.textContent();
    if (!text.includes("asked by")) throw new Error("the card does not say who asked: " + text);
    asked.push(capability);
    if (asked.length === 1) {
      await card.screenshot({ path: shots + "/session-first-question.png" });
      await card.$eval("button.approve-grant", (b) => b.click());
    } else {
      await card.$eval("button.approve", (b) => b.click());
    }
    // The card moves below the desk with what became of it.
    await page.waitForFunction((n) => document.querySelectorAll("#decided li").length >= 1 && document.querySelectorAll("#decided li .outcome-applied").length >= n, Math.min(asked.length, 1), { timeout: 15000 });
  }
  await page.waitForFunction(() => document.querySelectorAll("#activity li").length > 5, null, { timeout: 15000 });
  await page.screenshot({ path: shots + "/session-desk-after.png", fullPage: true });
  console.log(JSON.stringify({ questions: asked.length, asked }));
} finally {
  await browser.close();
}
