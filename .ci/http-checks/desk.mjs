// The approval desk in a real browser (Debian's Chromium driven by playwright-core): the
// cockpit opened from the link `serve` printed (`/#desk=SECRET`) lists the pending write of an
// agent in another process with its review and diff, beside the repository's state; Approve
// is clicked, then the agent's next write is declined; opened without the secret, the page
// cannot decide. Usage: node desk.mjs BASE SECRET SCREENSHOT
import { chromium } from "playwright-core";

const [base, secret, shot] = process.argv.slice(2);
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
const fail = (why) => { console.error(why); process.exitCode = 1; };
try {
  // Without the secret: listed, but the buttons are disabled.
  const bare = await browser.newPage();
  await bare.goto(base + "/");
  await bare.waitForSelector("#desk li", { timeout: 15000 });
  if (!(await bare.isDisabled("#desk li button.approve"))) fail("a page without the desk secret can approve");
  await bare.close();

  const page = await browser.newPage({ viewport: { width: 1280, height: 1100 } });
  await page.goto(base + "/#desk=" + secret);
  await page.waitForSelector("#desk li", { timeout: 15000 });
  if (page.url().includes(secret)) fail("the desk secret stays in the address bar: " + page.url());
  const text = await page.textContent("#desk li");
  for (const want of ["files.write", "notes/desk.md", "+Approved in a browser."]) {
    if (!text.includes(want)) fail(`the pending approval does not show ${want}: ${text}`);
  }
  await page.waitForFunction(() => document.querySelector("#repo-status")?.textContent.startsWith("On branch"), null, { timeout: 15000 });
  await page.screenshot({ path: shot, fullPage: false });
  await page.click("#desk li button.approve");
  await page.waitForSelector("#decided li .outcome-applied", { timeout: 15000 });
  // The feed shows the write once the waiting call applied it.
  await page.waitForFunction(() => document.querySelector("#activity li")?.textContent.includes("approved by cockpit"), null, { timeout: 15000 });
  // The agent's next write: declined.
  await page.waitForFunction(() => [...document.querySelectorAll("#desk li")].some((li) => li.textContent.includes("notes/declined.md")), null, { timeout: 15000 });
  await page.click("#desk li button.decline");
  await page.waitForFunction(() => document.querySelector("#activity li")?.textContent.includes("not_approved"), null, { timeout: 15000 });
  await page.screenshot({ path: shot.replace(/\.png$/, "-after.png"), fullPage: false });
  console.log("the cockpit shows each pending write with its diff; Approve approves one, Decline declines the next");
} finally {
  await browser.close();
}
