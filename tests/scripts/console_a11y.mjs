// Checks every page of the web console with axe-core (WCAG 2.0/2.1 A and AA
// rules) in Debian's Chromium: the sign-in form, then each page signed in with
// a tenant's key, with an endpoint, a delivery and a catalog type to show.
// Screenshots of each page at 1280 px and 390 px go to OUT_DIR. Prints one
// JSON line: the serious and critical violations by page, and the pages seen.
//
// Usage: node console_a11y.mjs BASE_URL TENANT_KEY TENANT OUT_DIR SETUP_JSON
// SETUP_JSON: {"endpoint": id, "delivery": id}
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { launch, phoneShot, signIn } from "./console/browser.mjs";

const [base, key, tenant, outDir, setupJson] = process.argv.slice(2);
const setup = JSON.parse(setupJson);
const require = createRequire(import.meta.url);
const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");
const { close, page, outside } = await launch(base, outDir);

/** axe's serious and critical violations on the page as it is now. */
async function audit(name) {
  // Evaluated over the debugging protocol, which the page's CSP does not govern.
  await page.evaluate(axeSource);
  const result = await page.evaluate(() =>
    window.axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } }),
  );
  await page.screenshot({ path: `${outDir}/a11y-${name}.png`, fullPage: true });
  await phoneShot(page, `${outDir}/a11y-${name}-390.png`);
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5) }));
}

const seen = {};
let failed = null;
let scene = "sign-in";
try {
  await page.goto(`${base}/console/`);
  await page.waitForSelector("#token");
  seen["sign-in"] = await audit("sign-in");
  await signIn(page, base, key, tenant);
  const pages = [
    ["overview", "#overview"],
    ["endpoints", "#endpoints"],
    ["endpoint", `#endpoint/${encodeURIComponent(setup.endpoint)}`],
    ["event-types", "#event-types"],
    ["deliveries", "#deliveries"],
    ["delivery", `#delivery/${encodeURIComponent(setup.delivery)}`],
    ["dlq", "#dlq"],
    ["policies", "#policies"],
    ["plugins", "#plugins"],
  ];
  for (const [name, hash] of pages) {
    scene = name;
    await page.evaluate((h) => { window.location.hash = h; }, hash);
    await page.waitForSelector(`#${name}:not([hidden]):not([aria-busy])`);
    seen[name] = await audit(name);
  }
} catch (error) {
  failed = `${scene}: ${error.message}`;
  await page.screenshot({ path: `${outDir}/failed-a11y-${scene}.png`, fullPage: true }).catch(() => {});
} finally {
  await close();
}
console.log(JSON.stringify({ violations: seen, failed, outside }));
process.exit(failed ? 1 : 0);
