// The platform model in the console: an endpoint made through the form with a
// uid, a name, channels, metadata, a payload filter and a sensitive header
// (the filter first refused, the API's place shown beside the editor); its
// page showing all of it and the sensitive value nowhere; an edit through the
// form that leaves the sensitive header masked (its value must stay); an
// event's delivery page showing the payload as sent, then that it was
// expunged; its stats page once its one attempt is counted. Also draws the
// stats chart and an attempt's request headers from fixtures of the documented
// shapes, to check the drawing in detail.
import { tenantApi, visit, waitForText } from "./browser.mjs";

/** The event's body as bytes, so the page must show a number JavaScript cannot hold. */
const EVENT = '{"event_type":"shipment.sent","channels":["eu"],"payload":{"data":{"amount":150,"region":"eu","big":12345678901234567890}}}';
const CREATE_FILTER_BAD = '{"data.amount": {"$gtt": 100}}';
const EDIT_FILTER_BAD = '{"$or": [{"data.amount": {"$gt": 1}}, {"data.region": {"$regex": "eu"}}]}';
const FILTER = '{"data.amount": {"$gt": 100}}';

/** Where `secret` shows anywhere: the page's HTML, its text, or a form control's value. */
function leaks(page, secret) {
  return page.evaluate((s) => {
    const found = [];
    if (document.documentElement.outerHTML.includes(s)) found.push("html");
    if (document.body.innerText.includes(s)) found.push("text");
    if ([...document.querySelectorAll("input, textarea")].some((c) => c.value.includes(s))) found.push("control");
    return found;
  }, secret);
}

/** Adds a row to the form's `field` rows editor and fills it. */
async function addRow(page, form, field, name, value, sensitive = false) {
  const editor = `${form} fieldset[data-field="${field}"]`;
  await page.click(`${editor} > button`);
  const row = `${editor} .row:last-child`;
  await page.fill(`${row} .row-name`, name);
  await page.fill(`${row} .row-value`, value);
  if (sensitive) await page.check(`${row} .row-sensitive`);
}

/** Submits `form` and waits for its filter editor's error; returns it. */
async function filterRefusal(page, form, text) {
  await page.fill(`${form} textarea[name="filter"]`, text);
  await page.click(`${form} button[type="submit"]`);
  const span = `${form} .field-error[data-field="filter"]`;
  await page.waitForFunction((s) => document.querySelector(s).textContent !== "", span);
  return page.textContent(span);
}

/** The facts list of a page as `{name: text}`. */
const facts = (page, list) =>
  page.$$eval(`${list} > div`, (ds) => Object.fromEntries(ds.map((d) => [d.querySelector("dt").textContent, d.querySelector("dd").textContent])));

/** A call with the tenant's key and a raw body; the status and the JSON answer (or null). */
async function raw(ctx, method, path, body) {
  const response = await fetch(`${ctx.base}/v1/tenants/${ctx.tenant}${path}`, {
    method,
    headers: { authorization: `Bearer ${ctx.key}`, "content-type": "application/json" },
    body,
  });
  return [response.status, await response.json().catch(() => null)];
}

async function createEndpoint(ctx) {
  const { page, setup } = ctx;
  const form = "#endpoint-form";
  await page.click('a[href="#endpoints"]');
  await page.waitForSelector("#endpoints:not([hidden]):not([aria-busy])");
  for (const [name, value] of Object.entries({
    url: setup.platform_url,
    description: "Billing (EU)",
    uid: "billing-eu",
    event_types: "shipment.*",
    channels: "eu, account:42",
    // Left by the endpoints scene's refused create.
    "policy.max_attempts": "",
  })) {
    await page.fill(`${form} [name="${name}"]`, value);
  }
  await addRow(page, form, "metadata", "team", "billing");
  await addRow(page, form, "headers", "X-Api-Key", setup.sensitive_value, true);
  await addRow(page, form, "headers", "X-Team", "orders");
  await page.click(`${form} .filter-editor button`);
  const example = await page.inputValue(`${form} textarea[name="filter"]`);
  const createRefused = await filterRefusal(page, form, CREATE_FILTER_BAD);
  await page.fill(`${form} textarea[name="filter"]`, FILTER);
  await page.click(`${form} button[type="submit"]`);
  await waitForText(page, "#endpoint-list a", "Billing (EU)");
  const row = await page.$$eval("#endpoint-list tr", (rows) =>
    rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent)).find((cells) => cells[0].startsWith("Billing (EU)")),
  );
  return { example, createRefused, row, listLeaks: await leaks(page, setup.sensitive_value) };
}

async function editEndpoint(ctx) {
  const { page, setup, outDir } = ctx;
  await page.click('#endpoint-list a:has-text("Billing (EU)")');
  await page.waitForSelector("#endpoint:not([hidden]):not([aria-busy]) #endpoint-facts dd");
  await page.waitForFunction(() => !document.querySelector("#endpoint-stats").textContent.includes("Loading"));
  const id = decodeURIComponent(page.url().split("#endpoint/")[1]);
  const shown = { title: await page.textContent("#endpoint-title"), facts: await facts(page, "#endpoint-facts") };
  const form = "#endpoint-edit";
  const headerRows = await page.$$eval(`${form} fieldset[data-field="headers"] .row`, (rows) =>
    rows.map((r) => ({ name: r.querySelector(".row-name").value, value: r.querySelector(".row-value").value, type: r.querySelector(".row-value").type })),
  );
  const pageLeaks = await leaks(page, setup.sensitive_value);
  const editRefused = await filterRefusal(page, form, EDIT_FILTER_BAD);
  await page.fill(`${form} textarea[name="filter"]`, FILTER);
  await page.fill(`${form} [name="description"]`, "Billing (EU), edited");
  const team = headerRows.findIndex((r) => r.name === "x-team") + 1;
  await page.fill(`${form} fieldset[data-field="headers"] .row:nth-child(${team}) .row-value`, "shipping");
  await page.click(`${form} button[type="submit"]`);
  const saved = await waitForText(page, "#notice", "Saved");
  const after = { title: await page.textContent("#endpoint-title"), facts: await facts(page, "#endpoint-facts") };
  await page.screenshot({ path: `${outDir}/endpoint-platform.png`, fullPage: true });
  return { id, shown, headerRows, pageLeaks, editRefused, saved, after, savedLeaks: await leaks(page, setup.sensitive_value) };
}

/** The delivery page of an event sent to the endpoint: its payload, then that it was expunged. */
async function deliveryPage(ctx) {
  const { page, setup, outDir } = ctx;
  const [status, event] = await raw(ctx, "POST", "/events", EVENT);
  if (status !== 202) throw new Error(`ingest answered ${status}`);
  // Under the filter's 100: no delivery.
  const [, filtered] = await raw(ctx, "POST", "/events", '{"event_type":"shipment.sent","channels":["eu"],"payload":{"data":{"amount":50}}}');
  const deliveryId = event.deliveries[0].id;
  await visit(page, `#delivery/${deliveryId}`, "delivery");
  await page.waitForSelector('#delivery-event [data-payload="shown"]');
  await waitForText(page, "#delivery-progress", "delivered");
  const payload = await page.textContent('#delivery-event [data-payload="shown"]');
  // The payload folds under its summary, by keyboard as by pointer.
  const payloadSummary = await page.textContent("#delivery-event details.payload > summary");
  await page.focus("#delivery-event details.payload > summary");
  await page.keyboard.press("Enter");
  const folded = await page.isHidden('#delivery-event [data-payload="shown"]');
  await page.keyboard.press("Enter");
  const eventFacts = await facts(page, "#delivery-event dl");
  await page.screenshot({ path: `${outDir}/delivery-payload.png`, fullPage: true });
  const deliveryLeaks = await leaks(page, setup.sensitive_value);
  const sentHeaders = await page.$$eval("#timeline li.attempt .request-headers tbody tr", (rows) => rows.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)));
  const [expunge] = await raw(ctx, "DELETE", `/events/${event.id}/payload`);
  await visit(page, "#deliveries", "deliveries");
  await visit(page, `#delivery/${deliveryId}`, "delivery");
  const expunged = await waitForText(page, '#delivery-event [data-payload="expunged"]', "expunged");
  return { eventId: event.id, deliveries: event.deliveries.length, filteredDeliveries: filtered.deliveries.length, payload, payloadSummary, folded, eventFacts, deliveryLeaks, sentHeaders, expunge, expunged };
}

/** The charts and headers drawn from fixtures of the documented shapes, in the page's own modules. */
function drawnFromFixtures(page) {
  return page.evaluate(async () => {
    const { renderStats } = await import("./endpoint_stats.js");
    const { requestHeaders } = await import("./attempt_item.js");
    const start = Date.parse("2026-12-06T10:00:00Z");
    const at = (i) => new Date(start + i * 300_000).toISOString();
    const box = document.createElement("div");
    renderStats(box, {
      endpoint_id: "ep_fixture",
      bucket_seconds: 300,
      since: at(0),
      until: at(4),
      states: { pending: 2, dead: 1 },
      totals: { attempts: 20, delivered: 16, failed: 4, p50_ms: 120, p99_ms: 480 },
      buckets: [
        { start: at(0), attempts: 10, delivered: 8, failed: 2, p50_ms: 100, p99_ms: 400 },
        { start: at(1), attempts: 0, delivered: 0, failed: 0, p50_ms: null, p99_ms: null },
        { start: at(2), attempts: 10, delivered: 8, failed: 2, p50_ms: 140, p99_ms: 560 },
      ],
    });
    const chart = (name) => box.querySelector(`svg[data-chart="${name}"]`);
    const ticks = (svg, axis) => [...svg.querySelectorAll(`text.tick.${axis}`)].map((t) => t.textContent);
    const stats = {
      figures: Object.fromEntries([...box.querySelectorAll("[data-stat]")].map((d) => [d.dataset.stat, d.querySelector("dd").textContent])),
      bars: Number(chart("outcomes").dataset.bars),
      barTitles: [...chart("outcomes").querySelectorAll("g.bucket > title")].map((t) => t.textContent),
      outcomeTicks: { x: ticks(chart("outcomes"), "x"), y: ticks(chart("outcomes"), "y") },
      points: Number(chart("latency").dataset.points),
      latencyTicks: { x: ticks(chart("latency"), "x"), y: ticks(chart("latency"), "y") },
      legend: [...chart("latency").querySelectorAll("text.legend")].map((t) => t.textContent),
    };
    const sent = requestHeaders({ id: "atm_1", request_headers: [{ name: "x-api-key", value: "********" }, { name: "webhook-id", value: "msg_1" }] });
    const old = requestHeaders({ id: null });
    return {
      stats,
      headers: { recorded: sent.dataset.recorded, rows: [...sent.querySelectorAll("tbody tr")].map((r) => [...r.cells].map((c) => c.textContent)), old: old.textContent },
    };
  });
}

/**
 * The endpoint page's stats drawn from the gateway's own answer: revisited
 * until the gateway has flushed its one attempt (a few tenths of a second in
 * the test's config), then the figures and charts as shown, beside the API's.
 */
async function liveStats(ctx, id) {
  const { page, outDir } = ctx;
  let figures = {};
  for (let i = 0; i < 50 && figures.attempts !== "1"; i++) {
    await visit(page, "#endpoints", "endpoints");
    await visit(page, `#endpoint/${id}`, "endpoint");
    await page.waitForSelector('#endpoint-stats [data-stats="totals"]');
    figures = await page.$$eval("#endpoint-stats [data-stat]", (items) => Object.fromEntries(items.map((d) => [d.dataset.stat, d.querySelector("dd").textContent])));
    if (figures.attempts !== "1") await page.waitForTimeout(200);
  }
  const drawn = await page.evaluate(() => {
    const chart = (name) => document.querySelector(`#endpoint-stats svg[data-chart="${name}"]`);
    const ticks = (svg, axis) => svg.querySelectorAll(`text.tick.${axis}`).length;
    return {
      bars: Number(chart("outcomes").dataset.bars),
      barTitles: [...chart("outcomes").querySelectorAll("g.bucket > title")].map((t) => t.textContent),
      ticks: { x: ticks(chart("outcomes"), "x"), y: ticks(chart("outcomes"), "y") },
      points: Number(chart("latency").dataset.points),
      unavailable: document.querySelector('#endpoint-stats [data-stats="unavailable"]') !== null,
    };
  });
  await page.screenshot({ path: `${outDir}/endpoint-stats.png`, fullPage: true });
  // The span the outcomes chart covers, in hours, for each time range.
  const spanHours = () =>
    page.$eval('#endpoint-stats svg[data-chart="outcomes"]', (svg) => (Date.parse(svg.dataset.until) - Date.parse(svg.dataset.from)) / 3_600_000);
  const spans = { 24: await spanHours() };
  await page.selectOption("#endpoint-stats-range", "1");
  await page.waitForFunction(() => {
    const svg = document.querySelector('#endpoint-stats svg[data-chart="outcomes"]');
    return svg && Date.parse(svg.dataset.until) - Date.parse(svg.dataset.from) < 2 * 3_600_000;
  });
  spans[1] = await spanHours();
  await page.selectOption("#endpoint-stats-range", "24");
  const api = await tenantApi(ctx, "GET", `/endpoints/${id}/stats`);
  return { figures, drawn, spans, api: { totals: api.totals, states: api.states } };
}

export async function platformScene(ctx) {
  const created = await createEndpoint(ctx);
  const edited = await editEndpoint(ctx);
  const delivery = await deliveryPage(ctx);
  // Another client's view of the endpoint, as the API masks it.
  const ep = await tenantApi(ctx, "GET", `/endpoints/${edited.id}`);
  const stats = await liveStats(ctx, edited.id);
  return { created, edited, delivery, stats, api: { headers: ep.headers, sensitive: ep.sensitive_headers }, fixtures: await drawnFromFixtures(ctx.page) };
}
