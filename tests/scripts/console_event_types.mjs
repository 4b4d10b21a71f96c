// Drives the web console's event-type catalog in Debian's Chromium (headless)
// with playwright-core: a tenant reads the catalog page, subscribes a new
// endpoint from it in the create form, finds the ticks again in the edit form,
// and edits an endpoint holding names the catalog no longer offers; then the
// admin reads the catalog. Saves screenshots in OUT_DIR and prints what the
// pages showed as one JSON line.
//
// Usage: node console_event_types.mjs BASE_URL TENANT_KEY TENANT OUT_DIR SETUP_JSON
// SETUP_JSON: {"admin": token, "url": a receiver's URL}
import { launch, signIn } from "./console/browser.mjs";
import { adminCatalogScene, catalogScene, legacyScene, pickerScene } from "./console/event_types_scene.mjs";

const [base, key, tenant, outDir, setupJson] = process.argv.slice(2);
const setup = JSON.parse(setupJson);
const ctx = { base, key, tenant, outDir, setup, seen: {} };
const { close, page, outside } = await launch(base, outDir);
ctx.page = page;
let failed = null;
try {
  ctx.scene = "sign-in";
  await signIn(page, base, key, tenant);
  for (const [name, scene] of [
    ["catalog", catalogScene],
    ["picker", pickerScene],
    ["legacy", legacyScene],
    ["admin-catalog", adminCatalogScene],
  ]) {
    ctx.scene = name;
    ctx.seen[name] = await scene(ctx);
  }
} catch (error) {
  failed = `${ctx.scene}: ${error.message}`;
  await page.screenshot({ path: `${outDir}/failed-${ctx.scene}.png`, fullPage: true }).catch(() => {});
} finally {
  await close();
}
console.log(JSON.stringify({ ...ctx.seen, failed, outside }));
process.exit(failed ? 1 : 0);
