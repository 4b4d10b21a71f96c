// The policy simulator: the retried endpoint's policy, edited, beside every
// preset; each drawn as histograms of the first retry wave and the recovery.
// A refused value gets its field error first.

export async function policiesScene({ page, outDir, seen }) {
  await page.click('a[href="#policies"]');
  await page.waitForSelector("#policies:not([hidden])");
  const form = "#simulate-form";
  await page.waitForSelector(`${form} [name="endpoint"] option[value="${seen.endpoints.id}"]`, { state: "attached" });
  await page.selectOption(`${form} [name="endpoint"]`, seen.endpoints.id);
  const filled = await page.inputValue(`${form} [name="policy.max_attempts"]`);
  await page.fill(`${form} [name="policy.max_attempts"]`, "0");
  await page.click(`${form} button[type="submit"]`);
  const field = `${form} [data-field="policy.max_attempts"]`;
  await page.waitForFunction((f) => document.querySelector(f).textContent !== "", field);
  const fieldError = await page.textContent(field);

  await page.fill(`${form} [name="policy.max_attempts"]`, "8");
  await page.selectOption(`${form} [name="policy.jitter"]`, "full");
  await page.fill(`${form} [name="outage"]`, "5m");
  await page.click(`${form} button[type="submit"]`);
  await page.waitForFunction(() => document.querySelectorAll("#simulations article").length === 6, null, { timeout: 120000 });
  const cards = await page.$$eval("#simulations article", (articles) =>
    articles.map((a) => ({
      title: a.querySelector("h3").textContent,
      bars: [...a.querySelectorAll("svg")].map((s) => Number(s.dataset.bars)),
      most: [...a.querySelectorAll("svg")].map((s) => Number(s.dataset.most)),
      figures: Object.fromEntries([...a.querySelectorAll("dl div")].map((d) => [d.querySelector("dt").textContent, d.querySelector("dd").textContent])),
    })),
  );
  await page.screenshot({ path: `${outDir}/policies.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.$eval("#simulations article", (a) => a.scrollIntoView());
  await page.screenshot({ path: `${outDir}/simulator.png` });
  return { filled, fieldError, cards };
}
