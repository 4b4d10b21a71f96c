// Launches Debian's Chromium headless through playwright-core, with the flags
// that keep it from reaching for outside hosts, on an empty profile; records
// every request that leaves for another origin.
import { mkdtempSync, rmSync } from "node:fs";
import { chromium } from "playwright-core";

/**
 * Opens a browser on a fresh profile under `outDir`; `outside` collects
 * foreign requests; `close()` closes it and removes the profile.
 */
export async function launch(base, outDir) {
  const executablePath = process.env.HOOKGATE_CHROMIUM || "/usr/bin/chromium";
  const profile = mkdtempSync(`${outDir}/profile-`);
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
  const page = browser.pages()[0] ?? (await browser.newPage());
  page.setDefaultTimeout(30000);
  page.on("request", (request) => {
    if (!request.url().startsWith(base)) outside.push(request.url());
  });
  const close = async () => {
    await browser.close();
    rmSync(profile, { recursive: true, force: true });
  };
  return { close, page, outside };
}

/** Signs in on the console's form; `tenant` may be empty (the admin). */
export async function signIn(page, base, token, tenant) {
  await page.goto(`${base}/console/`);
  await page.fill("#token", token);
  await page.fill("#tenant", tenant || "");
  await page.press("#token", "Enter");
  await page.waitForSelector("#figures dd");
}

/**
 * A screenshot at a phone's width (390×844); whether the page fits it without
 * scrolling sideways (wide tables scroll inside their own box).
 */
export async function phoneShot(page, path) {
  await page.setViewportSize({ width: 390, height: 844 });
  const fits = await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
  await page.screenshot({ path, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
  return fits;
}

/**
 * A call to the tenant's API with its key, as another client than the page
 * would make it; the JSON answer, or an error naming the status.
 */
export async function tenantApi({ base, key, tenant }, method, path, body, contentType = "application/json") {
  const response = await fetch(`${base}/v1/tenants/${tenant}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": contentType },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
  return response.json();
}

/** Goes to a console page by its address, and waits for it to be drawn. */
export async function visit(page, hash, section) {
  await page.evaluate((h) => (window.location.hash = h), hash);
  await page.waitForSelector(`#${section}:not([hidden]):not([aria-busy])`);
}

/** The alert line's text, or "" when it is hidden. */
export async function alertText(page) {
  return page.$eval("#error", (e) => (e.hidden ? "" : e.textContent));
}

/** Waits until `selector`'s text contains `text`; returns that text. */
export async function waitForText(page, selector, text) {
  await page.waitForFunction(
    ([s, t]) => [...document.querySelectorAll(s)].some((e) => e.textContent.includes(t)),
    [selector, text],
  );
  return page.$$eval(selector, (nodes, t) => nodes.map((n) => n.textContent).find((x) => x.includes(t)), text);
}
