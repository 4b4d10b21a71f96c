// Drives the web console in Debian's Chromium (headless) with playwright-core:
// signs in with the token given, waits for the overview figures, saves a
// screenshot, and prints what the page shows as one JSON line.
//
// Usage: node console_browser.mjs BASE_URL TOKEN TENANT OUT_DIR
import { chromium } from "playwright-core";

const [base, token, tenant, outDir] = process.argv.slice(2);
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
  console.log(JSON.stringify({ figures, url: page.url(), tokenKept: stored === token, outside }));
} finally {
  await browser.close();
}
