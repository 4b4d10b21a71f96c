// Drives the web console in Debian's Chromium (headless) with playwright-core:
// signs in with the token given, waits for the overview figures, creates an
// endpoint for HOOK_URL on the endpoints page, then submits a policy value the
// API refuses; saves screenshots and prints what the pages showed as one JSON
// line.
//
// Usage: node console_browser.mjs BASE_URL TOKEN TENANT OUT_DIR HOOK_URL
import { chromium } from "playwright-core";

const [base, token, tenant, outDir, hookUrl] = process.argv.slice(2);
const executablePath = process.env.HOOKGATE_CHROMIUM || "/usr/bin/chromium";
const profile = (await import("node:fs")).mkdtempSync(`${outDir}/profile-`);

// Without the background-networking flags Chromium reaches for outside hosts.
const browser = await chromium.launchPersistentContext(profile, {
  executablePath,
  headless: true,
  viewport: { width: 1280, height: 800 },
  args: [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
});
const outside = [];
try {
  const page = browser.pages()[0] ?? (await browser.newPage());
  page.on("request", (request) => {
    if (!request.url().startsWith(base)) outside.push(request.url());
  });
  await page.goto(`${base}/console/`);
  await page.fill("#token", token);
  if (tenant) await page.fill("#tenant", tenant);
  await page.press("#token", "Enter");
  await page.waitForSelector("#figures dd", { timeout: 15000 });
  const figures = await page.$$eval("#figures div", (items) =>
    items.map((i) => [i.querySelector("dt").textContent, i.querySelector("dd").textContent]),
  );
  const stored = await page.evaluate(() => window.sessionStorage.getItem("hookgate.token"));
  await page.screenshot({ path: `${outDir}/overview.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: `${outDir}/overview-phone.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });

  await page.click('a[href="#endpoints"]');
  await page.waitForSelector("#endpoints:not([hidden])");
  const form = "#endpoint-form";
  await page.fill(`${form} input[name="url"]`, hookUrl);
  await page.click(`${form} button[type="submit"]`);
  await page.waitForSelector("#endpoint-list tr");
  const listed = await page.$$eval("#endpoint-list tr td:nth-child(2)", (tds) => tds.map((t) => t.textContent));
  await page.fill(`${form} input[name="url"]`, hookUrl);
  await page.fill(`${form} input[name="max_attempts"]`, "101");
  await page.click(`${form} button[type="submit"]`);
  const field = '[data-field="policy.max_attempts"]';
  await page.waitForFunction((f) => document.querySelector(f).textContent !== "", field, { timeout: 15000 });
  const fieldError = await page.textContent(field);
  const alert = await page.textContent("#error");
  await page.screenshot({ path: `${outDir}/endpoints.png`, fullPage: true });

  console.log(JSON.stringify({ figures, url: page.url(), tokenKept: stored === token, listed, fieldError, alert, outside }));
} finally {
  await browser.close();
}
