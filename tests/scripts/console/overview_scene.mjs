// The overview as a tenant (figures, and charts that fill as the page polls)
// and as the admin (the whole gateway's figures).
import { phoneShot, signIn } from "./browser.mjs";

const figures = (page) =>
  page.$$eval("#figures div", (items) => items.map((i) => [i.querySelector("dt").textContent, i.querySelector("dd").textContent]));

export async function overviewScene({ page, key, outDir }) {
  // Two polls make a line: the charts then have two points each.
  await page.waitForFunction(() => [...document.querySelectorAll("#charts svg")].some((s) => Number(s.dataset.points) >= 2));
  const charts = await page.$$eval("#charts figure", (fs) =>
    fs.map((f) => {
      const svg = f.querySelector("svg");
      const ticks = (axis) => svg.querySelectorAll(`text.tick.${axis}`).length;
      return [f.querySelector("figcaption").textContent, Number(svg.dataset.points), ticks("x"), ticks("y"), svg.querySelector("text.legend")?.textContent ?? ""];
    }),
  );
  const stored = await page.evaluate(() => window.sessionStorage.getItem("hookgate.token"));
  await page.screenshot({ path: `${outDir}/overview.png`, fullPage: true });
  const phoneFits = await phoneShot(page, `${outDir}/overview-phone.png`);
  return { figures: await figures(page), charts, url: page.url(), tokenKept: stored === key, phoneFits };
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

export async function adminScene({ page, base, setup, outDir, tenant }) {
  await page.click("#sign-out");
  await page.waitForSelector("#sign-in:not([hidden])");
  const cleared = await page.evaluate(() => window.sessionStorage.length === 0);
  await signIn(page, base, setup.admin, "");
  const scope = await page.textContent("#overview-scope");
  await page.screenshot({ path: `${outDir}/overview-admin.png`, fullPage: true });
  // The admin picks a tenant, and the tenant pages follow it.
  await page.waitForSelector(`#tenant-select option[value="${tenant}"]`, { state: "attached" });
  await page.selectOption("#tenant-select", tenant);
  await page.waitForFunction((t) => document.querySelector("#overview-scope").textContent === `Tenant ${t}`, tenant);
  await page.click('a[href="#endpoints"]');
  await page.waitForSelector("#endpoints:not([hidden]):not([aria-busy])");
  const endpoints = await page.$$eval("#endpoint-list tr a", (links) => links.length);
  return { cleared, scope, figures: await figures(page), picked: await page.textContent("#who"), endpoints };
}
