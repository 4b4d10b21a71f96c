// Drives the web console as a portal embedded in another site's page, in
// Debian's Chromium (headless) with playwright-core. First as Chromium comes,
// which gives a frame on another site no storage: a portal token the API
// refuses, on the console opened on its own; a view-only session and one
// that manages endpoints, each in an iframe of a page on another origin, then
// pages the gateway does not allow to frame it. Then with that storage
// allowed: the session kept over a reload of the frame, and ended when the
// tenant revokes its sessions. Saves screenshots in OUT_DIR and prints what
// the pages showed as one JSON line.
//
// Usage: node console_portal.mjs BASE_URL TENANT_KEY TENANT OUT_DIR SETUP_JSON
// SETUP_JSON: {"view_page", "manage_page": embedding pages allowed to frame BASE_URL,
//   "other_page": a page on an origin BASE_URL does not allow, "closed_page": a page
//   framing "closed_base", a gateway with no embed origin, "view_token",
//   "manage_token", "seeded_url": an endpoint's URL, "delivered": a succeeded
//   delivery's id, "portal_url": the URL to create an endpoint with, "origins":
//   the origins the pages come from}
import { blockedScene, endedScene, keptScene, launchWith, manageScene, refusedScene, viewScene } from "./console/portal_scene.mjs";

const [base, key, tenant, outDir, setupJson] = process.argv.slice(2);
const setup = JSON.parse(setupJson);
const ctx = { base, key, tenant, outDir, setup, seen: {} };
/** What the console logged about its Content Security Policy (an inline style or script it was refused). */
const cspErrors = [];
/** Errors the console's scripts threw. */
const pageErrors = [];
const outside = [];

/** Runs `scenes` in a browser started with Chromium's `extraArgs`; false once one failed. */
async function run(scenes, extraArgs) {
  const browser = await launchWith(base, outDir, extraArgs);
  const { close, page } = browser;
  ctx.page = page;
  page.on("console", (m) => {
    if (m.type() === "error" && m.text().includes("Content Security Policy") && !m.text().includes("frame-ancestors")) cspErrors.push(m.text());
  });
  page.on("pageerror", (error) => pageErrors.push(error.message));
  try {
    for (const [name, scene] of scenes) {
      ctx.scene = name;
      ctx.seen[name] = await scene(ctx);
    }
    return true;
  } catch (error) {
    ctx.failed = `${ctx.scene}: ${error.message}`;
    await page.screenshot({ path: `${outDir}/failed-portal-${ctx.scene}.png`, fullPage: true }).catch(() => {});
    return false;
  } finally {
    outside.push(...browser.outside);
    await close();
  }
}

const ok =
  (await run(
    [
      ["refused", refusedScene],
      ["view", viewScene],
      ["manage", manageScene],
      ["other-origin", (c) => blockedScene(c, setup.other_page, base, "portal-other-origin")],
      ["closed", (c) => blockedScene(c, setup.closed_page, setup.closed_base, "portal-closed")],
    ],
    [],
  )) &&
  (await run(
    [
      ["kept", keptScene],
      ["ended", endedScene],
    ],
    ["--disable-features=TrackingProtection3pcd"],
  ));
const known = [base, setup.closed_base, ...setup.origins];
// The theme's logo is a data: URL: it comes from nowhere.
const foreign = outside.filter((url) => !url.startsWith("data:") && !known.some((origin) => url.startsWith(origin)));
const failed = ok ? null : ctx.failed;
console.log(JSON.stringify({ ...ctx.seen, failed, outside: foreign, cspErrors, pageErrors }));
process.exit(failed ? 1 : 0);
