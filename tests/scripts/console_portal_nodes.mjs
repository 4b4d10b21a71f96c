// Drives the portal on two gateways of one cluster, in Debian's Chromium
// (headless) with playwright-core: one session's portal open on each node,
// each framed by a page of another site,
// and one limited to an endpoint, which shows that endpoint alone and no
// tenant-wide figure or control (nor an error for one); then every session of
// the tenant revoked through the first node, then each
// page's next step; and a session opened after its expiry on a gateway whose
// clock the test moved past it. Prints what the pages showed as one JSON line.
//
// Usage: node console_portal_nodes.mjs BASE_URL TENANT_KEY TENANT OUT_DIR SETUP_JSON
// SETUP_JSON: {"node_pages": [a page of another site framing the session's
//   portal on each node],
//   "expired_url": a portal URL whose session has expired,
//   "limited_url": a portal URL of a session limited to one endpoint,
//   "origins": the gateways' origins}
import { launch } from "./console/browser.mjs";

const [base, key, tenant, outDir, setupJson] = process.argv.slice(2);
const setup = JSON.parse(setupJson);
const { close, page, outside } = await launch(base, outDir);
const seen = {};
let failed = null;
let scene = "open";

/** What the console shows once it has sent its reader back to sign in. */
async function signInShown(p) {
  await p.waitForSelector("#sign-in:not([hidden])");
  await p.waitForSelector("#error:not([hidden])");
  return {
    error: await p.textContent("#error"),
    nav: await p.isVisible("#nav"),
    sections: await p.$$eval("main > section", (all) => all.filter((s) => !s.hidden).map((s) => s.id)),
  };
}

try {
  const tabs = [page, await page.context().newPage()];
  const pages = [];
  for (const [i, tab] of tabs.entries()) {
    tab.setDefaultTimeout(30000);
    await tab.goto(setup.node_pages[i]);
    const frame = await (await tab.waitForSelector("iframe#portal")).contentFrame();
    await frame.waitForSelector("#nav a[href='#endpoints']");
    await tab.screenshot({ path: `${outDir}/portal-node-${i}.png`, fullPage: true });
    pages.push(frame);
  }
  seen.opened = await Promise.all(pages.map((p) => p.evaluate(() => window.location.origin)));

  scene = "limited";
  const limited = await page.context().newPage();
  limited.setDefaultTimeout(30000);
  await limited.goto(setup.limited_url);
  await limited.waitForSelector("#history svg, #history [data-history]");
  const shown = (selector) => limited.isVisible(selector);
  seen.limited = { figures: await shown("#figures"), overviewError: await shown("#error") };
  await limited.click("#nav a[href='#endpoints']");
  await limited.waitForSelector("#endpoint-list tr td.url");
  seen.limited.urls = await limited.$$eval("#endpoint-list td.url", (tds) => tds.map((t) => t.textContent));
  seen.limited.createForm = await shown("#endpoint-form");
  await limited.click("#nav a[href='#dlq']");
  await limited.waitForSelector("#dlq-list tr");
  seen.limited.dlqSummary = await shown("#dlq-total");
  seen.limited.bulkReplay = await shown("#replay-form");
  seen.limited.error = await shown("#error");
  await limited.screenshot({ path: `${outDir}/portal-limited.png`, fullPage: true });
  await limited.close();

  scene = "revoked";
  const response = await fetch(`${base}/v1/tenants/${tenant}/portal-sessions`, {
    method: "DELETE",
    headers: { authorization: `Bearer ${key}` },
  });
  seen.revoked = await response.json();
  seen.ended = [];
  for (const p of pages) {
    // The page's own poll may find the session ended first; else this step does.
    await p.click("#nav a[href='#endpoints']", { timeout: 3000 }).catch(() => {});
    seen.ended.push(await signInShown(p));
  }

  scene = "expired";
  const late = tabs[0];
  await late.goto(setup.expired_url);
  seen.expired = await signInShown(late);
  seen.expired.href = late.url();
  await late.screenshot({ path: `${outDir}/portal-expired.png`, fullPage: true });
} catch (error) {
  failed = `${scene}: ${error.message}`;
  await page.screenshot({ path: `${outDir}/failed-portal-nodes-${scene}.png`, fullPage: true }).catch(() => {});
} finally {
  await close();
}
const foreign = outside.filter((url) => !setup.origins.some((origin) => url.startsWith(origin)));
console.log(JSON.stringify({ ...seen, failed, outside: foreign }));
process.exit(failed ? 1 : 0);
