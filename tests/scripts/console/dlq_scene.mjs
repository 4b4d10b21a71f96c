// The DLQ: three dead deliveries of the one-attempt endpoint, grouped by
// reason. Two are replayed in bulk by filter, after a dry run's count is
// confirmed (the result names the endpoint's open breaker), the third from its
// own row; then all three succeed.
import { phoneShot, waitForText } from "./browser.mjs";

export async function dlqScene({ page, outDir }) {
  await page.click('a[href="#dlq"]');
  await page.waitForSelector("#dlq:not([hidden]):not([aria-busy])");
  await page.waitForSelector('#dlq-reasons tr[data-reason="max_attempts"]');
  const reasons = await page.$$eval("#dlq-reasons tr", (rows) => rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent)));
  const dyingId = await page.$eval("#dlq-endpoints tr td", (td) => td.textContent);

  const form = "#replay-form";
  await page.selectOption(`${form} [name="dead_reason"]`, "max_attempts");
  await page.selectOption(`${form} [name="endpoint_id"]`, dyingId);
  await page.fill(`${form} [name="event_type"]`, "invoice.paid");
  await page.click(`${form} button[type="submit"]`);
  await page.waitForSelector("#replay-confirm-panel:not([hidden])");
  const confirmation = await page.textContent("#replay-count");
  await page.screenshot({ path: `${outDir}/dlq.png`, fullPage: true });
  await page.click("#replay-confirm");
  const result = await waitForText(page, "#replay-result", "Replayed");

  // The one left, from its own row.
  await page.waitForFunction(() => document.querySelectorAll("#dlq-list button[data-delivery]").length === 1, null, { timeout: 60000 });
  const last = await page.getAttribute("#dlq-list button[data-delivery]", "data-delivery");
  await page.click(`#dlq-list button[data-delivery="${last}"]`);
  const single = await waitForText(page, "#notice", "pending again");
  await page.screenshot({ path: `${outDir}/dlq-replayed.png`, fullPage: true });
  const phoneFits = await phoneShot(page, `${outDir}/dlq-phone.png`);

  // All three succeed.
  await page.click('a[href="#deliveries"]');
  await page.waitForSelector("#deliveries:not([hidden]):not([aria-busy])");
  await page.selectOption('#delivery-filters [name="state"]', "succeeded");
  await page.selectOption('#delivery-filters [name="endpoint_id"]', dyingId);
  await page.click('#delivery-filters button[type="submit"]');
  await page.waitForFunction(() => document.querySelectorAll("#delivery-list tr[data-state=succeeded]").length === 3, null, { timeout: 90000 });
  const succeeded = await page.$$eval("#delivery-list tr", (rows) => rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent)));
  await page.screenshot({ path: `${outDir}/deliveries-replayed.png`, fullPage: true });
  return { reasons, dyingId, confirmation, result, single, succeeded, phoneFits };
}
