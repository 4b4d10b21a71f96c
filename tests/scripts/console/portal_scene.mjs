// The console as a portal another site embeds: an iframe on the embedding
// page opens `/console/#portal=<token>`. A view-only session sees the pages
// and no control that writes; a session that manages endpoints creates one
// and sends it a test event; a revoked session goes back to the sign-in form;
// a gateway that does not name the embedding page's origin is not framed.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { chromium } from "playwright-core";
import { waitForText } from "./browser.mjs";

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** axe-core's serious and critical violations (WCAG 2.0/2.1 A and AA) in the frame as it is now. */
async function audit(frame) {
  // Evaluated over the debugging protocol, which the console's CSP does not govern.
  await frame.evaluate(axeSource);
  const result = await frame.evaluate(() =>
    window.axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } }),
  );
  return result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 5) }));
}

/**
 * Opens a browser as `launch` in browser.mjs does (a fresh profile under
 * `outDir`, nothing fetched from outside hosts, foreign requests collected in
 * `outside`), with Chromium's `extraArgs` besides.
 */
export async function launchWith(base, outDir, extraArgs) {
  const profile = mkdtempSync(`${outDir}/profile-`);
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.HOOKGATE_CHROMIUM || "/usr/bin/chromium",
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
      ...extraArgs,
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

/** Opens the embedding page `url`; its portal frame once the console in it shows `selector`. */
async function portalFrame(page, url, selector) {
  await page.goto(url);
  const frame = await (await page.waitForSelector("iframe#portal")).contentFrame();
  await frame.waitForSelector(selector);
  return frame;
}

/** Opens a console page from the nav; waits until it is drawn. */
async function open(frame, name) {
  await frame.click(`#nav a[href="#${name}"]`);
  await frame.waitForSelector(`#${name}:not([hidden]):not([aria-busy])`);
}

/** The text of every button a person can see in `scope`. */
const visibleButtons = (frame, scope) =>
  frame.$$eval(`${scope} button`, (buttons) => buttons.filter((b) => b.checkVisibility()).map((b) => b.textContent.trim()));

/** Whether the element `selector` names can be seen. */
const seen = (frame, selector) => frame.$eval(selector, (e) => e.checkVisibility());

/** How the console in the frame looks: the theme as applied. */
const look = (frame) =>
  frame.evaluate(() => {
    const root = document.documentElement;
    const logo = document.querySelector("#logo");
    const current = document.querySelector('#nav a[aria-current="page"]');
    return {
      productName: document.querySelector("#product-name").textContent,
      productNameShown: document.querySelector("#product-name").checkVisibility(),
      title: document.title,
      logoShown: logo.checkVisibility() && logo.complete && logo.naturalWidth > 0,
      logoSrc: (logo.getAttribute("src") || "").slice(0, 26),
      accent: getComputedStyle(root).getPropertyValue("--accent").trim(),
      currentUnderline: current ? getComputedStyle(current).borderBottomColor : null,
      mode: root.dataset.mode ?? null,
      colorScheme: getComputedStyle(root).colorScheme,
      background: getComputedStyle(root).backgroundColor,
      inlineStyleAttributes: document.querySelectorAll("[style]:not(html)").length,
    };
  });

/** Where the frame's document is, and the token this tab keeps ("(blocked)": the browser gives the frame no storage). */
const address = (frame) =>
  frame.evaluate(() => {
    let kept;
    try {
      kept = sessionStorage.getItem("hookgate.token");
    } catch {
      kept = "(blocked)";
    }
    return { href: location.href, hash: location.hash, kept };
  });

/** Waits until the frame has painted what it shows now (a frame on another site paints on its own). */
const painted = (frame) => frame.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));

/**
 * Screenshots of the embedding page (the portal filling the window below its
 * header) at 1280 px and at a phone's 390 px; whether the console fits the
 * frame without scrolling sideways at each.
 */
async function shots(page, frame, outDir, name) {
  const fits = () => frame.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
  await page.setViewportSize({ width: 1280, height: 1000 });
  await painted(frame);
  await page.screenshot({ path: `${outDir}/${name}.png` });
  const wide = await fits();
  await page.setViewportSize({ width: 390, height: 844 });
  await frame.waitForFunction(() => window.innerWidth < 400);
  await painted(frame);
  const phone = await fits();
  await page.screenshot({ path: `${outDir}/${name}-phone.png` });
  await page.setViewportSize({ width: 1280, height: 800 });
  await frame.waitForFunction(() => window.innerWidth > 1000);
  return { wide, phone };
}

/** Reloads the frame's document (as F5 in the frame would) and waits for the new one. */
async function reload(frame) {
  await Promise.all([frame.waitForNavigation({ waitUntil: "load" }), frame.evaluate(() => setTimeout(() => location.reload(), 0))]);
}

/** A call with `token` made by the page in the frame, as the console would make it. */
const fromFrame = (frame, method, path, token, body) =>
  frame.evaluate(
    async ([m, p, t, b]) => {
      const response = await fetch(p, { method: m, headers: { authorization: `Bearer ${t}`, "content-type": "application/json" }, body: b === null ? undefined : JSON.stringify(b) });
      return { status: response.status, body: await response.json().catch(() => null) };
    },
    [method, path, token, body ?? null],
  );

/**
 * A portal token the API does not know, in the address of the console
 * opened on its own: the sign-in form with the API's error, no navigation,
 * nothing kept, and the token gone from the address.
 */
export async function refusedScene({ page, base }) {
  await page.goto(`${base}/console/#portal=hgp_not-a-session`);
  await page.waitForSelector("#error:not([hidden])");
  return {
    error: await page.textContent("#error"),
    href: page.url(),
    nav: await page.isVisible("#nav"),
    shown: await page.$$eval("main > section", (all) => all.filter((s) => !s.hidden).map((s) => s.id)),
    kept: await page.evaluate(() => sessionStorage.length),
  };
}

export async function viewScene(ctx) {
  const { page, outDir, setup, tenant } = ctx;
  const frame = await portalFrame(page, setup.view_page, "#figures dd");
  const arrived = await address(frame);
  const theme = await look(frame);
  const who = await frame.textContent("#who");
  const tenantPick = await seen(frame, "#tenant-pick");
  const lacks = await frame.evaluate(() => document.body.dataset.lacks);
  const nav = await frame.$$eval("#nav a", (links) => links.filter((a) => a.checkVisibility()).map((a) => a.textContent));
  const pages = { overview: await visibleButtons(frame, "main") };

  await open(frame, "endpoints");
  await waitForText(frame, "#endpoint-list td.url", setup.seeded_url);
  const listed = await frame.$$eval("#endpoint-list td.url", (tds) => tds.map((t) => t.textContent));
  pages.endpoints = await visibleButtons(frame, "main");
  const createForm = await seen(frame, "#endpoint-form");
  const sized = await shots(page, frame, outDir, "portal-view");
  const axe = { endpoints: await audit(frame) };

  await frame.click(`#endpoint-list tr:has-text("${setup.seeded_url}") a`);
  await frame.waitForSelector("#endpoint:not([hidden]):not([aria-busy]) #endpoint-facts dd");
  pages.endpoint = await visibleButtons(frame, "main");
  axe.endpoint = await audit(frame);
  const editForm = await seen(frame, "#endpoint-edit");
  const sendForm = await seen(frame, "#send-example");

  await frame.evaluate((id) => (location.hash = `#delivery/${id}`), setup.delivered);
  await waitForText(frame, "#delivery-progress", "delivered after");
  // The page offers "Send again" for a succeeded delivery (it unhides the
  // button once drawn); the session may not replay, so it still does not show.
  await frame.waitForSelector("#delivery:not([aria-busy]) #delivery-replay:not([hidden])", { state: "attached" });
  const replayWanted = await frame.$eval("#delivery-replay", (b) => b.textContent);
  pages.delivery = await visibleButtons(frame, "main");

  await open(frame, "dlq");
  await frame.waitForSelector("#dlq-list button[data-delivery]", { state: "attached" });
  const deadRows = await frame.$$eval("#dlq-list tr a", (links) => links.map((a) => a.textContent));
  pages.dlq = await visibleButtons(frame, "main");
  const bulkReplay = await seen(frame, "#replay-form");

  await open(frame, "plugins");
  pages.plugins = await visibleButtons(frame, "main");
  const upload = await seen(frame, "#plugin-upload");

  // The API refuses what the page does not offer.
  const write = await fromFrame(frame, "POST", `/v1/tenants/${tenant}/endpoints`, setup.view_token, { url: setup.portal_url });
  const replay = await fromFrame(frame, "POST", `/v1/tenants/${tenant}/deliveries/${setup.delivered}/replay`, setup.view_token, { force: true });

  // This browser gives a frame on another site no storage: a reload forgets
  // the session, and the sign-in form says why.
  await reload(frame);
  await frame.waitForSelector("#sign-in:not([hidden])");
  const reloaded = { ...(await address(frame)), nav: await seen(frame, "#nav"), note: await frame.textContent("#sign-in-note"), errorHidden: await frame.$eval("#error", (e) => e.hidden) };
  return {
    arrived,
    theme,
    who,
    tenantPick,
    lacks,
    nav,
    listed,
    pages,
    createForm,
    editForm,
    sendForm,
    replayWanted,
    deadRows,
    bulkReplay,
    upload,
    write,
    replay,
    reloaded,
    fits: sized,
    axe,
  };
}

export async function manageScene(ctx) {
  const { page, outDir, setup } = ctx;
  const frame = await portalFrame(page, setup.manage_page, "#figures dd");
  const arrived = await address(frame);
  const theme = await look(frame);
  const lacks = await frame.evaluate(() => document.body.dataset.lacks);

  await open(frame, "endpoints");
  const createForm = await seen(frame, "#endpoint-form");
  await frame.fill('#endpoint-form [name="url"]', setup.portal_url);
  await frame.fill('#endpoint-form [name="description"]', "portal endpoint");
  await frame.click('#endpoint-form button[type="submit"]');
  await waitForText(frame, "#endpoint-list td.url", setup.portal_url);
  const created = await frame.textContent("#created-secret");

  await frame.click(`#endpoint-list tr:has-text("${setup.portal_url}") a`);
  await frame.waitForSelector("#endpoint:not([hidden]):not([aria-busy]) #endpoint-facts dd");
  const id = decodeURIComponent(frame.url().split("#endpoint/")[1]);
  await frame.waitForSelector('#send-example option[value="order.paid"]', { state: "attached" });
  const offered = await frame.$$eval("#send-example option", (options) => options.map((o) => o.value));
  const buttons = await visibleButtons(frame, "main");
  const publicKey = await frame.textContent("#endpoint-public-key");
  await frame.selectOption("#send-example select", "order.paid");
  await frame.click('#send-example button[type="submit"]');
  const sent = await waitForText(frame, "#notice", "Sent the example");
  const sized = await shots(page, frame, outDir, "portal-manage");
  // The dark palette, with the theme's accent, checked as it is drawn.
  const axe = { endpoint: await audit(frame) };
  await open(frame, "endpoints");
  axe.endpoints = await audit(frame);

  await open(frame, "dlq");
  const dlqButtons = await visibleButtons(frame, "main");
  return { arrived, theme, lacks, createForm, created, id, offered, buttons, publicKey, sent, dlqButtons, fits: sized, axe };
}

/**
 * In a browser that lets a frame on another site keep its storage: the token
 * is kept in the tab, and a reload of the frame keeps the session on its page.
 */
export async function keptScene(ctx) {
  const { page, setup } = ctx;
  const frame = await portalFrame(page, setup.view_page, "#figures dd");
  ctx.frame = frame;
  const arrived = await address(frame);
  await open(frame, "endpoints");
  await reload(frame);
  await waitForText(frame, "#endpoint-list td.url", setup.seeded_url);
  return {
    arrived,
    reloaded: await address(frame),
    productName: await frame.textContent("#product-name"),
    nav: await seen(frame, "#nav"),
    shown: await frame.$$eval("main > section", (all) => all.filter((s) => !s.hidden).map((s) => s.id)),
  };
}

/** The tenant revokes its sessions; the open portal's next request ends it. */
export async function endedScene(ctx) {
  const { base, key, tenant, frame } = ctx;
  const response = await fetch(`${base}/v1/tenants/${tenant}/portal-sessions`, { method: "DELETE", headers: { authorization: `Bearer ${key}` } });
  const revoked = await response.json();
  await frame.click('#nav a[href="#dlq"]');
  await frame.waitForSelector("#sign-in:not([hidden])");
  await frame.waitForSelector("#error:not([hidden])");
  return {
    revoked,
    error: await frame.textContent("#error"),
    nav: await seen(frame, "#nav"),
    sections: await frame.$$eval("main > section", (all) => all.filter((s) => !s.hidden).map((s) => s.id)),
    kept: await frame.evaluate(() => sessionStorage.length),
    axe: await audit(frame),
  };
}

/**
 * An embedding page whose frame the gateway does not allow: what the frame
 * holds, the console's requests from it and the framing policy they met.
 */
export async function blockedScene({ page, outDir }, url, consoleBase, shot) {
  const requests = [];
  const policies = [];
  const messages = [];
  const onRequest = (r) => r.url().startsWith(`${consoleBase}/console/`) && requests.push(r.url());
  const onResponse = (r) => {
    if (r.url().startsWith(`${consoleBase}/console/`)) {
      const headers = r.headers();
      policies.push({ csp: headers["content-security-policy"] ?? null, xfo: headers["x-frame-options"] ?? null });
    }
  };
  const onConsole = (m) => messages.push(m.text());
  page.on("request", onRequest);
  page.on("response", onResponse);
  page.on("console", onConsole);
  try {
    await page.goto(url);
    await page.waitForFunction(() => document.readyState === "complete");
    const frame = await (await page.waitForSelector("iframe#portal")).contentFrame();
    const rendered = frame ? await frame.evaluate(() => document.querySelector("#sign-in-form, #nav") !== null).catch(() => false) : false;
    await page.screenshot({ path: `${outDir}/${shot}.png`, fullPage: true });
    return {
      frameUrl: frame ? frame.url() : null,
      rendered,
      requests,
      policies,
      refusedMessage: messages.find((m) => m.includes("frame-ancestors")) ?? null,
    };
  } finally {
    page.off("request", onRequest);
    page.off("response", onResponse);
    page.off("console", onConsole);
  }
}
