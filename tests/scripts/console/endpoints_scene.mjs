// Endpoints: create the two the later scenes use, get the API's field error on
// create and on edit, then save a good edit, disable and enable by keyboard,
// rotate the secret and reset the breaker. Once deliveries were made, the
// list's success column and its state and breaker badges (`successScene`).
import { alertText, tenantApi, visit, waitForText } from "./browser.mjs";

/** Fills the create form and submits it; waits for the list to show `url`, or for an error. */
async function create(page, fields) {
  for (const [name, value] of Object.entries(fields)) {
    const control = `#endpoint-form [name="${name}"]`;
    if ((await page.$eval(control, (c) => c.tagName)) === "SELECT") await page.selectOption(control, value);
    else await page.fill(control, value);
  }
  await page.click('#endpoint-form button[type="submit"]');
}

/** Presses Tab until `selector` has the focus (at most 60 times); true if it got there. */
async function tabTo(page, selector) {
  for (let i = 0; i < 60; i++) {
    if (await page.evaluate((s) => document.activeElement === document.querySelector(s), selector)) return true;
    await page.keyboard.press("Tab");
  }
  return false;
}

export async function endpointsScene(ctx) {
  const { page, setup, outDir } = ctx;
  await page.click('a[href="#endpoints"]');
  await page.waitForSelector("#endpoints:not([hidden])");
  const empty = await page.textContent("#endpoint-list");
  // Retried every 5 s, no jitter: the page has 10 s to see it failing and due again.
  await create(page, {
    url: setup.retrying_url,
    event_types: "order.*",
    "policy.max_attempts": "5",
    "policy.strategy": "fixed",
    "policy.base_ms": "5s",
    "policy.jitter": "none",
  });
  await waitForText(page, "#endpoint-list td", setup.retrying_url);
  // One attempt only: its failures go straight to the DLQ.
  await create(page, { url: setup.dying_url, event_types: "invoice.*", "policy.max_attempts": "1" });
  await waitForText(page, "#endpoint-list td", setup.dying_url);
  const secretShown = await page.textContent("#created-secret");
  await create(page, { url: setup.dying_url, "policy.max_attempts": "101" });
  const field = '#endpoint-form [data-field="policy.max_attempts"]';
  await page.waitForFunction((f) => document.querySelector(f).textContent !== "", field);
  const createFieldError = await page.textContent(field);
  const createAlert = await alertText(page);
  const listed = await page.$$eval("#endpoint-list tr td.url", (tds) => tds.map((t) => t.textContent));
  const columns = await page.$$eval("#endpoints thead th", (ths) => ths.map((th) => th.textContent));
  const successBefore = await successCells(page);
  await page.screenshot({ path: `${outDir}/endpoints.png`, fullPage: true });

  // The first endpoint's page: edit with a refused value, then a good one.
  await page.click(`#endpoint-list tr:has-text("${setup.retrying_url}") a`);
  await page.waitForSelector("#endpoint:not([hidden]):not([aria-busy]) #endpoint-facts dd");
  const id = decodeURIComponent(page.url().split("#endpoint/")[1]);
  const edit = "#endpoint-edit";
  await page.fill(`${edit} [name="policy.max_attempts"]`, "0");
  await page.click(`${edit} button[type="submit"]`);
  const editField = `${edit} [data-field="policy.max_attempts"]`;
  await page.waitForFunction((f) => document.querySelector(f).textContent !== "", editField);
  const editFieldError = await page.textContent(editField);
  const editAlert = await alertText(page);
  // Another client changes a field meanwhile: saving sends only what was edited here.
  await tenantApi(ctx, "PATCH", `/endpoints/${id}`, { rate_limit_per_s: 50 }, "application/merge-patch+json");
  await page.fill(`${edit} [name="policy.max_attempts"]`, "6");
  await page.fill(`${edit} [name="description"]`, "orders, retried");
  // Signature choices: v1 beside v1a, under both header sets.
  await page.selectOption(`${edit} [name="signature_schemes"]`, "v1,v1a");
  await page.selectOption(`${edit} [name="signature_headers"]`, "both");
  await page.click(`${edit} button[type="submit"]`);
  const saved = await waitForText(page, "#notice", "Saved");
  const fact = (name) => page.$$eval("#endpoint-facts div", (ds, n) => ds.find((d) => d.querySelector("dt").textContent === n).querySelector("dd").textContent, name);
  await page.waitForFunction(() => document.querySelector("#endpoint-public-key")?.textContent.startsWith("whpk_"));
  const signature = { text: await fact("Signature"), publicKey: await fact("Public key (v1a)") };
  const effective = await page.$$eval("#endpoint-policy div", (ds) => Object.fromEntries(ds.map((d) => [d.querySelector("dt").textContent, d.querySelector("dd").textContent])));

  // Disable and enable from the keyboard alone.
  await page.focus("#nav a[href='#overview']");
  const reached = await tabTo(page, "#endpoint-toggle");
  await page.keyboard.press("Enter");
  const disabled = await waitForText(page, "#endpoint-facts dd", "disabled");
  await page.keyboard.press("Enter");
  await waitForText(page, "#notice", "is enabled");
  const enabled = await page.$$eval("#endpoint-facts div", (ds) => ds.find((d) => d.querySelector("dt").textContent === "State").querySelector("dd").textContent);
  await page.click("#endpoint-rotate");
  const rotated = await waitForText(page, "#endpoint-secret", "New signing secret");
  await page.click("#endpoint-reset");
  const reset = await waitForText(page, "#notice", "breaker");
  await page.screenshot({ path: `${outDir}/endpoint.png`, fullPage: true });
  return {
    empty,
    listed,
    columns,
    successBefore,
    secretShown,
    createFieldError,
    createAlert,
    id,
    editFieldError,
    editAlert,
    saved,
    effective,
    signature,
    keyboard: { reached, disabled, enabled },
    rotated,
    reset,
  };
}

/** The success cells of the list: `[endpoint id, text]`. */
const successCells = (page) => page.$$eval("#endpoint-list td[data-success]", (tds) => tds.map((td) => [td.dataset.success, td.textContent]));

/** Each row's state and breaker cells: their badges' text and class, and the cell's whole text. */
const badges = (page) =>
  page.$$eval("#endpoint-list tr", (rows) =>
    rows.map((row) => {
      const id = row.querySelector("td[data-success]").dataset.success;
      const [state, breaker] = [...row.querySelectorAll("td")].slice(5, 7).map((td) => {
        const badge = td.querySelector(".badge");
        return { text: td.textContent, badge: badge?.textContent ?? null, tone: badge ? [...badge.classList].find((c) => c.startsWith("tone-")) : null };
      });
      return { id, state, breaker };
    }),
  );

/**
 * The list once the retried endpoint's delivery is done (two 503s, then the
 * 200): revisited until its success cell counts the three attempts (the test
 * flushes stats every tenth of a second), beside the API's history; the
 * badges; then, with the history route answering 404, dashes and no error.
 */
export async function successScene(ctx) {
  const { page, seen, outDir } = ctx;
  const id = seen.endpoints.id;
  let shown = "";
  for (let i = 0; i < 50 && !shown.endsWith(" of 3"); i++) {
    await visit(page, "#dlq", "dlq");
    await visit(page, "#endpoints", "endpoints");
    shown = await page.textContent(`#endpoint-list td[data-success="${id}"]`);
    if (!shown.endsWith(" of 3")) await page.waitForTimeout(200);
  }
  const history = await tenantApi(ctx, "GET", "/stats/history");
  const counted = history.endpoints.find((e) => e.endpoint_id === id) ?? null;
  const cells = await successCells(page);
  const rows = await badges(page);
  await page.screenshot({ path: `${outDir}/endpoints-success.png`, fullPage: true });
  const withoutRoute = await withoutHistoryRoute(page);
  return { id, shown, counted, cells, rows, withoutRoute };
}

/** The list drawn while the gateway answers 404 to the history: its success cells and the alert line. */
async function withoutHistoryRoute(page) {
  const route = "**/stats/history*";
  const body = JSON.stringify({ error: { code: "not_found", message: "no such route" } });
  await page.route(route, (r) => r.fulfill({ status: 404, contentType: "application/json", body }));
  try {
    await visit(page, "#dlq", "dlq");
    await visit(page, "#endpoints", "endpoints");
    return { cells: await successCells(page), links: await page.$$eval("#endpoint-list tr a", (as) => as.length), alert: await alertText(page) };
  } finally {
    await page.unroute(route);
  }
}
