// Drives the web console in Debian's Chromium (headless) with playwright-core,
// through a tenant's whole journey: overview, endpoints, deliveries and their
// timeline, the endpoints' recent success rates, the DLQ and its replay, the
// policy simulator, plugins, the platform model (an endpoint's uid, name,
// channels, filter and sensitive header; an event's payload), and a RabbitMQ
// endpoint made through the destination picker; then the admin's overview. Saves a screenshot of each page in OUT_DIR and prints
// what the pages showed as one JSON line.
//
// Usage: node console_browser.mjs BASE_URL TENANT_KEY TENANT OUT_DIR SETUP_JSON
// SETUP_JSON: {"admin": token, "retrying_url": url, "dying_url": url, "ok_url": url,
//   "plugins": [wasm paths], "platform_url": url, "sensitive_value": a header value never to show,
//   "rabbitmq_url": a broker's address, "nats_url": another kind's}
import { launch, signIn } from "./console/browser.mjs";
import { overviewScene, adminScene, refusedSignIn } from "./console/overview_scene.mjs";
import { endpointsScene, successScene } from "./console/endpoints_scene.mjs";
import { deliveriesScene } from "./console/deliveries_scene.mjs";
import { dlqScene } from "./console/dlq_scene.mjs";
import { policiesScene } from "./console/policies_scene.mjs";
import { pluginsScene } from "./console/plugins_scene.mjs";
import { platformScene } from "./console/platform_scene.mjs";
import { destinationsScene } from "./console/destinations_scene.mjs";

const [base, key, tenant, outDir, setupJson] = process.argv.slice(2);
const setup = JSON.parse(setupJson);
const ctx = { base, key, tenant, outDir, setup, seen: {} };
const { close, page, outside } = await launch(base, outDir);
ctx.page = page;
let failed = null;
try {
  ctx.scene = "refused";
  ctx.seen.refused = await refusedSignIn(page, base, tenant);
  await signIn(page, base, key, tenant);
  for (const [name, scene] of [
    ["overview", overviewScene],
    ["endpoints", endpointsScene],
    ["deliveries", deliveriesScene],
    ["success", successScene],
    ["dlq", dlqScene],
    ["policies", policiesScene],
    ["plugins", pluginsScene],
    ["platform", platformScene],
    ["destinations", destinationsScene],
    ["admin", adminScene],
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
