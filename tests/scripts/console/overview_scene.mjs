// The overview as a tenant (the current figures, and the stored history's
// charts over the time range chosen, which changes what is asked for) and as
// the admin (the whole gateway's figures and history, as the API counts it).
import { phoneShot, signIn } from "./browser.mjs";

const HOUR = 3_600_000;

const figures = (page) =>
  page.$$eval("#figures div", (items) => items.map((i) => [i.querySelector("dt").textContent, i.querySelector("dd").textContent]));

/** The history's charts as drawn: what, how many bars or points, ticks, legend, and the time axis's span in hours. */
const historyCharts = (page) =>
  page.$$eval("#history figure", (fs) =>
    fs.map((f) => {
      const svg = f.querySelector("svg");
      const ticks = (axis) => svg.querySelectorAll(`text.tick.${axis}`).length;
      return {
        caption: f.querySelector("figcaption").textContent,
        chart: svg.dataset.chart,
        bars: svg.dataset.bars === undefined ? null : Number(svg.dataset.bars),
        points: svg.dataset.points === undefined ? null : Number(svg.dataset.points),
        x: ticks("x"),
        y: ticks("y"),
        legend: [...svg.querySelectorAll("text.legend")].map((t) => t.textContent),
        hours: (Date.parse(svg.dataset.until) - Date.parse(svg.dataset.from)) / 3_600_000,
      };
    }),
  );

/** Waits until the charts' time axes span `hours` (widened to whole 5-minute buckets). */
function chartsSpan(page, hours) {
  return page.waitForFunction((h) => {
    const svgs = [...document.querySelectorAll("#history svg[data-chart]")];
    const span = (svg) => (Date.parse(svg.dataset.until) - Date.parse(svg.dataset.from)) / 3_600_000;
    return svgs.length === 2 && svgs.every((svg) => span(svg) > h - 0.01 && span(svg) <= h + 5 / 60 + 0.01);
  }, hours);
}

/** How many hours before it was made a history request's `since` lies, or null for another request. */
function hoursAgo(request) {
  const url = new URL(request.url());
  if (!url.pathname.endsWith("/stats/history")) return null;
  const since = url.searchParams.get("since");
  return since ? (Date.now() - Date.parse(since)) / HOUR : null;
}

/** Chooses `hours` in the range select: the request it makes, and the charts it draws. */
async function chooseRange(page, hours) {
  const [request] = await Promise.all([
    page.waitForRequest((r) => {
      const ago = hoursAgo(r);
      return ago !== null && Math.abs(ago - hours) < 0.05;
    }),
    page.selectOption("#history-range", String(hours)),
  ]);
  await chartsSpan(page, hours);
  return { requested: request.url().replace(/^.*\/v1\//, "/v1/"), hoursAgo: hoursAgo(request), charts: await historyCharts(page) };
}

/** The range chosen after the page has polled again: the select's value and the charts' span. */
async function afterPoll(page) {
  const polled = page.waitForRequest((r) => hoursAgo(r) !== null);
  await polled;
  await page.waitForTimeout(500);
  return { value: await page.inputValue("#history-range"), charts: await historyCharts(page) };
}

/** The overview's history drawn from fixtures in the page's own module: partial, whole, and none kept. */
function drawnFromFixtures(page) {
  return page.evaluate(async () => {
    const { renderHistory } = await import("./overview.js");
    const start = Date.parse("2026-12-06T10:00:00Z");
    const at = (i) => new Date(start + i * 300_000).toISOString();
    const bucket = (i, delivered, failed) => ({ start: at(i), attempts: delivered + failed, delivered, failed, p50_ms: delivered + failed ? 100 : null, p99_ms: delivered + failed ? 400 : null });
    const history = (complete) => ({
      tenant_id: null,
      bucket_seconds: 300,
      since: at(0),
      until: at(3),
      complete,
      totals: { attempts: 12, delivered: 9, failed: 3, p50_ms: 100, p99_ms: 400 },
      buckets: [bucket(0, 5, 1), bucket(1, 0, 0), bucket(2, 4, 2)],
      endpoints: [],
    });
    const drawn = (answer) => {
      const box = document.createElement("div");
      renderHistory(box, answer);
      const chart = (name) => box.querySelector(`svg[data-chart="${name}"]`);
      return {
        notes: [...box.querySelectorAll("p.note")].map((p) => p.dataset.history ?? "span"),
        bars: chart("outcomes") ? Number(chart("outcomes").dataset.bars) : null,
        points: chart("latency") ? Number(chart("latency").dataset.points) : null,
      };
    };
    return { partial: drawn(history(false)), whole: drawn(history(true)), none: drawn(null) };
  });
}

export async function overviewScene({ page, key, outDir }) {
  await page.waitForSelector("#overview:not([aria-busy]) #history svg[data-chart]");
  const range = await page.inputValue("#history-range");
  const charts = await historyCharts(page);
  const stored = await page.evaluate(() => window.sessionStorage.getItem("hookgate.token"));
  await page.screenshot({ path: `${outDir}/overview.png`, fullPage: true });
  const phoneFits = await phoneShot(page, `${outDir}/overview-phone.png`);
  const ranges = { 1: await chooseRange(page, 1) };
  const kept = await afterPoll(page);
  await page.screenshot({ path: `${outDir}/overview-hour.png`, fullPage: true });
  ranges[48] = await chooseRange(page, 48);
  ranges[24] = await chooseRange(page, 24);
  return {
    figures: await figures(page),
    range,
    charts,
    ranges,
    kept,
    fixtures: await drawnFromFixtures(page),
    url: page.url(),
    tokenKept: stored === key,
    phoneFits,
  };
}

/**
 * A wrong token: checked before anything shows, it stays on the sign-in form
 * with the API's message and code; no navigation, nothing kept.
 */
export async function refusedSignIn(page, base, tenant) {
  await page.goto(`${base}/console/`);
  await page.fill("#token", "hgk_not-a-real-token");
  await page.fill("#tenant", tenant);
  await page.press("#token", "Enter");
  await page.waitForSelector("#error:not([hidden])");
  const refused = await page.textContent("#error");
  await page.waitForSelector("#sign-in:not([hidden])");
  const shown = await page.$$eval("main > section", (all) => all.filter((s) => !s.hidden).map((s) => s.id));
  if (shown.join() !== "sign-in" || (await page.isVisible("#nav")) || (await page.evaluate(() => sessionStorage.length)) !== 0) {
    throw new Error(`a refused token showed ${shown} (nav visible: ${await page.isVisible("#nav")})`);
  }
  return refused;
}

/** The whole gateway's history from the API, with the admin token. */
async function gatewayHistory(base, admin) {
  const response = await fetch(`${base}/v1/stats/history`, { headers: { authorization: `Bearer ${admin}` } });
  if (!response.ok) throw new Error(`GET /v1/stats/history answered ${response.status}`);
  return response.json();
}

/**
 * The admin's charts once they show what the API counts (the page polls, and
 * the gateway flushes its counts every tenth of a second in the test); the
 * last pair seen when they never agree within ten seconds.
 */
async function drawnAsCounted(page, base, admin) {
  let seen = null;
  for (let i = 0; i < 20; i++) {
    const api = await gatewayHistory(base, admin);
    const drawn = await historyCharts(page);
    const apiBars = api.buckets.filter((b) => b.attempts > 0).length;
    seen = { drawn, api: api.totals, apiBars, tenant: api.tenant_id };
    const outcomes = drawn.find((c) => c.chart === "outcomes");
    if (outcomes?.legend[0] === `delivered ${api.totals.delivered}` && outcomes.legend[1] === `failed ${api.totals.failed}`) return seen;
    await page.waitForTimeout(500);
  }
  return seen;
}

export async function adminScene({ page, base, setup, outDir, tenant }) {
  await page.click("#sign-out");
  await page.waitForSelector("#sign-in:not([hidden])");
  const cleared = await page.evaluate(() => window.sessionStorage.length === 0);
  await signIn(page, base, setup.admin, "");
  const scope = await page.textContent("#overview-scope");
  await page.waitForSelector("#overview:not([aria-busy]) #history svg[data-chart]");
  const history = await drawnAsCounted(page, base, setup.admin);
  await page.screenshot({ path: `${outDir}/overview-admin.png`, fullPage: true });
  // The admin picks a tenant, and the tenant pages follow it.
  await page.waitForSelector(`#tenant-select option[value="${tenant}"]`, { state: "attached" });
  await page.selectOption("#tenant-select", tenant);
  await page.waitForFunction((t) => document.querySelector("#overview-scope").textContent === `Tenant ${t}`, tenant);
  await page.click('a[href="#endpoints"]');
  await page.waitForSelector("#endpoints:not([hidden]):not([aria-busy])");
  const endpoints = await page.$$eval("#endpoint-list tr a", (links) => links.length);
  return { cleared, scope, history, figures: await figures(page), picked: await page.textContent("#who"), endpoints };
}
