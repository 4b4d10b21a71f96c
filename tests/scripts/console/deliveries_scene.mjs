// Deliveries: events sent through the API; the list filtered to the retried
// endpoint; its delivery's timeline watched while it fails and is retried,
// then once it succeeds. The receiver fails each delivery's first two
// attempts, then answers 200.
import { phoneShot, tenantApi, waitForText } from "./browser.mjs";

/** Sends one event through the API with the tenant's key. */
const send = (ctx, eventType, payload) => tenantApi(ctx, "POST", "/events", { event_type: eventType, payload });

const rowIds = (page) => page.$$eval("#delivery-list tr a", (links) => links.map((a) => a.textContent));

/** 26 deliveries to one endpoint: a page of 25, the next page of 1, and back. */
async function paging(ctx) {
  const { page, setup } = ctx;
  const { id: pinged } = await tenantApi(ctx, "POST", "/endpoints", { url: setup.ok_url, event_types: ["ping.*"] });
  for (let i = 0; i < 26; i++) await send(ctx, "ping.sent", { ping: i });
  await page.click('a[href="#overview"]');
  await page.click('a[href="#deliveries"]');
  await page.waitForSelector("#deliveries:not([hidden]):not([aria-busy])");
  await page.selectOption('#delivery-filters [name="state"]', "");
  await page.selectOption('#delivery-filters [name="endpoint_id"]', pinged);
  await page.click('#delivery-filters button[type="submit"]');
  await page.waitForFunction(() => document.querySelectorAll("#delivery-list tr a").length === 25);
  const first = await rowIds(page);
  await page.click("#delivery-next:not([disabled])");
  await page.waitForFunction(() => document.querySelectorAll("#delivery-list tr a").length === 1);
  const second = await rowIds(page);
  const lastPage = await page.$eval("#delivery-next", (b) => b.disabled);
  await page.click("#delivery-prev:not([disabled])");
  await page.waitForFunction(() => document.querySelectorAll("#delivery-list tr a").length === 25);
  const back = await rowIds(page);
  return { first, second, lastPage, back };
}

const timeline = (page) =>
  page.$$eval("#timeline li.attempt", (items) =>
    items.map((li) => ({
      title: li.querySelector("h4").textContent,
      failed: li.classList.contains("failed"),
      facts: Object.fromEntries([...li.querySelectorAll("dl div")].map((d) => [d.querySelector("dt").textContent, d.querySelector("dd").textContent])),
      snippet: li.querySelector(".snippet")?.textContent ?? null,
      attemptId: li.dataset.attemptId,
      headersRecorded: li.querySelector(".request-headers")?.dataset.recorded ?? null,
      headers: [...li.querySelectorAll(".request-headers tbody tr")].map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)),
    })),
  );

export async function deliveriesScene(ctx) {
  const { page, outDir, seen } = ctx;
  const order = await send(ctx, "order.created", { order: 1 });
  for (const [type, n] of [["invoice.paid", 1], ["invoice.paid", 2], ["invoice.voided", 3]]) await send(ctx, type, { invoice: n });

  await page.click('a[href="#deliveries"]');
  await page.waitForSelector("#deliveries:not([hidden]):not([aria-busy])");
  await page.selectOption('#delivery-filters [name="endpoint_id"]', seen.endpoints.id);
  await page.click('#delivery-filters button[type="submit"]');
  const deliveryId = order.deliveries[0].id;
  await page.click(`#delivery-list a:has-text("${deliveryId}")`);
  await page.waitForSelector("#delivery:not([hidden])");

  // While it is retried: a failed attempt on the timeline and the next one due.
  await page.waitForFunction(() => document.querySelector("#timeline li.failed") && document.querySelector("#delivery-progress").textContent.includes("next at"));
  const retrying = { progress: await page.textContent("#delivery-progress"), attempts: await timeline(page) };
  await page.screenshot({ path: `${outDir}/delivery-retrying.png`, fullPage: true });
  // Then its third attempt gets the 200.
  await page.waitForSelector("#timeline li.ok", { timeout: 60000 });
  const done = { progress: await waitForText(page, "#delivery-progress", "delivered"), attempts: await timeline(page) };
  await page.screenshot({ path: `${outDir}/delivery-timeline.png`, fullPage: true });
  const phoneFits = await phoneShot(page, `${outDir}/delivery-timeline-phone.png`);

  // The list, filtered to the dead ones.
  await page.click('a[href="#deliveries"]');
  await page.waitForSelector("#deliveries:not([hidden]):not([aria-busy])");
  await page.selectOption('#delivery-filters [name="endpoint_id"]', "");
  await page.selectOption('#delivery-filters [name="state"]', "dead");
  await page.click('#delivery-filters button[type="submit"]');
  await page.waitForFunction(() => document.querySelectorAll("#delivery-list tr[data-state=dead]").length === 3, null, { timeout: 60000 });
  const dead = await page.$$eval("#delivery-list tr", (rows) => rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent)));
  await page.screenshot({ path: `${outDir}/deliveries.png`, fullPage: true });
  // One event's deliveries, by its id.
  await page.selectOption('#delivery-filters [name="state"]', "");
  await page.fill('#delivery-filters [name="event_id"]', order.id);
  await page.click('#delivery-filters button[type="submit"]');
  await page.waitForFunction(() => document.querySelectorAll("#delivery-list tr a").length === 1);
  const byEvent = await rowIds(page);
  await page.fill('#delivery-filters [name="event_id"]', "");
  return { deliveryId, eventId: order.id, retrying, done, dead, phoneFits, byEvent, paging: await paging(ctx) };
}
