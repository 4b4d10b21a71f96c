// Checks every page of the web console with axe-core (WCAG 2.0/2.1 A and AA
// rules) in Debian's Chromium: the sign-in form, then each page signed in with
// a tenant's key, with an endpoint, a delivery and a catalog type to show
// (the endpoint form's destination picker showing RabbitMQ's fields); then
// the overview and the endpoint list in the dark palette. Measures each
// badge tone's contrast in the light, dark and system-dark palettes.
// Screenshots of each page at 1280 px and 390 px go to OUT_DIR. Prints one
// JSON line: the serious and critical violations by page, the badge tones
// the list showed, the contrasts measured, and the pages seen.
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

/** The page at `hash` once drawn. */
async function open(name, hash) {
  await page.evaluate((h) => { window.location.hash = h; }, hash);
  await page.waitForSelector(`#${name}:not([hidden]):not([aria-busy])`);
}

/** WCAG's contrast ratio of each badge tone, as drawn in `palette` (a `data-mode`, or the system's scheme). */
async function badgeContrast(palette, mode, scheme) {
  await page.emulateMedia({ colorScheme: scheme });
  return page.evaluate(
    ([palette, mode]) => {
      const root = document.documentElement;
      if (mode) root.dataset.mode = mode;
      else delete root.dataset.mode;
      const channel = (c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4);
      const luminance = (rgb) => {
        const [r, g, b] = rgb.match(/[\d.]+/g).slice(0, 3).map((v) => channel(Number(v) / 255));
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
      };
      return ["tone-good", "tone-bad", "tone-warn"].map((tone) => {
        const badge = document.createElement("span");
        badge.className = `badge ${tone}`;
        badge.textContent = "sample";
        document.querySelector("main").append(badge);
        const { color, backgroundColor } = getComputedStyle(badge);
        badge.remove();
        const [light, dark] = [luminance(color), luminance(backgroundColor)].sort((a, b) => b - a);
        return { palette, tone, color, backgroundColor, ratio: (light + 0.05) / (dark + 0.05) };
      });
    },
    [palette, mode],
  );
}

const seen = {};
let badges = [];
const contrast = [];
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
    await open(name, hash);
    // The picker's broker fields are audited, not only HTTP's URL.
    if (name === "endpoints") await page.check('#endpoint-form input[name="destination.type"][value="rabbitmq"]');
    seen[name] = await audit(name);
    if (name === "endpoints") {
      badges = await page.$$eval("#endpoint-list .badge", (bs) => bs.map((b) => [...b.classList].find((c) => c.startsWith("tone-"))));
    }
  }
  // The dark palette a portal theme may choose.
  await page.evaluate(() => { document.documentElement.dataset.mode = "dark"; });
  for (const name of ["overview", "endpoints"]) {
    scene = `${name}-dark`;
    await open(name, `#${name}`);
    seen[scene] = await audit(scene);
  }
  scene = "contrast";
  for (const [palette, mode, scheme] of [["light", null, "light"], ["dark", "dark", "light"], ["system dark", null, "dark"]]) {
    contrast.push(...(await badgeContrast(palette, mode, scheme)));
  }
} catch (error) {
  failed = `${scene}: ${error.message}`;
  await page.screenshot({ path: `${outDir}/failed-a11y-${scene}.png`, fullPage: true }).catch(() => {});
} finally {
  await close();
}
console.log(JSON.stringify({ violations: seen, badges, contrast, failed, outside }));
process.exit(failed ? 1 : 0);
